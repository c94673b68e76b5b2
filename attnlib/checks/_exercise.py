"""What every checker knows of its exercise, and the words of its reports.

An :class:`Exercise` is one exercise of the course: its id (the nbgrader grade id of its answer
cell, unique in the course), where it stands, whether it is optional, and the hints a learner
can ask for, from the idea (level 1) to the closest help short of the solution. A
:class:`Mistake` is one mistake learners make on it, written as a learner would write it, so
that a checker can recognise it by its behaviour and name it. The report helpers here give
every checker the same voice: the failing case, what is wrong, the mistake when it is known
(its name and why it fails, never the fix as code) and how to ask for more help.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from attnlib.checks._framework import CheckResult


@dataclass(frozen=True)
class Exercise:
    """One exercise: who it is, where it stands and the hints a learner can ask for."""

    id: str  # the answer cell's grade id, e.g. "ex2_stable_softmax"
    notebook: str  # "02"
    number: int  # the heading's "Exercise 2"
    name: str  # what the learner writes: "stable_softmax", "MyGPTBlock"
    hints: tuple[str, ...]  # level 1 (the idea) … level n (the closest help short of code)
    optional: bool = False

    def __post_init__(self) -> None:
        if not self.hints:
            raise ValueError(f"exercise {self.id} has no hints")

    @property
    def title(self) -> str:
        kind = "optional exercise" if self.optional else "Exercise"
        return f"{kind} {self.number} of notebook {self.notebook} ({self.name})"

    def hint_call(self, level: int = 1) -> str:
        """The call a learner types for this exercise's hint of ``level``."""
        return f'checks.hint("{self.id}")' if level == 1 else f'checks.hint("{self.id}", {level})'


@dataclass(frozen=True)
class Mistake:
    """A mistake learners make, written as a learner would write it.

    ``name`` says what was done ("subtracted the largest score of the whole batch, not of each
    row") and ``why`` why that gives a wrong answer, in words: the report shows both and never
    the corrected code. ``fn`` takes what the learner's function takes.
    """

    name: str
    why: str
    fn: Callable[..., object]


_EXERCISES: dict[str, Exercise] = {}
# The answer each exercise's last check accepted: a later cell uses it only while it is the
# very object that passed (checks.yours_or_attnlib).
_ACCEPTED: dict[str, object] = {}


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to the course's list, so that ``checks.hint`` and the rest find it."""
    known = _EXERCISES.get(exercise.id)
    if known is not None and known != exercise:
        raise ValueError(f"two exercises have the id {exercise.id!r}")
    _EXERCISES[exercise.id] = exercise
    return exercise


def all_exercises() -> dict[str, Exercise]:
    """Every registered exercise by id (importing ``attnlib.checks`` registers them all)."""
    return dict(_EXERCISES)


def find(exercise_id: str) -> Exercise:
    """The exercise with this id; a ValueError that suggests the nearest ids otherwise."""
    if not isinstance(exercise_id, str):
        raise TypeError(
            f"exercise_id should be an exercise's id as a str, such as 'ex2_stable_softmax', "
            f"got {type(exercise_id).__name__}"
        )
    if exercise_id in _EXERCISES:
        return _EXERCISES[exercise_id]
    near = difflib.get_close_matches(exercise_id, list(_EXERCISES), n=3, cutoff=0.5)
    suggestion = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
    raise ValueError(
        f"no exercise has the id {exercise_id!r}.{suggestion} The id is the one the check "
        "cell's report prints, such as 'ex2_stable_softmax'."
    )


_MISTAKES: dict[str, tuple[Mistake, ...]] = {}
F = TypeVar("F", bound=Callable[..., object])


def checker_of(exercise: Exercise, mistakes: Sequence[Mistake] = ()) -> Callable[[F], F]:
    """Mark a function as the checker of ``exercise`` (``fn.exercise``) and record the mistakes
    it names, for the course's tests and its table of mistakes."""

    def mark(checker: F) -> F:
        checker.exercise = exercise  # type: ignore[attr-defined]
        _MISTAKES[exercise.id] = tuple(mistakes)
        return checker

    return mark


def known_mistakes(exercise_id: str) -> tuple[Mistake, ...]:
    """The mistakes the checker of this exercise names."""
    return _MISTAKES.get(exercise_id, ())


def accepted(exercise_id: str) -> object | None:
    """The answer the last check of this exercise accepted, or None."""
    return _ACCEPTED.get(exercise_id)


# -- reports: each also records whether the learner's answer was accepted ----------------------


def passed(exercise: Exercise, answer: object, what: str) -> CheckResult:
    """``what`` says what was tried: "all 6 cases", "the 4 prompts"."""
    _ACCEPTED[exercise.id] = answer
    return CheckResult(exercise.name, True, f"✓ {exercise.name} is correct on {what}.")


def failed(
    exercise: Exercise, answer: object, where: str, problem: str, mistake: Mistake | None
) -> CheckResult:
    """A failed check. ``where`` names the failing case ("case 'a batch of 3 rows'"), ``problem``
    what is wrong there. With a known ``mistake`` the report names it and says why it fails;
    otherwise it gives the exercise's first hint, about the idea."""
    _ACCEPTED.pop(exercise.id, None)
    lines = [f"✗ {exercise.name}, {where}: {problem}"]
    if mistake is not None:
        lines.append(f"  The mistake: {mistake.name}.")
        lines.append(f"  Why it matters: {mistake.why}")
        lines.append(f"  More help: {exercise.hint_call()}")
    else:
        lines.append("  This is not one of the usual mistakes this check knows by name.")
        lines.append(f"  The idea: {exercise.hints[0]}")
        if len(exercise.hints) > 1:
            lines.append(f"  More help: {exercise.hint_call(2)}")
        else:
            lines.append(f'  More help: checks.solution("{exercise.id}")')
    named = mistake.name if mistake is not None else ""
    return CheckResult(exercise.name, False, "\n".join(lines), mistake=named)


def refused(exercise: Exercise, answer: object, called: list[str]) -> CheckResult:
    """An answer that calls the implementation it is asked to write."""
    _ACCEPTED.pop(exercise.id, None)
    names = ", ".join(dict.fromkeys(called))
    message = (
        f"✗ {exercise.name} calls {names}, which already does what this exercise asks you to "
        "write. The check does not accept it: the point is to write that part yourself. "
        f"Stuck? {exercise.hint_call()}"
    )
    return CheckResult(exercise.name, False, message, mistake=f"calls {names}")


def not_done(exercise: Exercise, answer: object, task: str) -> CheckResult:
    """The report for an answer that still raises ``NotImplementedError``: its task, no trace."""
    _ACCEPTED.pop(exercise.id, None)
    if task and task[-1] not in ".!?":
        task += "."
    detail = f" Your task: {task}" if task else ""
    message = (
        f"… {exercise.name}: not done yet.{detail} Write your answer in the cell above, run it, "
        "then run this check again."
    )
    if exercise.optional:
        message += " (An optional exercise: skip it if you like; it carries no points.)"
    return CheckResult(exercise.name, False, message, done=False)
