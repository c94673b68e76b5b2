"""Name one of several mistakes made at once, for notebook 10's function exercises (4–6).

:func:`attnlib.checks._run.check_function` names the mistake an answer behaves like on every
case (or on every case it gets wrong). An answer that makes two mistakes at once, each showing
on cases of its own (no shift for large logits *and* a division by T = 0), behaves like
neither. :func:`check_naming_several` then names the first mistake that is *in* the answer:
one that shows on the first failing case, and wherever it shows, the answer does the same.

When no mistake of the table is in the answer, three are named by how it behaves on the cases'
shapes (:class:`ByShape`): every row right alone but wrong in a batch (the rows mix), every
2-D case right but a single row or a (B, T, V) tensor wrong (written for a 2-D batch only),
and, for an answer right on every case, the caller's tensor changed in place.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, failed
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._run import Outcome, Property, call, check_function, same_behaviour
from attnlib.checks._threads import one_thread


def _tolerance(case: Case, atol: float, rtol: float) -> tuple[float, float]:
    return (atol if case.atol is None else case.atol, rtol if case.rtol is None else case.rtol)


@dataclass(frozen=True)
class ByShape:
    """The table's mistakes named by behaviour on shapes rather than by value: ``rows_mixed``
    (each row alone right, the batch wrong), ``two_d_only`` (every 2-D case right, another
    shape wrong) and ``in_place`` (every result right, the caller's first argument changed)."""

    rows_mixed: Mistake | None = None
    two_d_only: Mistake | None = None
    in_place: Mistake | None = None


def _rows_mixed(fn: Callable[..., Any], cases: Sequence[Case], right: list[bool], tol: Any) -> bool:
    """Whether every failing case is a batch whose rows, each passed alone, come out right."""
    for case, ok in zip(cases, right, strict=True):
        x = case.args[0]
        if ok:
            continue
        if not isinstance(x, torch.Tensor) or x.dim() < 2:
            return False
        rows, expected = x.reshape(-1, x.shape[-1]), case.expected.reshape(-1, x.shape[-1])
        for row, wanted in zip(rows, expected, strict=True):
            alone = Case(case.description, (row, *case.args[1:]), wanted, case.atol, case.rtol)
            if not same_behaviour(call(fn, alone), Outcome(value=wanted), tol(alone)):
                return False
    return not all(right)


def _two_d_only(cases: Sequence[Case], right: list[bool]) -> bool:
    """Whether every 2-D case is right and some case of another shape is wrong."""
    two_d = [case.args[0].dim() == 2 for case in cases]
    return (
        any(two_d)
        and all(ok for ok, flat in zip(right, two_d, strict=True) if flat)
        and any(not ok for ok, flat in zip(right, two_d, strict=True) if not flat)
    )


def _edits_its_input(fn: Callable[..., Any], cases: Sequence[Case]) -> Case | None:
    """The first case whose tensor the answer changes (a right result, computed in place)."""
    for case in cases:
        args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in case.args)
        try:
            fn(*args)
        except Exception:  # a right answer does not raise
            continue
        if any(
            isinstance(a, torch.Tensor) and not torch.equal(a, b)
            for a, b in zip(args, case.args, strict=True)
        ):
            return case
    return None


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
    by_shape: ByShape = ByShape(),
    dtypes: Sequence[torch.dtype] | None = None,
) -> CheckResult:
    """:func:`check_function` (``dtypes`` as there), then, for a failure it could not name, the
    first mistake the answer makes among several, else one of ``by_shape``'s; for a pass,
    whether it edited its input in place."""
    with one_thread():
        report = _check(
            exercise, fn, cases, mistakes, forbidden, properties, atol, rtol, by_shape, dtypes
        )
        if report.passed and by_shape.in_place is not None:
            edited = _edits_its_input(fn, cases)
            if edited is not None:
                problem = "the result is right, but after the call the caller's tensor has changed"
                where = f"case '{edited.description}'"
                return failed(exercise, fn, where, problem, by_shape.in_place)
        return report


def _check(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    forbidden: Forbidden,
    properties: Sequence[Property],
    atol: float,
    rtol: float,
    by_shape: ByShape,
    dtypes: Sequence[torch.dtype] | None = None,
) -> CheckResult:
    report = check_function(
        exercise, fn, cases, mistakes, forbidden=forbidden, properties=properties, atol=atol,
        rtol=rtol, dtypes=dtypes,
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
    where, problem = first_line.removeprefix(prefix).split("': ", 1)
    for mistake in mistakes:
        try:
            present = _present(mistake, cases, outcomes, first, atol, rtol)
        except NotImplementedError:  # a mistake that leaves part of the task undone
            continue
        if present:
            return failed(exercise, fn, where + "'", problem, mistake)
    if by_shape.rows_mixed is not None and _rows_mixed(
        fn, cases, right, lambda case: _tolerance(case, atol, rtol)
    ):
        return failed(exercise, fn, where + "'", problem, by_shape.rows_mixed)
    if by_shape.two_d_only is not None and _two_d_only(cases, right):
        return failed(exercise, fn, where + "'", problem, by_shape.two_d_only)
    return report
