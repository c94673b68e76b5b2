"""How long an exercise's check takes: `python -m benchmarks.checkers`.

For every checker in `attnlib.checks`, the wall time of one check of each mistake in its table
(the slow path: the failing answer runs on every case, then every mistake is tried to name it),
median and worst, on this machine's threads. A learner waits this long after pressing
Shift-Enter on a check cell; timings depend on the machine, so none of them is a test.

    python -m benchmarks.checkers            # every checker
    python -m benchmarks.checkers 02 10      # the checkers of some notebooks
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from benchmarks import command_line


def checkers() -> dict[str, Callable[..., object]]:
    """Every exercise id with its checker (the functions marked by ``checker_of``)."""
    found = {}
    for name in checks.__all__:
        exercise = getattr(getattr(checks, name), "exercise", None)
        if exercise is not None:
            found[exercise.id] = getattr(checks, name)
    return dict(sorted(found.items(), key=lambda item: (item[1].exercise.notebook, item[0])))


def time_checker(checker: Callable[..., object], exercise_id: str) -> list[float]:
    seconds = []
    for mistake in known_mistakes(exercise_id):
        start = time.perf_counter()
        checker(mistake.fn)
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser("checkers", __doc__, writes=None)
    parser.add_argument(
        "notebooks", nargs="*", metavar="NN", help="only these notebooks' checkers (default: all)"
    )
    chosen = parser.parse_args(argv).notebooks
    print(f"{'NN':2}  {'exercise':36} {'mistakes':>8} {'median s':>9} {'worst s':>8}")
    worst_overall = 0.0
    for exercise_id, checker in checkers().items():
        notebook = checker.exercise.notebook  # type: ignore[attr-defined]
        if chosen and notebook not in chosen:
            continue
        try:
            seconds = time_checker(checker, exercise_id)
        except TypeError:  # a checker that needs more than the answer (a trained model)
            print(f"{notebook}  {exercise_id:36} {'(needs a model: not timed)':>27}")
            continue
        if not seconds:
            continue
        worst_overall = max(worst_overall, max(seconds))
        print(
            f"{notebook}  {exercise_id:36} {len(seconds):8d} "
            f"{statistics.median(seconds):9.3f} {max(seconds):8.3f}"
        )
    print(f"slowest single check: {worst_overall:.2f} s")


if __name__ == "__main__":
    main()
