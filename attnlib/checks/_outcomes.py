"""What one call of an answer gave, and when two calls behaved the same.

An :class:`Outcome` is a value or a raised error, and which tensor arguments the call changed in
place (:func:`call` runs the answer on copies and compares them after). Two outcomes are the
same when their values agree within a tolerance (NaN equal to NaN) or their errors are of one
type and one kind of message (:mod:`attnlib.checks._errors`): how a checker tells which mistake
an answer made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from attnlib.checks._errors import same_error
from attnlib.checks._framework import Case


@dataclass(frozen=True)
class Outcome:
    """What one call gave: a value, or the exception it raised; and which of its tensor
    arguments (by position) the call changed in place."""

    value: Any = None
    error: Exception | None = None
    changed: tuple[int, ...] = ()


def _copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_copy(v) for v in value)
    return value


def tensor_changed(before: Any, after: Any) -> bool:
    """Whether tensor ``after`` differs from ``before``: in shape, dtype or a value (NaN equal
    to NaN). Not tensors: False."""
    if not isinstance(before, torch.Tensor) or not isinstance(after, torch.Tensor):
        return False
    if before.shape != after.shape or before.dtype != after.dtype:
        return True
    same = (
        (before == after) | (before.isnan() & after.isnan())
        if before.is_floating_point()
        else (before == after)
    )
    return not bool(same.all())


def call(fn: Callable[..., Any], case: Case) -> Outcome:
    """``fn`` on copies of the case's arguments (NotImplementedError is left to the caller)."""
    args = _copy(case.args)
    try:
        value, error = fn(*args), None
    except NotImplementedError:
        raise
    except Exception as raised:  # the learner's bug, reported instead of a traceback
        value, error = None, raised
    changed = tuple(
        i for i, (a, b) in enumerate(zip(case.args, args, strict=True)) if tensor_changed(a, b)
    )
    return Outcome(value=value, error=error, changed=changed)


def same_behaviour(a: Outcome, b: Outcome, tolerance: tuple[float, float]) -> bool:
    """Whether two outcomes are the same: equal values (NaN equal to NaN), or errors of the
    same type whose messages are of the same kind (:mod:`attnlib.checks._errors`)."""
    if a.error is not None and b.error is not None:
        return same_error(a.error, b.error)
    if a.error is not None or b.error is not None:
        return False
    return _same_value(a.value, b.value, tolerance)


def _same_value(a: Any, b: Any, tolerance: tuple[float, float]) -> bool:
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (
            isinstance(a, (tuple, list))
            and isinstance(b, (tuple, list))
            and len(a) == len(b)
            and all(_same_value(x, y, tolerance) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape:
            return False
        if a.dtype == torch.bool or b.dtype == torch.bool:
            return a.dtype == b.dtype and torch.equal(a, b)
        atol, rtol = tolerance
        a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
        return bool(torch.isclose(a64, b64, atol=atol, rtol=rtol, equal_nan=True).all())
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return False
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):  # a learner who wrote numpy
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and _same_value(torch.from_numpy(a), torch.from_numpy(b), tolerance)
        )
    if isinstance(a, float) and isinstance(b, float):
        atol, rtol = tolerance
        return abs(a - b) <= atol + rtol * abs(b) or (a != a and b != b)
    return bool(a == b)
