"""A checker reports the same of an answer whether it holds the answer or a stand-in that
calls it across the grading sandbox's wall (here through the wire format, in one process).

A sample: the first corpus's answers to notebooks 00 (models, optimizers, autograd, spies
among the arguments) and 02; `python -m benchmarks.stand_ins` runs all three corpora.
"""

from __future__ import annotations

import warnings

import pytest

from benchmarks.mistake_corpus.corpus import Entry, entries
from benchmarks.stand_ins import NOT_ACROSS, same_report

SAMPLE = [
    e
    for notebook in ("00", "02")
    for e in entries(notebook, "a")
    if not isinstance(e.answer, type) and e.exercise_id not in NOT_ACROSS
]


@pytest.mark.parametrize("entry", SAMPLE, ids=[f"{e.exercise_id}: {e.what}" for e in SAMPLE])
def test_the_report_is_the_same_across_the_wall(entry: Entry) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert same_report(entry)
