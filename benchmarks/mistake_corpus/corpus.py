"""The corpus's entry type and its runner (see the package docstring)."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlib import checks

HERE = Path(__file__).resolve().parent
# A wrong answer's `named` when it calls what its exercise asks the learner to write: the check
# refuses it and its report names the call.
REFUSED = "(refused: it calls the implementation the exercise asks for)"


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
    if "The check does not accept it" in text:
        return ("caught-named" if entry.named == REFUSED else "caught-misnamed"), text
    if "The mistake: " not in text:
        return "caught-unnamed", text
    if entry.named is not None and f"The mistake: {entry.named}." in text:
        return "caught-named", text
    return "caught-misnamed", text  # it names a mistake, but not the one made


def modules(notebook: str, corpus: str | None = None) -> list[str]:
    """The corpus modules of a notebook: ``nbNN`` (the first corpus, "a"), ``nbNN_b`` and
    ``nbNN_c`` (the second and third, each written later by other hands); ``corpus`` picks one."""
    names = {"a": f"nb{notebook}", "b": f"nb{notebook}_b", "c": f"nb{notebook}_c"}
    chosen = [names[corpus]] if corpus else list(names.values())
    return [name for name in chosen if (HERE / f"{name}.py").is_file()]


def entries(notebook: str, corpus: str | None = None) -> list[Entry]:
    found: list[Entry] = []
    for name in modules(notebook, corpus):
        found += importlib.import_module(f"benchmarks.mistake_corpus.{name}").ENTRIES
    return found


def notebooks() -> list[str]:
    return sorted({p.stem[2:4] for p in HERE.glob("nb[0-9][0-9]*.py")})


def run(numbers: list[str], verbose: bool = False, corpus: str | None = None) -> Tally:
    total = Tally()
    for notebook in numbers:
        tally = Tally()
        for entry in entries(notebook, corpus):
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
    """``[-v] [--corpus a|b|c] [NN …]``: verbose, one corpus only, some notebooks only."""
    verbose = "-v" in argv
    corpus = argv[argv.index("--corpus") + 1] if "--corpus" in argv else None
    words = [a for a in argv if a not in ("-v", "--corpus", corpus)]
    # Learners' answers trip torch's deprecation warnings (x.T on 3-D tensors …): noise here.
    warnings.simplefilter("ignore", UserWarning)
    run(words or notebooks(), verbose, corpus)


if __name__ == "__main__":
    main(sys.argv[1:])
