"""How the engine names the mistake an answer made, from what it did on the cases.

:func:`recognise` names the mistake of an exercise's table that behaves as the answer did on
*every* case (the same values, or an exception where the answer raised), else on every case it
got wrong; comparing whole behaviour, not one case, keeps a mistake that happens to agree with
another on a small case from being misnamed. Of mistakes that behave alike, the one whose
``written`` pattern the learner's source holds is named. :func:`crash_report` says where a
crash happened in the learner's code and names the slip it shows.

An answer that makes two mistakes at once, each showing on cases of its own (no shift for large
logits *and* a division by T = 0), behaves like neither. With the engine's ``several`` option
(:class:`ByShape`), :func:`name_several` then names the first mistake that is *in* the answer:
one that shows on the first failing case, and wherever it shows, the answer does the same; else
one named by how the answer behaves on the cases' shapes (the rows mix in a batch; written for
a 2-D batch only). Serves the checkers of notebooks 00–12.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.checks._crash import TRANSPOSE_BATCH, crash_of, slip_of
from attnlib.checks._framework import Case, tolerance
from attnlib.checks._mistake import Mistake, every_way
from attnlib.checks._outcomes import Outcome, call, same_behaviour


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
    whose ``written`` pattern ``source`` holds comes first. Each variant of a mistake is tried
    in its place."""
    agreements = []
    alike_everywhere = False
    fallback: Mistake | None = None  # the first alike everywhere that needs no pattern
    for mistake in every_way(mistakes):
        shown = bool(mistake.written and source and re.search(mistake.written, source))
        if fallback is not None and not shown:
            continue  # only a mistake the source shows can still come before the fallback
        try:
            agree = [
                same_behaviour(outcome, call(mistake.fn, case), tolerance(case, atol, rtol))
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


# -- several mistakes at once ------------------------------------------------------------------


@dataclass(frozen=True)
class ByShape:
    """The engine's ``several`` option: name one of several mistakes made at once, and these of
    the table by behaviour on shapes rather than by value: ``rows_mixed`` (each row alone
    right, the batch wrong), ``two_d_only`` (every 2-D case right, another shape wrong) and
    ``in_place`` (every result right, the caller's tensor changed)."""

    rows_mixed: Mistake | None = None
    two_d_only: Mistake | None = None
    in_place: Mistake | None = None


def rows_mixed(
    fn: Callable[..., Any],
    cases: Sequence[Case],
    right: Sequence[bool],
    tolerance_of: Callable[[Case], tuple[float, float]],
) -> bool:
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
            if not same_behaviour(call(fn, alone), Outcome(value=wanted), tolerance_of(alone)):
                return False
    return not all(right)


def two_d_only(cases: Sequence[Case], right: Sequence[bool]) -> bool:
    """Whether every 2-D case is right and some case of another shape is wrong."""
    two_d = [case.args[0].dim() == 2 for case in cases]
    return (
        any(two_d)
        and all(ok for ok, flat in zip(right, two_d, strict=True) if flat)
        and any(not ok for ok, flat in zip(right, two_d, strict=True) if not flat)
    )


def _present(
    mistake: Mistake,
    cases: Sequence[Case],
    outcomes: Sequence[Outcome],
    first: int,
    atol: float,
    rtol: float,
) -> bool:
    """Whether the answer makes this mistake: it shows on the first failing case, and on every
    case where it shows, the answer behaves as it does."""
    for i, (case, outcome) in enumerate(zip(cases, outcomes, strict=True)):
        allowed = tolerance(case, atol, rtol)
        theirs = call(mistake.fn, case)
        shows = not same_behaviour(theirs, Outcome(value=case.expected), allowed)
        if i == first and not shows:
            return False
        if shows and not same_behaviour(outcome, theirs, allowed):
            return False
    return True


def name_several(
    by_shape: ByShape,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    outcomes: Sequence[Outcome],
    mistakes: Sequence[Mistake],
    atol: float,
    rtol: float,
) -> Mistake | None:
    """For a failure no single mistake explains: the first mistake of the table that is in the
    answer among several, else the one of ``by_shape`` its behaviour on shapes shows."""
    right = [
        same_behaviour(outcome, Outcome(value=case.expected), tolerance(case, atol, rtol))
        for case, outcome in zip(cases, outcomes, strict=True)
    ]
    if all(right):
        return None
    first = right.index(False)
    for mistake in every_way(mistakes):
        try:
            if _present(mistake, cases, outcomes, first, atol, rtol):
                return mistake
        except NotImplementedError:  # a mistake that leaves part of the task undone
            continue
    if by_shape.rows_mixed is not None and rows_mixed(
        fn, cases, right, lambda case: tolerance(case, atol, rtol)
    ):
        return by_shape.rows_mixed
    if by_shape.two_d_only is not None and two_d_only(cases, right):
        return by_shape.two_d_only
    return None
