"""Grade one submitted notebook: run it in the sandbox, and score each check out here.

:func:`grade_notebook` is the grader's side. It reads the course's notebook for the exercises
and their points (:mod:`attnlib.grading.plan`), starts the sandboxed run of the submission
(:mod:`attnlib.grading.in_sandbox`) and, each time that run reaches a graded check, runs the
course's checker here, in this process, on a stand-in for the learner's answer
(:mod:`attnlib.grading.stand_ins`). The checker and its expected values never enter the
sandbox; the learner's code never runs in this process. An exercise scores its points when
that checker passes it, and nothing the sandbox says can change that: a run that crashes,
stops answering, breaks the protocol or runs out of time scores 0 on every check it had not
reached, with the reason.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlib import checks
from attnlib.checks._framework import CheckResult
from attnlib.grading.across import RunEnded
from attnlib.grading.frames import read_frame, write_frame
from attnlib.grading.leave_out import cells_to_leave_out
from attnlib.grading.plan import (
    GradedExercise,
    NotebookPlan,
    check_positions,
    plan_of,
    read_submission,
)
from attnlib.grading.raised import WireError
from attnlib.grading.sandbox import Bubblewrap, Docker, Limits, NoSandbox
from attnlib.grading.stand_ins import stand_in


@dataclass(frozen=True)
class ExerciseGrade:
    exercise_id: str
    score: float
    max_score: float
    report: str  # the checker's report, or why the check could not run

    @property
    def reason(self) -> str:
        return self.report.strip().splitlines()[0] if self.report.strip() else ""


@dataclass
class NotebookGrade:
    notebook: str
    exercises: list[ExerciseGrade]
    outputs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    seconds: float = 0.0
    problem: str = ""  # what stopped the run early, if anything
    log: str = ""  # then, the end of what the run wrote outside its cells
    ran: list[int] = field(default_factory=list)  # the cells run or checked, in order

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)


class _Channel:
    """Frames to and from the sandboxed run, with a deadline on every wait."""

    def __init__(self, to_run: Any, from_run: Any, deadline: float) -> None:
        self._to_run = to_run
        self._deadline = deadline
        self._frames: queue.Queue[dict[str, Any] | Exception | None] = queue.Queue()
        threading.Thread(target=self._read, args=(from_run,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        try:
            while True:
                frame = read_frame(stream)
                self._frames.put(frame)
                if frame is None:
                    return
        except (WireError, OSError, ValueError) as error:
            self._frames.put(error)

    def send(self, message: dict[str, Any]) -> None:
        try:
            write_frame(self._to_run, message)
        except (OSError, ValueError) as error:
            raise RunEnded(f"the notebook's run ended ({error})") from None

    def receive(self) -> dict[str, Any]:
        left = self._deadline - time.monotonic()
        try:
            frame = self._frames.get(timeout=max(left, 0.001))
        except queue.Empty:
            raise RunEnded("the notebook's run went over its time limit") from None
        if frame is None:
            raise RunEnded("the notebook's run ended before its checks were done")
        if isinstance(frame, Exception):
            raise RunEnded(f"the notebook's run sent what is not a message ({frame})")
        return frame

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        frame = self.receive()
        reply = frame.get("reply")
        if not isinstance(reply, dict):
            raise RunEnded("the notebook's run answered a call with something else")
        return reply


def _checker(exercise: GradedExercise) -> Any:
    checker = getattr(checks, exercise.checker, None)
    if checker is None or getattr(checker, "exercise", None) is None:
        raise ValueError(f"attnlib.checks has no checker {exercise.checker}")
    return checker


def _verdict(exercise: GradedExercise, description: Any, channel: _Channel) -> CheckResult:
    if description is None:
        return CheckResult(
            exercise.answer_name,
            False,
            f"✗ no `{exercise.answer_name}` was defined when its check ran: run its answer "
            "cell before the check.",
        )
    try:
        answer = stand_in(channel, description)
    except NotImplementedError as error:
        return CheckResult(exercise.answer_name, False, f"✗ not graded yet: {error}")
    except Exception as error:  # a description this side cannot use
        raise RunEnded(f"the notebook's run described its answer wrongly ({error})") from None
    try:
        return _checker(exercise)(answer)
    except Exception as error:  # the checker itself failed: say so, and score nothing
        return CheckResult(
            exercise.answer_name,
            False,
            f"✗ the check could not run ({type(error).__name__}: {error}); tell the instructor",
        )


def grade_notebook(
    course_notebook: Path,
    submission: Path,
    scratch: Path,
    *,
    sandbox: Bubblewrap | Docker | NoSandbox | None = None,
    limits: Limits | None = None,
    whole: bool = False,
) -> NotebookGrade:
    """Grade ``submission`` against ``course_notebook``, with ``scratch`` as its working copy.

    The run leaves out the cells that nothing graded needs (:mod:`attnlib.grading.leave_out`)
    unless ``whole``."""
    sandbox = sandbox or Bubblewrap()
    limits = limits or Limits()
    plan = plan_of(course_notebook)
    start = time.monotonic()
    try:
        notebook = read_submission(submission)
    except (OSError, ValueError) as error:
        return _all_zero(plan, f"✗ not graded: {error}", start)
    scratch.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(submission, scratch / "submission.ipynb")
    positions = check_positions(plan, notebook)
    course = json.loads(course_notebook.read_text(encoding="utf-8"))
    checked = {p for p in positions.values() if p is not None}
    by_cell, at_end = _checks_by_cell(plan, positions)
    order = {
        "notebook": f"{sandbox.where(scratch)}/submission.ipynb",
        "checks": by_cell,
        "at_end": at_end,
        "skip": [] if whole else cells_to_leave_out(course, notebook, checked),
        "call_seconds": limits.call_seconds,
    }
    run = _SandboxedRun.start(sandbox, scratch, limits, deadline=start + limits.wall_seconds)
    grades: dict[str, ExerciseGrade] = {}
    outputs: dict[int, list[dict[str, Any]]] = {}
    ran: list[int] = []
    problem = ""
    try:
        outputs, ran = _answer_checks(run.channel, plan, order, grades)
    except RunEnded as ended:
        problem = str(ended)
    finally:
        run.stop()
    why = problem or "the notebook's run ended without reaching this check"
    exercises = [
        grades.get(e.exercise_id)
        or ExerciseGrade(e.exercise_id, 0.0, e.points, f"✗ not checked: {why}")
        for e in plan.exercises
    ]
    tail = run.log_path.read_bytes()[-2000:].decode("utf-8", errors="replace") if problem else ""
    seconds = time.monotonic() - start
    return NotebookGrade(plan.name, exercises, outputs, seconds, problem, tail, ran)


def _checks_by_cell(
    plan: NotebookPlan, positions: dict[str, int | None]
) -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """The checks to run after each cell (by the cell's position), and those to run at the
    end: the exercises whose check cell the submission no longer has."""
    by_cell: dict[str, list[tuple[str, str]]] = {}
    at_end = []
    for exercise in plan.exercises:
        position = positions[exercise.exercise_id]
        pair = (exercise.exercise_id, exercise.answer_name)
        if position is None:
            at_end.append(pair)
        else:
            by_cell.setdefault(str(position), []).append(pair)
    return by_cell, at_end


@dataclass
class _SandboxedRun:
    """The submission's run in the sandbox: its process, the channel to it and its log."""

    process: subprocess.Popen[bytes]
    sandbox: Bubblewrap | Docker | NoSandbox
    command: list[str]
    channel: _Channel
    to_run: Any
    log: Any
    log_path: Path

    @classmethod
    def start(
        cls,
        sandbox: Bubblewrap | Docker | NoSandbox,
        scratch: Path,
        limits: Limits,
        deadline: float,
    ) -> _SandboxedRun:
        orders_read, orders_write = os.pipe()
        reports_read, reports_write = os.pipe()
        # Over two inherited pipes, or (a container) over its standard input and output.
        fds = ("0", "1") if sandbox.over_stdio else (str(orders_read), str(reports_write))
        inner = [sandbox.python, "-m", "attnlib.grading.in_sandbox", *fds]
        command = sandbox.command(scratch, inner, limits)
        log_path = scratch.parent / f"{scratch.name}.log"
        log = log_path.open("wb")  # what the run wrote outside its cells (a crash's traceback)
        if sandbox.over_stdio:
            streams = {"stdin": orders_read, "stdout": reports_write, "stderr": log}
        else:
            streams = {"stdin": subprocess.DEVNULL, "stdout": log, "stderr": subprocess.STDOUT}
        process = subprocess.Popen(
            command,
            pass_fds=() if sandbox.over_stdio else (orders_read, reports_write),
            start_new_session=True,  # its own process group, which _stop kills as one
            **streams,
        )
        os.close(orders_read)
        os.close(reports_write)
        to_run = os.fdopen(orders_write, "wb", buffering=0)
        from_run = os.fdopen(reports_read, "rb", buffering=0)
        channel = _Channel(to_run, from_run, deadline)
        return cls(process, sandbox, command, channel, to_run, log, log_path)

    def stop(self) -> None:
        _stop(self.process, self.sandbox, self.command)
        self.to_run.close()
        self.log.close()


def _answer_checks(
    channel: _Channel, plan: NotebookPlan, order: dict[str, Any], grades: dict[str, ExerciseGrade]
) -> tuple[dict[int, list[dict[str, Any]]], list[int]]:
    """Send the run its order, then grade each check it reaches, into ``grades``, until it
    is done; return the outputs of its cells and which cells ran."""
    by_id = {e.exercise_id: e for e in plan.exercises}
    channel.send({"run": order})
    while True:
        frame = channel.receive()
        if "check" in frame:
            exercise = by_id.get(str(frame["check"]))
            if exercise is None or exercise.exercise_id in grades:
                raise RunEnded("the notebook's run asked for a check it was not given")
            result = _verdict(exercise, frame.get("answer"), channel)
            grades[exercise.exercise_id] = ExerciseGrade(
                exercise.exercise_id,
                exercise.points if result.passed else 0.0,
                exercise.points,
                str(result),
            )
            channel.send({"verdict": {"passed": bool(result.passed), "report": str(result)}})
        elif "done" in frame:
            outputs = _outputs(frame["done"])
            ran = [i for i in frame.get("ran", []) if type(i) is int and i in outputs]
            return outputs, ran


def _outputs(done: Any) -> dict[int, list[dict[str, Any]]]:
    """The cells' outputs for the feedback, as far as they are well formed."""
    found: dict[int, list[dict[str, Any]]] = {}
    if isinstance(done, dict):
        for key, value in done.items():
            if isinstance(key, str) and key.lstrip("-").isdigit() and isinstance(value, list):
                found[int(key)] = [v for v in value if isinstance(v, dict)]
    return found


def _stop(
    process: subprocess.Popen[bytes], sandbox: Bubblewrap | Docker | NoSandbox, command: list[str]
) -> None:
    if process.poll() is None:
        sandbox.stop(command)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _all_zero(plan: NotebookPlan, why: str, start: float) -> NotebookGrade:
    exercises = [ExerciseGrade(e.exercise_id, 0.0, e.points, why) for e in plan.exercises]
    return NotebookGrade(plan.name, exercises, {}, time.monotonic() - start, why)
