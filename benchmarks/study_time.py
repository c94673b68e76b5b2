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
- 2 minutes for each "predict, then run" question (think, write a letter, compare:
  ``checks.reveal(``), the predict-first gate of a slider (``predict_first.interact(``)
  included;
- each exercise at the minutes its heading states (``~15 min``), or 10 without one (the
  first edition's exercises are functions of a few lines).

On the first edition these rates give 15 h 55 min for 01–12, 1.9× its stated 8 h 20 min.

Prints a table (totals rounded to 5 minutes) and the course total. The README and the
instructors' guide quote them: ``--write`` writes the times into both (``QUOTED_IN``), and a
test keeps them equal. ``python -m benchmarks.study_time ROOT`` counts the notebooks of
another checkout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from attnlib.course.playgrounds import SHOW_CALL as PLAYGROUND
from attnlib.course.predictions import INSTRUCTORS_ONLY_TAG
from benchmarks import command_line

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
    # The Colab install cell does nothing off Colab, and the instructors-only cells (the asserts
    # after a reveal) are not in the learner's edition: neither is part of the study.
    code = [
        c
        for c in cells
        if c["cell_type"] == "code"
        and not {"colab-install", INSTRUCTORS_ONLY_TAG} & set(c.get("metadata", {}).get("tags", []))
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
            _source(c).count(".compare(my_prediction")
            + _source(c).count("checks.reveal(")
            + _source(c).count("predict_first.interact(")
            for c in code
        ),
        exercise_minutes=sum(labelled) + unlabelled * MINUTES_PER_UNLABELLED_EXERCISE,
    )


def duration(minutes: float) -> str:
    """``minutes`` rounded to 5, as the instructors' guide writes it: ``50 min``, ``1 h 45 min``."""
    rounded = 5 * round(minutes / 5)
    return f"{rounded} min" if rounded < 60 else f"{rounded // 60} h {rounded % 60:02d} min"


ROOT = Path(__file__).resolve().parent.parent
_DURATION = r"\d+ h \d\d min|\d+ min"
# Where each document quotes a notebook's time (its row: the cells before the time, the time,
# what follows) and the course's total.
QUOTED_IN = {
    "README.md": (r"^(\| {nn} \|.*\| )([^|]+)( \|)$", "about {total} for the course"),
    "instructors/README.md": (r"^(\| {nn} \| [^|]+ \| )([^|]+)( \|)", "**about {total}**"),
}


def notebooks(root: Path = ROOT) -> list[Path]:
    return sorted((root / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def quoting(text: str, document: str, times: dict[str, str], total: str) -> str:
    """``text`` (of ``document``, a key of ``QUOTED_IN``) quoting ``times`` (by notebook
    number) and ``total``; raises when a row or the total is not there to rewrite."""
    row, total_phrase = QUOTED_IN[document]
    for number, time in times.items():
        pattern = re.compile(row.format(nn=number), re.MULTILINE)
        text, found = pattern.subn(lambda m, t=time: m.group(1) + t + m.group(3), text)
        if found != 1:
            raise ValueError(f"{document}: {found} rows for notebook {number}, not 1")
    before, after = (re.escape(part) for part in total_phrase.split("{total}"))
    text, found = re.subn(f"{before}(?:{_DURATION}){after}", total_phrase.format(total=total), text)
    if found != 1:
        raise ValueError(f"{document}: the course total is quoted {found} times, not once")
    return text


def write_quotes(root: Path = ROOT) -> None:
    times = {path.name[:2]: duration(study_time(path).minutes) for path in notebooks(root)}
    total = duration(sum(study_time(path).minutes for path in notebooks(root)))
    for document in QUOTED_IN:
        path = root / document
        path.write_text(
            quoting(path.read_text(encoding="utf-8"), document, times, total), encoding="utf-8"
        )
        print(f"wrote the study times into {document}")


def main(root: Path) -> None:
    columns = ("words", "cells", "widg", "play", "pred", "ex min")
    print(f"{'notebook':<36} " + " ".join(f"{c:>6}" for c in columns) + f" {'total':>12}")
    total = 0.0
    for path in notebooks(root):
        t = study_time(path)
        total += t.minutes
        print(
            f"{t.notebook:<36} {t.words:>6} {t.code_cells:>6} {t.widgets:>6} {t.playgrounds:>6} "
            f"{t.predictions:>6} "
            f"{t.exercise_minutes:>6.0f} {duration(t.minutes):>12}"
        )
    print(f"the whole course: {duration(total)} ({len(notebooks(root))} notebooks)")


if __name__ == "__main__":
    parser = command_line.benchmark_parser(
        "study_time", __doc__, writes="README.md and instructors/README.md with --write"
    )
    parser.add_argument(
        "--write", action="store_true", help="write the times into README.md and the guide"
    )
    parser.add_argument(
        "root",
        nargs="?",
        type=Path,
        default=ROOT,
        metavar="ROOT",
        help="the checkout whose notebooks are counted (default: this one)",
    )
    arguments = parser.parse_args()
    if arguments.write and arguments.no_save:
        parser.error("--write and --no-save ask for opposite things")
    if arguments.write:
        write_quotes(arguments.root)
    else:
        main(arguments.root)
