"""The learner's edition as the source of a course directory (`python -m attnlib.grading
course-dir DIR --answer-key notebooks`, what a graded term's release grades from): nbgrader's
ClearSolutions, run here in-process, gives every answer cell exactly as from the instructors'
edition, signature and task included. (tests/grading/test_course_dir_from_learners_edition.py
compares the whole release and gradebook that `nbgrader generate_assignment` writes.)"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbgrader.preprocessors import ClearSolutions  # the `instructor` extra
from traitlets.config import Config

from attnlib.grading.grader.course import _stubs_marked, nbgrader_source
from instructors import editions

ROOT = Path(__file__).resolve().parents[2]
SOURCES = editions.source_notebooks()


def _cleared(content: bytes) -> list[str]:
    """The source of every code cell after nbgrader's ClearSolutions, with the course's stub."""
    config = Config()
    config.ClearSolutions.code_stub = {"python": editions.STUB}
    notebook = nbformat.reads(content.decode("utf-8"), as_version=4)
    notebook, _ = ClearSolutions(config=config).preprocess(notebook, {})
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


@pytest.mark.parametrize("source", SOURCES, ids=[p.stem for p in SOURCES])
def test_nbgrader_clears_the_learners_edition_as_the_instructors(source: Path) -> None:
    learner = (ROOT / "notebooks" / source.name).read_bytes()
    assert _cleared(nbgrader_source(learner)) == _cleared(nbgrader_source(source.read_bytes()))
    assert _stubs_marked(source.read_bytes()) == source.read_bytes()  # regions kept as they are


def test_without_its_marks_a_stub_would_replace_the_whole_answer_cell() -> None:
    learner = (ROOT / "notebooks" / SOURCES[2].name).read_bytes()
    assert _cleared(learner) != _cleared(SOURCES[2].read_bytes())
    assert editions.STUB in _cleared(learner)  # signature and task gone
