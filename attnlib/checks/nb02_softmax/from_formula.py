"""Notebook 02, Exercise 1: softmax over the last dimension, from its formula.

The cases show each mistake: a square batch (a sum without ``keepdim`` divides the wrong way
instead of failing), a 3-D input (``dim=1`` is not the last dimension) and negative scores (a
division without ``exp``). The rows given in float64 are compared to 1e-6, so that a base a
little off e (2.718**x, a softmax at a wrong temperature) shows. An answer that passes must also
leave the x it is given as it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, vec
from attnlib.checks._implementations import LOG_SOFTMAX, LOGSUMEXP, SOFTMAX
from attnlib.checks._outcomes import call, same_behaviour
from attnlib.checks._properties import keeps_order_of_first_argument, rows_sum_to_one
from attnlib.checks._slips import EPSILONS, with_epsilons
from attnlib.checks.engine import check_function

Tensor = torch.Tensor

# An answer may not hand the work to an existing softmax, as the task says.
SOFTMAXES = SOFTMAX | LOG_SOFTMAX
# Exercise 2 also refuses logsumexp: it shifts by the maximum itself, which is the stable
# softmax's whole point. Exercise 1 is about the formula: exp(x − logsumexp(x)) is that formula.
SOFTMAX_IMPLEMENTATIONS = SOFTMAXES | LOGSUMEXP


def reference_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """The reference: a stable softmax in float64."""
    return attnlib.softmax(x.double(), dim=dim)


SOFTMAX_FROM_FORMULA = register(
    Exercise(
        id="ex1_softmax_from_formula",
        notebook="02",
        number=1,
        name="softmax_from_formula",
        hints=(
            "Softmax acts on each row on its own: within a row every weight is positive and the "
            "weights add up to 1, whatever the other rows hold. A row is the last dimension.",
            "Exponentiate every score. Then every row needs its own total, one number per row, "
            "kept in a shape that lines up with the row when you divide by it.",
            "A sum along the last dimension gives one total per row. Keep that dimension (size 1) "
            "so the division runs along each row: for a (3, 5) input the totals have shape "
            "(3, 1), not (3,). Try a (2, 2) input by hand and check each row sums to 1.",
        ),
    )
)


def _exp(x: Tensor) -> Tensor:
    return torch.exp(x)


def _softmax_of(x: Tensor) -> Tensor:
    return _exp(x) / _exp(x).sum(dim=-1, keepdim=True)


def _rows_of(x: Tensor) -> Tensor:
    rows = [torch.exp(row) / torch.exp(row).sum() for row in x]  # the rows of a 2-D x only
    return torch.stack(rows)


def _in_place(x: Tensor) -> Tensor:
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def _rounded_e(x: Tensor) -> Tensor:
    powers = 2.718**x
    return powers / powers.sum(dim=-1, keepdim=True)


MISTAKES = (
    Mistake(
        "divided by the total of the whole tensor, not by each row's own total",
        "with a batch, every row is divided by the sum over all rows, so no row sums to 1.",
        lambda x: _exp(x) / _exp(x).sum(),
    ),
    Mistake(
        "summed each row but dropped the summed dimension",
        "the totals have shape (B,) instead of (B, 1), so broadcasting lines them up with the "
        "columns: a square batch divides column j by row j's total, any other batch fails.",
        lambda x: _exp(x) / _exp(x).sum(dim=-1),
    ),
    Mistake(
        "normalised along the first dimension (each column), not the last (each row)",
        "the weights of one row must add up to 1; a sum along dim 0 adds up the rows' entries "
        "column by column.",
        lambda x: _exp(x) / _exp(x).sum(dim=0, keepdim=True),
    ),
    Mistake(
        "summed along dim 1, which is the last dimension only for a 2-D input",
        "a row is the last dimension whatever the number of dimensions; dim=1 is wrong for a "
        "(2, 3, 4) input and does not exist for a single row.",
        lambda x: _exp(x) / _exp(x).sum(dim=1, keepdim=True),
    ),
    Mistake(
        "normalised the scores without exponentiating them",
        "dividing the raw scores by their total gives negative weights for negative scores and "
        "breaks for scores that add up to 0; the exponential makes every weight positive.",
        lambda x: x / x.sum(dim=-1, keepdim=True),
    ),
    Mistake(
        "divided the exponentials by the total of the raw scores, not of the exponentials",
        "each weight is e^z over the row's total of e^z: only that total makes the row add up "
        "to 1. The total of the scores themselves has nothing to do with the weights, and can "
        "be 0 or negative.",
        lambda x: _exp(x) / x.sum(dim=-1, keepdim=True),
    ),
    Mistake(
        "used the sigmoid, 1 / (1 + e^−z), of each score on its own",
        "the sigmoid turns each score into a number between 0 and 1 without looking at the "
        "rest of its row, so the row does not add up to 1: softmax shares one total among the "
        "whole row.",
        lambda x: torch.sigmoid(x),
    ),
    Mistake(
        "returned the exponentials without dividing by their total",
        "e^z is positive but its row does not add up to 1; the division by the row's total "
        "makes the weights a distribution.",
        lambda x: _exp(x),
    ),
    Mistake(
        "divided by the row's mean instead of its total",
        "the mean is the total divided by n, so every row sums to n instead of 1.",
        lambda x: _exp(x) / _exp(x).mean(dim=-1, keepdim=True),
    ),
    Mistake(
        "divided by the row's largest exponential instead of the total",
        "the largest weight becomes 1 and the row sums to more than 1.",
        lambda x: _exp(x) / _exp(x).amax(dim=-1, keepdim=True),
    ),
    Mistake(
        "returned the log of the softmax (log-probabilities), not the weights",
        "x − log Σ e^x is log p: every entry is negative and the row does not add up to 1. The "
        "weights are the exponentials divided by their total.",
        lambda x: x - torch.log(_exp(x).sum(dim=-1, keepdim=True)),
    ),
    Mistake(
        "divided the scores by √n first, as scaled dot-product attention does",
        "the 1/√d_k of attention scales q·k before the softmax; it is not part of softmax "
        "itself. Dividing by √n softens every row: the weights come out flatter than the "
        "softmax of the scores.",
        lambda x: _softmax_of(x / math.sqrt(x.shape[-1])),
    ),
    Mistake(
        "looped over the rows with `for row in x`, which are rows only of a 2-D input",
        "iterating over a tensor runs along its first dimension: for a single row it gives "
        "single numbers (each becomes 1), for a (2, 3, 4) input whole matrices. A row is the "
        "last dimension whatever the shape.",
        _rows_of,
    ),
    *with_epsilons(
        "added a small number (an epsilon) to the total",
        "a total of exponentials is never 0, so nothing needs guarding: with the epsilon added, "
        "every row adds up to a little less than 1.",
        lambda eps: lambda x: _exp(x) / (_exp(x).sum(dim=-1, keepdim=True) + eps),
        EPSILONS[:5],  # 1e-6 and less: within the tolerance
    ),
    Mistake(
        "used a rounded value of e (such as 2.718) as the base",
        "b^x is e^(x·ln b): with b a little off e, every score is scaled by ln b, which is a "
        "softmax at a slightly wrong temperature, off in the 4th or 5th digit. torch.exp uses e "
        "itself.",
        _rounded_e,
    ),
    Mistake(
        "exponentiated x in place, changing the tensor the caller passed in",
        "exp_ (and every method ending in _) overwrites the caller's scores with their "
        "exponentials: whoever still needs the scores finds them gone, and nothing warns them.",
        _in_place,
    ),
)
ROUNDED_E, IN_PLACE = MISTAKES[-2], MISTAKES[-1]


def _formula_cases() -> list[Case]:
    g = fixed_generator()
    batch, square = torch.randn(3, 5, generator=g), torch.randn(4, 4, generator=g)
    cube = torch.randn(2, 3, 4, generator=g)
    negative = vec(-1, -3, 0.5)
    # float64 rows, compared to 1e-6: a float32 computation passes, a base a little off e not.
    return [
        Case("[1, 2, 3, 4]", (vec(1, 2, 3, 4),), reference_softmax(vec(1, 2, 3, 4)), 1e-8, 1e-6),
        Case("equal scores [2, 2, 2]", (vec(2, 2, 2),), vec(1, 1, 1) / 3, 1e-8, 1e-6),
        Case("negative scores [-1, -3, 0.5]", (negative,), reference_softmax(negative), 1e-8, 1e-6),
        Case("a batch of 3 rows, shape (3, 5)", (batch,), reference_softmax(batch)),
        Case("a square batch, shape (4, 4)", (square,), reference_softmax(square)),
        Case("a (2, 3, 4) tensor: 6 rows of 4", (cube,), reference_softmax(cube)),
    ]


@checker_of(SOFTMAX_FROM_FORMULA, MISTAKES)
def check_softmax_from_formula(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``softmax_from_formula(x)``: softmax over the last dimension of ``(..., n)``."""
    properties = (rows_sum_to_one(), keeps_order_of_first_argument())
    cases = _formula_cases()
    result = check_function(
        SOFTMAX_FROM_FORMULA,
        fn,
        cases,
        MISTAKES,
        forbidden=SOFTMAXES,
        properties=properties,
        dtypes=(),
    )
    unnamed = not result.passed and result.done and "The mistake:" not in result.message
    if unnamed and _at_a_wrong_temperature(fn, cases):
        first = result.message.splitlines()[0].split(", ", 1)[1]
        where, problem = first.split("': ", 1)
        return failed(SOFTMAX_FROM_FORMULA, fn, where + "'", problem, ROUNDED_E)
    return result


def _at_a_wrong_temperature(fn: Callable[[Tensor], Tensor], cases: list[Case]) -> bool:
    """Whether ``fn`` is the softmax of c·x on every case, for one c within 1 % of 1 (as b^x is,
    with c = ln b): c is read off the first case, [1, 2, 3, 4]."""
    got = call(fn, cases[0]).value
    if not isinstance(got, Tensor) or got.shape != (4,) or not bool((got > 0).all()):
        return False
    c = float(torch.log(got[3].double() / got[0].double()) / 3)
    if not 0 < abs(c - 1) < 1e-2:
        return False
    tolerance = (1e-6, 1e-5)
    return all(
        same_behaviour(
            call(fn, case), call(lambda x: reference_softmax(c * x.double()), case), tolerance
        )
        for case in cases
    )
