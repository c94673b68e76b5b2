"""The instructors' guide and the README quote the study times that benchmarks.study_time counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.study_time import duration, study_time

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
GUIDE = (ROOT / "instructors" / "README.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_guide_quotes_each_notebooks_counted_study_time(path: Path) -> None:
    row = re.search(rf"^\| {path.name[:2]} \| [^|]+ \| ([^|]+) \|", GUIDE, re.MULTILINE)
    assert row, f"no row for {path.name} in instructors/README.md"
    assert row.group(1).strip() == duration(study_time(path).minutes)


def test_the_guide_quotes_the_course_total() -> None:
    total = duration(sum(study_time(path).minutes for path in NOTEBOOKS))
    assert f"**about {total}**" in GUIDE


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_readme_quotes_each_notebooks_counted_study_time(path: Path) -> None:
    # The README's notebook table ends each row with the notebook's study time.
    row = re.search(rf"^\| {path.name[:2]} \|.*\| ([^|]+) \|$", README, re.MULTILINE)
    assert row, f"no row for {path.name} in README.md"
    assert row.group(1).strip() == duration(study_time(path).minutes)


def test_the_readme_quotes_the_course_total() -> None:
    total = duration(sum(study_time(path).minutes for path in NOTEBOOKS))
    assert f"about {total} for the course" in README


@pytest.mark.parametrize(
    ("minutes", "shown"), [(47.4, "45 min"), (57.6, "1 h 00 min"), (102.5, "1 h 40 min")]
)
def test_durations_are_rounded_to_five_minutes(minutes: float, shown: str) -> None:
    assert duration(minutes) == shown


def test_every_part_of_a_notebook_counts(tmp_path: Path) -> None:
    cell = {"metadata": {}, "source": ""}
    notebook = {
        "cells": [
            {**cell, "cell_type": "markdown", "source": "word " * 231},  # + 9 in the heading
            {**cell, "cell_type": "markdown", "source": "### Exercise 1 — ★☆☆ core, ~7 min: x"},
            {**cell, "cell_type": "code", "source": "interact(f)"},  # 1 + 2 min
            {**cell, "cell_type": "code", "source": "q.compare(my_prediction, 'a')"},  # 1 + 2
            {**cell, "cell_type": "code", "source": "predict_first.interact(q)(f)"},  # 1 + 2 + 2
            {**cell, "cell_type": "code", "metadata": {"nbgrader": {"solution": True}}},
            {**cell, "cell_type": "code", "metadata": {"nbgrader": {"grade": True}}},
        ]
    }
    path = tmp_path / "99_x.ipynb"
    path.write_text(json.dumps(notebook))
    # 240 words at 120 a minute, the exercise's 7 minutes, and three code cells: a widget, a
    # prediction, and a widget behind a predict-first question (the answer and check cells
    # are the exercise's own).
    assert study_time(path).minutes == pytest.approx(2 + 7 + (1 + 2) + (1 + 2) + (1 + 2 + 2))
