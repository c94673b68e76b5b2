"""Grade one submitted notebook: run it in the sandbox, and score each check out here.

:func:`grade_notebook` is the grader's side. It reads the course's notebook for the exercises
and their points (:mod:`attnlib.grading.grader.plan`), starts the sandboxed run of the submission
(:mod:`attnlib.grading.grader.runs`) and, each time that run reaches a graded check, runs the
course's checker here, in this process, on a stand-in for the learner's answer
(:mod:`attnlib.grading.grader.stand_ins`). The checker and its expected values never enter the
sandbox; the learner's code never runs in this process. An exercise scores its points when
that checker passes it, and nothing the sandbox says can change that.

The run is hostile to this side too, and nothing it does can hold the grader up or take it
over: every frame it sends is read with a size limit and checked for its form before it is
used; every read and write waits at most until a deadline; a watchdog kills the run at its wall
time whatever the exchange is doing; a call of the learner's code that outlasts its limit by a
margin (its own timer cancelled, say) ends the run. A run that crashes, stops answering,
breaks the protocol, runs out of memory or of time scores 0 on every check it had not reached,
with the reason; what it had passed keeps its points.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from attnlib import checks
from attnlib.checks._framework import CheckResult
from attnlib.grading.grader import runs
from attnlib.grading.grader.channel import Channel, RunEnded
from attnlib.grading.grader.leave_out import cells_to_leave_out
from attnlib.grading.grader.plan import GradedExercise, NotebookPlan, check_positions, plan_of
from attnlib.grading.grader.stand_ins import stand_in
from attnlib.grading.grader.submitted_notebook import parse_notebook
from attnlib.grading.grader.wall import Limits, Sandbox

# The status of an exercise's grade.
PASSED, FAILED, NOT_DONE = "passed", "failed", "not done"
NOT_CHECKED, NOT_GRADED = "not checked", "not graded"


@dataclass(frozen=True)
class ExerciseGrade:
    exercise_id: str
    score: float
    max_score: float
    report: str  # the checker's report, or why the check could not run
    status: str = FAILED  # PASSED, FAILED, NOT_DONE, NOT_CHECKED or NOT_GRADED
    mistake: str = ""  # the mistake the checker named, if any

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
    graded: bool = True  # False: the grader could not grade it at all (problem says why)

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)


def _checker(exercise: GradedExercise) -> Any:
    checker = getattr(checks, exercise.checker, None)
    if checker is None or getattr(checker, "exercise", None) is None:
        raise ValueError(f"attnlib.checks has no checker {exercise.checker}")
    return checker


def _verdict(exercise: GradedExercise, description: Any, channel: Channel) -> CheckResult:
    if description is None:
        return CheckResult(
            exercise.answer_name,
            False,
            f"✗ no `{exercise.answer_name}` was defined when its check ran: run its answer "
            "cell before the check.",
            done=False,
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


def _status(result: CheckResult) -> str:
    if result.passed:
        return PASSED
    return FAILED if result.done else NOT_DONE


def grade_notebook(
    course_notebook: bytes,
    submission: bytes,
    *,
    name: str,
    sandbox: Sandbox,
    limits: Limits | None = None,
    whole: bool = False,
) -> NotebookGrade:
    """Grade the notebook ``submission`` (bytes as handed in) against ``course_notebook`` (the
    released notebook called ``name``).

    The run leaves out the cells that nothing graded needs (:mod:`attnlib.grading.grader.leave_out`)
    unless ``whole``."""
    limits = limits or Limits()
    plan = plan_of(course_notebook, name)
    start = time.monotonic()
    try:
        notebook = parse_notebook(submission, name)
    except ValueError as error:
        return not_graded(plan, f"✗ not graded: {error}", time.monotonic() - start)
    order = _order(plan, parse_notebook(course_notebook, name), notebook, limits, whole)
    try:
        run = runs.start(sandbox, limits)
    except runs.SandboxStartError as error:
        return not_graded(plan, f"✗ not graded: {error}", time.monotonic() - start)
    try:
        deadline = start + limits.wall_seconds
        grades, outputs, ran, problem, tail = _graded_run(run, plan, order, deadline)
    except runs.UnsafeSandboxError as unsafe:
        why = f"✗ not graded: {unsafe}; the grader runs no submission in such a sandbox"
        return not_graded(plan, why, time.monotonic() - start)
    why = problem or "the notebook's run ended without reaching this check"
    exercises = [
        grades.get(e.exercise_id)
        or ExerciseGrade(e.exercise_id, 0.0, e.points, f"✗ not checked: {why}", NOT_CHECKED)
        for e in plan.exercises
    ]
    seconds = time.monotonic() - start
    return NotebookGrade(plan.name, exercises, outputs, seconds, problem, tail[-2000:], ran)


def _order(
    plan: NotebookPlan,
    course: dict[str, Any],
    notebook: dict[str, Any],
    limits: Limits,
    whole: bool,
) -> dict[str, Any]:
    """The run's order: the notebook, where each check runs, the cells left out."""
    positions, copies = check_positions(plan, notebook)
    checked = {p for p in positions.values() if p is not None}
    by_cell, at_end = _checks_by_cell(plan, positions)
    at_the_end = bool(at_end)
    skip = [] if whole else cells_to_leave_out(course, notebook, checked, checks_at_end=at_the_end)
    return {
        "notebook": notebook,
        "checks": by_cell,
        "copies": {str(index): note for index, note in copies.items()},
        "at_end": at_end,
        "skip": skip,
        "call_seconds": limits.call_seconds,
    }


def _graded_run(
    run: runs.Run, plan: NotebookPlan, order: dict[str, Any], deadline: float
) -> tuple[dict[str, ExerciseGrade], dict[int, list[dict[str, Any]]], list[int], str, str]:
    """The run's grades, outputs, cells run, what stopped it early and its log's end (when it
    was stopped), with a watchdog that kills it at ``deadline`` whatever it is doing."""
    watchdog = threading.Timer(
        max(deadline - time.monotonic(), 0.0),
        run.kill,
        args=("the notebook's run went over its time limit",),
    )
    watchdog.daemon = True
    watchdog.start()
    channel = Channel(run, deadline, run.limits.call_seconds)
    grades: dict[str, ExerciseGrade] = {}
    outputs: dict[int, list[dict[str, Any]]] = {}
    ran: list[int] = []
    problem = ""
    try:
        unsafe = runs.refusal(channel.receive().get("hello"))
        if unsafe:
            run.kill(unsafe)
            raise runs.UnsafeSandboxError(unsafe)
        outputs, ran = _answer_checks(channel, plan, order, grades)
    except RunEnded as ended:
        problem = str(ended)
    finally:
        watchdog.cancel()
        tail = run.log_tail() if run.killed or problem else ""
        run.finish()
    return grades, outputs, ran, problem, tail


def _checks_by_cell(
    plan: NotebookPlan, positions: dict[str, int | None]
) -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """The checks to run after each cell (by the cell's position), and those to run at the
    end: the exercises whose check cell the submission no longer has after its answer."""
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


def _answer_checks(
    channel: Channel, plan: NotebookPlan, order: dict[str, Any], grades: dict[str, ExerciseGrade]
) -> tuple[dict[int, list[dict[str, Any]]], list[int]]:
    """Send the run its order, then grade each check it reaches, into ``grades``, until it
    is done; return the outputs of its cells and which cells ran."""
    by_id = {e.exercise_id: e for e in plan.exercises}
    channel.send({"run": order})
    while True:
        frame = channel.receive()
        if "check" in frame:
            exercise = by_id.get(frame["check"]) if isinstance(frame["check"], str) else None
            answer = frame.get("answer")
            if (
                exercise is None
                or exercise.exercise_id in grades
                or set(frame)
                != {
                    "check",
                    "answer",
                }
            ):
                raise RunEnded("the notebook's run asked for a check it was not given")
            if answer is not None and not isinstance(answer, dict):
                raise RunEnded("the notebook's run described its answer wrongly")
            result = _verdict(exercise, answer, channel)
            grades[exercise.exercise_id] = ExerciseGrade(
                exercise.exercise_id,
                exercise.points if result.passed else 0.0,
                exercise.points,
                str(result),
                _status(result),
                result.mistake,
            )
            channel.send({"verdict": {"passed": bool(result.passed), "report": str(result)}})
        elif "done" in frame:
            return _outputs(frame.get("done")), _ran(frame.get("ran"))
        else:
            raise RunEnded("the notebook's run sent a message the grader did not expect")


def _outputs(done: Any) -> dict[int, list[dict[str, Any]]]:
    """The cells' outputs for the feedback, as far as they are well formed."""
    found: dict[int, list[dict[str, Any]]] = {}
    if isinstance(done, dict):
        for key, value in done.items():
            if key.lstrip("-").isdigit() and len(key) < 10 and isinstance(value, list):
                found[int(key)] = [v for v in value if isinstance(v, dict)]
    return found


def _ran(ran: Any) -> list[int]:
    """The cells that ran, in order, as far as the list is well formed."""
    if not isinstance(ran, list):
        return []
    return [i for i in ran if type(i) is int and 0 <= i < 1_000_000]


def not_graded(plan: NotebookPlan, why: str, seconds: float = 0.0) -> NotebookGrade:
    """A notebook the grader could not grade at all: every exercise 0, with why."""
    exercises = [
        ExerciseGrade(e.exercise_id, 0.0, e.points, why, NOT_GRADED) for e in plan.exercises
    ]
    return NotebookGrade(plan.name, exercises, {}, seconds, why, graded=False)
