"""What grading writes (attnlib.grading.grader.records): text from a submission or a run never stops
a record being written, a spreadsheet never runs a student's id or report as a formula, and a
notebook that was not graded says why in its feedback."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from attnlib.grading.grader.records import COLUMNS, feedback_notebook, spreadsheet_safe, write_csv


def _result(student: str, report: str = "✓ right", **extra: Any) -> dict[str, Any]:
    exercise = {
        "exercise_id": "ex1_softmax",
        "score": 1.0,
        "max_score": 1.0,
        "report": report,
        "status": "passed",
        "mistake": "",
    }
    return {
        "student": student,
        "notebook": "02_softmax_and_scaling.ipynb",
        "exercises": [exercise],
        "outputs": {},
        "ran": [],
        "problem": "",
        "graded": True,
        **extra,
    }


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_text_a_spreadsheet_would_run_is_escaped(start: str) -> None:
    assert spreadsheet_safe(f"{start}HYPERLINK(1)") == f"'{start}HYPERLINK(1)"
    assert spreadsheet_safe("ada") == "ada"


def test_grades_csv_neutralises_ids_and_reports_and_keeps_odd_text(tmp_path: Path) -> None:
    results = [
        _result("=cmd()", report="-1 is the answer\nsecond line"),
        _result("ada", report="✗ \ud800 odd text"),
    ]
    write_csv(tmp_path, results)
    with (tmp_path / "grades.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.reader(file))
    assert rows[0] == COLUMNS
    assert rows[1][0] == "'=cmd()" and rows[1][5] == "'-1 is the answer"
    assert rows[2][0] == "ada" and rows[2][5] == "✗ \ufffd odd text"
    assert [row[6] for row in rows[1:]] == ["passed", "passed"]


def test_grades_csv_keeps_earlier_rows_of_notebooks_not_graded_again(tmp_path: Path) -> None:
    old = ["ada", "03_naive_self_attention", "ex1", "1", "1", "✓"]  # an older, shorter row
    with (tmp_path / "grades.csv").open("w", encoding="utf-8", newline="") as file:
        csv.writer(file).writerows([COLUMNS[:6], old])
    write_csv(tmp_path, [_result("ada")])
    with (tmp_path / "grades.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.reader(file))
    assert [row[:2] for row in rows[1:]] == [
        ["ada", "02_softmax_and_scaling"],
        ["ada", "03_naive_self_attention"],
    ]
    assert all(len(row) == len(COLUMNS) for row in rows)


def test_feedback_of_a_run_that_printed_odd_text_is_writable() -> None:
    submission = {"cells": [{"cell_type": "code", "source": "print()", "metadata": {}}]}
    outputs = {"0": [{"output_type": "stream", "name": "stdout", "text": "\ud800"}, "junk"]}
    notebook = feedback_notebook(submission, {"cells": []}, _result("ada", outputs=outputs))
    json.dumps(notebook, ensure_ascii=False).encode("utf-8")
    assert notebook["cells"][0]["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "\ufffd"}
    ]


def test_feedback_of_a_notebook_not_graded_says_why() -> None:
    why = "✗ not graded: 02.ipynb it is a symbolic link, not a notebook file"
    notebook = feedback_notebook(None, {"cells": []}, _result("eve", problem=why, graded=False))
    (note,) = notebook["cells"]
    assert note["cell_type"] == "markdown" and why in note["source"]
