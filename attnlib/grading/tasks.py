"""One unit of grading work, and where it runs: this machine's cores, or a Dask cluster.

A :class:`Task` is one student's one notebook, carried whole (the course's notebook and the
submission as bytes), so that a worker on another machine needs nothing but the course's
software and bubblewrap. :func:`run_task` grades it in a private temporary directory and
returns plain data. :func:`run_all` runs tasks on a pool of local processes (one per core by
default) or, given a scheduler's address, on an existing Dask distributed cluster; the results
are the same either way, and only the caller writes anything of the course's.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Task:
    student: str
    notebook: str  # "02_softmax_and_scaling.ipynb"
    course_notebook: bytes  # the released notebook: exercises and points
    submission: bytes
    sandbox: str = "bubblewrap"  # or "docker" (IMAGE after a colon: "docker:attnlib-grader")
    # or "none", where the whole machine is the wall
    wall_seconds: float = 900.0
    call_seconds: float = 120.0
    whole: bool = False  # run every cell, even those nothing graded needs


def run_task(task: Task) -> dict[str, Any]:
    """Grade one task; the result as plain data (:class:`~judge.NotebookGrade`'s fields)."""
    from attnlib.grading.judge import grade_notebook
    from attnlib.grading.sandbox import Limits, named_sandbox

    sandbox = named_sandbox(task.sandbox)
    with tempfile.TemporaryDirectory(prefix="attnlib-grading-") as tmp:
        folder = Path(tmp)
        course = folder / "course" / task.notebook
        course.parent.mkdir()
        course.write_bytes(task.course_notebook)
        submitted = folder / "submitted.ipynb"
        submitted.write_bytes(task.submission)
        grade = grade_notebook(
            course,
            submitted,
            folder / "scratch",
            sandbox=sandbox,
            limits=Limits(wall_seconds=task.wall_seconds, call_seconds=task.call_seconds),
            whole=task.whole,
        )
    result = dataclasses.asdict(grade)
    result["student"] = task.student
    return result


def run_all(
    tasks: Iterable[Task],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every task's result, in the order of ``tasks``."""
    tasks = list(tasks)
    if scheduler:
        from distributed import Client, as_completed  # the `instructor` extra

        with Client(scheduler) as client:
            futures = client.map(run_task, tasks, pure=False)
            index = {future.key: i for i, future in enumerate(futures)}
            results: list[dict[str, Any] | None] = [None] * len(tasks)
            for future in as_completed(futures):
                position = index[future.key]
                try:
                    results[position] = future.result()
                except Exception as error:  # a bug of the grader's: this notebook only, said
                    results[position] = failed_task(tasks[position], f"{error}")
                if progress:
                    progress(results[position])  # type: ignore[arg-type]
            return [r for r in results if r is not None]
    count = workers or os.cpu_count() or 1
    # Fresh interpreters: each worker imports the checkers itself, before any grading.
    with ProcessPoolExecutor(max_workers=count, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_task, task) for task in tasks]
        done = []
        for task, future in zip(tasks, futures, strict=True):
            try:
                result = future.result()
            except Exception as error:  # a bug of the grader's: this notebook only, said
                result = failed_task(task, f"{type(error).__name__}: {error}")
            if progress:
                progress(result)
            done.append(result)
        return done


def failed_task(task: Task, why: str) -> dict[str, Any]:
    """The result of a task the grader could not run: every exercise 0, with why."""
    from attnlib.grading.judge import ExerciseGrade, NotebookGrade
    from attnlib.grading.plan import plan_of

    with tempfile.TemporaryDirectory() as tmp:
        course = Path(tmp) / task.notebook
        course.write_bytes(task.course_notebook)
        plan = plan_of(course)
    report = f"✗ not graded: the grader failed ({why})"
    exercises = [ExerciseGrade(e.exercise_id, 0.0, e.points, report) for e in plan.exercises]
    result = dataclasses.asdict(NotebookGrade(task.notebook, exercises, problem=report))
    result["student"] = task.student
    return result
