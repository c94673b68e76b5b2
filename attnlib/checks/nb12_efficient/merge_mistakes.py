"""The mistakes learners make on notebook 12's merge of two partial results (Exercise 2).

Each is a merge written as a learner would write it, with one thing wrong: most go through
:func:`_merge`, whose keywords switch each mistake on. Notebook 12.
"""

from __future__ import annotations

import math

import torch

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor
Part = tuple[Tensor, Tensor, Tensor]


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


def _floored(part_a: Part, part_b: Part, floor: float | str) -> Part:
    """The merge with its maximum kept above ``floor`` (a number, or the dtype's smallest)."""
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    low = torch.finfo(m_a.dtype).min if floor == "finfo" else float(floor)
    m = torch.maximum(torch.maximum(m_a, m_b), torch.full_like(m_a, low))
    f_a, f_b = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, l_a * f_a + l_b * f_b, o_a * f_a.unsqueeze(-1) + o_b * f_b.unsqueeze(-1)


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


def _python_max(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = max(m_a, m_b)  # fine for one row, ambiguous for several
    f_a, f_b = math.exp(m_a - m), math.exp(m_b - m)
    return m, l_a * f_a + l_b * f_b, o_a * f_a + o_b * f_b


def _smaller_maximum(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = torch.minimum(m_a, m_b)
    f_a, f_b = torch.exp(m_a - _reference_of(m)), torch.exp(m_b - _reference_of(m))
    return m, l_a * f_a + l_b * f_b, o_a * f_a.unsqueeze(-1) + o_b * f_b.unsqueeze(-1)


def _a_as_reference(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    f_b = torch.exp(m_b - _reference_of(m_a))  # B moved to A's maximum
    return m_a, l_a + l_b * f_b, o_a + o_b * f_b.unsqueeze(-1)


def _first_axis_trailing(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = torch.maximum(m_a, m_b)
    f_a, f_b = torch.exp(m_a - _reference_of(m)), torch.exp(m_b - _reference_of(m))
    return m, l_a * f_a + l_b * f_b, o_a * f_a[:, None] + o_b * f_b[:, None]


def _averaged_by_sums(part_a: Part, part_b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    ell = l_a + l_b
    w_a = (l_a / ell).unsqueeze(-1)
    return torch.maximum(m_a, m_b), ell, w_a * o_a + (1 - w_a) * o_b


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
    Mistake(
        "compared the two maxima with Python's max or an if, which works for one row only",
        "m_a and m_b hold one maximum per row: Python asks a tensor of several numbers for a "
        "single True or False, which it does not have. The larger maximum is chosen row by "
        "row, with a torch operation that works elementwise.",
        _python_max,
    ),
    Mistake(
        "took the smaller of the two maxima as the union's maximum",
        "the union's m is its largest score, the larger of m_a and m_b: measured from the "
        "smaller one, the other part's terms exceed 1 and, for scores in the thousands, "
        "overflow.",
        _smaller_maximum,
    ),
    Mistake(
        "averaged the two õ weighted by their ℓ, as if each õ were already divided by its ℓ",
        "õ is an unnormalised sum, not an average, and each part's ℓ and õ are measured from "
        "its own maximum: both must first be moved to the union's maximum, then simply added.",
        _averaged_by_sums,
    ),
    Mistake(
        "measured everything from part A's maximum, as if A always held the larger score",
        "either part can hold the larger score, row by row: the union's maximum is the larger "
        "of the two, and measured from a smaller one the other part's terms exceed 1 and, for "
        "scores in the thousands, overflow.",
        _a_as_reference,
    ),
    Mistake(
        "gave the factors their size-1 dimension with [:, None], after the first dimension "
        "instead of at the end",
        "m and ℓ have one number per row in any shape (...), no dimension at all for a single "
        "row: the size-1 dimension that lines a factor up with õ's d_v columns goes last, "
        "whatever comes before it.",
        _first_axis_trailing,
    ),
    IN_PLACE,
    *(
        Mistake(
            "kept the maximum from falling below a finite floor (such as -1e4) instead of "
            "letting it be -inf",
            "a share with no allowed key has m = -inf, and two of them merge to m = -inf: a "
            "floor changes that m into a number no score ever had. The shift that keeps "
            "exp(-inf - -inf) from NaN belongs in the factors, not in the m returned.",
            lambda part_a, part_b, floor=floor: _floored(part_a, part_b, floor),
        )
        for floor in (-1e4, -1e9, -1e30, "finfo")
    ),
)
