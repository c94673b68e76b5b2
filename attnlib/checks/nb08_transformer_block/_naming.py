"""Notebook 08: name a mistake by part of the cases, when none behaves as the answer on all.

:func:`~attnlib.checks._run.check_function` names a mistake only when it behaves as the
learner's answer on every case (or on every case the answer got wrong). An answer that makes
two mistakes, one in each branch of an ``if`` (pre-norm and post-norm), matches no single one.
:func:`name_by_group` then looks only at the cases of the first failing case's group (the same
branch) and names the mistake that behaves as the answer there.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from attnlib.checks._exercise import Exercise, Mistake, failed
from attnlib.checks._framework import Case, CheckResult, compare_outputs
from attnlib.checks._run import Outcome, call, recognise


def problem_of(outcome: Outcome, case: Case, atol: float, rtol: float) -> str | None:
    """What is wrong with one outcome of a case whose expected result is a tensor."""
    if outcome.error is not None:
        return f"your function raised {type(outcome.error).__name__}: {outcome.error}"
    tolerance = (atol if case.atol is None else case.atol, rtol if case.rtol is None else case.rtol)
    return compare_outputs(outcome.value, case.expected, "the result", *tolerance)


def name_by_group(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    group_of: Callable[[Case], Hashable],
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> CheckResult | None:
    """The report naming the mistake made on the first failing case's group, or None."""
    outcomes = [call(fn, case) for case in cases]
    problems = [problem_of(o, c, atol, rtol) for o, c in zip(outcomes, cases, strict=True)]
    wrong = [problem is not None for problem in problems]
    if not any(wrong):
        return None
    first = wrong.index(True)
    group = [i for i, case in enumerate(cases) if group_of(case) == group_of(cases[first])]
    mistake = recognise(
        mistakes,
        [cases[i] for i in group],
        [outcomes[i] for i in group],
        [wrong[i] for i in group],
        atol,
        rtol,
    )
    if mistake is None:
        return None
    where = f"case '{cases[first].description}'"
    return failed(exercise, fn, where, str(problems[first]), mistake)
