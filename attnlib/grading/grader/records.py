"""What grading leaves in the course directory, written by the grader alone, one student at a
time, so that nothing in one student's work can stop another's grades being written.

- ``autograded/STUDENT/notebooks/NN.ipynb``: the submission with every cell's output from its
  graded run (warnings and stderr included, as feedback; cut where it is very long) and each
  check cell as the course wrote it, showing the grader's report; for a notebook that could
  not be graded, a note saying why;
- nbgrader's gradebook: each check cell's ``auto_score``, the student's id as it is;
- ``grades.csv``: one row per student, notebook and exercise, with the score, the most it can
  be, the first line of the check's report, the grade's status and the mistake the checker
  named (what ``make class-report`` counts). A spreadsheet runs a cell that starts with ``=``,
  ``+``, ``-``, ``@`` (or a tab or carriage return) as a formula: such text is written with a
  leading ``'``.

Every text that came from a submission or a run is made writable first (no lone surrogates),
and outputs are rebuilt in nbformat's shape from what is well formed in them.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import copy
import csv
import json
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attnlib.grading.grader.course import ASSIGNMENT
from attnlib.grading.grader.submitted_notebook import writable, writable_text
from attnlib.grading.wire.cells import nbgrader_of

COLUMNS = ["student", "notebook", "exercise", "score", "max_score", "reason", "status", "mistake"]
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_OUTPUT_FIELDS = {
    "stream": ("name", "text"),
    "display_data": ("data", "metadata"),
    "error": ("ename", "evalue", "traceback"),
}


def spreadsheet_safe(text: str) -> str:
    """``text`` as a spreadsheet shows it and never runs it."""
    text = writable_text(text)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def _clean(output: Any) -> dict[str, Any] | None:
    """An output as nbformat wants it, or None if it is not one (it came from the sandbox)."""
    if not isinstance(output, dict):
        return None
    kind = output.get("output_type")
    if kind not in _OUTPUT_FIELDS:
        return None
    cleaned: dict[str, Any] = {"output_type": kind}
    for name in _OUTPUT_FIELDS[kind]:
        value = output.get(name)
        if name in ("name", "text", "ename", "evalue"):
            value = str(value)[:200_000] if value is not None else ""
        elif name == "traceback":
            value = [str(v)[:5_000] for v in value][:500] if isinstance(value, list) else []
        elif name == "data":
            value = {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
        else:
            value = {}
        cleaned[name] = value
    if kind == "stream" and cleaned["name"] not in ("stdout", "stderr"):
        return None
    return writable(cleaned)


def _note_cell(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def feedback_notebook(
    submission: dict[str, Any] | None, course: dict[str, Any], result: dict[str, Any]
) -> dict[str, Any]:
    """The submission with its graded run's outputs and the course's own check cells; for a
    notebook that was not graded, a note that says why."""
    if submission is None or not result.get("graded", True):
        notebook: dict[str, Any] = {"cells": [], "metadata": {}}
        problem = writable_text(str(result.get("problem", "")))
        notebook["cells"].append(_note_cell(f"**This notebook was not graded.** {problem}"))
        return {**notebook, "nbformat": 4, "nbformat_minor": 5}
    notebook = copy.deepcopy(submission)
    checks = {
        nbgrader_of(cell)["grade_id"]: cell
        for cell in course["cells"]
        if nbgrader_of(cell).get("grade")
    }
    outputs = {int(k): v for k, v in result["outputs"].items()}
    counts = {index: n for n, index in enumerate(result.get("ran", []), start=1)}
    for index, cell in enumerate(notebook.get("cells", [])):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        grade_id = nbgrader_of(cell).get("grade_id")
        if grade_id in checks:  # what ran is the course's check, whatever the cell said
            cell["source"] = checks[grade_id]["source"]
            cell["metadata"] = copy.deepcopy(checks[grade_id]["metadata"])
        cell["outputs"] = [c for c in map(_clean, outputs.get(index, [])) if c]
        cell["execution_count"] = counts.get(index)
    if -1 in outputs:
        notebook.setdefault("cells", []).append(
            {
                "cell_type": "code",
                "metadata": {},
                "execution_count": None,
                "source": "# Checks whose cells were missing from the submission ran here.",
                "outputs": [c for c in map(_clean, outputs[-1]) if c],
            }
        )
    notebook.setdefault("nbformat", 4)
    notebook.setdefault("nbformat_minor", 5)
    return notebook


def write_feedback(
    course_dir: Path, result: dict[str, Any], submission: dict[str, Any] | None
) -> Path:
    """``autograded/STUDENT/notebooks/NB``, from ``submission`` (as the grader read it, or None
    when it could not be read)."""
    released = course_dir / "release" / ASSIGNMENT / result["notebook"]
    course = json.loads(released.read_text(encoding="utf-8"))
    notebook = feedback_notebook(submission, course, result)
    target = course_dir / "autograded" / result["student"] / ASSIGNMENT / result["notebook"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
    return target


def write_gradebook(course_dir: Path, results: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Each check cell's auto_score, in nbgrader's gradebook, one student at a time; the
    students whose rows could not be written, with why."""
    from nbgrader.api import Gradebook, MissingEntry  # the `instructor` extra

    by_student: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_student.setdefault(result["student"], []).append(result)
    problems: dict[str, str] = {}
    with (
        warnings.catch_warnings(),
        Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook,
    ):
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; the rows are there.
        warnings.filterwarnings("ignore", message=".*not in session.*")
        for student, theirs in by_student.items():
            try:
                gradebook.update_or_create_student(student)
                try:
                    gradebook.find_submission(ASSIGNMENT, student)
                except MissingEntry:
                    gradebook.add_submission(ASSIGNMENT, student)
                for result in theirs:
                    notebook = Path(result["notebook"]).stem
                    for exercise in result["exercises"]:
                        grade = gradebook.find_grade(
                            f"{exercise['exercise_id']}_check", notebook, ASSIGNMENT, student
                        )
                        grade.auto_score = float(exercise["score"])
                gradebook.db.commit()
            except Exception as error:  # this student's rows only
                gradebook.db.rollback()
                problems[student] = f"{type(error).__name__}: {error}"
    return problems


def _rows(results: Iterable[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            spreadsheet_safe(r["student"]),
            Path(r["notebook"]).stem,
            e["exercise_id"],
            f"{e['score']:g}",
            f"{e['max_score']:g}",
            spreadsheet_safe((e["report"].strip().splitlines() or [""])[0][:1000]),
            e.get("status", ""),
            spreadsheet_safe(e.get("mistake", "")[:1000]),
        ]
        for r in results
        for e in r["exercises"]
    ]


def write_csv(course_dir: Path, results: Iterable[dict[str, Any]]) -> Path:
    """grades.csv: these results, and the earlier rows of every notebook not graded again."""
    target = course_dir / "grades.csv"
    rows = _rows(results)
    again = {(row[0], row[1]) for row in rows}
    kept = []
    if target.is_file():
        with target.open(newline="", encoding="utf-8", errors="replace") as file:
            earlier = list(csv.reader(file))[1:]
        for row in earlier:
            if len(row) in (6, len(COLUMNS)) and (row[0], row[1]) not in again:
                kept.append(row + [""] * (len(COLUMNS) - len(row)))
    rows = sorted(kept + rows, key=lambda row: (row[0], row[1], row[2]))
    with target.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return target
