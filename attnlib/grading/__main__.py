"""``python -m attnlib.grading``: make a course directory, and autograde it.

    python -m attnlib.grading course-dir DIR [--answer-key instructors/notebooks]
    python -m attnlib.grading autograde DIR [--workers N | --scheduler ADDRESS]
                                            [--student NAME …] [--whole] [--time-limit S]
                                            [--call-time-limit S] [--memory-limit GIB]
                                            [--sandbox bubblewrap | docker[:IMAGE] | none]
    python -m attnlib.grading class-report DIR

``make course-dir DIR=…``, ``make autograde COURSE=…`` and ``make class-report COURSE=…`` run
these from the checkout.

``autograde`` writes feedback, the gradebook and ``grades.csv`` for every student it was given,
whatever their folders hold, and exits with 0 when every notebook was graded, 1 when some
could not be (each such row says why), 2 when grading could not start at all.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attnlib.grading.grader.course import CHECKOUT, make_course_dir, released, unusable

if TYPE_CHECKING:  # the grading modules load only when autograding (see _autograde)
    from attnlib.grading.grader.intake import Student
    from attnlib.grading.grader.tasks import Task


def _course_notebooks(course: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(released(course).glob("[0-9][0-9]_*.ipynb"))}


def _report(result: dict[str, Any]) -> None:
    """One line per graded notebook, as it is graded."""
    score = sum(e["score"] for e in result["exercises"])
    most = sum(e["max_score"] for e in result["exercises"])
    note = f"  ({result['problem']})" if result["problem"] else ""
    print(
        f"{result['student']}/{result['notebook']}: {score:g}/{most:g} "
        f"in {result['seconds']:.0f} s{note}",
        flush=True,
    )


def _refused(students: list[Student], course: dict[str, bytes]) -> list[dict[str, Any]]:
    """A result for each notebook that cannot be graded: a refused file, or every notebook the
    class handed in for a student whose folder is refused."""
    import dataclasses

    from attnlib.grading.grader.judge import not_graded
    from attnlib.grading.grader.plan import plan_of

    handed = sorted({h.notebook for s in students for h in s.handed_in}) or sorted(course)
    results = []
    for student in students:
        refused = [(nb, student.refused) for nb in handed] if student.refused else []
        refused += [(h.notebook, h.refused) for h in student.handed_in if h.refused]
        for notebook, why in refused:
            result = dataclasses.asdict(not_graded(plan_of(course[notebook], notebook), why))
            results.append({**result, "student": student.name})
    return results


def _tasks(
    students: list[Student], course: dict[str, bytes], args: argparse.Namespace
) -> list[Task]:
    from attnlib.grading.grader.tasks import Task

    return [
        Task(
            handed.student,
            handed.notebook,
            course[handed.notebook],
            handed.content,
            sandbox=args.sandbox,
            wall_seconds=args.time_limit,
            call_seconds=args.call_time_limit,
            memory_bytes=int(args.memory_limit * 2**30),
            whole=args.whole,
        )
        for student in students
        for handed in student.handed_in
        if handed.content is not None
    ]


def _cannot_start(args: argparse.Namespace) -> str:
    """Why grading cannot start at all (no student is graded), or ''."""
    from attnlib.grading.grader.runs import preflight
    from attnlib.grading.grader.wall import Limits, named_sandbox

    problem = unusable(args.course)
    if problem:
        return problem
    if not _course_notebooks(args.course) or not (args.course / "submitted").is_dir():
        return (
            f"{args.course} is not a course directory (no release/notebooks/ or submitted/): "
            "make it with `make course-dir DIR=…` first"
        )
    sandbox = named_sandbox(args.sandbox)
    if not sandbox.available():
        if args.sandbox == "bubblewrap":
            return (
                "bubblewrap (bwrap) is not installed: `make grading-deps`, or see the guide's\n"
                "'Grading security' for the container route (--sandbox docker)."
            )
        return f"no {args.sandbox}: is Docker running, and the image built (the guide)?"
    unsafe = preflight(sandbox, Limits())
    if unsafe:
        return (
            f"not grading: {unsafe}.\nSee the guide's 'Grading security': run the grader as an "
            "unprivileged user, or as root with bubblewrap (it then drops every privilege itself)."
        )
    return ""


def _summary(results: list[dict[str, Any]], problems: list[str], line: str) -> int:
    """Print what was graded and what was not; the exit status that says so."""
    not_graded = [r for r in results if not r.get("graded", True)]
    print(f"graded {len(results) - len(not_graded)} of {len(results)} notebooks {line}")
    for result in not_graded:
        print(f"not graded: {result['student']}/{result['notebook']}: {result['problem']}")
    for problem in problems:
        print(f"not written: {problem}")
    return 1 if not_graded or problems else 0


def _autograde(args: argparse.Namespace) -> int:
    from attnlib.grading.grader import intake
    from attnlib.grading.grader.records import write_csv, write_feedback, write_gradebook
    from attnlib.grading.grader.submitted_notebook import parse_notebook
    from attnlib.grading.grader.tasks import run_all

    problem = _cannot_start(args)
    if problem:
        print(problem)
        return 2
    course_dir: Path = args.course
    course = _course_notebooks(course_dir)
    students = intake.students(course_dir, set(course), args.student or None)
    if not students:
        print(f"no submissions under {course_dir}/submitted/STUDENT/notebooks/")
        return 1
    results = _refused(students, course)
    contents = {
        (h.student, h.notebook): h.content for s in students for h in s.handed_in if h.content
    }
    problems: list[str] = []

    def feedback(result: dict[str, Any]) -> None:
        _report(result)
        content = contents.get((result["student"], result["notebook"]))
        try:
            submission = parse_notebook(content, result["notebook"]) if content else None
        except ValueError:
            submission = None
        try:
            write_feedback(course_dir, result, submission)
        except Exception as error:  # this student's feedback only
            where = f"{result['student']}/{result['notebook']}"
            problems.append(f"{where}: feedback not written ({error})")
        result["outputs"] = {}  # written: no need to hold it until the end

    for result in results:
        feedback(result)
    start = time.monotonic()
    tasks = _tasks(students, course, args)
    results += run_all(tasks, workers=args.workers, scheduler=args.scheduler, progress=feedback)
    for student, why in write_gradebook(course_dir, results).items():
        problems.append(f"{student}: gradebook rows not written ({why})")
    csv_path = write_csv(course_dir, results)
    line = (
        f"of {len(students)} students in {time.monotonic() - start:.0f} s; scores in "
        f"{csv_path} and {course_dir / 'gradebook.db'}"
    )
    return _summary(results, problems, line)


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
    grade.add_argument(
        "--memory-limit", type=float, default=6.0, help="GiB for a sandbox, its RAM files included"
    )
    grade.add_argument("--whole", action="store_true", help="run every cell (training cells too)")
    grade.add_argument(
        "--sandbox",
        default="bubblewrap",
        help="bubblewrap (Linux), docker[:IMAGE] (a container per notebook), or none "
        "(only where the machine itself is thrown away)",
    )
    report = commands.add_parser("class-report", help="what the class got right and wrong")
    report.add_argument("course", type=Path)
    args = parser.parse_args(argv)
    if args.command == "class-report":
        from attnlib.grading.grader.class_report import main as class_report

        return class_report([str(args.course)])
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
