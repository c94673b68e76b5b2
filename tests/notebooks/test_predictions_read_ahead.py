"""No predict-first answer can be read on the learner's page before its reveal.

instructors/read_ahead.py reads the learner's edition (notebooks/) for what would answer a
question without thinking: an explanation of a choice anywhere on the page, an assert or a
choice's letter in the experiment's cells, or a phrase that states the answer in the prose
or comments before the reveal. The instructors' edition asserts each answer in cells the
learner's edition leaves out.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "instructors"))

import editions  # noqa: E402
import read_ahead  # noqa: E402

from attnlib.course.predictions import REVEAL_CALL  # noqa: E402
from attnlib.course.questions import QUESTIONS  # noqa: E402

NOTEBOOKS = read_ahead.learner_notebooks()


def test_no_question_can_be_answered_by_reading_ahead() -> None:
    found = read_ahead.questions_read_ahead(NOTEBOOKS)
    assert not found, "\n".join(str(f) for findings in found.values() for f in findings)


def test_every_question_of_attnlib_is_revealed_once_in_its_notebook() -> None:
    revealed = [
        name.split(" ", 1)[1]
        for name in read_ahead.questions_asked(NOTEBOOKS)
        if not name.split(" ", 1)[1].startswith("slider")
    ]
    assert sorted(revealed) == sorted(QUESTIONS), "asked in the notebooks vs. in attnlib"
    for question_id in revealed:
        notebook = question_id.split(".")[0]
        assert any(
            question_id in name and name.startswith(notebook)
            for name in read_ahead.questions_asked(NOTEBOOKS)
        ), question_id


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_the_learner_never_meets_the_old_inline_form_or_the_instructors_asserts(name) -> None:
    text = json.dumps(NOTEBOOKS[name])
    assert "checks.Prediction(" not in text and ".compare(my_prediction" not in text
    assert "checks.confirm(" not in text


@pytest.mark.parametrize("question_id", sorted(QUESTIONS))
def test_the_instructors_edition_confirms_every_answer(question_id) -> None:
    # After each reveal, a cell left out of the learner's edition asserts the course's answer.
    notebook = question_id.split(".")[0]
    (path,) = editions.SOURCE.glob(f"{notebook}_*.ipynb")
    cells = editions.read(path)["cells"]
    reveal = next(
        i
        for i, cell in enumerate(cells)
        if (match := REVEAL_CALL.search(editions.cell_source(cell)))
        and match.group(1) == question_id
    )
    confirming = [
        cell
        for cell in cells[reveal + 1 : reveal + 3]
        if re.search(
            rf"checks\.confirm\(\s*[\"']{re.escape(question_id)}[\"']", editions.cell_source(cell)
        )
    ]
    assert confirming, f"no checks.confirm of {question_id} right after its reveal"
    assert editions.INSTRUCTORS_ONLY_TAG in confirming[0]["metadata"].get("tags", [])


def test_a_cell_tagged_instructors_only_is_left_out_of_the_learners_edition() -> None:
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": []},
            {
                "cell_type": "code",
                "metadata": {"tags": ["instructors-only"]},
                "source": "assert x == 1",
                "outputs": [],
            },
        ]
    }
    learner = editions.learner_edition(notebook)
    assert [editions.cell_source(c) for c in learner["cells"]] == ["x = 1"]
    assert len(notebook["cells"]) == 2  # the instructors' edition is kept


def test_the_website_shows_what_a_reveal_measured_but_not_its_verdict() -> None:
    sys.path.insert(0, str(REPO / "website"))
    import build  # website/build.py

    reveal = {
        "cell_type": "code",
        "id": "r",
        "metadata": {},
        "execution_count": 3,
        "source": 'print(shape)\nchecks.reveal("00.broadcast-shape", my_prediction, shape=shape)',
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "(4, 3)\n"},
            {
                "output_type": "execute_result",
                "execution_count": 3,
                "metadata": {},
                "data": {"text/plain": "No prediction yet. The run shows (a) (4, 3)."},
            },
        ],
    }
    confirm = {
        "cell_type": "code",
        "id": "c",
        "metadata": {"tags": ["instructors-only"]},
        "execution_count": 4,
        "source": 'checks.confirm("00.broadcast-shape", shape=shape)',
        "outputs": [],
    }
    page = build.page_notebook({"cells": [reveal, confirm]}, "00")
    assert [cell["id"] for cell in page["cells"]] == ["r"]
    assert [o["output_type"] for o in page["cells"][0]["outputs"]] == ["stream"]
