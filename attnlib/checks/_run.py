"""Run a learner's function on an exercise's cases, and name the mistake when it fails.

:func:`check_function` is the checker of every exercise whose answer is a function of tensors.
It calls the answer on each case (copies of the arguments), watching for calls of what the
exercise asks the learner to write. When a case fails, it runs each of the exercise's
:class:`~attnlib.checks._exercise.Mistake` s on the same cases: the first whose results are the
learner's on *every* case (the same values, or an exception where the learner's raised) is the
mistake the report names. Comparing whole behaviour, not one case, keeps a mistake that happens
to agree with another on a small case from being misnamed. When no mistake matches, the report
names the failing case and the first :class:`Property` of a right answer that the result
breaks, and gives the exercise's first hint.

A crash is reported where the learner's code raised it (:mod:`attnlib.checks._crash`: the line,
its operation, the shapes of its tensors), and named by the slip it shows when no mistake of the
table behaves as the answer did (a ``.T`` on a batch on the crashing line is named even then,
unless the table's mistake is that ``.T`` or one the learner's source shows). Of mistakes that
behave alike, the one whose ``written`` pattern the learner's source holds is named. A whole
number asked for must come back whole, and integer indices as integers. With ``dtypes`` given
(for a task that names a dtype, or whose result must keep its input's), each result must keep
the float dtype of its inputs, and the first case (``probe_case``) is run again with its inputs
in each of ``dtypes``: a result in another dtype, or a crash such as a float32 constant meeting
float64 input, is named.
"""

from __future__ import annotations

import copy
import inspect
import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import NOTHING, CallWatch, Forbidden
from attnlib.checks._crash import (
    TRANSPOSE_BATCH,
    crash_of,
    float_dtype_of,
    slip_of,
)
from attnlib.checks._exercise import Exercise, Mistake, failed, not_done, passed, refused
from attnlib.checks._framework import (
    Case,
    CheckResult,
    compare_outputs,
    task_of,
    tensor_subclass_in,
)
from attnlib.checks._outcomes import Outcome, call, same_behaviour
from attnlib.checks._threads import one_thread


@dataclass(frozen=True)
class Property:
    """A property of every right answer. ``problem(got, case)`` returns a sentence saying how
    ``got`` breaks it ("row 1 sums to 0.41; each row of weights sums to 1"), or None."""

    problem: Callable[[Any, Case], str | None]


def _tolerance(case: Case, atol: float, rtol: float) -> tuple[float, float]:
    return (atol if case.atol is None else case.atol, rtol if case.rtol is None else case.rtol)


def _problem(
    outcome: Outcome,
    case: Case,
    tolerance: tuple[float, float],
    output_names: tuple[str, ...],
    properties: Sequence[Property],
) -> str | None:
    if outcome.error is not None:
        return f"your function raised {type(outcome.error).__name__}: {outcome.error}"
    got, expected = outcome.value, case.expected
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            names = ", ".join(output_names[: len(expected)])
            return f"it should return {len(expected)} results ({names}), got {_describe(got)}"
        parts = list(zip(output_names, got, expected, strict=False))
    else:
        parts = [("the result", got, expected)]
    for label, got_part, expected_part in parts:
        problem = _compare(got_part, expected_part, label, tolerance)
        if problem is None:
            continue
        if _same_shape(got_part, expected_part):
            for prop in properties:  # a broken property says more than a differing number
                broken = prop.problem(got, case)
                if broken is not None:
                    return broken
        return problem
    return None


def _same_shape(got: Any, expected: Any) -> bool:
    return (
        isinstance(got, torch.Tensor)
        and isinstance(expected, torch.Tensor)
        and got.shape == expected.shape
    )


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def _compare(got: Any, expected: Any, label: str, tolerance: tuple[float, float]) -> str | None:
    if isinstance(expected, torch.Tensor):
        return compare_outputs(got, expected, label, *tolerance)
    if isinstance(expected, float) and isinstance(got, (int, float, torch.Tensor)):
        value = float(got) if not isinstance(got, torch.Tensor) or got.numel() == 1 else None
        if value is None:
            return f"{label} should be one number, got {_describe(got)}"
        atol, rtol = tolerance
        if abs(value - expected) <= atol + rtol * abs(expected):
            return None
        return f"{label} is {value:.6g}, expected {expected:.6g}"
    if got != expected:
        return f"{label} is {got!r}, expected {expected!r}"
    return None


def source_of(answer: object) -> str:
    """The learner's source of ``answer`` (a function or a class), '' when it cannot be read.
    When grading, the stand-in for the answer carries the source the sandbox read."""
    carried = getattr(answer, "__attnlib_source__", None)
    if isinstance(carried, str):
        return carried
    try:
        return inspect.getsource(answer)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def _pick(candidates: Sequence[Mistake], source: str) -> Mistake | None:
    """Of mistakes that all behave as the answer did, the first whose ``written`` pattern the
    source holds, else the first that needs none."""
    for mistake in candidates:
        if mistake.written and source and re.search(mistake.written, source):
            return mistake
    return next((mistake for mistake in candidates if not mistake.written), None)


def recognise(
    mistakes: Sequence[Mistake],
    cases: Sequence[Case],
    outcomes: Sequence[Outcome],
    wrong: Sequence[bool],
    atol: float,
    rtol: float,
    source: str = "",
) -> Mistake | None:
    """The mistake the learner's answer made: the first that behaves as it did on every case,
    else the first that behaves as it did on every case it got wrong (the same mistake, made
    more robustly: in float64, say, where float32 overflows). Of those that behave alike, one
    whose ``written`` pattern ``source`` holds comes first."""
    agreements = []
    alike_everywhere = False
    fallback: Mistake | None = None  # the first alike everywhere that needs no pattern
    for mistake in mistakes:
        shown = bool(mistake.written and source and re.search(mistake.written, source))
        if fallback is not None and not shown:
            continue  # only a mistake the source shows can still come before the fallback
        try:
            agree = [
                same_behaviour(outcome, call(mistake.fn, case), _tolerance(case, atol, rtol))
                for case, outcome in zip(cases, outcomes, strict=True)
            ]
        except NotImplementedError:  # a mistake that leaves part of the task undone
            continue
        if all(agree):
            alike_everywhere = True
            if shown:
                return mistake
            if not mistake.written and fallback is None:
                fallback = mistake
        agreements.append((mistake, agree))
    if alike_everywhere:  # (then no mistake was skipped before the first alike everywhere)
        return fallback
    where_wrong = [
        mistake
        for mistake, agree in agreements
        if all(same for same, bad in zip(agree, wrong, strict=True) if bad)
    ]
    return _pick(where_wrong, source)


def crash_report(
    error: BaseException, given: str | None, mistake: Mistake | None
) -> tuple[str, Mistake | None]:
    """The lines that say where the learner's code raised ``error`` ('' when no frame of it
    shows), and the mistake to name: ``mistake`` (what the table recognised), or the slip the
    crash shows when the table named none, or a ``.T`` of a batch on the crashing line when
    the table's mistake is neither that ``.T`` nor one its ``written`` pattern found in the
    source."""
    crash = crash_of(error)
    slip = slip_of(crash, error, given)
    if (
        slip is TRANSPOSE_BATCH
        and mistake is not None
        and (".T" in mistake.name or mistake.written)
    ):
        slip = None  # the table's mistake is this .T, or another slip the source shows
    if slip is TRANSPOSE_BATCH or mistake is None:
        mistake = slip or mistake
    where = f"\n  {crash.describe()}" if crash is not None else ""
    return where, mistake


def check_function(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake] = (),
    *,
    forbidden: Forbidden = NOTHING,
    properties: Sequence[Property] = (),
    atol: float = 1e-5,
    rtol: float = 1e-4,
    output_names: tuple[str, ...] = ("out", "weights"),
    may_change_arguments: bool = False,
    dtypes: Sequence[torch.dtype] | None = None,
    probe_case: int | Sequence[int] = 0,
) -> CheckResult:
    """Check ``learner_fn`` on ``cases``; report the first failing case and the mistake made.

    Each case's ``expected`` is a tensor, a tuple of them (named by ``output_names``) or a
    number. The learner's function may not call what ``forbidden`` lists, nor change a tensor
    it was given (unless ``may_change_arguments``). With ``dtypes`` (``()`` included), every
    float result must have its inputs' float dtype, and case ``probe_case`` (or each of several)
    is tried again with its float inputs in each dtype of ``dtypes``. The check runs on one thread.
    """
    with one_thread():
        return _check_function(
            exercise,
            learner_fn,
            cases,
            mistakes,
            forbidden=forbidden,
            properties=properties,
            atol=atol,
            rtol=rtol,
            output_names=output_names,
            may_change_arguments=may_change_arguments,
            dtypes=dtypes,
            probe_case=probe_case,
        )


def _check_function(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    *,
    forbidden: Forbidden,
    properties: Sequence[Property],
    atol: float,
    rtol: float,
    output_names: tuple[str, ...],
    may_change_arguments: bool,
    dtypes: Sequence[torch.dtype] | None = None,
    probe_case: int | Sequence[int] = 0,
) -> CheckResult:
    if not callable(learner_fn):
        problem = f"expected a function, got {_describe(learner_fn)}"
        return failed(exercise, learner_fn, "as a whole", problem, None)
    outcomes = []
    for case in cases:
        watch = CallWatch(forbidden)
        try:
            with watch:
                outcomes.append(call(learner_fn, case))
        except NotImplementedError as error:
            return not_done(exercise, learner_fn, str(error) or task_of(learner_fn))
        if watch.seen:
            return refused(exercise, learner_fn, watch.seen)
    for case, outcome in zip(cases, outcomes, strict=True):
        disguised = tensor_subclass_in(outcome.value)
        if disguised is not None:  # before any comparison runs the subclass's own code
            problem = f"it returned a {disguised.__name__}, a subclass of torch.Tensor"
            return failed(
                exercise, learner_fn, f"case '{case.description}'", problem, TENSOR_SUBCLASS
            )
    problems = [
        _problem(outcome, case, _tolerance(case, atol, rtol), output_names, properties)
        for case, outcome in zip(cases, outcomes, strict=True)
    ]
    wrong = [problem is not None for problem in problems]
    if any(wrong):
        first = wrong.index(True)
        source = source_of(learner_fn)
        mistake = recognise(mistakes, cases, outcomes, wrong, atol, rtol, source)
        problem = str(problems[first])
        error = outcomes[first].error
        if error is not None:
            where, mistake = crash_report(error, float_dtype_of(cases[first].args), mistake)
            problem += where
        elif mistake is None:  # values off by the rounding of a float or of another dtype
            kind = _kind_problem(outcomes[first].value, cases[first], dtypes is not None)
            if kind is not None:
                problem, mistake = f"{problem}; {kind[0]}", kind[1]
        where = f"case '{cases[first].description}'"
        return failed(exercise, learner_fn, where, problem, mistake)
    for case, outcome in zip(cases, outcomes, strict=True):
        kind = _kind_problem(outcome.value, case, dtypes is not None)
        if kind is not None:
            problem, mistake = kind
            return failed(exercise, learner_fn, f"case '{case.description}'", problem, mistake)
    changing = [i for i, outcome in enumerate(outcomes) if outcome.changed]
    if changing and not may_change_arguments:
        tolerances = [_tolerance(case, atol, rtol) for case in cases]
        return _changed_in_place(exercise, learner_fn, cases, outcomes, mistakes, tolerances)
    probes = [probe_case] if isinstance(probe_case, int) else list(probe_case)
    for index in probes if dtypes and cases else ():
        probed = _probe_dtypes(exercise, learner_fn, cases[index], dtypes, forbidden)
        if probed is not None:
            return probed
    scope = "the 1 case" if len(cases) == 1 else f"all {len(cases)} cases"
    return passed(exercise, learner_fn, scope)


# -- what kind of value a result is: a whole number, integers, the inputs' float dtype ---------

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


def _kind_problem(value: Any, case: Case, carry_dtype: bool) -> tuple[str, Mistake] | None:
    """A result whose values are right but whose kind is not: a float where a whole number is
    asked for, float indices where integers are, or (``carry_dtype``) another float dtype than
    the inputs'."""
    given = float_dtype_of(case.args) if carry_dtype else None
    for got, expected in _parts(value, case.expected):
        if isinstance(expected, int) and not isinstance(expected, bool) and not _is_whole(got):
            one = isinstance(got, float) or (isinstance(got, torch.Tensor) and got.numel() == 1)
            shown = f"{float(got)!r}" if one else _describe(got)
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


def _probe_dtypes(
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


# A result whose type is a subclass of torch.Tensor could decide for itself what comparing it
# means (its __torch_function__ sees every operation on it, isclose included).
TENSOR_SUBCLASS = Mistake(
    "returned a subclass of torch.Tensor, not a plain tensor",
    "a check compares plain tensors only: a subclass can change what every operation on it "
    "does, comparisons included, so its numbers cannot be trusted. Return a torch.Tensor.",
    lambda *args: None,
)
# An answer whose results are right but which changes what the caller passed in.
IN_PLACE = Mistake(
    "changed a tensor it was given in place (an operation ending in _, `-=`, `/=`, or an "
    "assignment into it)",
    "the caller still needs the tensor it passed in (the scores, the logits, the activations), "
    "and after the call it holds other numbers; a function that returns its result leaves its "
    "arguments as they were.",
    lambda *args: None,
)


def _changed_in_place(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    outcomes: Sequence[Outcome],
    mistakes: Sequence[Mistake],
    tolerances: Sequence[tuple[float, float]],
) -> CheckResult:
    """The report for right results from an answer that changes its arguments: the table's
    own in-place mistake when one gives right results and changes the same cases' arguments,
    else :data:`IN_PLACE`."""
    named = IN_PLACE
    for mistake in mistakes:
        try:
            theirs = [call(mistake.fn, case) for case in cases]
        except NotImplementedError:
            continue
        if all(
            bool(t.changed) == bool(o.changed)
            and same_behaviour(t, Outcome(value=case.expected), tolerance)
            for t, o, case, tolerance in zip(theirs, outcomes, cases, tolerances, strict=True)
        ):
            named = mistake
            break
    first = next(i for i, outcome in enumerate(outcomes) if outcome.changed)
    names = list(inspect.signature(learner_fn).parameters) if _has_signature(learner_fn) else []
    position = outcomes[first].changed[0]
    argument = f"`{names[position]}`" if position < len(names) else f"argument {position + 1}"
    problem = f"the results are right, but after the call {argument} holds other numbers"
    return failed(exercise, learner_fn, f"case '{cases[first].description}'", problem, named)


def _has_signature(fn: Callable[..., Any]) -> bool:
    try:
        inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return True
