"""How fast the grader grades a class, and whether leaving cells out changes any score.

    python -m benchmarks.grading                 # speed, and scores against a whole run
    python -m benchmarks.grading --hangs 20      # 20 graded runs of each notebook with sliders

A "submission" is the whole course: every notebook of the answer key (every exercise
solved), graded as ``make autograde`` grades, each notebook in a bubblewrap sandbox that no
other notebook has touched (a process forked from the worker's warm sandbox), against the
learner's edition in ``notebooks/`` (its exercises and points). The benchmark grades N
submissions (4 by default) on 1 worker and on 2, and prints seconds per submission (the
start-up of the workers and of their warm sandboxes spread over the N), submissions per hour
on this machine (all its cores), and the speed-up from 1 to 2 workers. Then it grades one
submission whole (every cell run, the training of 09 and 10 included) and the untouched
learner's edition both ways, and prints whether every exercise's score is the same. The
figures are stored in ``benchmarks/results/grading.json``, which docs/measurements.md quotes.

``--hangs R`` grades the answer key of every notebook with sliders R times and counts the runs
that stopped answering (over their time limit), the fault of nbclient's kernels that issue 26
measured; it prints each notebook's slowest run too.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from attnlib.grading.grader.course import nbgrader_source
from attnlib.grading.grader.plan import plan_of
from attnlib.grading.grader.tasks import Task, run_all
from benchmarks import command_line, results

REPO = Path(__file__).resolve().parents[1]
WITH_SLIDERS = ("01", "02", "03", "06", "07", "10", "11", "12")


def _notebooks() -> list[str]:
    return sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _task(student: str, notebook: str, submission: bytes, **options: Any) -> Task:
    course = (REPO / "notebooks" / notebook).read_bytes()
    return Task(student, notebook, course, submission, **options)


def _answer_key(student: str, notebooks: list[str], **options: Any) -> list[Task]:
    """Every exercise solved, as a student submits it: the instructors' edition without the
    cells only it has (a submission that kept their asserts on the trained models would
    need the training, and have it run)."""
    key = REPO / "instructors" / "notebooks"
    return [
        _task(student, nb, nbgrader_source((key / nb).read_bytes()), **options) for nb in notebooks
    ]


def _untouched(student: str, notebooks: list[str], **options: Any) -> list[Task]:
    return [
        _task(student, nb, (REPO / "notebooks" / nb).read_bytes(), **options) for nb in notebooks
    ]


def _timed(tasks: list[Task], workers: int) -> tuple[float, list[dict[str, Any]]]:
    start = time.monotonic()
    results = run_all(tasks, workers=workers)
    return time.monotonic() - start, results


def _scores(results: list[dict[str, Any]]) -> dict[tuple[str, str, str], float]:
    return {
        (r["student"], r["notebook"], e["exercise_id"]): e["score"]
        for r in results
        for e in r["exercises"]
    }


def _problems(results: list[dict[str, Any]]) -> list[str]:
    return [f"{r['student']}/{r['notebook']}: {r['problem']}" for r in results if r["problem"]]


def speed(submissions: int, save: bool = True) -> None:
    notebooks = _notebooks()
    tasks = [t for s in range(submissions) for t in _answer_key(f"s{s}", notebooks)]
    most = sum(plan_of(t.course_notebook, t.notebook).max_score for t in tasks[: len(notebooks)])
    one, first = _timed(tasks, 1)
    two, second = _timed(tasks, 2)
    scored = sum(_scores(second).values()) / submissions
    print(f"{submissions} whole-course submissions of {len(notebooks)} notebooks, answer key")
    print(f"  score per submission: {scored:g} of {most:g}")
    print(f"  1 worker:  {one / submissions:6.1f} s per submission")
    print(f"  2 workers: {two / submissions:6.1f} s per submission ({os.cpu_count()} cores here)")
    print(f"  submissions per hour on this machine: {3600 * submissions / two:.0f}")
    print(f"  speed-up from 1 to 2 workers: {one / two:.2f}x")
    print(f"  scores the same on 1 and 2 workers: {_scores(first) == _scores(second)}")
    for problem in _problems(first + second):
        print(f"  problem: {problem}")

    whole_start = time.monotonic()
    whole = run_all(_answer_key("s0", notebooks, whole=True), workers=2)
    whole_seconds = time.monotonic() - whole_start
    left_out = {k: v for k, v in _scores(second).items() if k[0] == "s0"}
    print(f"whole run of one submission (every cell): {whole_seconds:.1f} s on 2 workers")
    print(f"  answer key, every exercise scored as in the whole run: {_scores(whole) == left_out}")
    fresh = _untouched("untouched", notebooks)
    fresh_whole = _untouched("untouched", notebooks, whole=True)
    same = _scores(run_all(fresh, workers=2)) == _scores(run_all(fresh_whole, workers=2))
    print(f"  untouched learner's edition, every exercise scored as in the whole run: {same}")
    if not save:
        return
    results.save(
        "grading",
        {
            "submissions": submissions,
            "notebooks": len(notebooks),
            "score": scored,
            "most": most,
            "seconds_per_submission_1_worker": one / submissions,
            "seconds_per_submission_2_workers": two / submissions,
            "whole_run_seconds_2_workers": whole_seconds,
            "same_scores_on_1_and_2_workers": _scores(first) == _scores(second),
            "same_scores_as_whole_run": _scores(whole) == left_out and same,
            "problems": _problems(first + second),
        },
    )


def hangs(runs: int) -> None:
    notebooks = [nb for nb in _notebooks() if nb[:2] in WITH_SLIDERS]
    tasks = [
        t for run in range(runs) for t in _answer_key(f"run{run}", notebooks, wall_seconds=300.0)
    ]
    results = run_all(tasks, workers=2)
    print(f"{runs} graded runs of each notebook with sliders (answer key, 300 s limit each)")
    for notebook in notebooks:
        mine = [r for r in results if r["notebook"] == notebook]
        stuck = [r for r in mine if "time limit" in r["problem"]]
        seconds = [r["seconds"] for r in mine]
        full = sum(
            1
            for r in mine
            if r["problem"] == "" and all(e["score"] == e["max_score"] for e in r["exercises"])
        )
        print(
            f"  {notebook:40s} hangs {len(stuck)} of {len(mine)}; full marks {full}; "
            f"median {statistics.median(seconds):.1f} s, slowest {max(seconds):.1f} s"
        )


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser(
        "grading", __doc__, writes="benchmarks/results/grading.json"
    )
    parser.add_argument(
        "--submissions",
        type=int,
        default=4,
        metavar="N",
        help="whole-course submissions to grade (4)",
    )
    parser.add_argument(
        "--hangs",
        type=int,
        default=0,
        metavar="R",
        help="instead, grade each notebook with sliders R times and count hangs (writes no file)",
    )
    args = parser.parse_args(argv)
    if args.hangs:
        hangs(args.hangs)
    else:
        speed(args.submissions, save=not args.no_save)


if __name__ == "__main__":
    main()
