"""Notebook 02, Exercise 1: softmax over the last dimension, from its formula.

The cases show each mistake: a square batch (a sum without ``keepdim`` divides the wrong way
instead of failing), a 3-D input (``dim=1`` is not the last dimension) and negative scores (a
division without ``exp``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, vec
from attnlib.checks._properties import keeps_order_of_first_argument, rows_sum_to_one
from attnlib.checks._run import check_function

Tensor = torch.Tensor

# An answer may not hand the work to an existing softmax (Exercise 2 shares the list).
SOFTMAX_IMPLEMENTATIONS = Forbidden(
    python={attnlib.softmax: "attnlib.softmax", attnlib.naive_softmax: "attnlib.naive_softmax"},
    torch={
        "softmax": "torch's softmax",
        "log_softmax": "torch's log_softmax",
        "_softmax": "torch's softmax",
        "logsumexp": "torch.logsumexp",
    },
)


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
)


def _formula_cases() -> list[Case]:
    g = fixed_generator()
    batch, square = torch.randn(3, 5, generator=g), torch.randn(4, 4, generator=g)
    cube = torch.randn(2, 3, 4, generator=g)
    negative = vec(-1, -3, 0.5)
    return [
        Case("[1, 2, 3, 4]", (vec(1, 2, 3, 4),), reference_softmax(vec(1, 2, 3, 4))),
        Case("equal scores [2, 2, 2]", (vec(2, 2, 2),), vec(1, 1, 1) / 3),
        Case("negative scores [-1, -3, 0.5]", (negative,), reference_softmax(negative)),
        Case("a batch of 3 rows, shape (3, 5)", (batch,), reference_softmax(batch)),
        Case("a square batch, shape (4, 4)", (square,), reference_softmax(square)),
        Case("a (2, 3, 4) tensor: 6 rows of 4", (cube,), reference_softmax(cube)),
    ]


@checker_of(SOFTMAX_FROM_FORMULA, MISTAKES)
def check_softmax_from_formula(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``softmax_from_formula(x)``: softmax over the last dimension of ``(..., n)``."""
    properties = (rows_sum_to_one(), keeps_order_of_first_argument())
    return check_function(
        SOFTMAX_FROM_FORMULA,
        fn,
        _formula_cases(),
        MISTAKES,
        forbidden=SOFTMAX_IMPLEMENTATIONS,
        properties=properties,
    )
