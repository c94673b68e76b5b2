"""``check_function`` with errors told apart by their message as well as their type (notebooks
00 and 01).

The framework takes a mistake for the learner's when both raise the same type of error on a
case. Many mistakes raise a RuntimeError, for very different reasons ("The size of tensor a must
match…", "Boolean value of Tensor with more than one value is ambiguous", "all dimensions of
input must be of equal length"), so these checks tell errors apart by their message too: every
message that says two shapes do not fit counts as one kind (an elementwise product, ``@`` and
einsum word it differently), any other by its first two words. Each kind keeps the name of the
error it stands for, which is what a report prints.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from attnlib.checks._exercise import Exercise, Mistake, passed
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._run import check_function

_KINDS: dict[tuple[type, str], type] = {}
# How torch starts the messages that say two shapes do not fit together.
_SHAPES_DO_NOT_FIT = (
    "The size of tensor",
    "mat1 and mat2",
    "einsum(): subscript",
    "einsum(): operands do not broadcast",
    "Expected size for first",
    "Expected batch2_sizes",
    "inconsistent tensor size",
    "size mismatch",
    "shape '",
    "The expanded size",
    "self must be a matrix",
    "vector + matrix @ vector",
)


def _kind_of(message: str) -> str:
    if message.startswith(_SHAPES_DO_NOT_FIT):
        return "shapes do not fit"
    return " ".join(message.split()[:2])


def _distinct(error: Exception) -> Exception:
    key = (type(error), _kind_of(str(error)))
    kind = _KINDS.setdefault(key, type(type(error).__name__, (type(error),), {}))
    try:
        return kind(*error.args)
    except Exception:  # an exception type with a constructor of its own
        return error


def telling_errors_apart(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, raising an error of a kind of its own for each type and start of message."""

    @functools.wraps(fn)
    def run(*args: Any) -> Any:
        try:
            return fn(*args)
        except NotImplementedError:
            raise
        except Exception as error:
            raise _distinct(error) from error

    return run


def check_by_message(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    **options: Any,
) -> CheckResult:
    """:func:`~attnlib.checks._run.check_function`, with a mistake named for an error only when
    its error starts with the same words as the learner's. A passing answer is recorded as
    itself, for ``checks.yours_or_attnlib``."""
    if not callable(fn):
        return check_function(exercise, fn, cases, mistakes, **options)
    told = [Mistake(m.name, m.why, telling_errors_apart(m.fn)) for m in mistakes]
    result = check_function(exercise, telling_errors_apart(fn), cases, told, **options)
    if not result.passed:
        return result
    return passed(exercise, fn, result.message.split(" is correct on ", 1)[1].rstrip("."))
