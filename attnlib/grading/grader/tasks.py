"""One unit of grading work, and where it runs: this machine's cores, or a Dask cluster.

A :class:`Task` is one student's one notebook, carried whole (the course's notebook and the
submission as bytes), so that a worker on another machine needs nothing but the course's
software and bubblewrap. :func:`run_task` grades it and returns plain data. :func:`run_all`
runs tasks on worker processes of this machine (one per core by default), each with its warm
sandbox (:mod:`attnlib.grading.grader.runs`), or, given a scheduler's address, on an existing Dask
distributed cluster; the results are the same either way, and only the caller writes anything
of the course's.

A grading worker can die (the out-of-memory killer picks it, say): the pool sees which task it
was running, starts a new worker, and grades that task again once, alone on the new worker;
a task that kills its worker twice is recorded as not graded, with the reason, and every other
task is graded as if nothing had happened. Tasks are handed out longest first, so that no
worker is left with a long notebook at the end.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any

from attnlib.grading.grader.wall import Limits


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
    memory_bytes: int = 6 * 2**30  # the whole sandbox's
    whole: bool = False  # run every cell, even those nothing graded needs

    def limits(self) -> Limits:
        return Limits(
            wall_seconds=self.wall_seconds,
            call_seconds=self.call_seconds,
            sandbox_memory_bytes=self.memory_bytes,
        )


def run_task(task: Task) -> dict[str, Any]:
    """Grade one task; the result as plain data (:class:`~judge.NotebookGrade`'s fields)."""
    from attnlib.grading.grader.judge import grade_notebook
    from attnlib.grading.grader.wall import named_sandbox

    grade = grade_notebook(
        task.course_notebook,
        task.submission,
        name=task.notebook,
        sandbox=named_sandbox(task.sandbox),
        limits=task.limits(),
        whole=task.whole,
    )
    result = dataclasses.asdict(grade)
    result["student"] = task.student
    return result


def failed_task(task: Task, why: str) -> dict[str, Any]:
    """The result of a task the grader could not run: every exercise 0, with why."""
    from attnlib.grading.grader.judge import not_graded
    from attnlib.grading.grader.plan import plan_of

    plan = plan_of(task.course_notebook, task.notebook)
    result = dataclasses.asdict(not_graded(plan, f"✗ not graded: the grader failed ({why})"))
    result["student"] = task.student
    return result


def _worker(connection: Connection) -> None:
    """A grading worker: tasks in, results out, until it is told to stop."""
    from attnlib.grading.grader import judge, runs  # noqa: F401 -- the checkers, imported once

    try:
        while True:
            task = connection.recv()
            if task is None:
                return
            try:
                result = run_task(task)
            except Exception as error:  # a bug of the grader's: this notebook only, said
                result = failed_task(task, f"{type(error).__name__}: {error}")
            connection.send(result)
    except (EOFError, KeyboardInterrupt):
        return
    finally:
        runs.stop_warm_sandboxes()


@dataclass
class _Slot:
    process: Any
    connection: Connection
    task: int | None = None


def _start_worker() -> _Slot:
    context = get_context("spawn")  # fresh interpreters, with nothing of this one's state
    ours, theirs = context.Pipe()
    process = context.Process(target=_worker, args=(theirs,), daemon=True)
    process.start()
    theirs.close()
    return _Slot(process, ours)


def _longest_first(tasks: list[Task]) -> deque[int]:
    """Task indices, the notebooks that take longest first (a notebook's size stands for it)."""
    return deque(sorted(range(len(tasks)), key=lambda i: -len(tasks[i].course_notebook)))


def run_local(
    tasks: list[Task],
    workers: int,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every task's result, in the order of ``tasks``, from ``workers`` local processes."""
    results: list[dict[str, Any] | None] = [None] * len(tasks)
    pending = _longest_first(tasks)
    deaths: dict[int, int] = {}
    slots = [_start_worker() for _ in range(min(workers, len(tasks)))]

    def finish(index: int, result: dict[str, Any]) -> None:
        results[index] = result
        if progress:
            progress(result)

    try:
        while pending or any(slot.task is not None for slot in slots):
            # A task that killed a worker is graded again alone, so that if it kills this
            # one too it takes no classmate's run with it.
            alone = any(slot.task is not None and deaths.get(slot.task) for slot in slots)
            for slot in slots:
                if alone or slot.task is not None or not pending:
                    continue
                if deaths.get(pending[0]) and any(s.task is not None for s in slots):
                    break
                slot.task = pending.popleft()
                slot.connection.send(tasks[slot.task])
                alone = bool(deaths.get(slot.task))
            busy = [slot for slot in slots if slot.task is not None]
            ready = set(wait([s.connection for s in busy] + [s.process.sentinel for s in busy]))
            for position, slot in enumerate(slots):
                if slot.task is None:
                    continue
                index = slot.task
                if slot.connection in ready:
                    try:
                        result = slot.connection.recv()
                    except (EOFError, OSError):
                        result = None
                    if result is not None:
                        slot.task = None
                        finish(index, result)
                        continue
                if slot.connection in ready or slot.process.sentinel in ready:
                    slot.process.join(5)
                    code = slot.process.exitcode
                    slot.connection.close()
                    slots[position] = _start_worker()
                    deaths[index] = deaths.get(index, 0) + 1
                    if deaths[index] < 2:
                        pending.appendleft(index)
                    else:
                        why = f"its worker died twice while grading it (exit code {code})"
                        finish(index, failed_task(tasks[index], why))
    finally:
        for slot in slots:
            with contextlib.suppress(OSError, ValueError):
                slot.connection.send(None)
        for slot in slots:
            slot.process.join(30)
            if slot.process.is_alive():
                slot.process.kill()
    return [r for r in results if r is not None]


def run_all(
    tasks: Iterable[Task],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every task's result, in the order of ``tasks``. ``progress`` sees each result as it
    comes (and may drop its outputs once it has written them)."""
    tasks = list(tasks)
    if not tasks:
        return []
    if scheduler:
        return _run_on_dask(tasks, scheduler, progress)
    return run_local(tasks, workers or os.cpu_count() or 1, progress)


def _run_on_dask(
    tasks: list[Task], scheduler: str, progress: Callable[[dict[str, Any]], None] | None
) -> list[dict[str, Any]]:
    from distributed import Client, as_completed  # the `instructor` extra

    with Client(scheduler) as client:
        order = _longest_first(tasks)
        futures = {client.submit(run_task, tasks[i], pure=False): i for i in order}
        results: list[dict[str, Any] | None] = [None] * len(tasks)
        for future in as_completed(futures):
            position = futures[future]
            try:
                results[position] = future.result()
            except Exception as error:  # a worker lost, or a bug: this notebook only, said
                results[position] = failed_task(tasks[position], f"{type(error).__name__}: {error}")
            if progress:
                progress(results[position])  # type: ignore[arg-type]
        return [r for r in results if r is not None]
