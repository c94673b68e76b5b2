"""Help on request: hints in levels, a worked solution, and your answer in later cells.

Every exercise of notebooks 00 to 12 has hints in levels, from the idea (level 1) to the
closest help short of the answer, and a worked solution shown only when asked for:

    checks.hint("ex2_stable_softmax")        # level 1: the idea
    checks.hint("ex2_stable_softmax", 2)     # more
    checks.solution("ex2_stable_softmax")    # the instructors' worked solution

In a graded term's copy of the course (``make release``, instructors/README.md), the worked
solutions are withheld until the term ends: ``solution`` says so and points to the hints.
A failed check prints the id and the call to make. A later cell that builds on an exercise
calls :func:`yours_or_attnlib`, so that an unfinished exercise never stops the notebook.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TypeVar

from attnlib.checks._exercise import accepted, find

T = TypeVar("T")


@dataclass(frozen=True)
class Help:
    """Text for the learner; Jupyter shows it as it is."""

    text: str

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def hint(exercise_id: str, level: int = 1) -> Help:
    """The hint of ``level`` (1 = the idea) for the exercise whose check prints ``exercise_id``.

    Each level says more than the one before; none gives the answer's code. After the last
    one, :func:`solution` shows a worked solution (once the term is over, in a graded term).
    """
    exercise = find(exercise_id)
    count = len(exercise.hints)
    if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= count:
        raise ValueError(
            f"level should be an int from 1 to {count} for {exercise_id!r}, got {level!r}"
        )
    lines = [f"Hint {level} of {count}, {exercise.title}:", f"  {exercise.hints[level - 1]}"]
    if level < count:
        lines.append(f"  More: {exercise.hint_call(level + 1)}")
    elif _solutions() is None:
        lines.append(f"  That was the last hint. {WITHHELD_NOTE}")
    else:
        lines.append(
            f'  That was the last hint. A worked solution, when you want it: checks.solution("'
            f'{exercise_id}")'
        )
    return Help("\n".join(lines))


# A graded term's release (instructors/release.py) stores, instead of the worked solutions,
# only this key in attnlib/data/solutions.json: they are withheld until the term ends.
WITHHELD = "withheld"
WITHHELD_NOTE = (
    "Worked solutions are withheld during this graded term: they are published when it ends."
)


@cache
def _solutions() -> dict[str, dict[str, str]] | None:
    """The worked solutions by exercise id; None where they are withheld: in a graded term's
    release, and in the grader's sandbox, which hides the file (or an image without it)."""
    data = resources.files("attnlib").joinpath("data/solutions.json")
    text = data.read_text(encoding="utf-8") if data.is_file() else ""
    stored = json.loads(text) if text.strip() else {WITHHELD: True}
    return None if WITHHELD in stored else stored


def solution(exercise_id: str) -> Help:
    """A worked solution of the exercise (one of many right answers): the instructors' own.

    Try the hints first: an answer you find yourself teaches what one you read does not.
    During a graded term the solutions are withheld, and this says so.
    """
    exercise = find(exercise_id)
    stored = _solutions()
    if stored is None:
        return Help(
            f"{WITHHELD_NOTE}\nThe hints help until then: {exercise.hint_call()} is the first "
            f"of {len(exercise.hints)} for {exercise.title}."
        )
    worked = stored.get(exercise_id)
    if worked is None:  # the package data lags behind the registry: `make editions`
        raise LookupError(f"no worked solution is stored for {exercise_id!r}")
    return Help(
        f"A worked solution of {exercise.title}, one of many right answers:\n\n{worked['source']}"
    )


def yours_or_attnlib(exercise_id: str, yours: T, attnlibs: T) -> T:
    """``yours`` when a check of the exercise accepted this very object and it is unchanged
    since, else ``attnlibs``.

    The memory is per answer: checking another function under the same exercise, right or
    wrong, does not change what this one earned; redefining it (a new object) or editing it
    in place (its code, its defaults, a class's methods) does, until it is checked again.
    Prints one line saying which, so that a later cell runs whether or not the exercise is
    done, and the learner knows whose code it ran.
    """
    exercise = find(exercise_id)
    mine = getattr(yours, "__name__", type(yours).__name__)
    theirs = getattr(attnlibs, "__qualname__", type(attnlibs).__name__)
    if accepted(exercise_id, yours):
        print(f"Using your {mine}: its check passed.")
        return yours
    print(
        f"Using attnlib's {theirs} here, not your {mine}: {exercise.title} has not passed its "
        "check yet (or was changed since)."
    )
    return attnlibs
