"""``python -m attnlib.grading``: make a course directory, and autograde it.

    python -m attnlib.grading course-dir DIR [--answer-key instructors/notebooks]
    python -m attnlib.grading autograde DIR [--workers N | --scheduler ADDRESS]
                                            [--student NAME …] [--whole] [--time-limit S]
                                            [--call-time-limit S]
                                            [--sandbox bubblewrap | docker[:IMAGE] | none]

``make course-dir DIR=…`` and ``make autograde COURSE=…`` run these from the checkout.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from attnlib.grading.course import (
    CHECKOUT,
    inside_checkout,
    make_course_dir,
    released,
    submissions,
)

if TYPE_CHECKING:  # the grading modules load only when autograding (see _autograde)
    from attnlib.grading.tasks import Task


def _tasks(course: Path, found: list[tuple[str, Path]], args: argparse.Namespace) -> list[Task]:
    """One grading task per submitted notebook that the course has."""
    from attnlib.grading.tasks import Task

    tasks = []
    for student, notebook in found:
        course_notebook = released(course) / notebook.name
        if not course_notebook.is_file():
            print(f"skipped {student}/{notebook.name}: no such notebook in the course")
            continue
        tasks.append(
            Task(
                student,
                notebook.name,
                course_notebook.read_bytes(),
                notebook.read_bytes(),
                sandbox=args.sandbox,
                wall_seconds=args.time_limit,
                call_seconds=args.call_time_limit,
                whole=args.whole,
            )
        )
    return tasks


def _report(result: dict) -> None:
    """One line per graded notebook, as it is graded."""
    score = sum(e["score"] for e in result["exercises"])
    most = sum(e["max_score"] for e in result["exercises"])
    note = f"  ({result['problem']})" if result["problem"] else ""
    print(
        f"{result['student']}/{result['notebook']}: {score:g}/{most:g} "
        f"in {result['seconds']:.0f} s{note}",
        flush=True,
    )


def _autograde(args: argparse.Namespace) -> int:
    from attnlib.grading.records import write_csv, write_feedback, write_gradebook
    from attnlib.grading.sandbox import named_sandbox
    from attnlib.grading.tasks import run_all

    course: Path = args.course
    if inside_checkout(course):
        print(f"{course} is inside a git checkout: grade in a course directory outside it.")
        return 2
    if not named_sandbox(args.sandbox).available():
        if args.sandbox == "bubblewrap":
            print("bubblewrap (bwrap) is not installed: `make grading-deps`, or see the guide's")
            print("'Grading security' for the container route (--sandbox docker).")
        else:
            print(f"no {args.sandbox}: is Docker running, and the image built (the guide)?")
        return 2
    found = [(s, nb) for s, nb in submissions(course) if not args.student or s in args.student]
    if not found:
        print(f"no submissions under {course}/submitted/STUDENT/notebooks/")
        return 1
    tasks = _tasks(course, found, args)
    start = time.monotonic()

    results = run_all(tasks, workers=args.workers, scheduler=args.scheduler, progress=_report)
    paths = {(s, nb.name): nb for s, nb in found}
    for result in results:
        write_feedback(course, result, paths[(result["student"], result["notebook"])])
    write_gradebook(course, results)
    csv_path = write_csv(course, results)
    seconds = time.monotonic() - start
    print(
        f"graded {len(results)} notebooks of {len({t.student for t in tasks})} students in "
        f"{seconds:.0f} s; scores in {csv_path} and {course / 'gradebook.db'}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnlib.grading", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("course-dir", help="make a course directory")
    make.add_argument("course", type=Path)
    make.add_argument("--answer-key", type=Path, default=CHECKOUT / "instructors" / "notebooks")
    grade = commands.add_parser("autograde", help="grade every submission of a course directory")
    grade.add_argument("course", type=Path)
    grade.add_argument("--workers", type=int, default=None, help="local processes (all cores)")
    grade.add_argument("--scheduler", default=None, help="a Dask scheduler's address")
    grade.add_argument("--student", action="append", default=[], help="only these students")
    grade.add_argument("--time-limit", type=float, default=900.0, help="s per notebook")
    grade.add_argument(
        "--call-time-limit", type=float, default=120.0, help="s per call of the learner's code"
    )
    grade.add_argument("--whole", action="store_true", help="run every cell (training cells too)")
    grade.add_argument(
        "--sandbox",
        default="bubblewrap",
        help="bubblewrap (Linux), docker[:IMAGE] (a container per notebook), or none "
        "(only where the machine itself is thrown away)",
    )
    args = parser.parse_args(argv)
    if args.command == "course-dir":
        make_course_dir(args.course, args.answer_key)
        print(
            f"course directory ready: {args.course}; put submissions in "
            f"{args.course}/submitted/STUDENT/notebooks/"
        )
        return 0
    return _autograde(args)


if __name__ == "__main__":
    sys.exit(main())
