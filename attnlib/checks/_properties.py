"""Properties every right answer of some exercises has, for reports that say what broke.

A :class:`~attnlib.checks.engine.Property` turns "differs at index (1, 2)" into "the weights
of row 1 add up to 0.41": what a right answer must do, and where the learner's does not.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._framework import Case
from attnlib.checks.engine import Property

Tensor = torch.Tensor


def plural(noun: str) -> str:
    """The plural of an entry's name: weight → weights, probability → probabilities."""
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


def _distribution_problem(got: Tensor, dim: int, what: str) -> str | None:
    got = got.detach().double()
    if not bool(torch.isfinite(got).all()):
        return None  # the comparison itself reports NaN and inf
    if bool((got < 0).any()):
        least = got.min().item()
        return f"it has a negative {what} ({least:.3g}); {plural(what)} are never negative"
    sums = got.sum(dim=dim)
    off = (sums - 1).abs()
    if bool((off > 1e-3).any()):
        if sums.dim() == 0:
            return f"the {plural(what)} add up to {sums.item():.4g}, not 1"
        where = tuple(int(i) for i in torch.nonzero(off > 1e-3)[0])
        return (
            f"the {plural(what)} along dim={dim} do not add up to 1: the row at index {where} "
            f"sums to {sums[where].item():.4g}"
        )
    return None


def rows_sum_to_one(
    dim_of: Callable[[Case], int] = lambda case: -1, what: str = "weight"
) -> Property:
    """Non-negative entries that add up to 1 along the dimension ``dim_of(case)``.

    ``what`` names an entry in the report ("weight", "probability"); for a tuple result
    (out, weights) the property reads the weights, the last part.
    """

    def problem(got: object, case: Case) -> str | None:
        if isinstance(got, (tuple, list)):
            got = got[-1]
        if not isinstance(got, Tensor) or got.is_complex():
            return None
        return _distribution_problem(got, dim_of(case), what)

    return Property(problem)


def keeps_order_of_first_argument() -> Property:
    """For a 1-D input: a larger score never gets a smaller result (softmax keeps the order)."""

    def problem(got: object, case: Case) -> str | None:
        x = case.args[0]
        if not isinstance(got, Tensor) or x.dim() != 1 or got.shape != x.shape:
            return None
        order = got.detach().double().argsort(stable=True)
        if not torch.equal(order, x.double().argsort(stable=True)):
            return "a larger score got a smaller weight: softmax keeps the order of the scores"
        return None

    return Property(problem)
