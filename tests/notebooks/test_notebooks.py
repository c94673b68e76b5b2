"""Structural checks on the stored notebooks (nbval then re-runs them and compares outputs).

nbval never compares a code cell without an execution count, so a notebook saved
without outputs would pass it while checking nothing: these tests make sure
every notebook was executed top to bottom and follows the course's rules.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from attnlib.course.predictions import REVEAL_CALL

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "instructors" / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
SEED_CALLS = ("torch.manual_seed(", "default_rng(", "set_printoptions(")


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _tags(cell: dict[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _code_cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def _text_of(outputs: list[dict[str, Any]]) -> str:
    parts = []
    for output in outputs:
        if "text" in output:
            parts.append(
                output["text"] if isinstance(output["text"], str) else "".join(output["text"])
            )
        plain = output.get("data", {}).get("text/plain")
        if plain is not None:
            parts.append(plain if isinstance(plain, str) else "".join(plain))
    return "".join(parts)


def test_the_notebooks_written_so_far_exist() -> None:
    numbers = [path.name[:2] for path in NOTEBOOKS]
    assert numbers[:13] == [f"{n:02d}" for n in range(13)], numbers
    assert len(numbers) == len(set(numbers)), "two notebooks share a number"


@pytest.fixture(params=NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def notebook(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _load(request.param)


def test_every_code_cell_was_executed_in_order(notebook: dict[str, Any]) -> None:
    counts = [cell.get("execution_count") for cell in _code_cells(notebook)]
    assert None not in counts, "a code cell has no stored execution: run `make notebooks`"
    assert counts == list(range(1, len(counts) + 1)), "cells were not run top to bottom once"


def test_first_code_cell_installs_on_colab_and_the_next_seeds(notebook: dict[str, Any]) -> None:
    colab, first = _code_cells(notebook)[:2]
    assert "colab-install" in _tags(colab), "the first code cell is not the Colab install cell"
    assert not colab.get("outputs"), "the Colab install cell printed something off Colab"
    missing = [call for call in SEED_CALLS if call not in _source(first)]
    assert not missing, f"the set-up cell after the Colab cell lacks {missing}"


def test_no_errors_or_warnings_are_stored(notebook: dict[str, Any]) -> None:
    for cell in _code_cells(notebook):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", _source(cell)
            if output.get("name") == "stderr":
                assert "nbval-ignore-output" in _tags(cell), f"stderr output in: {_source(cell)}"


def test_no_unstable_text_in_checked_outputs(notebook: dict[str, Any]) -> None:
    for cell in _code_cells(notebook):
        if "nbval-ignore-output" in _tags(cell):
            continue
        text = _text_of(cell.get("outputs", []))
        assert not re.search(r"at 0x[0-9a-f]+", text), (
            f"object address in output of {_source(cell)}"
        )


def test_at_most_a_tenth_of_the_code_cells_escape_comparison(notebook: dict[str, Any]) -> None:
    # nbval-ignore-output is for output that cannot be the same twice (sliders, timings);
    # everything else must be portable, so that strict nbval checks it on every machine.
    cells = _code_cells(notebook)
    ignored = [_source(cell) for cell in cells if "nbval-ignore-output" in _tags(cell)]
    assert len(ignored) <= 0.1 * len(cells), ignored


def test_no_printed_tensor_is_whole_only_by_luck(notebook: dict[str, Any]) -> None:
    # torch prints `tensor([1., 1.])` when every element is exactly whole and
    # `tensor([1.0000, 1.0000])` when one is 0.99999994 instead: a stored tensor whose every
    # element prints as N.0000 is a row sum or a norm whose format changes between machines.
    for cell in _code_cells(notebook):
        if "nbval-ignore-output" in _tags(cell):
            continue
        for printed in re.findall(r"tensor\(([^a-z)]*)", _text_of(cell.get("outputs", []))):
            numbers = re.findall(r"-?\d+\.\d+", printed)
            # (0.0000 is left alone: it is usually a value like 1e-13 that no machine rounds
            # to exactly 0.)
            assert not numbers or not all(re.fullmatch(r"-?[1-9]\d*\.0+", n) for n in numbers), (
                f"tensor({printed.strip()}) printed by {_source(cell)}"
            )


# Notebooks whose idea has a knob to turn: each must offer at least one slider or widget.
NOTEBOOKS_WITH_WIDGETS = {"01", "02", "03", "06", "07", "10", "11", "12"}


def test_widget_cells_are_excluded_from_output_comparison(notebook: dict[str, Any]) -> None:
    for cell in _code_cells(notebook):
        if "interact(" in _source(cell):
            assert "nbval-ignore-output" in _tags(cell), _source(cell)


@pytest.mark.parametrize("number", sorted(NOTEBOOKS_WITH_WIDGETS))
def test_notebooks_with_a_knob_have_a_widget(number: str) -> None:
    paths = [path for path in NOTEBOOKS if path.name.startswith(number)]
    assert paths, f"notebook {number} is missing"
    cells = _code_cells(_load(paths[0]))
    assert any("interact(" in _source(cell) for cell in cells), f"{paths[0].name} has no widget"


def test_has_plots_exercises_and_summary(notebook: dict[str, Any]) -> None:
    markdown = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert re.search(r"^## .*Exercises", markdown, re.MULTILINE)
    assert re.search(r"^## .*Summary", markdown, re.MULTILINE)
    assert "learning goals" in markdown.lower()
    images = [
        o
        for c in _code_cells(notebook)
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images, "no stored plot"
    assert any("assert " in _source(c) for c in _code_cells(notebook))


def _nbgrader(cell: dict[str, Any]) -> dict[str, Any]:
    return cell.get("metadata", {}).get("nbgrader", {})


def _labels(notebook: dict[str, Any]) -> dict[int, str]:
    """Each exercise's number and whether its heading says core or optional."""
    labels = {}
    for heading, _ in _exercise_texts(notebook):
        label = EXERCISE_LABEL.fullmatch(heading)
        if label:
            labels[int(label[1])] = label[3]
    return labels


def _checker(check: dict[str, Any]) -> Any:
    """The attnlib checker a check cell calls (`checks.check_x(...)` on its last line)."""
    from attnlib import checks

    name = re.search(r"checks\.(check_\w+)\(", _source(check).strip().splitlines()[-1])
    assert name, f"the check cell should call a checker: {_source(check)}"
    return getattr(checks, name[1])


def test_each_exercise_is_an_answer_cell_then_its_check(notebook: dict[str, Any]) -> None:
    """nbgrader reads a core exercise as an autograded answer cell (the solution between
    BEGIN/END SOLUTION markers) followed by a locked test cell with points, tagged
    `raises-exception` so that Run All goes on past an unfinished one. An optional exercise's
    check only reports: it raises nothing and carries no points."""
    code = _code_cells(notebook)
    solutions = [i for i, cell in enumerate(code) if _nbgrader(cell).get("solution")]
    # The build-it exercises (08–11) bring a notebook up to eight (10: the block, its forward
    # pass, its training step, the four parts of a sampler and the optional KV cache).
    assert 2 <= len(solutions) <= 8, f"{len(solutions)} exercises"
    grade_ids = [_nbgrader(cell)["grade_id"] for cell in code if _nbgrader(cell)]
    assert len(grade_ids) == len(set(grade_ids)), grade_ids
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", grade_id) for grade_id in grade_ids)
    labels = _labels(notebook)
    for i in solutions:
        answer, check = code[i], code[i + 1]
        assert _nbgrader(answer) | {"grade_id": None} == {
            "grade": False,
            "grade_id": None,
            "locked": False,
            "schema_version": 3,
            "solution": True,
            "task": False,
        }
        # One solution region, or one per method of a class (an nn.Module to build).
        markers = [
            line.strip()
            for line in _source(answer).splitlines()
            if line.strip() in ("### BEGIN SOLUTION", "### END SOLUTION")
        ]
        assert markers and markers == ["### BEGIN SOLUTION", "### END SOLUTION"] * (
            len(markers) // 2
        ), markers
        exercise = _checker(check).exercise
        assert exercise.id == _nbgrader(answer)["grade_id"], (exercise.id, _source(check))
        assert labels.get(exercise.number) == ("optional" if exercise.optional else "core")
        last_line = _source(check).strip().splitlines()[-1]
        if exercise.optional:
            assert not _nbgrader(check), "an optional exercise carries no points"
            assert not last_line.endswith(".assert_passed()"), "an optional check never raises"
        else:
            graded = _nbgrader(check)
            assert graded["grade"] is True and graded["locked"] is True
            assert not graded["solution"] and graded["points"] > 0
            assert graded["grade_id"] == exercise.id + "_check"
            assert last_line.endswith(".assert_passed()"), last_line
            assert "raises-exception" in _tags(check), "Run All must go on past this check"
        assert _text_of(check.get("outputs", [])).startswith("✓"), _source(check)
    for cell in notebook["cells"]:
        assert "solution" not in _tags(cell), "exercises are marked by nbgrader metadata"
        if not _nbgrader(cell).get("solution"):
            assert "BEGIN SOLUTION" not in _source(cell)
        if "raises-exception" in _tags(cell):
            assert _nbgrader(cell).get("grade"), "only a graded check may raise"


def test_no_execution_timing_metadata(notebook: dict[str, Any]) -> None:
    for cell in notebook["cells"]:
        assert "execution" not in cell.get("metadata", {})
    assert notebook["metadata"].get("kernelspec", {}).get("name") == "python3"


def test_each_notebook_asks_learners_to_predict_before_they_run(notebook: dict[str, Any]) -> None:
    # "Predict, then run": a cell for the learner's letter, then the experiment, whose last
    # line reveals how the letter compares with what the experiment's own numbers select.
    code = _code_cells(notebook)
    asked = [i for i, cell in enumerate(code) if REVEAL_CALL.search(_source(cell))]
    assert 2 <= len(asked) <= 4, f"{len(asked)} predict-then-run questions"
    for i in asked:
        before = [_source(cell).strip() for cell in code[:i]]
        assert any(line.startswith("my_prediction = None") for line in before[-3:]), (
            "the learner's answer cell should come just before the experiment"
        )
        # Stored unanswered, so the student edition does not give the answer away.
        results = [o for o in code[i].get("outputs", []) if o["output_type"] == "execute_result"]
        shown = _text_of(results)
        assert shown.startswith("No prediction yet. The run shows ("), _source(code[i])


def test_each_notebook_ends_with_a_reading_list_of_its_papers(notebook: dict[str, Any]) -> None:
    last = notebook["cells"][-1]
    assert last["cell_type"] == "markdown" and _source(last).startswith("## Further reading")
    entries = [line for line in _source(last).splitlines() if line.startswith("- ")]
    assert len(entries) >= 2, "a reading list names at least two papers"
    for entry in entries:  # authors (year), *title*, venue: what to read it for.
        assert re.match(r"- [^(]+ \(\d{4}\), \*[^*]+\*.*: .+\.$", entry), entry


# An exercise heading carries its difficulty, whether it is core or optional, and its minutes:
# `### Exercise 3 — ★★☆ core, ~15 min: title` (a qualifier such as ", open-ended" may follow).
EXERCISE_LABEL = re.compile(
    r"### Exercise (\d+) — (★☆☆|★★☆|★★★) (core|optional), ~\d+ min(, [^:]+)?: \S.*"
)
# Any heading that names an exercise, labelled or not (but not "## Exercises").
EXERCISE_HEADING = re.compile(r"#+ *Exercise\b.*")
# The opening paragraph that says what may be skipped, in every notebook.
SKIP_LINE = "**What you may skip on a first pass.**"


def _exercise_texts(notebook: dict[str, Any]) -> list[tuple[str, str]]:
    """(heading, text) of each exercise: its markdown from the heading up to the next heading
    of level 1–3 or the next code cell (its answer cell)."""
    exercises: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            current = None
            continue
        for line in _source(cell).splitlines():
            if EXERCISE_HEADING.fullmatch(line):
                current = []
                exercises.append((line, current))
            elif re.match(r"#{1,3} ", line):
                current = None
            elif current is not None:
                current.append(line)
    return [(heading, "\n".join(lines)) for heading, lines in exercises]


def test_each_exercise_is_labelled_and_gives_help_only_when_asked(
    notebook: dict[str, Any],
) -> None:
    """A learner steers by the label (difficulty, core or optional, minutes). Help comes from
    `checks.hint(id, level)` when asked for, not from notes under the task that a learner
    reads before trying: no <details> block of hints or "Stuck?" notes."""
    exercises = _exercise_texts(notebook)
    assert exercises, "no exercise heading"
    numbers = []
    for heading, text in exercises:
        label = EXERCISE_LABEL.fullmatch(heading)
        assert label, f"not labelled like '### Exercise 3 — ★★☆ core, ~15 min: title': {heading}"
        numbers.append(int(label[1]))
        assert "<details>" not in text, f"{heading}: help comes from checks.hint, when asked"
    assert numbers == list(range(1, len(numbers) + 1)), f"exercises numbered {numbers}"
    markdown = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "checks.hint(" in markdown and "checks.solution(" in markdown, (
        "the notebook tells the learner how to ask for a hint and a solution"
    )


def test_each_notebook_opens_with_what_may_be_skipped(notebook: dict[str, Any]) -> None:
    """The opening (the markdown before the first code cell) has a paragraph that starts with
    SKIP_LINE and names the notebook's optional exercises and numbered optional sections."""
    opening = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            break
        opening.append(_source(cell))
    paragraphs = [p for p in "\n\n".join(opening).split("\n\n") if p.startswith(SKIP_LINE)]
    assert len(paragraphs) == 1, f"the opening needs one paragraph starting {SKIP_LINE}"
    skip = paragraphs[0]
    for heading, _ in _exercise_texts(notebook):
        label = EXERCISE_LABEL.fullmatch(heading)
        if label and label[3] == "optional":
            assert f"Exercise {label[1]}" in skip, f"optional Exercise {label[1]} not named"
    markdown = "\n".join(_source(c) for c in notebook["cells"] if c["cell_type"] == "markdown")
    for number in re.findall(r"^## (\d+)\. .*\(optional\)\s*$", markdown, re.MULTILINE):
        assert re.search(rf"\b{number}\b", skip), f"optional section {number} not named"
