"""Run a learner's answer through ``check_function`` with its result put in one form.

A learning rate may come back as a float, an int or a 0-dim tensor, a loss as a tensor or a
float, beam-search tokens as a list or a tensor: all are right answers. :func:`check_converted`
converts the result before it is compared (with the cases and with the mistakes, which are
written in one form), and records the learner's own function as the accepted answer, so that
``checks.yours_or_attnlib`` finds it.

Notebook 09.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from attnlib.checks._exercise import Exercise, Mistake, passed
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks.engine import check_function


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread: the check's models are tiny, and on a busy machine a second
    thread only waits for the first (ten times slower, measured)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def check_converted(
    exercise: Exercise,
    fn: Any,
    convert: Callable[[Any], Any],
    cases: Callable[[], Sequence[Case]],
    mistakes: Sequence[Mistake],
    **options: Any,
) -> CheckResult:
    """:func:`check_function` on ``convert(fn(*args))`` (or ``convert(fn(*args), args)`` when
    ``convert`` takes two arguments) for the cases ``cases()`` makes, run without gradients on
    one thread; a pass records ``fn`` itself."""
    if not callable(fn):
        return check_function(exercise, fn, [], mistakes)

    with_arguments = len(inspect.signature(convert).parameters) > 1

    def answer(*args: Any) -> Any:
        with torch.no_grad():  # a model's forward pass builds no graph
            got = fn(*args)
        return convert(got, args) if with_arguments else convert(got)

    answer.__doc__ = fn.__doc__
    with one_thread():
        made = cases()
        result = check_function(exercise, answer, made, mistakes, **options)
    if not result.passed:
        return result
    scope = "the 1 case" if len(made) == 1 else f"all {len(made)} cases"
    return passed(exercise, fn, scope)
