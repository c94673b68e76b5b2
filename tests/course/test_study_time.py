"""The instructors' guide and the README quote the study times benchmarks.study_time counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.study_time import QUOTED_IN, duration, quoting, study_time

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("document", QUOTED_IN)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebooks_counted_study_time_is_quoted(document: str, path: Path) -> None:
    text = (ROOT / document).read_text(encoding="utf-8")
    row = re.search(QUOTED_IN[document][0].format(nn=path.name[:2]), text, re.MULTILINE)
    assert row, f"no row for {path.name} in {document}"
    assert row.group(2).strip() == duration(study_time(path).minutes), (
        "run `python -m benchmarks.study_time --write`"
    )


@pytest.mark.parametrize("document", QUOTED_IN)
def test_the_course_total_is_quoted(document: str) -> None:
    total = duration(sum(study_time(path).minutes for path in NOTEBOOKS))
    assert QUOTED_IN[document][1].format(total=total) in (ROOT / document).read_text("utf-8")


@pytest.mark.parametrize("document", QUOTED_IN)
def test_writing_the_quotes_changes_only_the_times(document: str) -> None:
    text = (ROOT / document).read_text(encoding="utf-8")
    numbers = [path.name[:2] for path in NOTEBOOKS]
    stale = quoting(text, document, dict.fromkeys(numbers, "9 h 55 min"), "99 h 55 min")
    assert stale != text
    assert stale.count("9 h 55 min") == len(numbers) + 1  # every row, and the total
    times = {path.name[:2]: duration(study_time(path).minutes) for path in NOTEBOOKS}
    total = duration(sum(study_time(path).minutes for path in NOTEBOOKS))
    assert quoting(stale, document, times, total) == text


def test_a_document_without_a_row_cannot_be_written() -> None:
    with pytest.raises(ValueError, match="0 rows for notebook 00"):
        quoting("no table here", "README.md", {"00": "5 min"}, "5 min")


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
    path.write_text(json.dumps(notebook), encoding="utf-8")
    # 240 words at 120 a minute, the exercise's 7 minutes, and three code cells: a widget, a
    # prediction, and a widget behind a predict-first question (the answer and check cells
    # are the exercise's own).
    assert study_time(path).minutes == pytest.approx(2 + 7 + (1 + 2) + (1 + 2) + (1 + 2 + 2))
