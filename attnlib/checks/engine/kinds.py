"""What kind of value a result is: the engine's checks of a result whose numbers are right.

A whole number asked for must come back whole, and integer indices as integers; with the
engine's ``dtypes`` option each result must keep the float dtype of its inputs, and a case is
tried again with its inputs in each of ``dtypes`` (:func:`probe_dtypes`): a result in another
dtype, or a crash such as a float32 constant meeting float64 input, is named. A result whose
type is a subclass of torch.Tensor is refused before it is compared. Serves the checkers of
notebooks 00–12.
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._crash import float_dtype_of
from attnlib.checks._exercise import Exercise, failed, refused
from attnlib.checks._framework import Case, CheckResult, describe
from attnlib.checks._mistake import Mistake
from attnlib.checks._outcomes import call
from attnlib.checks.engine.naming import crash_report

WHOLE_NUMBER = Mistake(
    "returned a float where the task asks for a whole number",
    "a count is a whole number, and the task asks for one: a float (from /, from a float "
    "accumulator, from .item() of a float tensor) prints with a decimal point, and past 2**53 "
    "it is not even exact.",
    lambda *args: None,
)
INTEGER_TENSOR = Mistake(
    "returned a float tensor where the task asks for integers (int64)",
    "positions and token ids are whole numbers, and indexing with them needs an integer "
    "tensor: a float tensor of the same values cannot index, gather or be compared as ids.",
    lambda *args: None,
)
# A result whose type is a subclass of torch.Tensor could decide for itself what comparing it
# means (its __torch_function__ sees every operation on it, isclose included).
TENSOR_SUBCLASS = Mistake(
    "returned a subclass of torch.Tensor, not a plain tensor",
    "a check compares plain tensors only: a subclass can change what every operation on it "
    "does, comparisons included, so its numbers cannot be trusted. Return a torch.Tensor.",
    lambda *args: None,
)


def dtype_changed(got: str, given: str) -> Mistake:
    """The mistake of a result in the float dtype ``got`` for inputs in ``given``."""
    return Mistake(
        f"returns {got} for {given} input",
        f"a function of {given} tensors is expected to answer in {given}: the caller chose that "
        "dtype (float16 for memory, float64 for precision). A tensor made without a dtype "
        "(torch.zeros, torch.full, torch.eye, torch.tensor …) is float32 and drags a result "
        "mixed with it to float32 or beyond, and .float() or .double() changes it outright: "
        "make new tensors in the input's dtype, or bring the result back to it.",
        lambda *args: None,
    )


def _is_whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return (
        isinstance(value, torch.Tensor)
        and value.numel() == 1
        and not value.is_floating_point()
        and not value.is_complex()
        and value.dtype != torch.bool
    )


def _parts(value: Any, expected: Any) -> list[tuple[Any, Any]]:
    if isinstance(expected, tuple) and isinstance(value, (tuple, list)):
        return list(zip(value, expected, strict=False))
    return [(value, expected)]


def kind_problem(value: Any, case: Case, carry_dtype: bool) -> tuple[str, Mistake] | None:
    """A result whose values are right but whose kind is not: a float where a whole number is
    asked for, float indices where integers are, or (``carry_dtype``) another float dtype than
    the inputs'."""
    given = float_dtype_of(case.args) if carry_dtype else None
    for got, expected in _parts(value, case.expected):
        if isinstance(expected, int) and not isinstance(expected, bool) and not _is_whole(got):
            one = isinstance(got, float) or (isinstance(got, torch.Tensor) and got.numel() == 1)
            shown = f"{float(got)!r}" if one else describe(got)
            return (
                f"the result is {shown}, a {type(got).__name__}, where the task asks for the "
                f"whole number {expected}",
                WHOLE_NUMBER,
            )
        if not isinstance(expected, torch.Tensor) or not isinstance(got, torch.Tensor):
            continue
        integer = not expected.is_floating_point() and expected.dtype != torch.bool
        if integer and not expected.is_complex() and got.is_floating_point():
            return (
                f"the values are right but their dtype is {got.dtype}: the task asks for "
                f"integers, {expected.dtype}",
                INTEGER_TENSOR,
            )
        if given is not None and expected.is_floating_point() and got.is_floating_point():
            dtype = str(got.dtype).removeprefix("torch.")
            if dtype != given:
                return (
                    f"the values are right, but the inputs are {given} and the result is {dtype}",
                    dtype_changed(dtype, given),
                )
    return None


def _cast(value: Any, dtype: torch.dtype) -> Any:
    """``value`` with every float tensor, and every module, in ``dtype`` (copies)."""
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value.clone()
    if isinstance(value, nn.Module):
        return copy.deepcopy(value).to(dtype)
    if isinstance(value, (tuple, list)):
        return type(value)(_cast(part, dtype) for part in value)
    return value


def probe_dtypes(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    case: Case,
    dtypes: Sequence[torch.dtype],
    forbidden: Forbidden,
) -> CheckResult | None:
    """The failure of ``case`` tried with its float inputs in each of ``dtypes``: a crash, or a
    result in another dtype; None when every one keeps its dtype."""
    given = float_dtype_of(case.args)
    for dtype in dtypes:
        name = str(dtype).removeprefix("torch.")
        if given is None or given == name:
            continue
        probe = Case(f"{case.description}, in {name}", _cast(case.args, dtype), case.expected)
        watch = CallWatch(forbidden)
        try:
            with watch:
                outcome = call(learner_fn, probe)
        except NotImplementedError:  # a part left undone for this dtype only: not this probe's
            continue
        if watch.seen:
            return refused(exercise, learner_fn, watch.seen)
        where = f"case '{probe.description}'"
        error = outcome.error
        if error is not None:
            if "not implemented for" in str(error):  # torch has no such kernel: not a slip
                continue
            problem = f"your function raised {type(error).__name__}: {error}"
            lines, mistake = crash_report(error, name, None)
            return failed(exercise, learner_fn, where, problem + lines, mistake)
        for got, expected in _parts(outcome.value, case.expected):
            if (
                isinstance(expected, torch.Tensor)
                and expected.is_floating_point()
                and isinstance(got, torch.Tensor)
                and got.is_floating_point()
                and got.dtype != dtype
            ):
                got_name = str(got.dtype).removeprefix("torch.")
                problem = f"the inputs are {name} and the result is {got_name}"
                return failed(exercise, learner_fn, where, problem, dtype_changed(got_name, name))
    return None
