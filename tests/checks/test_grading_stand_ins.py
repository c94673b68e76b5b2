"""A checker reports the same of an answer whether it holds the answer or a stand-in that
calls it across the grading sandbox's wall (here through the wire format, in one process).

A sample: the first corpus's answers to notebooks 00 (models, optimizers, autograd, spies
among the arguments) and 02, and one class answer of each kind (08, 10, 11); answers of corpus d
whose report reads the learner's source or where it crashed; `python -m
benchmarks.stand_ins` runs all three corpora. And every exercise's stub, not done yet. And
answers to notebook 02 that call its implementations by other names, run where only the
sandbox's watch can see them: the check refuses them by name all the same.
"""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any

import pytest
from mistake_corpus.corpus import Entry, checker_for, entries
from softmax_aliases import ALIASES_02
from stand_in_loopback import NOT_ACROSS, Loopback, across_the_wall, same_report
from torch import nn

from attnlib import checks
from attnlib.grading.grader.stand_ins import stand_in
from attnlib.grading.sandbox.answering import describe

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


# Reports that read what the learner wrote or where it crashed (issue 40): the source and the
# crash's place cross the wall with the answer's description and its error.
SEEN_IN_THE_SANDBOX = [
    e
    for notebook, whats in (
        ("00", ("rows of x.T, then .T back (x.T reverses a batch)",)),
        ("03", ("starts from torch.eye(T) (float32), total = w @ total",)),
        ("04", ("query @ keys.T (reverses a batch)",)),
    )
    for e in entries(notebook, "d")
    if e.what in whats
]


@pytest.mark.parametrize("entry", SEEN_IN_THE_SANDBOX, ids=[e.what for e in SEEN_IN_THE_SANDBOX])
def test_what_the_learner_wrote_and_where_it_crashed_cross_the_wall(entry: Entry) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert same_report(entry)
        assert "The mistake: " in str(checker_for(entry.exercise_id)(across_the_wall(entry.answer)))


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


# -- answers that reach notebook 02's implementations by another name (issue 39) ---------------


class _AnswerInAThread(Loopback):
    """A loopback whose answer runs in a thread of its own, where none of the grader's watches
    listen (a profiler and a dispatch mode belong to one thread): the check learns of the
    answer's calls only what the sandbox's watch sends back, as when grading."""

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        replies: list[dict[str, Any]] = []
        thread = threading.Thread(target=lambda: replies.append(Loopback.request(self, message)))
        thread.start()
        thread.join()
        return replies[0]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    ("exercise_id", "what", "answer", "label"),
    ALIASES_02,
    ids=[f"{exercise_id}: {what}" for exercise_id, what, *_ in ALIASES_02],
)
def test_an_alias_is_refused_by_name_when_only_the_sandbox_sees_it(
    exercise_id: str, what: str, answer: Any, label: str
) -> None:
    checker = checker_for(exercise_id)
    remote = checker(stand_in(_AnswerInAThread(answer), json.loads(json.dumps(describe(answer)))))
    assert not remote.passed and f"calls {label}" in str(remote), remote
    assert remote.mistake.startswith("calls "), remote
    assert str(remote) == str(checker(answer))  # what the check says of the answer itself
