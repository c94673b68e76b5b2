"""nbgrader_config.py: the checkout is an nbgrader course directory as it stands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def config() -> Config:
    # nbgrader reads the file this way; an exception here is one nbgrader would only log.
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()


def test_the_instructors_edition_is_the_assignment_and_student_is_the_release(
    config: Config,
) -> None:
    assert config.CourseDirectory.source_directory == "instructors"
    assert (ROOT / "instructors" / "notebooks").is_dir()  # the assignment `notebooks`
    assert config.CourseDirectory.release_directory == "student"


def test_only_notebooks_are_handed_out(config: Config) -> None:
    ignored = set(config.CourseDirectory.ignore)
    source = ROOT / "instructors" / "notebooks"
    others = {p.name for p in source.iterdir() if p.suffix != ".ipynb"}
    others -= {".ipynb_checkpoints", "__pycache__"}
    assert others <= ignored, f"would be copied to students: {others - ignored}"


def test_cells_that_train_a_model_have_time(config: Config) -> None:
    assert config.Execute.timeout >= 300


def test_stubs_leave_the_task_to_the_docstring(config: Config) -> None:
    stub = config.ClearSolutions.code_stub["python"]
    assert stub.endswith("raise NotImplementedError()")


def test_the_guide_quotes_the_points_of_every_check() -> None:
    points = sum(
        cell.get("metadata", {}).get("nbgrader", {}).get("points", 0)
        for path in (ROOT / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb")
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
    )
    guide = (ROOT / "instructors" / "README.md").read_text(encoding="utf-8")
    assert f"(full marks: {points} of {points} points)" in guide
