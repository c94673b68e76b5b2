"""Mistakes that come in families, built the same way for every exercise that meets them.

An epsilon "to be safe" is written with any small number, in a total, in each length, inside a
square root: :func:`with_epsilons` makes one :class:`~attnlib.checks._exercise.Mistake` per
usual size, all with the exercise's one name, so that the report names the slip whatever number
the learner chose. A softmax written by hand gets one in its row totals most often:
:func:`softmax_epsilons` is that family for any exercise whose answer takes a softmax.

A ``.T`` on a batch gives, for some exercises, the same numbers as another mistake (a sum along
dim 0): :func:`transposed_batch` names it as what it is, a ``.T``, when the learner's source
holds one (see ``Mistake.written``), with the words the crash report uses too.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch

from attnlib.checks._crash import TRANSPOSE_BATCH
from attnlib.checks._exercise import Mistake

# The sizes a learner picks for an epsilon; a smaller one changes no result beyond a check's
# tolerance, and is then no mistake.
EPSILONS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7)


def with_epsilons(
    name: str,
    why: str,
    make: Callable[[float], Callable[..., object]],
    epsilons: Sequence[float] = EPSILONS,
) -> tuple[Mistake, ...]:
    """One mistake named ``name`` per epsilon: ``make(eps)`` is the answer with that epsilon."""
    return tuple(Mistake(name, why, make(eps)) for eps in epsilons)


ROW_TOTAL_EPSILON = (
    "added a small number (an epsilon) to each row's total, so its weights add up to less than 1"
)
ROW_TOTAL_EPSILON_WHY = (
    "once each row's largest score is subtracted, its largest exponential is e^0 = 1, so its "
    "total is at least 1 and never 0: it needs no guard, and an epsilon there takes a share "
    "from every weight (softmax's weights add up to exactly 1)."
)


def softmax_plus(eps: float) -> Callable[..., torch.Tensor]:
    """A softmax by hand with ``eps`` in each row's total, exp(s − max) / (Σ exp(s − max) + eps),
    called as ``softmax(scores, dim)``; a row of nothing but −inf gives 0."""

    def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
        top = scores.amax(dim=dim, keepdim=True)
        powers = torch.exp(scores - top.masked_fill(top == -math.inf, 0.0))
        return powers / (powers.sum(dim=dim, keepdim=True) + eps)

    return softmax


def softmax_epsilons(
    make: Callable[[Callable[..., torch.Tensor]], Callable[..., object]],
) -> tuple[Mistake, ...]:
    """The epsilon in a softmax's row totals: ``make(softmax)`` is the answer with the softmax
    it takes replaced by :func:`softmax_plus`. Each total is at least 1, so an epsilon changes a
    weight by at most that fraction: 1e-4 and less stay within the usual tolerance (1e-4)."""
    return with_epsilons(
        ROW_TOTAL_EPSILON,
        ROW_TOTAL_EPSILON_WHY,
        lambda eps: make(softmax_plus(eps)),
        EPSILONS[:3],
    )


def transposed_batch(fn: Callable[..., object], why: str = "") -> Mistake:
    """The mistake of a ``.T`` on a batch, which ``fn`` computes; named only when the learner's
    source takes a ``.T`` (the same numbers can come from another mistake)."""

    def quietly(*args: Any) -> object:
        with warnings.catch_warnings():  # torch warns of .T on anything but a matrix
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args)

    quietly.__attnlib_source__ = _source(fn)  # type: ignore[attr-defined]  # it shows the .T
    return Mistake(TRANSPOSE_BATCH.name, why or TRANSPOSE_BATCH.why, quietly, written=r"\.T\b")


def _source(fn: Callable[..., object]) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return ""
