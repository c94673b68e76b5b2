"""What holds for every exercise's checker: the registry and ``attnlib.checks`` agree, and an
untouched answer cell (a stub that raises NotImplementedError) is reported "not done yet" with
the task, never as a mistake."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from torch import nn

from attnlib import checks
from attnlib.checks._exercise import all_exercises

CHECKERS: dict[str, Callable] = {
    f.exercise.id: f
    for f in (getattr(checks, name) for name in dir(checks) if name.startswith("check_"))
    if hasattr(f, "exercise")
}


NOTEBOOKS = Path(__file__).resolve().parents[2] / "instructors" / "notebooks"


def test_every_registered_exercise_has_a_checker_in_attnlib_checks() -> None:
    # The course's notebooks, counted from their files, so that a new notebook or exercise
    # needs no edit here; the framework's own tests register toy exercises of a notebook "99".
    numbers = {path.name[:2] for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    course = {i for i, exercise in all_exercises().items() if exercise.notebook in numbers}
    assert numbers and course, "no notebooks or no exercises found"
    assert set(CHECKERS) == course


def _stub_function(*args: object, **kwargs: object) -> None:
    """The task."""
    raise NotImplementedError()


class _StubLayer(nn.Module):
    """The task."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise NotImplementedError()


@pytest.mark.parametrize("exercise_id", sorted(CHECKERS))
def test_an_untouched_answer_is_not_done_yet(exercise_id: str) -> None:
    checker = CHECKERS[exercise_id]
    # A build-it exercise's checker takes the class (its one parameter is annotated a type).
    takes_a_class = "type" in str(next(iter(checker.__annotations__.values())))
    report = checker(_StubLayer if takes_a_class else _stub_function)
    assert not report.passed and not report.done, report
    assert "not done yet. Your task: The task." in str(report), report
    assert "The mistake:" not in str(report)
