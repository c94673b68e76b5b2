"""A checker reports the same of an answer whether it holds the answer or a stand-in that
calls it across the grading sandbox's wall (here through the wire format, in one process).

A sample: the first corpus's answers to notebooks 00 (models, optimizers, autograd, spies
among the arguments) and 02, and one class answer of each kind (08, 10, 11); `python -m
benchmarks.stand_ins` runs all three corpora. And every exercise's stub, not done yet.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from mistake_corpus.corpus import Entry, entries
from stand_in_loopback import NOT_ACROSS, across_the_wall, same_report
from torch import nn

from attnlib import checks

SAMPLE = [
    e
    for notebook in ("00", "02")
    for e in entries(notebook, "a")
    if not isinstance(e.answer, type) and e.exercise_id not in NOT_ACROSS
]
# The first class answer of each class exercise: a module built in the sandbox, its copy here.
_FIRST_CLASSES = {
    e.exercise_id: e
    for notebook in ("11", "10", "08")
    for e in reversed(entries(notebook, "a"))
    if isinstance(e.answer, type)
}
SAMPLE += sorted(_FIRST_CLASSES.values(), key=lambda e: e.exercise_id)


@pytest.mark.parametrize("entry", SAMPLE, ids=[f"{e.exercise_id}: {e.what}" for e in SAMPLE])
def test_the_report_is_the_same_across_the_wall(entry: Entry) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert same_report(entry)


def _stub(name: str, task: str) -> Any:
    """An exercise as a learner first meets it: its function or class, not done yet."""
    if name[0].isupper():

        def not_built_yet(self: nn.Module, *args: Any, **kwargs: Any) -> None:
            raise NotImplementedError()

        return type(name, (nn.Module,), {"__doc__": task, "__init__": not_built_yet})

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError()

    stub.__name__, stub.__doc__ = name, task
    return stub


CHECKERS = [
    getattr(checks, name)
    for name in checks.__all__
    if getattr(getattr(checks, name), "exercise", None) is not None
]


@pytest.mark.parametrize("checker", CHECKERS, ids=[c.exercise.id for c in CHECKERS])
def test_a_stub_is_not_done_yet_across_the_wall_too(checker: Any) -> None:
    """The "not done yet" report, with the task, whichever side of the wall holds the stub."""
    stub = _stub(checker.exercise.name, f"The task of {checker.exercise.name}.")
    direct, remote = checker(stub), checker(across_the_wall(stub))
    assert "not done yet" in str(direct) and not direct.passed
    assert (str(remote), remote.passed) == (str(direct), direct.passed)
