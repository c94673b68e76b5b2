"""Name one of several mistakes made at once, for notebook 10's function exercises (2–4).

:func:`attnlib.checks._run.check_function` names the mistake an answer behaves like on every
case (or on every case it gets wrong). An answer that makes two mistakes at once, each showing
on cases of its own (no shift for large logits *and* a division by T = 0), behaves like
neither. :func:`check_naming_several` then names the first mistake that is *in* the answer:
one that shows on the first failing case, and wherever it shows, the answer does the same.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, failed
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._run import Outcome, Property, call, check_function, same_behaviour
from attnlib.checks.nb10_gpt.threads import one_thread


def _tolerance(case: Case, atol: float, rtol: float) -> tuple[float, float]:
    return (atol if case.atol is None else case.atol, rtol if case.rtol is None else case.rtol)


def _present(
    mistake: Mistake,
    cases: Sequence[Case],
    outcomes: list[Outcome],
    first: int,
    atol: float,
    rtol: float,
) -> bool:
    """Whether the answer makes this mistake: it shows on the first failing case, and on every
    case where it shows, the answer behaves as it does."""
    for i, (case, outcome) in enumerate(zip(cases, outcomes, strict=True)):
        tolerance = _tolerance(case, atol, rtol)
        theirs = call(mistake.fn, case)
        shows = not same_behaviour(theirs, Outcome(value=case.expected), tolerance)
        if i == first and not shows:
            return False
        if shows and not same_behaviour(outcome, theirs, tolerance):
            return False
    return True


def check_naming_several(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    *,
    forbidden: Forbidden,
    properties: Sequence[Property] = (),
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> CheckResult:
    """:func:`check_function`, then, for a failure it could not name, the first mistake the
    answer makes among several."""
    with one_thread():
        return _check(exercise, fn, cases, mistakes, forbidden, properties, atol, rtol)


def _check(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    forbidden: Forbidden,
    properties: Sequence[Property],
    atol: float,
    rtol: float,
) -> CheckResult:
    report = check_function(
        exercise, fn, cases, mistakes, forbidden=forbidden, properties=properties, atol=atol,
        rtol=rtol,
    )  # fmt: skip
    if report.passed or not report.done or "The mistake:" in report.message:
        return report
    prefix = f"✗ {exercise.name}, "
    first_line = report.message.split("\n", 1)[0]
    if not first_line.startswith(prefix + "case '"):
        return report  # refused, or not a function: nothing to name
    outcomes = [call(fn, case) for case in cases]
    right = [
        same_behaviour(outcome, Outcome(value=case.expected), _tolerance(case, atol, rtol))
        for case, outcome in zip(cases, outcomes, strict=True)
    ]
    if all(right):
        return report
    first = right.index(False)
    for mistake in mistakes:
        try:
            present = _present(mistake, cases, outcomes, first, atol, rtol)
        except NotImplementedError:  # a mistake that leaves part of the task undone
            continue
        if present:
            where, problem = first_line.removeprefix(prefix).split("': ", 1)
            return failed(exercise, fn, where + "'", problem, mistake)
    return report
