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
from attnlib.checks._exercise import Exercise, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.engine import check_function
from attnlib.checks.nb12_efficient.merge_mistakes import IN_PLACE, MISTAKES

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
