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
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from attnlib.checks._crash import slip_in_report
from attnlib.checks._framework import CheckResult
from attnlib.checks._mistake import Mistake, every_way


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


_EXERCISES: dict[str, Exercise] = {}
# The answers each exercise's checks accepted, one entry per answer (keyed by the object's id;
# the entry holds the object, so the id is not reused while it is remembered) with what it was
# when it passed: a later cell uses an answer only while it is that very object, unchanged
# (checks.yours_or_attnlib). Checking another answer of the same exercise leaves it alone.
_ACCEPTED: dict[str, dict[object, tuple[object, tuple[object, ...]]]] = {}


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
        _MISTAKES[exercise.id] = every_way(mistakes)
        return checker

    return mark


def known_mistakes(exercise_id: str) -> tuple[Mistake, ...]:
    """The mistakes the checker of this exercise names, each variant as a mistake of its own."""
    return _MISTAKES.get(exercise_id, ())


def _fingerprint(answer: object) -> tuple[object, ...]:
    """What editing ``answer`` in place would change, compared by identity.

    A function's code object, defaults and closure cells' contents (redefining the function
    with ``def`` makes a new object, which is not remembered at all); a bound method's
    function; a class's own attributes, methods included, and those of its bases written
    next to it (in the same module). Any other callable is known by its identity alone.
    """
    if isinstance(answer, types.MethodType):
        return (answer.__self__, *_fingerprint(answer.__func__))
    if isinstance(answer, types.FunctionType):
        cells = []
        for cell in answer.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:  # a cell not filled yet
                cells.append(None)
        return (answer.__code__, answer.__defaults__, answer.__kwdefaults__, *cells)
    if isinstance(answer, type):
        own = [k for k in answer.__mro__ if k.__module__ == answer.__module__]
        return tuple(
            part
            for klass in own
            for name, value in vars(klass).items()
            for part in (klass, name, value, *_fingerprint_of_member(value))
        )
    return ()


def _fingerprint_of_member(value: object) -> tuple[object, ...]:
    # A method may be edited in place too (its __code__ replaced); properties and static or
    # class methods hold their functions one level down.
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return tuple(
            part for f in (value.fget, value.fset, value.fdel) for part in (f, *_fingerprint(f))
        )
    return _fingerprint(value) if isinstance(value, types.FunctionType) else ()


def _same(was: tuple[object, ...], now: tuple[object, ...]) -> bool:
    return len(was) == len(now) and all(a is b for a, b in zip(was, now, strict=True))


def _key(answer: object) -> object:
    # A bound method is a new object at each access (``model.forward``): it is known by its
    # instance and its function instead.
    if isinstance(answer, types.MethodType):
        return (id(answer.__self__), id(answer.__func__))
    return id(answer)


def _recall(exercise_id: str, answer: object) -> tuple[object, tuple[object, ...]] | None:
    entry = _ACCEPTED.get(exercise_id, {}).get(_key(answer))
    # The entry holds the object, so its id cannot have been reused by another one.
    same = entry is not None and (
        entry[0] == answer if isinstance(answer, types.MethodType) else entry[0] is answer
    )
    return entry if same else None


def accepted(exercise_id: str, answer: object) -> bool:
    """Whether a check of this exercise accepted ``answer``, this very object, and it is
    unchanged since (its code, defaults, or a class's methods). Checking another answer of the
    same exercise, right or wrong, changes nothing here; checking this one again does."""
    entry = _recall(exercise_id, answer)
    return entry is not None and _same(entry[1], _fingerprint(answer))


def _remember(exercise: Exercise, answer: object, ok: bool) -> None:
    remembered = _ACCEPTED.setdefault(exercise.id, {})
    if ok:
        remembered[_key(answer)] = (answer, _fingerprint(answer))
    elif _recall(exercise.id, answer) is not None:
        del remembered[_key(answer)]


# -- reports: each also records whether the learner's answer was accepted (per answer) ---------


def passed(exercise: Exercise, answer: object, what: str) -> CheckResult:
    """``what`` says what was tried: "all 6 cases", "the 4 prompts"."""
    _remember(exercise, answer, ok=True)
    return CheckResult(exercise.name, True, f"✓ {exercise.name} is correct on {what}.")


def failed(
    exercise: Exercise, answer: object, where: str, problem: str, mistake: Mistake | None
) -> CheckResult:
    """A failed check. ``where`` names the failing case ("case 'a batch of 3 rows'"), ``problem``
    what is wrong there. With a known ``mistake`` the report names it and says why it fails
    (a crash whose message alone shows its slip names that slip); otherwise it gives the
    exercise's first hint, about the idea."""
    _remember(exercise, answer, ok=False)
    if mistake is None:  # a crash whose message alone shows the slip (a float mask, say)
        mistake = slip_in_report(problem)
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
    _remember(exercise, answer, ok=False)
    names = ", ".join(dict.fromkeys(called))
    message = (
        f"✗ {exercise.name} calls {names}, which already does what this exercise asks you to "
        "write. The check does not accept it: the point is to write that part yourself. "
        f"Stuck? {exercise.hint_call()}"
    )
    return CheckResult(exercise.name, False, message, mistake=f"calls {names}")


def not_done(exercise: Exercise, answer: object, task: str) -> CheckResult:
    """The report for an answer that still raises ``NotImplementedError``: its task, no trace."""
    _remember(exercise, answer, ok=False)
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
