"""Whether a checker says the same of an answer across the grading sandbox's wall.

`python -m benchmarks.stand_ins [NN …]` runs each checker twice on every function answer of
the four mistake corpora (`tests/support/mistake_corpus`): once on the answer itself, as in a
notebook, and once on a stand-in (`attnlib.grading.grader.stand_ins`) whose calls go through the
grader's wire format to `attnlib.grading.sandbox.answering`, as when grading, in this one process.
It prints how many reports are identical, word for word and pass for fail. Answers are
functions and classes (whose modules are built beside the answer and copied to the checker);
the optional 10 Ex 8, which carries no points and is not graded, is counted apart.
"""

from __future__ import annotations

import warnings

from mistake_corpus.corpus import entries, notebooks
from stand_in_loopback import NOT_ACROSS, same_report

from benchmarks import command_line


def main(numbers: list[str]) -> None:
    warnings.simplefilter("ignore", UserWarning)  # learners' answers trip torch's warnings
    same, differ, apart = 0, [], 0
    for notebook in numbers or notebooks():
        for entry in entries(notebook):
            if entry.exercise_id in NOT_ACROSS:
                apart += 1
            elif same_report(entry):
                same += 1
            else:
                differ.append(f"{entry.exercise_id}: {entry.what}")
    print(
        f"identical reports: {same} of {same + len(differ)} answers; "
        f"{apart} answers to the optional 10 Ex 8 (not graded) left out"
    )
    for line in differ:
        print(f"  differs: {line}")


if __name__ == "__main__":
    parser = command_line.benchmark_parser("stand_ins", __doc__, writes=None)
    parser.add_argument(
        "notebooks", nargs="*", metavar="NN", help="only these notebooks (default: all)"
    )
    main(parser.parse_args().notebooks)
