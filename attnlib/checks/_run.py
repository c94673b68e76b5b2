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
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.checks._calls import NOTHING, CallWatch, Forbidden
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


def recognise(
    mistakes: Sequence[Mistake],
    cases: Sequence[Case],
    outcomes: Sequence[Outcome],
    wrong: Sequence[bool],
    atol: float,
    rtol: float,
) -> Mistake | None:
    """The mistake the learner's answer made: the first that behaves as it did on every case,
    else the first that behaves as it did on every case it got wrong (the same mistake, made
    more robustly: in float64, say, where float32 overflows)."""
    agreements = []
    for mistake in mistakes:
        try:
            agree = [
                same_behaviour(outcome, call(mistake.fn, case), _tolerance(case, atol, rtol))
                for case, outcome in zip(cases, outcomes, strict=True)
            ]
        except NotImplementedError:  # a mistake that leaves part of the task undone
            continue
        if all(agree):
            return mistake
        agreements.append((mistake, agree))
    for mistake, agree in agreements:
        if all(same for same, bad in zip(agree, wrong, strict=True) if bad):
            return mistake
    return None


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
) -> CheckResult:
    """Check ``learner_fn`` on ``cases``; report the first failing case and the mistake made.

    Each case's ``expected`` is a tensor, a tuple of them (named by ``output_names``) or a
    number. The learner's function may not call what ``forbidden`` lists, nor change a tensor
    it was given (unless ``may_change_arguments``). The check runs on one thread.
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
        mistake = recognise(mistakes, cases, outcomes, wrong, atol, rtol)
        where = f"case '{cases[first].description}'"
        return failed(exercise, learner_fn, where, str(problems[first]), mistake)
    changing = [i for i, outcome in enumerate(outcomes) if outcome.changed]
    if changing and not may_change_arguments:
        tolerances = [_tolerance(case, atol, rtol) for case in cases]
        return _changed_in_place(exercise, learner_fn, cases, outcomes, mistakes, tolerances)
    scope = "the 1 case" if len(cases) == 1 else f"all {len(cases)} cases"
    return passed(exercise, learner_fn, scope)


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
