"""Notebook 12, Exercise 2: merge two partial results of attention over two sets of keys.

``merge_parts(part_a, part_b)`` takes, for the same queries, the triples ``(m, ell, o)`` of two
disjoint sets of keys (the running maximum, ``ℓ = Σ e^(s − m)`` and the unnormalised output
``õ = Σ e^(s − m) v`` of section 4) and returns the triple of their union. A set with no
allowed key is ``(−inf, 0, 0)``. The cases come from real scores split in two, and show each
mistake: either part holding the larger maximum, rows that differ in which one does, a square
batch (a factor without its trailing dimension runs instead of failing), empty parts, maxima
in the thousands (a shift undone overflows) and a batch of (2, 3) rows. An answer right on
every case that changes the caller's parts is told so.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._run import check_function

Tensor = torch.Tensor
Part = tuple[Tensor, Tensor, Tensor]

MERGE = register(
    Exercise(
        id="ex2_merge_parts",
        notebook="12",
        number=2,
        name="merge_parts",
        hints=(
            "Each part measured its terms e^(s − m) from its own maximum. The union needs one "
            "reference for both, and section 3 showed how to move a sum from one reference to "
            "another with a single factor.",
            "The union's maximum is the larger of the two. Each part's ℓ and õ are moved to it "
            "by their own factor, e^(m_part − m_union), which is at most 1; then they simply "
            "add. A part with no keys has m = −inf: its factor must come out as 0, and when "
            "both are empty nothing may become −inf − (−inf).",
            "Take the elementwise maximum of the two m. Where it is −inf, measure from 0 "
            "instead (torch.where or masked_fill). Compute the two factors with exp of each m "
            "minus that reference; scale each ℓ by its factor and each õ by its factor with a "
            "trailing size-1 dimension, so that one factor per row covers the row's d_v "
            "numbers; add.",
        ),
    )
)

ONLINE_SOFTMAX = Forbidden(
    python={
        attnlib.online_softmax_step: "attnlib.online_softmax_step",
        attnlib.online_softmax: "attnlib.online_softmax",
        attnlib.tiled_attention: "attnlib.tiled_attention",
    }
)


def _reference_of(m: Tensor) -> Tensor:
    return m.masked_fill(m == -math.inf, 0.0)


def _merge(
    part_a: Part,
    part_b: Part,
    *,
    factors: str = "right",
    scale_o: bool = True,
    scale_l: bool = True,
    trailing: bool = True,
    safe: bool = True,
) -> Part:
    """A merge written as learners write it; the keywords make it go wrong in one way each."""
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = torch.maximum(m_a, m_b)
    ref = _reference_of(m) if safe else m
    f_a, f_b = torch.exp(m_a - ref), torch.exp(m_b - ref)
    if factors == "none":
        f_a, f_b = torch.ones_like(m), torch.ones_like(m)
    elif factors == "inverted":
        f_a, f_b = torch.exp(ref - m_a), torch.exp(ref - m_b)
    elif factors == "only b":
        f_a = torch.ones_like(m)
    elif factors == "only a":
        f_b = torch.ones_like(m)
    ell = l_a * f_a + l_b * f_b if scale_l else l_a + l_b
    if not scale_o:
        return m, ell, o_a + o_b
    g_a, g_b = (f_a.unsqueeze(-1), f_b.unsqueeze(-1)) if trailing else (f_a, f_b)
    return m, ell, o_a * g_a + o_b * g_b


def _unshifted(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = torch.maximum(m_a, m_b)
    e_a, e_b, e = torch.exp(m_a), torch.exp(m_b), torch.exp(m)
    ell = (l_a * e_a + l_b * e_b) / e
    return m, ell, (o_a * e_a.unsqueeze(-1) + o_b * e_b.unsqueeze(-1)) / e.unsqueeze(-1)


def _one_maximum(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    top = torch.maximum(m_a.max(), m_b.max())
    f_a, f_b = torch.exp(m_a - top), torch.exp(m_b - top)
    m = torch.full_like(m_a, float(top))
    return m, l_a * f_a + l_b * f_b, o_a * f_a.unsqueeze(-1) + o_b * f_b.unsqueeze(-1)


def _normalised(part_a: Part, part_b: Part) -> Part:
    m, ell, o = _merge(part_a, part_b)
    return m, ell, o / ell.unsqueeze(-1)


def _in_place(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = torch.maximum(m_a, m_b)
    f_a, f_b = torch.exp(m_a - _reference_of(m)), torch.exp(m_b - _reference_of(m))
    l_a.mul_(f_a).add_(l_b * f_b)  # part A becomes the union
    o_a.mul_(f_a.unsqueeze(-1)).add_(o_b * f_b.unsqueeze(-1))
    return m, l_a, o_a


IN_PLACE = Mistake(
    "changed the caller's part A in place (ell_a *= …, o_a += …)",
    "the parts are the caller's: a kernel that merges a third share, or checks its work, reads "
    "them again and finds part A turned into the union.",
    _in_place,
)

MISTAKES = (
    Mistake(
        "added the two sums and outputs without rescaling them",
        "each part measured its terms from its own maximum: e^(s − m_a) and e^(s − m_b) are on "
        "different scales, and a sum of the two means nothing until both are moved to the "
        "union's maximum.",
        lambda a, b: _merge(a, b, factors="none"),
    ),
    Mistake(
        "rescaled with the sign the wrong way round, e^(m − m_part)",
        "moving a term e^(s − m_part) to a larger reference m makes it smaller: the factor is "
        "e^(m_part − m), at most 1, never above.",
        lambda a, b: _merge(a, b, factors="inverted"),
    ),
    Mistake(
        "rescaled only part B, as if part A always had the larger maximum",
        "either part can hold the larger score, and it can differ from row to row: both parts "
        "get their own factor, which is 1 for the part whose maximum is the union's.",
        lambda a, b: _merge(a, b, factors="only b"),
    ),
    Mistake(
        "rescaled only part A, as if part B always had the larger maximum",
        "either part can hold the larger score, and it can differ from row to row: both parts "
        "get their own factor, which is 1 for the part whose maximum is the union's.",
        lambda a, b: _merge(a, b, factors="only a"),
    ),
    Mistake(
        "rescaled ℓ but added the outputs õ as they were",
        "õ is a sum of the same terms e^(s − m) as ℓ, each times a value vector: it needs the "
        "same factor as ℓ, or õ / ℓ is no longer an average.",
        lambda a, b: _merge(a, b, scale_o=False),
    ),
    Mistake(
        "rescaled õ but added the sums ℓ as they were",
        "ℓ is the sum of the same terms e^(s − m) as õ, without the values: it needs the same "
        "factor as õ, or õ / ℓ is no longer an average.",
        lambda a, b: _merge(a, b, scale_l=False),
    ),
    Mistake(
        "multiplied õ by the factors without a trailing dimension",
        "the factors have one number per row, shape (...), and õ has d_v numbers per row: "
        "without a size-1 last dimension the factors line up with õ's columns, which fails or, "
        "for a square batch, scales the wrong numbers.",
        lambda a, b: _merge(a, b, trailing=False),
    ),
    Mistake(
        "let two empty parts give NaN: −inf − (−inf)",
        "a part with no allowed key has m = −inf; when both are empty, the union's maximum is "
        "−inf too, and e^(−inf − (−inf)) is NaN. Such a row must stay (−inf, 0, 0).",
        lambda a, b: _merge(a, b, safe=False),
    ),
    Mistake(
        "undid the shifts with e^(m_a) and e^(m_b), which overflow for scores in the hundreds",
        "e^1000 is inf even in float64: the whole point of the running maximum is never to "
        "form e^m itself, only differences of maxima, which are at most 0.",
        _unshifted,
    ),
    Mistake(
        "took one maximum for the whole batch instead of each row's own",
        "every row (query) has its own scores and its own maximum: m is one number per row.",
        _one_maximum,
    ),
    Mistake(
        "returned part A's maximum instead of the larger of the two",
        "ℓ and õ are measured from the union's maximum, the larger of m_a and m_b: the triple "
        "must say so, or the next merge or the final division uses the wrong reference.",
        lambda a, b: (a[0], *_merge(a, b)[1:]),
    ),
    Mistake(
        "returned 0 instead of −inf as the maximum of a row with no allowed key",
        "0 is only the reference the factors are measured from; the row's maximum is still −inf, "
        "and a later merge with a part whose scores are all below 0 needs it so.",
        lambda a, b: (_reference_of(_merge(a, b)[0]), *_merge(a, b)[1:]),
    ),
    Mistake(
        "returned the normalised output õ / ℓ instead of the unnormalised sum",
        "the merged triple must be mergeable again, with a third part: õ stays a sum measured "
        "from m, and only the very end divides by ℓ.",
        _normalised,
    ),
    IN_PLACE,
)


def _part(scores: Tensor, values: Tensor) -> Part:
    """(m, ℓ, õ) of scores (..., n) and values (..., n, d_v); n = 0 gives (−inf, 0, 0)."""
    if scores.shape[-1] == 0:
        m = torch.full(scores.shape[:-1], -math.inf, dtype=scores.dtype)
        return m, torch.zeros_like(m), torch.zeros(*scores.shape[:-1], values.shape[-1]).double()
    m = scores.amax(dim=-1)
    p = torch.exp(scores - m.unsqueeze(-1))
    return m, p.sum(dim=-1), (p.unsqueeze(-2) @ values).squeeze(-2)


def _split_case(description: str, scores: Tensor, values: Tensor, cut: int) -> Case:
    """Parts from the keys before and after ``cut``; the expected triple from all of them."""
    part_a = _part(scores[..., :cut], values[..., :cut, :])
    part_b = _part(scores[..., cut:], values[..., cut:, :])
    return Case(description, (part_a, part_b), _part(scores, values), atol=1e-6, rtol=1e-5)


def _cases() -> list[Case]:
    g = fixed_generator()

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    one_row = torch.tensor([2.0, 3.5, 1.0, 0.5, -1.0], dtype=torch.float64)
    rows = randn(3, 6) * 2
    rows[0, 4], rows[2, 1] = 6.0, 6.0  # the largest score in part B for row 0, in A for row 2
    thousands = torch.tensor([[1000.0, 998.0, 1003.0, 999.5]], dtype=torch.float64)
    return [
        _split_case("one row, part A holds the largest score", one_row, randn(5, 2), 2),
        _split_case("one row, part B holds the largest score", one_row.flip(0), randn(5, 2), 3),
        _split_case(
            "3 rows, values of width 2: the largest score in A or B", rows, randn(3, 6, 2), 3
        ),
        _split_case("a square batch: 3 rows, values of width 3", randn(3, 5), randn(3, 5, 3), 2),
        _split_case("part B is empty: it saw only masked keys", randn(2, 4), randn(2, 4, 3), 4),
        _split_case("part A is empty", randn(2, 4), randn(2, 4, 3), 0),
        _split_case("scores in the thousands: maxima 1000 and 1003", thousands, randn(1, 4, 2), 2),
        _split_case(
            "a (2, 3) batch of rows, values of width 4", randn(2, 3, 7), randn(2, 3, 7, 4), 3
        ),
        Case(
            "both parts empty: a fully masked row",
            (_part(randn(2, 0), randn(2, 0, 3)), _part(randn(2, 0), randn(2, 0, 3))),
            _part(randn(2, 0), randn(2, 0, 3)),
        ),
    ]


@checker_of(MERGE, MISTAKES)
def check_merge_parts(fn: Callable[[Part, Part], Part]) -> CheckResult:
    """Check ``merge_parts(part_a, part_b) -> (m, ell, o)``: m, ℓ (...), õ (..., d_v)."""
    cases = _cases()
    result = check_function(
        MERGE, fn, cases, MISTAKES, forbidden=ONLINE_SOFTMAX, output_names=("m", "ell", "o")
    )
    edited = _edits_its_parts(fn, cases) if result.passed else None
    if edited is None:
        return result
    problem = "the result is right, but after the call the caller's parts have changed"
    return failed(MERGE, fn, f"case '{edited.description}'", problem, IN_PLACE)


def _edits_its_parts(fn: Callable[[Part, Part], Part], cases: list[Case]) -> Case | None:
    """The first case whose parts the answer changes (a right result, computed in place)."""
    for case in cases:
        parts = tuple(tuple(t.clone() for t in part) for part in case.args)
        try:
            fn(*parts)
        except Exception:  # a right answer does not raise
            continue
        pairs = zip(sum(parts, ()), sum(case.args, ()), strict=True)
        if not all(torch.equal(a, b) for a, b in pairs):
            return case
    return None
