"""Naming a mistake whose angles are too large for float32 to agree with float64.

Multiplying the positions by 10000^(2i/d) instead of dividing gives angles of thousands of
radians. There float32 (a learner's default) and float64 (the checker's) part ways in the second
decimal, so comparing the whole result never recognises the mistake in a float32 answer. This
compares it only where the mistake's angle is small enough for both to agree. Notebook 06.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.checks._exercise import Exercise, Mistake
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._outcomes import Outcome, call
from attnlib.checks.engine import Property, check_function

Tensor = torch.Tensor

# Below this many radians float32 keeps sin and cos within about 2e-4 of float64.
SMALL_ANGLE = 1500.0
LOOSE_ATOL = 2e-3


@dataclass(frozen=True)
class LargeAngles:
    """A mistake of the table, with the angle it gives every entry of the result."""

    mistake: Mistake
    angles: Callable[..., Tensor]  # the same arguments as the answer; broadcasts to its result


def _agrees_where_small(outcome: Outcome, entry: LargeAngles, case: Case) -> bool:
    if outcome.error is not None or not isinstance(outcome.value, Tensor):
        return False
    got = outcome.value.detach().double()
    made = torch.as_tensor(entry.mistake.fn(*case.args)).double()
    if got.shape != made.shape:
        return False
    small = entry.angles(*case.args).abs().expand(made.shape) < SMALL_ANGLE
    return bool(torch.isclose(got[small], made[small], atol=LOOSE_ATOL, rtol=0).all())


def check_allowing_large_angles(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    large: Sequence[LargeAngles],
    *,
    properties: Sequence[Property] = (),
    atol: float,
    rtol: float,
    **options: Any,
) -> CheckResult:
    """``check_function``; when it names no mistake, try the ``large``-angle mistakes again,
    comparing only the entries whose angles float32 still gets right."""
    result = check_function(
        exercise, fn, cases, mistakes, properties=properties, atol=atol, rtol=rtol, **options
    )
    if result.passed or not result.done or "not one of the usual mistakes" not in result.message:
        return result
    outcomes = [call(fn, case) for case in cases]  # the forbidden calls were watched above
    for entry in large:
        if all(_agrees_where_small(o, entry, c) for o, c in zip(outcomes, cases, strict=True)):
            # The answer is this mistake: report it as one that behaves as the answer does.
            named = Mistake(entry.mistake.name, entry.mistake.why, fn)
            return check_function(
                exercise, fn, cases, [named], properties=properties, atol=atol, rtol=rtol, **options
            )
    return result
