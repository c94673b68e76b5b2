"""Where a course directory may be (attnlib.grading.grader.course.unusable): outside any git
checkout, and on a path the gradebook's URL can hold."""

from __future__ import annotations

from pathlib import Path

from attnlib.grading.grader.course import CHECKOUT, unusable


def test_a_course_directory_outside_a_checkout_is_fine(tmp_path: Path) -> None:
    assert unusable(tmp_path / "attention-2027") == ""


def test_inside_a_checkout_or_with_url_marks_it_is_refused(tmp_path: Path) -> None:
    assert "inside a git checkout" in unusable(CHECKOUT / "course")
    for name in ("what?", "week#3"):
        assert "may not hold '?' or '#'" in unusable(tmp_path / name)


def test_autograde_refuses_what_is_not_a_course_directory(tmp_path: Path) -> None:
    from attnlib.grading.__main__ import main

    assert main(["autograde", str(tmp_path)]) == 2
