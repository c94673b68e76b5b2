"""Notebook 02, Exercise 2: a softmax along any dimension that never overflows or underflows.

The cases show each mistake: rows of very different sizes (one maximum for the whole tensor),
scores far apart (a shift by the minimum or the mean), scores just past exp's float32 limits
(no shift, or a shift by the positions of the maxima, not their values), float16 (``exp``
overflows above 11.1), reductions along dim 0 and dim 1, a square input (a maximum without
``keepdim``) and a tie.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._properties import keeps_order_of_first_argument, rows_sum_to_one
from attnlib.checks._slips import EPSILONS, with_epsilons
from attnlib.checks.engine import check_function
from attnlib.checks.nb02_softmax.from_formula import SOFTMAX_IMPLEMENTATIONS, reference_softmax

Tensor = torch.Tensor


STABLE_SOFTMAX = register(
    Exercise(
        id="ex2_stable_softmax",
        notebook="02",
        number=2,
        name="stable_softmax",
        hints=(
            "Adding the same constant to every score of one row does not change that row's "
            "softmax (section 7: the factor cancels). Choose, for each row, a constant that keeps "
            "every exponent small.",
            "If every exponent is at most 0, exp cannot overflow; if one of them is exactly 0, "
            "the row's total is at least 1 and cannot underflow to 0 either. One choice of "
            "constant does both, and it must be taken along `dim`, row by row.",
            "Shift each row (along `dim`) by its own largest score, kept with a size-1 dimension "
            "so it lines up with the row, then apply Exercise 1's formula along `dim`. A shift by "
            "the smallest score or the mean still overflows when the scores are far apart.",
        ),
    )
)


def _shifted(x: Tensor, shift: Tensor, dim: int) -> Tensor:
    exps = torch.exp(x - shift)
    return exps / exps.sum(dim=dim, keepdim=True)


def _softmax(x: Tensor, dim: int) -> Tensor:
    exps = torch.exp(x)
    return exps / exps.sum(dim=dim, keepdim=True)


# A learner clamps at a limit of their own choosing; above 88.7 float32 overflows as if unclamped.
_CLAMP_LIMITS = (10.0, 20.0, 30.0, 50.0, 60.0, 70.0, 80.0, 85.0, 88.0)
_CLAMPS = tuple(
    Mistake(
        "clamped the scores instead of shifting them",
        "clamping changes the differences between scores, and softmax depends on nothing "
        "else: the weights come out wrong wherever a score was clamped.",
        lambda x, dim=-1, t=limit: _softmax(x.clamp(-t, t), dim),
    )
    for limit in _CLAMP_LIMITS
) + tuple(
    Mistake(
        "clamped the large scores from above instead of shifting them",
        "clamping changes the differences between scores, and softmax depends on nothing "
        "else: the large scores all become equal, and very negative ones still underflow "
        "to 0 / 0.",
        lambda x, dim=-1, t=limit: _softmax(x.clamp(max=t), dim),
    )
    for limit in _CLAMP_LIMITS
)

MISTAKES = (
    Mistake(
        "exponentiated the scores as they are, without shifting them",
        "e^1000 overflows to inf and inf / inf is NaN; e^-1000 underflows to 0 and 0 / 0 is NaN. "
        "In float16, exp already overflows above 11.1.",
        lambda x, dim=-1: torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True),
    ),
    Mistake(
        "subtracted the positions of the largest scores (what max(dim=...)[1] holds), not "
        "their values",
        "with a dim, max returns the largest values and their indices; an index is a small "
        "whole number, so the scores are hardly shifted and e^1000 still overflows.",
        lambda x, dim=-1: _shifted(x, x.max(dim=dim, keepdim=True)[1], dim),
    ),
    Mistake(
        "subtracted the largest score of the whole tensor, not each row's own largest",
        "a row whose scores are far below the overall maximum still underflows to 0 / 0: each "
        "row needs its own shift.",
        lambda x, dim=-1: _shifted(x, x.max(), dim),
    ),
    Mistake(
        "shifted each row by its smallest score",
        "after that shift every exponent is at least 0, and the largest is as large as the "
        "row's spread: scores 1000 apart still overflow.",
        lambda x, dim=-1: _shifted(x, x.amin(dim=dim, keepdim=True), dim),
    ),
    Mistake(
        "shifted each row by its mean",
        "the scores above the mean keep exponents as large as half the row's spread, which "
        "overflows for scores far apart.",
        lambda x, dim=-1: _shifted(x, x.mean(dim=dim, keepdim=True), dim),
    ),
    Mistake(
        "always worked along the last dimension, whatever `dim` was",
        "with dim=0 the distributions run down the columns: both the shift and the total "
        "must be taken along `dim`.",
        lambda x, dim=-1: _shifted(x, x.amax(dim=-1, keepdim=True), -1),
    ),
    Mistake(
        "shifted along `dim` but took the total along the last dimension",
        "the shift can be any constant per row, but the total must run along the same `dim` "
        "as the distribution.",
        lambda x, dim=-1: (
            torch.exp(x - x.amax(dim=dim, keepdim=True))
            / torch.exp(x - x.amax(dim=dim, keepdim=True)).sum(dim=-1, keepdim=True)
        ),
    ),
    Mistake(
        "took each row's maximum without keeping its dimension",
        "the maxima have one dimension fewer than the scores, so they broadcast along the "
        "wrong dimension: a square input is shifted column by column, any other fails.",
        lambda x, dim=-1: _shifted(x, x.amax(dim=dim), dim),
    ),
    *_CLAMPS,
    Mistake(
        "divided by the largest exponential after exponentiating, instead of shifting first",
        "by then e^1000 has already overflowed to inf: the shift has to come before exp.",
        lambda x, dim=-1: (
            (torch.exp(x) / torch.exp(x).amax(dim=dim, keepdim=True))
            / (torch.exp(x) / torch.exp(x).amax(dim=dim, keepdim=True)).sum(dim=dim, keepdim=True)
        ),
    ),
    Mistake(
        "subtracted what max(dim=...) returns, values and indices together, not the values",
        "with a dim, max returns a pair (the largest values and where they are): a tensor minus "
        "that pair raises. The values are one part of it (amax gives them alone).",
        lambda x, dim=-1: _shifted(x, x.max(dim=dim, keepdim=True), dim),
    ),
    *with_epsilons(
        "added a small number (an epsilon) to the total",
        "after the shift the largest exponential is e^0 = 1, so the total is at least 1 and "
        "nothing needs guarding: with the epsilon added, every row adds up to less than 1.",
        lambda eps: (
            lambda x, dim=-1: (
                torch.exp(x - x.amax(dim=dim, keepdim=True))
                / (torch.exp(x - x.amax(dim=dim, keepdim=True)).sum(dim=dim, keepdim=True) + eps)
            )
        ),
        EPSILONS[:3],  # 1e-4 and less: within the tolerance
    ),
    Mistake(
        "divided the scores by the row's largest score instead of subtracting it",
        "dividing changes the differences between the scores, and softmax depends on nothing "
        "else: the weights come out wrong, and a row whose largest score is negative or 0 "
        "breaks. Subtracting a constant changes nothing.",
        lambda x, dim=-1: _softmax(x / x.amax(dim=dim, keepdim=True), dim),
    ),
    Mistake(
        "divided the scores by the row's largest absolute score instead of subtracting the largest",
        "dividing changes the differences between the scores, and softmax depends on nothing "
        "else: the scores all land between −1 and 1 and the weights flatten out. Subtracting a "
        "constant changes nothing.",
        lambda x, dim=-1: _softmax(x / x.abs().amax(dim=dim, keepdim=True), dim),
    ),
)


def _f32(*values: float) -> Tensor:
    return torch.tensor(values, dtype=torch.float32)


def _stable_cases() -> list[Case]:
    # float32, as a learner's scores are: exp overflows above 88.7 (float64's only above 709).
    g = fixed_generator()
    mixed = torch.stack([_f32(1000, 1001, 1002), _f32(0, 1, 2), _f32(-1000, -998, -999)])
    columns = torch.randn(3, 4, generator=g) * 300  # (n, B): distributions along dim 0
    square = torch.randn(3, 3, generator=g) * 200
    cube = torch.randn(2, 5, 3, generator=g) * 100
    half = torch.tensor([10.0, 11.0, 12.0], dtype=torch.float16)
    cases = [
        ("[1, 2, 3, 4]", _f32(1, 2, 3, 4), -1),
        ("large scores [1000, 1001, 1002]", _f32(1000, 1001, 1002), -1),
        ("very negative scores [-1000, -1001, -1002]", _f32(-1000, -1001, -1002), -1),
        (
            "scores where float32's exp loses precision [-100, -101, -102]",
            _f32(-100, -101, -102),
            -1,
        ),
        ("scores far apart [-500, 0, 500]", _f32(-500, 0, 500), -1),
        ("scores just past exp's float32 limit of 88.7 [87, 88, 89.5]", _f32(87, 88, 89.5), -1),
        ("3 rows of very different sizes, dim=-1", mixed, -1),
        ("a (3, 4) tensor along dim=0", columns, 0),
        ("a square (3, 3) tensor along dim=0", square, 0),
        ("a (2, 5, 3) tensor along dim=1", cube, 1),
        ("a tie for the largest score [5, 5, -5]", _f32(5, 5, -5), -1),
    ]
    checked = [Case(name, (x, dim), reference_softmax(x, dim=dim)) for name, x, dim in cases]
    float16 = Case("float16 scores [10, 11, 12]", (half, -1), reference_softmax(half), 2e-3, 2e-3)
    return [*checked, float16]


@checker_of(STABLE_SOFTMAX, MISTAKES)
def check_stable_softmax(fn: Callable[[Tensor, int], Tensor]) -> CheckResult:
    """Check ``stable_softmax(x, dim)``: finite weights along ``dim`` for any finite scores."""
    properties = (rows_sum_to_one(lambda case: case.args[1]), keeps_order_of_first_argument())
    return check_function(
        STABLE_SOFTMAX,
        fn,
        _stable_cases(),
        MISTAKES,
        forbidden=SOFTMAX_IMPLEMENTATIONS,
        properties=properties,
        dtypes=(torch.float64,),
    )
