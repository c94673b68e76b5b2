"""The corpus's entry type and its runner (see the package docstring)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlib import checks

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Entry:
    """One learner answer to one exercise.

    ``answer`` is what the learner's cell defines (a function, or a class for a build-it
    exercise); ``right`` says whether it is a right answer; for a wrong one, ``named`` is the
    table entry's name the report must give (None: no table entry describes it)."""

    exercise_id: str
    what: str  # the mistake in a learner's words, or how the right answer is written
    answer: Any
    right: bool = False
    named: str | None = None
    extra_args: tuple[Any, ...] = ()  # what the check cell passes after the answer


def checker_for(exercise_id: str) -> Callable[..., Any]:
    for name in checks.__all__:
        exercise = getattr(getattr(checks, name), "exercise", None)
        if exercise is not None and exercise.id == exercise_id:
            return getattr(checks, name)
    raise KeyError(f"no checker for {exercise_id}")


@dataclass
class Tally:
    wrong: int = 0
    caught: int = 0
    named: int = 0
    misnamed: int = 0
    right: int = 0
    rejected: int = 0

    def add(self, other: Tally) -> None:
        for field in self.__dataclass_fields__:
            setattr(self, field, getattr(self, field) + getattr(other, field))

    def __str__(self) -> str:
        def pct(n: int, d: int) -> str:
            return f"{100 * n / d:5.1f} %" if d else "    –"

        return (
            f"caught {self.caught}/{self.wrong} ({pct(self.caught, self.wrong)}), "
            f"named {self.named}/{self.wrong} ({pct(self.named, self.wrong)}), "
            f"misnamed {self.misnamed}, right answers rejected {self.rejected}/{self.right}"
        )


def judge(entry: Entry) -> tuple[str, str]:
    """(verdict, report): verdict is one of caught-named, caught-misnamed, caught-unnamed,
    missed (a wrong answer passed), accepted, rejected (a right answer failed)."""
    report = checker_for(entry.exercise_id)(entry.answer, *entry.extra_args)
    text = str(report)
    if entry.right:
        return ("accepted" if report.passed else "rejected"), text
    if report.passed:
        return "missed", text
    if "The mistake: " not in text:
        return "caught-unnamed", text
    if entry.named is not None and f"The mistake: {entry.named}." in text:
        return "caught-named", text
    return "caught-misnamed", text  # it names a mistake, but not the one made


def entries(notebook: str) -> list[Entry]:
    module = importlib.import_module(f"benchmarks.mistake_corpus.nb{notebook}")
    return list(module.ENTRIES)


def notebooks() -> list[str]:
    return sorted(p.stem[2:] for p in HERE.glob("nb[0-9][0-9].py"))


def run(numbers: list[str], verbose: bool = False) -> Tally:
    total = Tally()
    for notebook in numbers:
        tally = Tally()
        for entry in entries(notebook):
            verdict, text = judge(entry)
            if entry.right:
                tally.right += 1
                tally.rejected += verdict == "rejected"
            else:
                tally.wrong += 1
                tally.caught += verdict != "missed"
                tally.named += verdict == "caught-named"
                tally.misnamed += verdict == "caught-misnamed"
            if verbose and verdict not in ("caught-named", "accepted"):
                print(f"  {verdict:16} {entry.exercise_id}: {entry.what}")
                print("      " + text.splitlines()[0][:160])
        print(f"{notebook}: {tally}")
        total.add(tally)
    print(f"course: {total}")
    return total


def main(argv: list[str]) -> None:
    verbose = "-v" in argv
    numbers = [a for a in argv if a != "-v"] or notebooks()
    run(numbers, verbose)


if __name__ == "__main__":
    main(sys.argv[1:])
