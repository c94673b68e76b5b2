"""A course directory made from the learner's edition grades as one made from the answer key.

A graded term's release (`make release`) holds no instructors' edition, and the Classroom
workflow makes its course directory from the course's `notebooks/` in any term. The grader
reads the exercises and their points from the released notebooks and its checkers from
attnlib.checks, never a solution: so `nbgrader generate_assignment` must release the same
notebooks, byte for byte, and record the same gradebook from either edition. Both course
directories are made side by side (about 30 s). Needs the `instructor` extra (`make grading`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from nbgrader.api import Gradebook  # the `instructor` extra

from attnlib.grading.grader.course import ASSIGNMENT, make_course_dir, released
from instructors import editions, release

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def courses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Course directories from the instructors' edition and from the learner's."""
    editions_of = {"instructors": editions.SOURCE, "learners": editions.LEARNER}
    courses = {name: tmp_path_factory.mktemp(name) / "course" for name in editions_of}
    with ThreadPoolExecutor(2) as pool:  # each runs nbgrader in a process of its own
        list(pool.map(make_course_dir, courses.values(), editions_of.values()))
    return courses


def _gradebook(course: Path) -> dict[str, Any]:
    """What the gradebook records of each notebook's cells, without its generated ids."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assignment = gradebook.find_assignment(ASSIGNMENT)
        return {
            notebook.name: {
                "kernelspec": notebook.kernelspec,
                "grade": sorted((c.name, c.max_score, c.cell_type) for c in notebook.grade_cells),
                "solution": sorted(c.name for c in notebook.solution_cells),
                "task": sorted((c.name, c.max_score) for c in notebook.task_cells),
                "source": sorted(
                    (c.name, c.cell_type, c.locked, c.source, c.checksum)
                    for c in notebook.source_cells
                ),
            }
            for notebook in assignment.notebooks
        }


def test_the_released_notebooks_are_the_same_byte_for_byte(courses: dict[str, Path]) -> None:
    ours, theirs = released(courses["learners"]), released(courses["instructors"])
    names = sorted(p.name for p in theirs.iterdir())
    assert names == [p.name for p in editions.source_notebooks()]
    assert sorted(p.name for p in ours.iterdir()) == names
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name


def test_the_gradebooks_record_the_same_cells_and_points(courses: dict[str, Path]) -> None:
    ours, theirs = _gradebook(courses["learners"]), _gradebook(courses["instructors"])
    assert ours == theirs
    assert sum(max_score for nb in ours.values() for _, max_score, _ in nb["grade"]) == 48
    assert sum(len(nb["solution"]) for nb in ours.values()) == len(
        editions.solutions(editions.source_notebooks())
    )


def test_no_solution_reaches_the_course_directory_made_from_the_learners_edition(
    courses: dict[str, Path],
) -> None:
    for path in sorted(courses["learners"].rglob("*.ipynb")):
        assert not release.solution_regions(path.read_bytes()), path
