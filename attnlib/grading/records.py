"""What grading leaves in the course directory, written by the grader alone after each run.

- ``autograded/STUDENT/notebooks/NN.ipynb``: the submission with every cell's output from its
  graded run (warnings and stderr included, as feedback) and each check cell as the course
  wrote it, showing the grader's report;
- nbgrader's gradebook: each check cell's ``auto_score``;
- ``grades.csv``: one row per student, notebook and exercise, with the score, the most it can
  be, and the first line of the check's report.

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

from attnlib.grading.course import ASSIGNMENT
from attnlib.grading.plan import nbgrader_of, read_submission

_OUTPUT_FIELDS = {
    "stream": ("name", "text"),
    "display_data": ("data", "metadata"),
    "error": ("ename", "evalue", "traceback"),
}


def _clean(output: dict[str, Any]) -> dict[str, Any] | None:
    """An output as nbformat wants it, or None if it is not one (it came from the sandbox)."""
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
    return cleaned


def feedback_notebook(
    submission: dict[str, Any], course: dict[str, Any], result: dict[str, Any]
) -> dict[str, Any]:
    """The submission with its graded run's outputs and the course's own check cells."""
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
    return notebook


def write_feedback(course_dir: Path, result: dict[str, Any], submission: Path) -> Path:
    course = json.loads(
        (course_dir / "release" / ASSIGNMENT / result["notebook"]).read_text(encoding="utf-8")
    )
    try:
        submitted = read_submission(submission)
    except (OSError, ValueError):  # not a notebook: its feedback holds the checks alone
        submitted = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    notebook = feedback_notebook(submitted, course, result)
    notebook.setdefault("nbformat", 4)
    notebook.setdefault("nbformat_minor", 5)
    target = course_dir / "autograded" / result["student"] / ASSIGNMENT / result["notebook"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False), encoding="utf-8")
    return target


def write_gradebook(course_dir: Path, results: Iterable[dict[str, Any]]) -> None:
    """Each check cell's auto_score, in nbgrader's gradebook."""
    from nbgrader.api import Gradebook, MissingEntry  # the `instructor` extra

    with (
        warnings.catch_warnings(),
        Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook,
    ):
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; the rows are there.
        warnings.filterwarnings("ignore", message=".*not in session.*")
        for result in results:
            student = result["student"]
            gradebook.update_or_create_student(student)
            try:
                gradebook.find_submission(ASSIGNMENT, student)
            except MissingEntry:
                gradebook.add_submission(ASSIGNMENT, student)
            notebook = Path(result["notebook"]).stem
            for exercise in result["exercises"]:
                grade = gradebook.find_grade(
                    f"{exercise['exercise_id']}_check", notebook, ASSIGNMENT, student
                )
                grade.auto_score = float(exercise["score"])
            gradebook.db.commit()


def write_csv(course_dir: Path, results: Iterable[dict[str, Any]]) -> Path:
    """grades.csv: these results, and the earlier rows of every notebook not graded again."""
    target = course_dir / "grades.csv"
    results = list(results)
    again = {(r["student"], Path(r["notebook"]).stem) for r in results}
    kept = []
    if target.is_file():
        with target.open(newline="", encoding="utf-8") as file:
            kept = [row for row in csv.reader(file)][1:]
        kept = [row for row in kept if len(row) == 6 and (row[0], row[1]) not in again]
    rows = kept + [
        [
            r["student"],
            Path(r["notebook"]).stem,
            e["exercise_id"],
            f"{e['score']:g}",
            f"{e['max_score']:g}",
            (e["report"].strip().splitlines() or [""])[0],
        ]
        for r in results
        for e in r["exercises"]
    ]
    rows.sort(key=lambda row: (row[0], row[1], row[2]))
    with target.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["student", "notebook", "exercise", "score", "max_score", "reason"])
        writer.writerows(rows)
    return target
