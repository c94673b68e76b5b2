"""nbgrader on the course, unchanged: the student edition it generates; and autograding.

In a throwaway directory (the repository's ``nbgrader_config.py`` and a copy of the
instructors' edition, ``instructors/notebooks/``), ``nbgrader generate_assignment notebooks``
writes the student edition, which must be the learner's edition of ``notebooks/``. Then, in a
course directory (``python -m attnlib.grading course-dir``), attnlib's grader autogrades two
submissions, each notebook in its sandbox: the instructors' notebooks (every solution in
place, so full marks, the classes' exercises included), graded as ``make autograde`` grades a
class, the cells that only train a model left out; and the learner's edition as a learner
first opens it (every stub, so zero), every cell run (``--whole``). The second is also Run
All on the untouched learner's edition: every cell runs, and the only cells that fail are the
graded checks of the unfinished exercises. Needs the ``instructor`` extra and bubblewrap
(`make grading` installs them).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from nbgrader import api as gradebook_api  # the `instructor` extra
from setup_runs import (
    ASSIGNMENT,
    COURSE_NOTEBOOKS,
    LEARNER_NOTEBOOKS,
    GradingRun,
    describe_grading,
    grade_course,
)

from attnlib.grading.grader.course import nbgrader_source
from attnlib.grading.sandbox.notebook import LEFT_OUT_NOTE

NOTEBOOKS = COURSE_NOTEBOOKS
STUDENTS = {"solutions": "instructors' notebooks", "untouched": "learner's edition as opened"}


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _meta(cell: dict[str, Any]) -> dict[str, Any]:
    return cell["metadata"].get("nbgrader", {})


def _exercises(notebook: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(answer cell, check cell) pairs: the check cell directly follows each answer."""
    cells = notebook["cells"]
    return [(cell, cells[i + 1]) for i, cell in enumerate(cells) if _meta(cell).get("solution")]


def _graded(cell: dict[str, Any]) -> bool:
    return bool(_meta(cell).get("grade"))


def _solution_lines(source: str) -> set[str]:
    """The lines of every solution region of a cell (a class may have one per method)."""
    inside, lines = False, set()
    for line in source.splitlines():
        if line.strip() in ("### BEGIN SOLUTION", "### END SOLUTION"):
            inside = line.strip() == "### BEGIN SOLUTION"
        elif inside and line.strip():
            lines.add(line.strip())
    assert lines, "an answer cell without a solution region"
    return lines


def _docstring(source: str) -> str:
    # An exercise is a function, or a class (an nn.Module) whose methods hold the solution.
    definition = ast.parse(source).body[0]
    assert isinstance(definition, (ast.FunctionDef, ast.ClassDef))
    return " ".join((ast.get_docstring(definition) or "").split())


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> GradingRun:
    """The student edition, and the course directory after autograde."""
    run = grade_course(tmp_path_factory.mktemp("course"))
    print(f"\n{describe_grading(run)}")
    return run


def test_the_student_edition_has_every_notebook_and_only_notebooks(
    course: GradingRun,
) -> None:
    released = sorted(p.name for p in course.released.iterdir())
    assert released == [p.name for p in NOTEBOOKS]  # no instructors' guide, no nbval config


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_solution_survives_and_the_task_and_checks_stay(path: Path, course: GradingRun) -> None:
    original = json.loads(nbgrader_source(path.read_bytes()))  # as `make student` reads it
    student = _read(course.released / path.name)
    assert len(student["cells"]) == len(original["cells"])
    exercises = _exercises(original)
    assert len(exercises) >= 2
    for (answer, check), (stub, student_check) in zip(exercises, _exercises(student), strict=True):
        stub_source = _source(stub)
        ast.parse(stub_source)  # still valid Python
        assert "raise NotImplementedError()" in stub_source
        assert "BEGIN SOLUTION" not in stub_source
        assert _docstring(stub_source) == _docstring(_source(answer))  # the task stays
        surviving = _solution_lines(_source(answer)) & {
            line.strip() for line in stub_source.splitlines()
        }
        assert not surviving, f"solution lines in the student edition: {surviving}"
        assert _source(student_check) == _source(check)
        if _graded(check):  # a core exercise's check; an optional one's carries no points
            assert _meta(student_check)["locked"] and _meta(student_check)["points"] > 0
    for cell in student["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def _code(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def _lines_outside_solutions(source: str) -> set[str]:
    inside, lines = False, set()
    for line in source.splitlines():
        if line.strip() in ("### BEGIN SOLUTION", "### END SOLUTION"):
            inside = line.strip() == "### BEGIN SOLUTION"
        elif not inside and line.strip():
            lines.add(line.strip())
    return lines


def _markdown(notebook: dict[str, Any]) -> list[str]:
    return [_source(cell) for cell in notebook["cells"] if cell["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_nbgraders_student_edition_is_the_learners_edition(path: Path, course: GradingRun) -> None:
    """What an instructor hands out (nbgrader's release) and what a learner opens on their own
    (notebooks/, instructors/editions.py) are the same cells: the same prose, the same stubs."""
    learner = _read(LEARNER_NOTEBOOKS / path.name)
    # make student's, and the one a course directory hands out (make course-dir)
    for folder in (course.released, course.course_dir / "release" / ASSIGNMENT):
        released = _read(folder / path.name)
        assert [(c["cell_type"], _source(c)) for c in released["cells"]] == [
            (c["cell_type"], _source(c)) for c in learner["cells"]
        ]
        assert [c["metadata"].get("tags", []) for c in released["cells"]] == [
            c["metadata"].get("tags", []) for c in learner["cells"]
        ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_student_edition_keeps_the_prose_and_drops_the_solutions(
    path: Path, course: GradingRun
) -> None:
    """nbgrader clears the solutions of the answer cells and leaves the markdown as it is."""
    original = _read(path)
    student = _read(course.released / path.name)
    assert _markdown(student) == _markdown(original)  # every markdown cell, unchanged
    # No solution line anywhere, except one the lesson itself shows outside the solutions.
    solutions = set().union(*(_solution_lines(_source(a)) for a, _ in _exercises(original)))
    shown = set().union(*(_lines_outside_solutions(_source(c)) for c in _code(original)))
    for cell in _code(student):
        assert "BEGIN SOLUTION" not in _source(cell)
        left = (solutions - shown) & {line.strip() for line in _source(cell).splitlines()}
        assert not left, f"solution lines in the student edition: {left}"


def _max_points() -> int:
    return sum(
        _meta(check)["points"]
        for path in NOTEBOOKS
        for _, check in _exercises(_read(path))
        if _graded(check)
    )


@pytest.mark.parametrize(("student", "expected"), [("solutions", "all"), ("untouched", "none")])
def test_autograde_gives_the_solutions_full_marks_and_the_stubs_zero(
    course: GradingRun, student: str, expected: str
) -> None:
    with gradebook_api.Gradebook(course.db_url) as gradebook:
        submission = gradebook.find_submission(ASSIGNMENT, student)
        assert submission.max_score == _max_points()
        by_notebook = {nb.name: (nb.score, nb.max_score) for nb in submission.notebooks}
        assert sorted(by_notebook) == [p.stem for p in NOTEBOOKS]
        wanted = submission.max_score if expected == "all" else 0
        assert submission.score == wanted, (STUDENTS[student], by_notebook)


# The notebooks whose tagged cells train a model: grading a class must never train it.
TRAINING_NOTEBOOKS = ("09", "10")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_grading_the_solutions_leaves_out_what_only_trains_and_nothing_fails(
    path: Path, course: GradingRun
) -> None:
    """The solutions were graded as a class is: every cell tagged grading-may-skip left out,
    with a note saying so (a course cell that reads what such a cell made or used goes with
    it), or none, where an answer reads what a tagged cell uses; never in 09 and 10, whose
    tagged cells train; and the cells after the last graded check left out in any case. No
    cell that ran failed; full marks all the same (above)."""
    graded = _read(course.autograded("solutions") / path.name)
    code = [cell for cell in graded["cells"] if cell["cell_type"] == "code"]
    left_out = {id(cell) for cell in code if cell.get("execution_count") is None}
    tagged = [cell for cell in code if "grading-may-skip" in cell["metadata"].get("tags", [])]
    if left_out or path.stem[:2] in TRAINING_NOTEBOOKS:
        ran = [_source(cell)[:300] for cell in tagged if id(cell) not in left_out]
        assert not ran, f"tagged cells ran: {ran}"
    for cell in code:
        if id(cell) in left_out:
            assert LEFT_OUT_NOTE in _shown(cell), f"left out without a note: {_source(cell)[:300]}"
        else:
            assert not _errors(cell), f"{_source(cell)[:300]}\n{_shown(cell)[-1500:]}"


def _errors(cell: dict[str, Any]) -> list[dict[str, Any]]:
    return [out for out in cell.get("outputs", []) if out["output_type"] == "error"]


def _shown(cell: dict[str, Any]) -> str:
    parts = []
    for out in cell.get("outputs", []):
        text = out.get("text") or out.get("data", {}).get("text/plain") or ""
        parts.append(text if isinstance(text, str) else "".join(text))
        parts.append("\n".join(out.get("traceback", [])))
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_run_all_on_the_untouched_learners_edition_fails_only_the_unfinished_checks(
    path: Path, course: GradingRun
) -> None:
    """Every code cell ran; the graded checks say "not done yet" with the task and no
    traceback, in a cell tagged raises-exception (JupyterLab's Run All goes on past it); an
    optional exercise's check says so without raising; no other cell fails."""
    graded = _read(course.autograded("untouched") / path.name)
    checks = {id(check) for _, check in _exercises(graded)}
    for stub, check in _exercises(graded):
        shown = _shown(check)
        assert "not done yet" in shown and _docstring(_source(stub)) in shown, shown
        assert "Traceback" not in shown and "File " not in shown, shown
        if _graded(check):
            errors = _errors(check)
            assert len(errors) == 1 and errors[0]["ename"] == "CheckFailedError", shown
            assert "raises-exception" in check["metadata"].get("tags", [])
        else:
            assert not _errors(check), f"an optional exercise's check raised: {shown}"
    for cell in graded["cells"]:
        if cell["cell_type"] != "code" or id(cell) in checks:
            continue
        assert cell.get("execution_count") is not None, f"not run: {_source(cell)[:200]}"
        assert not _errors(cell), f"{_source(cell)[:300]}\n{_shown(cell)[-1500:]}"
        stderr = [o for o in cell["outputs"] if o.get("name") == "stderr"]
        assert not stderr or "nbval-ignore-output" in cell["metadata"].get("tags", []), _shown(cell)
