"""The corpus's entry type and how to read it (see the package docstring); its runner is
`python -m benchmarks.mistake_corpus`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attnlib import checks

HERE = Path(__file__).resolve().parent
# A wrong answer's `named` when it calls what its exercise asks the learner to write: the check
# refuses it and its report names the call.
REFUSED = "(refused: it calls the implementation the exercise asks for)"


@dataclass(frozen=True)
class Entry:
    """One learner answer to one exercise.

    ``answer`` is what the learner's cell defines (a function, or a class for a build-it
    exercise); ``right`` says whether it is a right answer; for a wrong one, ``named`` is the
    table entry's name the report must give (None: no table entry describes it)."""

    exercise_id: str
    what: str  # the mistake in a learner's words, or how the right answer is written
    answer: Any
    right: bool = False
    named: str | None = None
    extra_args: tuple[Any, ...] = ()  # what the check cell passes after the answer


def checker_for(exercise_id: str) -> Callable[..., Any]:
    for name in checks.__all__:
        exercise = getattr(getattr(checks, name), "exercise", None)
        if exercise is not None and exercise.id == exercise_id:
            return getattr(checks, name)
    raise KeyError(f"no checker for {exercise_id}")


def modules(notebook: str, corpus: str | None = None) -> list[str]:
    """The corpus modules of a notebook: ``nbNN`` (the first corpus, "a"), ``nbNN_b``,
    ``nbNN_c`` and ``nbNN_d`` (the second, third and fourth, each written later by other hands);
    ``corpus`` picks one."""
    names = {"a": f"nb{notebook}", **{c: f"nb{notebook}_{c}" for c in "bcd"}}
    chosen = [names[corpus]] if corpus else list(names.values())
    return [name for name in chosen if (HERE / f"{name}.py").is_file()]


def entries(notebook: str, corpus: str | None = None) -> list[Entry]:
    found: list[Entry] = []
    for name in modules(notebook, corpus):
        found += importlib.import_module(f"mistake_corpus.{name}").ENTRIES
    return found


def notebooks() -> list[str]:
    return sorted({p.stem[2:4] for p in HERE.glob("nb[0-9][0-9]*.py")})
