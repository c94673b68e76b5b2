"""Which predict-first answers a learner can read on the page before the reveal.

A predict-first question is asked in prose; the learner writes a letter into
``my_prediction`` and runs the experiment, whose cell measures and then reveals
(``checks.reveal(id, my_prediction, **measured)``). This script reads a learner's edition
and, for every question, lists what would let a learner answer it by reading instead of
thinking:

- an explanation of a choice (any eight words in a row of a ``why`` text) anywhere on the
  page: the explanations live in attnlib (:mod:`attnlib.course.questions`) and reach the
  learner only through the reveal;
- an ``assert``, or a choice's letter as a string (``observed == "b"``), in the experiment's
  cells, from the question's prose to the reveal (for a slider's gate, to the first prose
  under it: what stands under a gate is read while the question is open);
- a phrase that states the answer (the question's ``giveaways``, and the right choice's own
  words) in the prose before the reveal, the learning goals included, or in the
  experiment's comments; the prose that asks the question may list the choices.

The slider questions of notebooks 02, 03, 06 and 07 (``playgrounds.predict_first.interact``)
are revealed by the gate's check; their explanations are looked for in the same way.

    python instructors/read_ahead.py            # notebooks/, the learner's edition
    python instructors/read_ahead.py --git REF  # the learner's edition at a commit

``tests/notebooks/test_predictions_read_ahead.py`` asserts that nothing is found.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from attnlib.course.playgrounds import predict_first_questions
from attnlib.course.playgrounds.predict_first import SliderQuestion
from attnlib.course.predictions import REVEAL_CALL, Prediction
from attnlib.course.questions import QUESTIONS

REPO = Path(__file__).resolve().parents[1]
LEARNER = REPO / "notebooks"

Cell = dict[str, Any]

# How many words in a row of an explanation count as the explanation itself.
WINDOW = 8

_SLIDER = re.compile(r"predict_first_questions\.(\w+)\(")
# The old form, an explanation written into the experiment's own cell.
_INLINE = re.compile(r"checks\.Prediction\(")


@dataclass(frozen=True)
class Finding:
    """One way a question's answer can be read ahead: where, and what stands there."""

    notebook: str
    question: str
    cell: int
    what: str

    def __str__(self) -> str:
        return f"{self.notebook} {self.question}: cell {self.cell}: {self.what}"


def _source(cell: Cell) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _words(text: str) -> list[str]:
    return re.findall(r"[\w′'·√²⁻¹ᵀ.]+", text.lower().replace("`", ""))


def _windows(text: str) -> set[tuple[str, ...]]:
    words = [word.strip(".") for word in _words(text)]
    words = [word for word in words if word]
    return {tuple(words[i : i + WINDOW]) for i in range(len(words) - WINDOW + 1)}


def _phrase_in(phrase: str, text: str) -> bool:
    normal = " ".join(_words(phrase)).strip(".")
    return bool(normal) and normal in " ".join(_words(text))


def _python(source: str) -> ast.Module | None:
    # IPython's magics and shell lines are not Python; they hold no answer.
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _comments(source: str) -> str:
    return "\n".join(line.split("#", 1)[1] for line in source.split("\n") if "#" in line)


def _slider_question(factory: str) -> SliderQuestion | None:
    build = getattr(predict_first_questions, factory, None)
    if build is None:
        return None
    try:
        return build()
    except TypeError:
        # A question about the learner's data (03's sentence): asked here of stand-in vectors,
        # whose explanation has the same words around different numbers.
        stand_in = torch.randn(4, 50, generator=torch.Generator().manual_seed(0))
        return build(stand_in)


@dataclass(frozen=True)
class _Asked:
    """A question as the page asks it: its name, the reveal cell, and what it knows."""

    name: str
    reveal: int
    prediction: Prediction | None
    answer: str | None
    giveaways: tuple[str, ...]
    inline_why: bool


def _asked(cells: list[Cell]) -> Iterator[_Asked]:
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = _source(cell)
        if match := REVEAL_CALL.search(source):
            question = QUESTIONS.get(match.group(1))
            if question is None:
                yield _Asked(match.group(1), index, None, None, (), False)
                continue
            answer = question.prediction.choices[question.answer]
            giveaways = (*question.giveaways, *([answer] if len(_words(answer)) >= 3 else []))
            yield _Asked(question.id, index, question.prediction, question.answer, giveaways, False)
        elif match := _SLIDER.search(source):
            slider = _slider_question(match.group(1))
            name = f"slider {match.group(1)}"
            if slider is None:
                yield _Asked(name, index, None, None, (), False)
            else:
                yield _Asked(name, index, slider.prediction, None, slider.giveaways, False)
        elif _INLINE.search(source):
            yield _Asked(f"cell {index}", index, None, None, (), "why=" in source)


def _asking_cell(cells: list[Cell], reveal: int) -> int:
    """The prose that asks the question: the last markdown cell before the reveal."""
    for index in range(reveal - 1, -1, -1):
        if cells[index]["cell_type"] == "markdown":
            return index
    return 0


def _last_read_before_answering(cells: list[Cell], asked: _Asked) -> int:
    """The last cell a learner reads before the answer shows: the reveal's own cell, or for a
    slider's gate (whose answer shows only when checked) the cells under it, up to and
    including the first prose after it."""
    if not asked.name.startswith("slider"):
        return asked.reveal
    for index in range(asked.reveal + 1, len(cells)):
        if cells[index]["cell_type"] == "markdown":
            return index
    return len(cells) - 1


def findings(name: str, notebook: dict[str, Any]) -> list[Finding]:
    """Every way a question of ``notebook`` (a learner's edition) can be read ahead."""
    cells = notebook["cells"]
    found: list[Finding] = []
    for asked in _asked(cells):

        def note(cell: int, what: str, asked: _Asked = asked) -> None:
            found.append(Finding(name, asked.name, cell, what))

        if asked.prediction is None and not asked.inline_why and asked.name.startswith("cell"):
            continue
        if asked.inline_why:
            note(asked.reveal, "the explanations (why=) stand in the experiment's cell")
        if asked.prediction is None and not asked.name.startswith(("cell", "slider")):
            note(asked.reveal, f"no question {asked.name!r} in attnlib.course.questions")
            continue
        asking = _asking_cell(cells, asked.reveal)
        last = _last_read_before_answering(cells, asked)
        if asked.prediction is not None:
            for letter, why in asked.prediction.why.items():
                windows = _windows(why)
                for index, cell in enumerate(cells):
                    if windows & _windows(_source(cell)):
                        note(index, f"the explanation of ({letter}) stands there")
        letters = set(asked.prediction.choices) if asked.prediction else set("abcd")
        for index in range(asking + 1, last + 1):
            cell = cells[index]
            if cell["cell_type"] != "code":
                continue
            tree = _python(_source(cell))
            if tree is None:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Assert):
                    note(index, f"an assert stands there (line {node.lineno})")
                elif (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and node.value.strip().lower() in letters
                ):
                    note(index, f"the letter {node.value!r} stands there (line {node.lineno})")
        for phrase in asked.giveaways:
            for index in range(last + 1):
                cell = cells[index]
                if index == asking and phrase in asked.prediction.choices.values():  # type: ignore[union-attr]
                    continue
                text = _source(cell) if cell["cell_type"] == "markdown" else ""
                if cell["cell_type"] == "code" and index > asking:
                    text = _comments(_source(cell))
                if _phrase_in(phrase, text):
                    note(index, f"{phrase!r}, the answer, stands there")
    return found


def questions_read_ahead(notebooks: dict[str, dict[str, Any]]) -> dict[str, list[Finding]]:
    """The findings, by question, of the questions that can be read ahead."""
    by_question: dict[str, list[Finding]] = {}
    for name, notebook in notebooks.items():
        for finding in findings(name, notebook):
            by_question.setdefault(f"{name} {finding.question}", []).append(finding)
    return by_question


def questions_asked(notebooks: dict[str, dict[str, Any]]) -> list[str]:
    return [
        f"{name} {asked.name}"
        for name, notebook in notebooks.items()
        for asked in _asked(notebook["cells"])
        if asked.prediction is not None or asked.inline_why
    ]


def learner_notebooks(ref: str | None = None) -> dict[str, dict[str, Any]]:
    """The learner's edition, from ``notebooks/`` or from the commit ``ref``."""
    if ref is None:
        paths = sorted(LEARNER.glob("[0-9][0-9]_*.ipynb"))
        return {path.name[:2]: json.loads(path.read_text(encoding="utf-8")) for path in paths}
    listing = subprocess.run(
        ["git", "ls-tree", "--name-only", ref, "notebooks/"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    notebooks = {}
    for path in sorted(p for p in listing if re.fullmatch(r"notebooks/\d\d_.*\.ipynb", p)):
        text = subprocess.run(
            ["git", "show", f"{ref}:{path}"], cwd=REPO, capture_output=True, check=True
        ).stdout
        notebooks[Path(path).name[:2]] = json.loads(text)
    return notebooks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", metavar="REF", help="read the learner's edition at this commit")
    args = parser.parse_args(argv)
    notebooks = learner_notebooks(args.git)
    read_ahead = questions_read_ahead(notebooks)
    for question, found in read_ahead.items():
        print(question)
        for finding in found:
            print(f"    cell {finding.cell}: {finding.what}")
    print(
        f"{len(read_ahead)} of {len(questions_asked(notebooks))} predict-first questions can "
        "be answered by reading ahead"
    )
    return 1 if read_ahead else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
