"""Which cells a graded run leaves out (attnlib.grading.grader.leave_out), on small notebooks built
here: the course's training cell and what depends on it go, and nothing a learner wrote is
ever left without what it reads."""

from __future__ import annotations

from typing import Any

import pytest

from attnlib.grading.grader.leave_out import TAG, cells_to_leave_out


def _code(source: str, *, tagged: bool = False, **nbgrader: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"tags": [TAG]} if tagged else {}
    if nbgrader:
        metadata["nbgrader"] = nbgrader
    return {"cell_type": "code", "source": source, "metadata": metadata, "outputs": []}


SETUP = _code("import torch\nmodel = torch.nn.Linear(2, 2)\ndata = torch.ones(3, 2)")
TRAIN = _code(
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for _ in range(100):\n"
    "    loss = model(data).pow(2).sum()\n"
    "    optimizer.zero_grad(); loss.backward(); optimizer.step()\n"
    "history = [loss.item()]",
    tagged=True,
)
ANSWER = _code("def double(x):\n    return 2 * x", solution=True, grade_id="ex1")
CHECK = _code("checks.ex1(double)", grade=True, grade_id="ex1_check")


def _course(*later: dict[str, Any]) -> dict[str, Any]:
    return {"cells": [SETUP, TRAIN, ANSWER, CHECK, *later]}


def _left_out(course: dict[str, Any], submission: dict[str, Any] | None = None) -> list[int]:
    submission = submission or course
    return cells_to_leave_out(course, submission, checked={3})


def test_the_tagged_cell_is_left_out_and_the_rest_runs() -> None:
    assert _left_out(_course(_code("print(torch.__version__)"))) == [1]


def test_a_course_cell_that_reads_what_it_binds_goes_with_it() -> None:
    course = _course(_code("print(history[-1])"), _code("print(data.sum())"))
    assert _left_out(course) == [1, 4, 5]


def test_a_course_cell_that_reads_what_training_changed_in_place_goes_with_it() -> None:
    # The training cell binds no `model`, but trains it: run without it, this cell would
    # show what an untrained model does (or fail the assert that it learned something).
    course = _course(_code("assert model(data).abs().sum() < 1e-3"))
    assert _left_out(course) == [1, 4]


def test_what_a_left_out_course_cell_binds_is_left_out_in_turn() -> None:
    course = _course(_code("trained = model.eval()"), _code("print(trained.weight)"))
    assert _left_out(course) == [1, 4, 5]


def test_modules_and_builtins_do_not_spread_it() -> None:
    course = _course(_code("x = torch.zeros(2)\nprint(len(x), range(3))"))
    assert _left_out(course) == [1]


@pytest.mark.parametrize("reads", ["model", "history", "optimizer"])
def test_a_learners_cell_that_reads_what_a_left_out_cell_touches_runs_everything(
    reads: str,
) -> None:
    course = _course()
    submission = _course(_code(f"print({reads})"))
    assert _left_out(course, submission) == []


def test_an_answer_that_reads_what_training_touches_runs_everything() -> None:
    course = _course()
    answer = _code("def double(x):\n    return model(x)", solution=True, grade_id="ex1")
    submission = {"cells": [SETUP, TRAIN, answer, CHECK]}
    assert cells_to_leave_out(course, submission, checked={3}) == []


def test_a_training_cell_the_learner_changed_runs() -> None:
    course = _course()
    changed = _code(TRAIN["source"].replace("range(100)", "range(5)"), tagged=True)
    assert _left_out(course, {"cells": [SETUP, changed, ANSWER, CHECK]}) == []


def test_a_cell_that_is_not_python_runs_everything() -> None:
    course = _course()
    submission = _course(_code("def broken(:\n    pass"))
    assert _left_out(course, submission) == []


def test_untagged_course_cells_are_never_left_out_on_their_own() -> None:
    untagged = {"cells": [SETUP, _code(TRAIN["source"]), ANSWER, CHECK]}
    assert _left_out(untagged) == []


def test_with_no_check_at_the_end_every_cell_after_the_last_check_is_left_out() -> None:
    course = _course(_code("print(double(data))"), _code("print(model)"))
    left_out = cells_to_leave_out(course, course, checked={3}, checks_at_end=False)
    assert left_out == [1, 4, 5]  # nothing after the last check can change a grade


def test_a_check_at_the_end_keeps_the_cells_after_the_last_check_cell() -> None:
    course = _course(_code("print(double(2))"))
    assert cells_to_leave_out(course, course, checked={3}, checks_at_end=True) == [1]


def test_the_cells_after_the_last_check_go_even_when_the_rest_must_run() -> None:
    submission = _course(_code(TRAIN["source"]), _code("print(model)"))
    submission["cells"].insert(2, _code("print(model)"))  # a learner's cell reads the model
    left_out = cells_to_leave_out(_course(), submission, checked={4}, checks_at_end=False)
    assert left_out == [5, 6]
