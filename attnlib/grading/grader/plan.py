"""What grading one notebook means: its exercises, and where each is checked in a submission.

The course's own notebook (the learner's edition as released) is the authority: it says which
exercises there are, what each check cell passes to which checker, and how many points each is
worth. A submission is only read as data (JSON) here, never run: its check cells are found by
their nbgrader grade id, and a check cell the learner deleted or renamed is checked at the end
of the notebook instead, so that no edit of a submission's cells skips or changes a check.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

from attnlib.grading.wire.cells import cell_source, code_cells, nbgrader_of


@dataclass(frozen=True)
class GradedExercise:
    """One exercise with points: the checker its check cell calls and on which name."""

    exercise_id: str  # the answer cell's grade id, "ex2_stable_softmax"
    check_id: str  # the check cell's grade id, "ex2_stable_softmax_check"
    checker: str  # "check_stable_softmax", a name in attnlib.checks
    answer_name: str  # "stable_softmax", the name the check cell passes
    points: float


@dataclass(frozen=True)
class NotebookPlan:
    name: str  # "02_softmax_and_scaling.ipynb"
    exercises: tuple[GradedExercise, ...]

    @property
    def max_score(self) -> float:
        return sum(e.points for e in self.exercises)


def _checked_call(source: str) -> tuple[str, str]:
    """(checker, answer name) of a check cell ``checks.check_x(answer).assert_passed()``."""
    expression = ast.parse(source.strip(), mode="eval").body
    if (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Attribute)
        and expression.func.attr == "assert_passed"
    ):
        expression = expression.func.value
    if (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Attribute)
        and isinstance(expression.func.value, ast.Name)
        and expression.func.value.id == "checks"
        and len(expression.args) == 1
        and isinstance(expression.args[0], ast.Name)
        and not expression.keywords
    ):
        return expression.func.attr, expression.args[0].id
    raise ValueError(f"not a check cell of the course's form: {source!r}")


def plan_of(course_notebook: bytes, name: str) -> NotebookPlan:
    """The graded exercises of the course's notebook ``name`` (optional ones carry no points)."""
    notebook = json.loads(course_notebook.decode("utf-8"))
    exercises = []
    for cell in notebook["cells"]:
        meta = nbgrader_of(cell)
        if not (meta.get("grade") and meta.get("points")):
            continue
        check_id = str(meta["grade_id"])
        if not check_id.endswith("_check"):
            raise ValueError(f"{name}: a graded cell {check_id} is not a check")
        checker, answer = _checked_call(cell_source(cell))
        exercises.append(
            GradedExercise(
                check_id.removesuffix("_check"), check_id, checker, answer, float(meta["points"])
            )
        )
    return NotebookPlan(name, tuple(exercises))


def check_positions(
    plan: NotebookPlan, notebook: dict[str, Any]
) -> tuple[dict[str, int | None], dict[int, str]]:
    """For each exercise, the index of the submission's cell where its check runs (None: at
    the notebook's end); and the other cells that carry a check's grade id, each with the note
    the feedback shows there.

    A check runs at the first cell with its grade id after the exercise's answer cell (the
    last cell with the answer's grade id), or, when the answer cell is gone, at the first
    cell with its grade id; with no such cell, at the end. So a check cell pasted above its
    answer (a copy keeps its grade id) still checks the answer."""
    cells = code_cells(notebook)
    positions: dict[str, int | None] = {}
    copies: dict[int, str] = {}
    for exercise in plan.exercises:
        answers = [i for i, _, grade_id in cells if grade_id == exercise.exercise_id]
        checks = [i for i, _, grade_id in cells if grade_id == exercise.check_id]
        after = answers[-1] if answers else -1
        later = [i for i in checks if i > after]
        position = later[0] if later else None
        positions[exercise.exercise_id] = position
        where = f"at cell {position}" if position is not None else "at the end of the notebook"
        for index in checks:
            if index != position:
                copies[index] = (
                    f"(a copy of the check of {exercise.exercise_id}: the grader checks it "
                    f"{where}, after its answer)"
                )
    return positions, copies
