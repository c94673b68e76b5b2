"""How long a careful learner needs for each notebook: ``python -m benchmarks.study_time``.

The estimate is counted from the notebook itself, so that it moves when the notebook
does, with rates a careful first reading keeps (the first edition's guessed times,
8 h 20 min for 01–12, were 1.5–2× short by a reviewer's reading):

- prose and formulas at 120 words a minute (technical text with mathematics, read to
  be understood, not skimmed: about half an everyday reading speed), except the hints and
  "stuck?" notes in collapsed ``<details>`` blocks, opened only while doing an exercise and
  so part of its minutes;
- 1 minute for each code cell (read it, run it, look at what it printed or drew);
- 2 minutes for each widget (move it until the idea is felt);
- 5 minutes for each playground (``playgrounds.<name>.show_…``: type a few texts of one's
  own, press the buttons, read what changed);
- 2 minutes for each "predict, then run" question (think, write a letter, compare), the
  predict-first gate of a slider (``predict_first.interact(``) included;
- each exercise at the minutes its heading states (``~15 min``), or 10 without one (the
  first edition's exercises are functions of a few lines).

On the first edition these rates give 15 h 55 min for 01–12, 1.9× its stated 8 h 20 min.

Prints a table (totals rounded to 5 minutes) and the course total; the instructors'
guide quotes them (a test keeps it so). ``python -m benchmarks.study_time ROOT`` counts
the notebooks of another checkout.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from attnlib.course.playgrounds import SHOW_CALL as PLAYGROUND

WORDS_PER_MINUTE = 120
MINUTES_PER_CODE_CELL = 1.0
MINUTES_PER_WIDGET = 2.0
MINUTES_PER_PLAYGROUND = 5.0
MINUTES_PER_PREDICTION = 2.0
MINUTES_PER_UNLABELLED_EXERCISE = 10.0
COLLAPSED = re.compile(r"<details>.*?</details>", re.S)


@dataclass(frozen=True)
class StudyTime:
    notebook: str
    words: int
    code_cells: int
    widgets: int
    playgrounds: int
    predictions: int
    exercise_minutes: float

    @property
    def minutes(self) -> float:
        return (
            self.words / WORDS_PER_MINUTE
            + self.code_cells * MINUTES_PER_CODE_CELL
            + self.widgets * MINUTES_PER_WIDGET
            + self.playgrounds * MINUTES_PER_PLAYGROUND
            + self.predictions * MINUTES_PER_PREDICTION
            + self.exercise_minutes
        )


def _source(cell: dict) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def study_time(path: Path) -> StudyTime:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    markdown = [_source(c) for c in cells if c["cell_type"] == "markdown"]
    # The Colab install cell does nothing off Colab: not part of the study.
    code = [
        c
        for c in cells
        if c["cell_type"] == "code" and "colab-install" not in c.get("metadata", {}).get("tags", [])
    ]
    answers = [c for c in code if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    labelled = [float(m) for text in markdown for m in re.findall(r"^###.*~(\d+) min", text, re.M)]
    unlabelled = max(0, len(answers) - len(labelled))
    return StudyTime(
        notebook=path.stem,
        words=sum(len(COLLAPSED.sub(" ", text).split()) for text in markdown),
        # Answer and check cells are part of the exercise's own minutes.
        code_cells=len(code) - 2 * len(answers),
        widgets=sum("interact(" in _source(c) for c in code),
        playgrounds=sum(len(PLAYGROUND.findall(_source(c))) for c in code),
        predictions=sum(
            _source(c).count(".compare(my_prediction") + _source(c).count("predict_first.interact(")
            for c in code
        ),
        exercise_minutes=sum(labelled) + unlabelled * MINUTES_PER_UNLABELLED_EXERCISE,
    )


def duration(minutes: float) -> str:
    """``minutes`` rounded to 5, as the instructors' guide writes it: ``50 min``, ``1 h 45 min``."""
    rounded = 5 * round(minutes / 5)
    return f"{rounded} min" if rounded < 60 else f"{rounded // 60} h {rounded % 60:02d} min"


def main(root: Path) -> None:
    notebooks = sorted((root / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    columns = ("words", "cells", "widg", "play", "pred", "ex min")
    print(f"{'notebook':<36} " + " ".join(f"{c:>6}" for c in columns) + f" {'total':>12}")
    total = 0.0
    for path in notebooks:
        t = study_time(path)
        total += t.minutes
        print(
            f"{t.notebook:<36} {t.words:>6} {t.code_cells:>6} {t.widgets:>6} {t.playgrounds:>6} "
            f"{t.predictions:>6} "
            f"{t.exercise_minutes:>6.0f} {duration(t.minutes):>12}"
        )
    print(f"the whole course: {duration(total)} ({len(notebooks)} notebooks)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
