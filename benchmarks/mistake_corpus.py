"""A corpus of learner answers, written apart from the checkers' tables, run against them.

`python -m benchmarks.mistake_corpus` (or with notebook numbers: `… 02 10`; `--corpus a`, `b`,
`c` or `d` for one of the four corpora; `-v` to see every entry that is not named) runs every
entry of the corpus (`tests/support/mistake_corpus`, whose docstring says how it was written)
through its exercise's checker and prints, per notebook and for the course:

- **caught**: wrong answers the check rejects (the issue's bar: at least 99 %);
- **named**: wrong answers whose report names the mistake actually made (at least 90 %);
- **rejected right answers**: right answers the check refuses (none).

The figures depend on the corpus, not on the machine.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from mistake_corpus.corpus import REFUSED, Entry, checker_for, entries, notebooks

from benchmarks import command_line


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


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser("mistake_corpus", __doc__, writes=None)
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print every entry that is not named"
    )
    parser.add_argument("--corpus", choices=("a", "b", "c", "d"), help="one corpus only")
    parser.add_argument(
        "notebooks", nargs="*", metavar="NN", help="only these notebooks (default: all)"
    )
    # Flags may come before, between or after the notebook numbers, as they always could.
    args = parser.parse_intermixed_args(argv)
    # Learners' answers trip torch's deprecation warnings (x.T on 3-D tensors …): noise here.
    warnings.simplefilter("ignore", UserWarning)
    run(args.notebooks or notebooks(), args.verbose, args.corpus)


if __name__ == "__main__":
    main()
