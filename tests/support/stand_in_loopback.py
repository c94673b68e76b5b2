"""A checker's report on an answer, and on a stand-in for it across the grading sandbox's wall.

A stand-in (`attnlib.grading.grader.stand_ins`) whose calls go through the grader's wire format to
`attnlib.grading.sandbox.answering`, as when grading, but in this one process (`Loopback`). Used by
`tests/checks/test_grading_stand_ins.py` on a sample of the mistake corpus and by
`python -m benchmarks.stand_ins` on all of it.
"""

from __future__ import annotations

import json
from typing import Any

from mistake_corpus.corpus import Entry, checker_for

from attnlib.grading.grader.channel import Channel
from attnlib.grading.grader.stand_ins import stand_in
from attnlib.grading.sandbox.answering import answer_request, describe

NOT_ACROSS = {"ex8_my_generate_cached"}  # optional: no points, so not graded


class Loopback(Channel):
    """A channel to an answer in this process, through JSON as the wire carries it: no run and
    no deadline, only the :meth:`~Channel.request` that stand-ins make."""

    def __init__(self, answer: Any) -> None:  # no run to talk to: Channel's own is not called
        self.answer = answer

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        sent = json.loads(json.dumps(message["call"]))
        return json.loads(json.dumps(answer_request(self.answer, sent)))


def across_the_wall(answer: Any) -> Any:
    return stand_in(Loopback(answer), json.loads(json.dumps(describe(answer))))


def same_report(entry: Entry) -> bool:
    checker = checker_for(entry.exercise_id)
    direct = checker(entry.answer, *entry.extra_args)
    remote = checker(across_the_wall(entry.answer), *entry.extra_args)
    return str(direct) == str(remote) and direct.passed == remote.passed
