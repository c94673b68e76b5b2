"""The two editions of the course: the learner's (notebooks/) and the instructors' (the source).

A learner opens notebooks/ (`make lab`, or `jupyter lab notebooks` after docs/setup.md's pip
set-up): every exercise is a stub, no output is stored, and no line of a solution can be read
before the exercise is solved, neither in an earlier cell nor in the task nor in what its
check prints unasked. `instructors/editions.py` writes that edition from the instructors'
one; these tests keep the two in sync and check what the learner's can show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from instructors import editions

SOURCES = editions.source_notebooks()


def test_the_learner_edition_and_the_solutions_are_up_to_date() -> None:
    stale = [str(path.relative_to(editions.REPO)) for path in editions.stale_files()]
    assert not stale, f"out of date (run `make editions`): {stale}"


def test_every_notebook_has_a_learner_edition() -> None:
    assert SOURCES, "no instructors' notebooks"
    learner = sorted(p.name for p in editions.LEARNER.glob("*.ipynb"))
    assert learner == [p.name for p in SOURCES]


def _notebook(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _answer(source: str) -> dict[str, Any]:
    nbgrader = {"grade": False, "grade_id": "ex1_f", "solution": True, "locked": False}
    return {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {"nbgrader": nbgrader},
        "outputs": [{"output_type": "stream", "name": "stdout", "text": ["4\n"]}],
        "source": source.splitlines(keepends=True),
    }


def test_a_solution_region_becomes_nbgraders_stub_at_its_indentation() -> None:
    source = (
        "class F:\n"
        '    """Task."""\n\n'
        "    def __init__(self):\n"
        "        ### BEGIN SOLUTION\n"
        "        self.a = 1\n"
        "        ### END SOLUTION\n\n"
        "    def forward(self, x):\n"
        "        ### BEGIN SOLUTION\n"
        "        return x + self.a\n"
        "        ### END SOLUTION"
    )
    stubbed = editions.stub_solutions(source)
    assert "self.a = 1" not in stubbed and "return x + self.a" not in stubbed
    assert stubbed.count("        raise NotImplementedError()") == 2
    assert stubbed.count("        # Your code here: replace the line below.") == 2
    assert '"""Task."""' in stubbed and "def forward(self, x):" in stubbed


@pytest.mark.parametrize(
    "source",
    ["### BEGIN SOLUTION\nx = 1", "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"],
    ids=["never closed", "nested"],
)
def test_a_broken_solution_region_is_refused(source: str) -> None:
    with pytest.raises(ValueError, match="solution region"):
        editions.stub_solutions(source)


def test_the_learner_edition_clears_outputs_and_keeps_the_rest() -> None:
    prose = {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"]}
    cell = _answer("def f(x):\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION")
    source = _notebook(prose, cell)
    learner = editions.learner_edition(source)
    assert learner["cells"][0] == prose
    stub = learner["cells"][1]
    assert stub["outputs"] == [] and stub["execution_count"] is None
    assert stub["metadata"] == cell["metadata"]  # nbgrader can still grade it
    assert "".join(stub["source"]) == (
        "def f(x):\n    # Your code here: replace the line below.\n    raise NotImplementedError()"
    )
    assert source["cells"][1]["outputs"], "the instructors' notebook is left as it was"


def test_the_stub_is_the_one_nbgrader_writes() -> None:
    config = (editions.REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    assert json.dumps(editions.STUB) in config


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(params=SOURCES, ids=[p.stem for p in SOURCES])
def pair(request: pytest.FixtureRequest) -> tuple[dict[str, Any], dict[str, Any]]:
    """(instructors' notebook, learner's notebook)."""
    return _read(request.param), _read(editions.LEARNER / request.param.name)


def test_the_learner_sees_no_output_and_no_solution(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    source, learner = pair
    kept = [
        cell
        for cell in source["cells"]
        if editions.INSTRUCTORS_ONLY_TAG not in cell["metadata"].get("tags", [])
    ]
    assert [c["id"] for c in learner["cells"]] == [c["id"] for c in kept]
    solutions: set[str] = set()
    for cell in source["cells"]:
        if editions.is_answer_cell(cell):
            solutions |= set(editions.solution_lines(editions.cell_source(cell)))
    for cell in learner["cells"]:
        text = editions.cell_source(cell)
        assert editions.BEGIN not in text and editions.END not in text
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
        if editions.is_answer_cell(cell):  # what is left of it is the task, not the answer
            shown = {editions.normalised(line) for line in text.splitlines()}
            assert not solutions & shown, f"solution lines in the learner's edition: {text}"


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_no_solution_line_can_be_read_before_its_exercise(path: Path) -> None:
    visible = editions.visible_solution_lines(_read(path), editions.report_texts())
    shown = {grade_id: lines for grade_id, (_, lines) in visible.items() if lines}
    assert not shown, f"solution lines a learner can read before solving: {shown}"


def test_every_exercise_has_a_stored_worked_solution() -> None:
    from attnlib import checks

    stored = json.loads(editions.SOLUTIONS.read_text(encoding="utf-8"))
    answers = {
        cell["metadata"]["nbgrader"]["grade_id"]
        for path in SOURCES
        for cell in _read(path)["cells"]
        if editions.is_answer_cell(cell)
    }
    assert set(stored) == answers
    for entry in stored.values():
        assert editions.BEGIN not in entry["source"] and entry["source"].strip()
    shown = repr(checks.solution("ex2_stable_softmax"))
    assert stored["ex2_stable_softmax"]["source"] in shown


def test_the_guides_list_of_exercises_and_their_mistakes_is_up_to_date() -> None:
    from instructors import exercise_table

    written = exercise_table.DOCUMENT.read_text(encoding="utf-8")
    assert written == exercise_table.document(exercise_table.rows()), (
        "instructors/exercises.md is stale: run `make editions`"
    )
    # A section per exercise heading of the notebooks (counted here, so that a new exercise
    # needs no edit), whether or not a checker checks it.
    headings = sum(
        1
        for path in SOURCES
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if exercise_table.HEADING.fullmatch(line)
    )
    assert "0 of 1 solution lines visible" in written
    assert headings and written.count("\n## ") == headings


def _code(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [], "source": source}


def test_the_colab_cell_goes_first_once_and_follows_the_setting() -> None:
    prose = {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# Title"}
    notebook = _notebook(prose, _code("import torch"))
    ours = editions.colab_install_source("attnlib/attnlib", "main")
    written = editions.with_colab_cell(notebook, ours)
    assert [cell["cell_type"] for cell in written["cells"]] == ["markdown", "code", "code"]
    assert "".join(written["cells"][1]["source"]) == ours
    assert written["cells"][2]["source"] == "import torch"
    assert editions.with_colab_cell(written, ours) == written  # rewritten, not added again
    fork = editions.colab_install_source("a-school/attention-2027", "spring")
    forked = editions.with_colab_cell(written, fork)
    assert len(forked["cells"]) == 3
    assert "git+https://github.com/a-school/attention-2027@spring" in "".join(
        forked["cells"][1]["source"]
    )
    assert notebook["cells"][1]["source"] == "import torch"  # the input is kept


def test_the_colab_cell_installs_only_on_colab() -> None:
    source = editions.colab_install_source("attnlib/attnlib", "main")
    shell = {"installed": []}

    class Shell:
        def run_line_magic(self, name: str, line: str) -> None:
            shell["installed"].append((name, line))

    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(source)
    for modules in ({}, {"google.colab": object()}):
        shell["installed"].clear()
        fake_sys = type("sys", (), {"modules": modules})
        code = python.replace("import sys\n", "")
        exec(code, {"sys": fake_sys, "get_ipython": lambda: Shell()})
        expected = [
            (
                "pip",
                'install --quiet "attnlib[colab] @ git+https://github.com/attnlib/attnlib@main"',
            )
        ]
        assert shell["installed"] == (expected if modules else [])
