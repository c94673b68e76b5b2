"""Where each check runs in a submission (attnlib.grading.grader.plan.check_positions): at its check
cell after its answer, wherever a copy of the check cell was pasted."""

from __future__ import annotations

import json
from typing import Any

from attnlib.grading.grader.plan import check_positions, plan_of


def _cell(source: str, grade_id: str = "", **nbgrader: Any) -> dict[str, Any]:
    meta = {"nbgrader": {"grade_id": grade_id, **nbgrader}} if grade_id else {}
    return {"cell_type": "code", "source": source, "metadata": meta, "outputs": []}


ANSWER = _cell("def f(x):\n    return x", "ex1_f", solution=True)
CHECK = _cell("checks.check_f(f).assert_passed()", "ex1_f_check", grade=True, points=1)
COURSE = json.dumps({"cells": [_cell("import torch"), ANSWER, CHECK]}).encode()
PLAN = plan_of(COURSE, "nb.ipynb")


def test_a_check_runs_at_its_cell_after_its_answer() -> None:
    positions, copies = check_positions(PLAN, json.loads(COURSE))
    assert positions == {"ex1_f": 2} and copies == {}


def test_a_check_pasted_above_its_answer_still_checks_the_answer() -> None:
    pasted = {"cells": [_cell("import torch"), CHECK, ANSWER, CHECK]}
    positions, copies = check_positions(PLAN, pasted)
    assert positions == {"ex1_f": 3}
    assert copies == {
        1: "(a copy of the check of ex1_f: the grader checks it at cell 3, after its answer)"
    }


def test_a_check_only_above_its_answer_runs_at_the_end() -> None:
    moved = {"cells": [_cell("import torch"), CHECK, ANSWER]}
    positions, copies = check_positions(PLAN, moved)
    assert positions == {"ex1_f": None} and 1 in copies


def test_without_its_answer_cell_a_check_runs_at_its_first_cell() -> None:
    renamed = {"cells": [_cell("def f(x):\n    return x"), CHECK, CHECK]}
    positions, copies = check_positions(PLAN, renamed)
    assert positions == {"ex1_f": 1} and list(copies) == [2]
