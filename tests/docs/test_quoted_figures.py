"""No document quotes a figure that changes with the code unless a command wrote it there.

Counts: a number of notebooks must be the course's; a number of tests is never quoted
(`make unit` prints it). Measurements (seconds, minutes, speed-ups, percentages, sizes): none
in the README, `CITATION.cff` or `docs/`, except the study times `python -m
benchmarks.study_time --write` writes and the blocks `python -m benchmarks.measurements`
writes (their own tests keep both up to date).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import measurements, study_time

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = study_time.notebooks()
NUMBER_WORDS = [
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
COUNT = re.compile(
    r"\b(?<![–-])(\d[\d,]*|" + "|".join(NUMBER_WORDS) + r")( [\w'-]+)?"
    r" (notebooks|unit tests|tests)\b",
    re.IGNORECASE,
)
MEASUREMENT = re.compile(
    r"\b\d[\d.,]*\s?(ms|s|min|minutes|seconds|hours|×|x faster|%|MiB|GiB|GB|MB|GFLOP/s"
    r"|sentences/s)(?![\w/])"
)
COUNTED = [
    "README.md",
    "CITATION.cff",
    "instructors/README.md",
    "tests/README.md",
    "website/index.md",
    *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))),
]
MEASURED = ["README.md", "CITATION.cff", *(d for d in COUNTED if d.startswith("docs/"))]


def _as_number(word: str) -> int:
    word = word.lower().replace(",", "")
    return NUMBER_WORDS.index(word) + 1 if word in NUMBER_WORDS else int(word)


def stale_counts(text: str, notebooks: int) -> list[str]:
    stale = []
    for match in COUNT.finditer(text):
        number, noun = _as_number(match.group(1)), match.group(3).lower()
        if noun.endswith("tests") or number != notebooks:
            stale.append(match.group(0))
    return stale


def hand_typed_measurements(text: str, document: str) -> list[str]:
    if document in study_time.QUOTED_IN:  # the times study_time --write writes
        numbers = {path.name[:2]: "" for path in NOTEBOOKS}
        text = study_time.quoting(text, document, numbers, "")
    text = measurements.BLOCK.sub("", text)  # the blocks benchmarks.measurements writes
    return [match.group(0) for match in MEASUREMENT.finditer(text)]


def test_stale_counts_are_found() -> None:
    text = "the twelve notebooks, 1,526 unit tests, 13 notebooks, notebooks 01–12, 2–7 tests"
    assert stale_counts(text, 13) == ["twelve notebooks", "1,526 unit tests"]


def test_hand_typed_measurements_are_found() -> None:
    text = "took 43.8 min, 5.3× faster, 99.9 % exact, 6.1 GB; Python 3.11, torch==2.13.0"
    assert hand_typed_measurements(text, "docs/x.md") == ["43.8 min", "5.3×", "99.9 %", "6.1 GB"]


@pytest.mark.parametrize("document", COUNTED)
def test_no_stale_count(document: str) -> None:
    text = (ROOT / document).read_text(encoding="utf-8")
    assert not stale_counts(text, len(NOTEBOOKS)), (
        f"{document} quotes a count that is not (or no longer) true; quote the command that "
        "prints it instead"
    )


@pytest.mark.parametrize("document", MEASURED)
def test_no_hand_typed_measurement(document: str) -> None:
    text = (ROOT / document).read_text(encoding="utf-8")
    assert not hand_typed_measurements(text, document), (
        f"{document}: a measured figure typed by hand; have a benchmark store it and "
        "`python -m benchmarks.measurements` write it"
    )
