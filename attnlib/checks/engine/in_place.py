"""An answer whose results are right but which changes what the caller passed in.

The engine runs every answer on copies of its arguments (:func:`attnlib.checks._outcomes.call`)
and compares them after: :func:`changed_in_place` reports a right answer that changed one,
naming the table's own in-place mistake when one behaves so, else :data:`IN_PLACE`.
:func:`edits_its_input` asks the same question of a function run once more on each case, for a
checker that lets its engine run allow changes and then names them its own way. Serves the
checkers of notebooks 00–12.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import torch

from attnlib.checks._exercise import Exercise, failed
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._mistake import Mistake, every_way
from attnlib.checks._outcomes import Outcome, call, same_behaviour

IN_PLACE = Mistake(
    "changed a tensor it was given in place (an operation ending in _, `-=`, `/=`, or an "
    "assignment into it)",
    "the caller still needs the tensor it passed in (the scores, the logits, the activations), "
    "and after the call it holds other numbers; a function that returns its result leaves its "
    "arguments as they were.",
    lambda *args: None,
)


def edits_its_input(fn: Callable[..., Any], cases: Sequence[Case]) -> Case | None:
    """The first case whose tensors the function changes (a right result, computed in place)."""
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


def changed_in_place(
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
    for mistake in every_way(mistakes):
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
