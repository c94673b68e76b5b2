"""Run a learner's function on an exercise's cases, and name the mistake when it fails.

:func:`check_function` is the checker of every exercise whose answer is a function of tensors.
It calls the answer on each case (copies of the arguments), watching for calls of what the
exercise asks the learner to write (``forbidden``). When a case fails, it names the mistake of
the exercise's table that behaves as the answer did (:mod:`.naming`); when none does, the report
names the failing case and the first :class:`Property` of a right answer that the result
breaks, and gives the exercise's first hint.

A crash is reported where the learner's code raised it (:mod:`attnlib.checks._crash`: the line,
its operation, the shapes of its tensors), and named by the slip it shows when no mistake of the
table behaves as the answer did. Options of the one engine: ``several`` names one of several
mistakes made at once, and mistakes shown by the cases' shapes (:class:`.naming.ByShape`);
``dtypes`` asks each result to keep its inputs' float dtype and probes other dtypes
(:mod:`.kinds`); ``may_change_arguments`` lets an answer change its arguments, which is otherwise
named (:mod:`.in_place`); each :class:`~attnlib.checks._framework.Case` may set its own
tolerances. Serves the checkers of notebooks 00–12.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.checks._calls import NOTHING, CallWatch, Forbidden
from attnlib.checks._crash import float_dtype_of, slip_in_report
from attnlib.checks._exercise import Exercise, failed, not_done, passed, refused
from attnlib.checks._framework import (
    Case,
    CheckResult,
    compare_outputs,
    describe,
    task_of,
    tensor_subclass_in,
    tolerance,
)
from attnlib.checks._mistake import Mistake
from attnlib.checks._outcomes import Outcome, call
from attnlib.checks._threads import one_thread
from attnlib.checks.engine.in_place import changed_in_place, edits_its_input
from attnlib.checks.engine.kinds import TENSOR_SUBCLASS, kind_problem, probe_dtypes
from attnlib.checks.engine.naming import (
    ByShape,
    crash_report,
    name_several,
    recognise,
    source_of,
)


@dataclass(frozen=True)
class Property:
    """A property of every right answer. ``problem(got, case)`` returns a sentence saying how
    ``got`` breaks it ("row 1 sums to 0.41; each row of weights sums to 1"), or None."""

    problem: Callable[[Any, Case], str | None]


@dataclass(frozen=True)
class _Options:
    """How one check runs: the engine's options, as :func:`check_function` takes them."""

    forbidden: Forbidden
    properties: Sequence[Property]
    atol: float
    rtol: float
    output_names: tuple[str, ...]
    may_change_arguments: bool
    dtypes: Sequence[torch.dtype] | None
    probe_case: int | Sequence[int]
    several: ByShape | None
    group_of: Callable[[Case], Hashable] | None


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
    several: ByShape | None = None,
    group_of: Callable[[Case], Hashable] | None = None,
) -> CheckResult:
    """Check ``learner_fn`` on ``cases``; report the first failing case and the mistake made.

    Each case's ``expected`` is a tensor, a tuple of them (named by ``output_names``) or a
    number. The learner's function may not call what ``forbidden`` lists, nor change a tensor
    it was given (unless ``may_change_arguments``). With ``dtypes`` (``()`` included), every
    float result must have its inputs' float dtype, and case ``probe_case`` (or each of several)
    is tried again with its float inputs in each dtype of ``dtypes``. With ``several``, a failure
    no one mistake explains is named by the first mistake the answer makes among several, else
    by its behaviour on shapes, and a right answer that edits its input is named by
    ``several.in_place``. With ``group_of`` (a case's group: the branch of the task it takes,
    say), a failure no one mistake explains on all the cases is named by the mistake that
    behaves as the answer on the first failing case's group (an answer with a mistake in each
    branch of an ``if``). The check runs on one thread.
    """
    options = _Options(
        forbidden, properties, atol, rtol, output_names, may_change_arguments, dtypes,
        probe_case, several, group_of,
    )  # fmt: skip
    with one_thread():
        report = _check_function(exercise, learner_fn, cases, mistakes, options)
        in_place = several.in_place if several is not None else None
        if report.passed and in_place is not None:
            edited = edits_its_input(learner_fn, cases)
            if edited is not None:
                problem = "the result is right, but after the call the caller's tensor has changed"
                where = f"case '{edited.description}'"
                return failed(exercise, learner_fn, where, problem, in_place)
        return report


def _check_function(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    options: _Options,
) -> CheckResult:
    if not callable(learner_fn):
        problem = f"expected a function, got {describe(learner_fn)}"
        return failed(exercise, learner_fn, "as a whole", problem, None)
    outcomes = []
    for case in cases:
        watch = CallWatch(options.forbidden)
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
        _problem(outcome, case, options) for case, outcome in zip(cases, outcomes, strict=True)
    ]
    if any(problem is not None for problem in problems):
        return _failure(exercise, learner_fn, cases, mistakes, outcomes, problems, options)
    return _right_values(exercise, learner_fn, cases, mistakes, outcomes, options)


def _failure(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    outcomes: Sequence[Outcome],
    problems: Sequence[str | None],
    options: _Options,
) -> CheckResult:
    """The report of the first wrong case, naming the mistake the answer made."""
    wrong = [problem is not None for problem in problems]
    first = wrong.index(True)
    atol, rtol = options.atol, options.rtol
    mistake = recognise(mistakes, cases, outcomes, wrong, atol, rtol, source_of(learner_fn))
    problem = plain = str(problems[first])
    error = outcomes[first].error
    if error is not None:
        where, mistake = crash_report(error, float_dtype_of(cases[first].args), mistake)
        problem += where
    elif mistake is None:  # values off by the rounding of a float or of another dtype
        kind = kind_problem(outcomes[first].value, cases[first], options.dtypes is not None)
        if kind is not None:
            problem, mistake = f"{problem}; {kind[0]}", kind[1]
    if mistake is None and slip_in_report(problem) is None:
        found = _named_by_part(learner_fn, cases, mistakes, outcomes, wrong, options)
        if found is not None:
            # Among several, the report's first line; by group, the problem without the crash.
            problem = problem.split("\n", 1)[0] if options.several is not None else plain
            mistake = found
    return failed(exercise, learner_fn, f"case '{cases[first].description}'", problem, mistake)


def _named_by_part(
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    outcomes: Sequence[Outcome],
    wrong: Sequence[bool],
    options: _Options,
) -> Mistake | None:
    """A mistake no one of the table explains on every case, named by part of the answer's
    behaviour: one of several made at once (``several``), or the one made on the first failing
    case's group (``group_of``)."""
    atol, rtol = options.atol, options.rtol
    if options.several is not None:
        return name_several(options.several, learner_fn, cases, outcomes, mistakes, atol, rtol)
    if options.group_of is None:
        return None
    first = wrong.index(True)
    group = options.group_of(cases[first])
    kept = [i for i, case in enumerate(cases) if options.group_of(case) == group]
    return recognise(
        mistakes,
        [cases[i] for i in kept],
        [outcomes[i] for i in kept],
        [wrong[i] for i in kept],
        atol,
        rtol,
    )


def _right_values(
    exercise: Exercise,
    learner_fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    outcomes: Sequence[Outcome],
    options: _Options,
) -> CheckResult:
    """Every value right: passed, unless a result is of the wrong kind, an argument was changed
    in place, or a dtype probe fails."""
    for case, outcome in zip(cases, outcomes, strict=True):
        kind = kind_problem(outcome.value, case, options.dtypes is not None)
        if kind is not None:
            problem, mistake = kind
            return failed(exercise, learner_fn, f"case '{case.description}'", problem, mistake)
    changing = [i for i, outcome in enumerate(outcomes) if outcome.changed]
    if changing and not options.may_change_arguments:
        tolerances = [tolerance(case, options.atol, options.rtol) for case in cases]
        return changed_in_place(exercise, learner_fn, cases, outcomes, mistakes, tolerances)
    probe = options.probe_case
    probes = [probe] if isinstance(probe, int) else list(probe)
    for index in probes if options.dtypes and cases else ():
        probed = probe_dtypes(exercise, learner_fn, cases[index], options.dtypes, options.forbidden)
        if probed is not None:
            return probed
    scope = "the 1 case" if len(cases) == 1 else f"all {len(cases)} cases"
    return passed(exercise, learner_fn, scope)


def _problem(outcome: Outcome, case: Case, options: _Options) -> str | None:
    if outcome.error is not None:
        return f"your function raised {type(outcome.error).__name__}: {outcome.error}"
    got, expected = outcome.value, case.expected
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            names = ", ".join(options.output_names[: len(expected)])
            return f"it should return {len(expected)} results ({names}), got {describe(got)}"
        parts = list(zip(options.output_names, got, expected, strict=False))
    else:
        parts = [("the result", got, expected)]
    allowed = tolerance(case, options.atol, options.rtol)
    for label, got_part, expected_part in parts:
        problem = _compare(got_part, expected_part, label, allowed)
        if problem is None:
            continue
        if _same_shape(got_part, expected_part):
            for prop in options.properties:  # a broken property says more than a differing number
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


def _compare(got: Any, expected: Any, label: str, allowed: tuple[float, float]) -> str | None:
    if isinstance(expected, torch.Tensor):
        return compare_outputs(got, expected, label, *allowed)
    if isinstance(expected, float) and isinstance(got, (int, float, torch.Tensor)):
        value = float(got) if not isinstance(got, torch.Tensor) or got.numel() == 1 else None
        if value is None:
            return f"{label} should be one number, got {describe(got)}"
        atol, rtol = allowed
        if abs(value - expected) <= atol + rtol * abs(expected):
            return None
        return f"{label} is {value:.6g}, expected {expected:.6g}"
    if got != expected:
        return f"{label} is {got!r}, expected {expected!r}"
    return None
