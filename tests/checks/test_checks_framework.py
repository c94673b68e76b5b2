"""The machinery every checker shares: the exercise registry, reports that name a mistake,
the refusal of an answer that calls the implementation it should write, hints in levels, the
worked solution on request, and a later cell's choice between the learner's code and attnlib's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

import attnlib
from attnlib import checks
from attnlib.checks import _exercise
from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._exercise import Exercise, Mistake
from attnlib.checks._framework import Case, CheckFailedError, compare_outputs
from attnlib.checks.engine import check_function

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))

# A toy exercise, registered under an id no notebook uses.
DOUBLE = Exercise(
    id="test_double",
    notebook="99",
    number=1,
    name="double",
    hints=("twice each entry", "add the tensor to itself", "x + x"),
)
HALF = Mistake("halved instead of doubled", "dividing by 2 shrinks every entry", lambda x: x / 2)
SQUARE = Mistake("squared instead of doubled", "x·x is not 2x", lambda x: x * x)


def _cases() -> list[Case]:
    x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64)
    return [
        Case("[1, -2, 3]", (x,), 2 * x),
        Case("[2, 2]", (torch.full((2,), 2.0),), torch.full((2,), 4.0)),
    ]


def _check(fn: object, forbidden: Forbidden | None = None):
    return check_function(DOUBLE, fn, _cases(), (HALF, SQUARE), forbidden=forbidden or Forbidden())


def test_a_right_answer_passes_and_a_wrong_one_names_its_mistake() -> None:
    assert _check(lambda x: 2 * x).passed
    report = _check(lambda x: x * 0.5)
    assert not report.passed and "The mistake: halved instead of doubled." in str(report)
    assert "Why it matters: dividing by 2 shrinks every entry" in str(report)
    assert 'checks.hint("test_double")' in str(report)
    assert report.mistake == "halved instead of doubled"  # what a class report counts


def test_a_report_that_names_no_mistake_carries_none() -> None:
    report = _check(lambda x: x + 100)
    assert not report.passed and report.done and report.mistake == ""


class _AlwaysClose(torch.Tensor):
    """A hostile result: every comparison with it says "equal"."""

    @classmethod
    def __torch_function__(
        cls, func: Callable, types: tuple, args: tuple = (), kwargs: dict | None = None
    ) -> object:
        if func in (torch.isclose, torch.Tensor.isclose, torch.allclose, torch.equal):
            shape = next(a.shape for a in args if isinstance(a, torch.Tensor))
            return torch.ones(shape, dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_tensor_subclass_that_fakes_comparisons_fails_before_it_is_compared() -> None:
    zeros = torch.zeros(3).as_subclass(_AlwaysClose)
    assert torch.isclose(zeros, torch.ones(3)).all()  # the fake works on a plain comparison
    report = _check(lambda x: torch.zeros_like(x).as_subclass(_AlwaysClose))
    assert not report.passed and "it returned a _AlwaysClose" in str(report), report
    assert "The mistake: returned a subclass of torch.Tensor, not a plain tensor." in str(report)
    # ... also inside a tuple, and even when its numbers are right
    report = _check(lambda x: ((2 * x).as_subclass(_AlwaysClose),))
    assert not report.passed and "subclass of torch.Tensor" in str(report), report


def test_every_comparison_refuses_a_tensor_subclass_before_running_its_code() -> None:
    # compare_outputs is what the checkers of modules (08, 10, 11) compare with, too.
    faked = torch.zeros(3).as_subclass(_AlwaysClose)
    problem = compare_outputs(faked, torch.ones(3), "the output", 1e-6, 1e-6)
    assert problem == "the output is a _AlwaysClose, a subclass of torch.Tensor, not a plain tensor"


def test_a_parameter_is_a_plain_tensor_for_the_checks() -> None:
    assert _check(lambda x: torch.nn.Parameter(2 * x, requires_grad=False)).passed


def test_a_mistake_written_in_numpy_is_named_when_the_answer_is_numpy_too() -> None:
    in_numpy = Mistake("doubled in numpy", "a numpy array is not a tensor", lambda x: 2 * x.numpy())
    report = check_function(DOUBLE, lambda x: x.numpy() + x.numpy(), _cases(), (HALF, in_numpy))
    assert not report.passed and "The mistake: doubled in numpy." in str(report), report
    report = check_function(DOUBLE, lambda x: 3 * x.numpy(), _cases(), (HALF, in_numpy))
    assert not report.passed and "The mistake:" not in str(report), report


def test_a_mistake_is_named_by_its_behaviour_on_every_case_not_one() -> None:
    # x * x equals 2x on the case [2, 2]: only the whole behaviour tells the two apart.
    report = _check(lambda x: x**2)
    assert "squared instead of doubled" in str(report)
    assert "halved" not in str(report)


def test_an_unknown_mistake_gets_the_failing_case_and_the_idea_never_another_mistakes_fix() -> None:
    report = str(_check(lambda x: x + 1))
    assert "case '[1, -2, 3]'" in report
    assert "not one of the usual mistakes" in report
    assert "The idea: twice each entry" in report and 'checks.hint("test_double", 2)' in report
    assert "halved" not in report and "squared" not in report
    assert "x + x" not in report  # the last hint level is never printed unasked


def test_an_answer_that_raises_is_reported_without_a_traceback() -> None:
    report = str(_check(lambda x: x.no_such_method()))
    assert "raised AttributeError" in report and "Traceback" not in report


def test_a_stub_is_not_done_yet_with_its_task() -> None:
    def double(x: torch.Tensor) -> torch.Tensor:
        """Twice x."""
        raise NotImplementedError()

    report = _check(double)
    assert (
        not report.passed and not report.done and "not done yet. Your task: Twice x." in str(report)
    )
    with pytest.raises(CheckFailedError) as raised:
        report.assert_passed()
    assert raised.value._render_traceback_() == str(report).splitlines()


def test_non_tensor_results_and_non_functions_are_explained() -> None:
    assert "should be a torch.Tensor, but your function returned list" in str(
        _check(lambda x: (2 * x).tolist())
    )
    assert "expected a function, got int" in str(_check(42))


def test_an_answer_that_changes_its_argument_is_named_and_cannot_change_the_cases() -> None:
    def doubling_in_place(x: torch.Tensor) -> torch.Tensor:
        return x.mul_(2)

    report = _check(doubling_in_place)
    assert not report.passed and "after the call `x` holds other numbers" in str(report)
    assert "The mistake: changed a tensor it was given in place" in str(report)
    assert str(_check(doubling_in_place)) == str(report)  # each call gets a copy of the cases
    allowed = check_function(DOUBLE, doubling_in_place, _cases(), may_change_arguments=True)
    assert allowed.passed


def test_a_report_is_printable_and_the_same_every_time() -> None:
    first, second = _check(lambda x: x + 1), _check(lambda x: x + 1)
    assert str(first) == repr(first) == first.message == second.message


def test_assert_passed_returns_a_passing_result_and_raises_the_report_alone() -> None:
    result = _check(lambda x: 2 * x)
    assert result.assert_passed() is result
    failed = _check(lambda x: x / 2)
    with pytest.raises(CheckFailedError) as caught:
        failed.assert_passed()
    assert isinstance(caught.value, AssertionError)  # what graders count as a failed check
    assert caught.value.result is failed and str(caught.value) == failed.message


def test_a_stub_message_wins_over_the_docstring_and_no_docstring_leaves_no_brackets() -> None:
    def double(x: torch.Tensor) -> torch.Tensor:
        """The docstring."""
        raise NotImplementedError("the message")

    assert "not done yet. Your task: the message." in str(_check(double))
    undocumented = str(_check(lambda x: (_ for _ in ()).throw(NotImplementedError())))
    assert "not done yet. Write your answer" in undocumented and "Your task" not in undocumented


def _attnlib_double(x: torch.Tensor) -> torch.Tensor:
    return attnlib.softmax(x) * 0 + 2 * x


@pytest.mark.parametrize(
    "cheat",
    [
        _attnlib_double,
        lambda x: attnlib.softmax(x) * 0 + 2 * x,
        lambda x: torch.softmax(x, -1) * 0 + 2 * x,
        lambda x: x.softmax(-1) * 0 + 2 * x,
        lambda x: torch.nn.functional.softmax(x, -1) * 0 + 2 * x,
    ],
    ids=["attnlib, in a function", "attnlib", "torch.softmax", "Tensor.softmax", "F.softmax"],
)
def test_an_answer_that_calls_a_forbidden_implementation_is_refused(cheat: object) -> None:
    forbidden = Forbidden(python={attnlib.softmax: "attnlib.softmax"}, torch={"softmax": "softmax"})
    report = _check(cheat, forbidden)
    assert not report.passed and "The check does not accept it" in str(report)
    assert report.mistake.startswith("calls ") and report.mistake[6:] in str(report)


def test_the_watch_sees_methods_of_a_forbidden_class_and_restores_the_profiler() -> None:
    import sys

    class Sub(attnlib.FeedForward):
        pass

    layer = Sub(4, 8)
    before = sys.getprofile()
    with CallWatch(Forbidden(python={attnlib.FeedForward: "attnlib.FeedForward"})) as watch:
        layer(torch.randn(2, 4))
    assert watch.seen and set(watch.seen) == {"attnlib.FeedForward"}
    assert sys.getprofile() is before


def test_hints_come_in_levels_and_then_the_solution() -> None:
    first, last = str(checks.hint("test_double")), str(checks.hint("test_double", 3))
    assert "Hint 1 of 3" in first and "twice each entry" in first
    assert 'checks.hint("test_double", 2)' in first
    assert "x + x" in last and 'checks.solution("test_double")' in last
    for level in (0, 4, "2", True):
        with pytest.raises(ValueError, match="level should be an int from 1 to 3"):
            checks.hint("test_double", level)  # type: ignore[arg-type]


def test_an_unknown_id_suggests_the_nearest() -> None:
    with pytest.raises(ValueError, match="Did you mean 'ex2_stable_softmax'"):
        checks.hint("ex2_stable_sofmax")
    with pytest.raises(TypeError, match="exercise_id"):
        checks.hint(2)  # type: ignore[arg-type]


def test_the_solution_is_the_instructors_own() -> None:
    stored = json.loads((ROOT / "attnlib" / "data" / "solutions.json").read_text(encoding="utf-8"))
    for exercise_id in _exercise.all_exercises():
        if exercise_id.startswith("test_"):
            continue
        assert stored[exercise_id]["source"] in str(checks.solution(exercise_id))


def test_a_later_cell_uses_the_learners_answer_only_while_its_check_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def double(x: torch.Tensor) -> torch.Tensor:
        return 2 * x

    def reference(x: torch.Tensor) -> torch.Tensor:
        return x + x

    assert _check(double).passed
    assert checks.yours_or_attnlib("test_double", double, reference) is double
    assert capsys.readouterr().out == "Using your double: its check passed.\n"

    def double_again(x: torch.Tensor) -> torch.Tensor:  # redefined, never checked
        return x * 2

    assert checks.yours_or_attnlib("test_double", double_again, reference) is reference
    said = capsys.readouterr().out
    assert said.count("\n") == 1 and "Using attnlib's" in said and "has not passed" in said
    assert checks.yours_or_attnlib("test_double", double, reference) is double  # still passed


def test_a_passed_answer_stays_passed_whatever_else_is_checked_for_its_exercise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Notebook 07's learner: one function passed, a second one for the same exercise failed,
    # and a later cell must still use the first (it is unchanged).
    def double(x: torch.Tensor) -> torch.Tensor:
        return 2 * x

    def also_double(x: torch.Tensor) -> torch.Tensor:
        return x + x

    def reference(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    assert _check(double).passed and _check(also_double).passed
    assert not _check(lambda x: x / 2).passed  # a second answer, failing
    assert not _check(lambda x: x.no_such_method()).passed  # one that crashes
    assert "NotImplementedError" not in str(_check(double))  # checked again: passes again
    assert checks.yours_or_attnlib("test_double", double, reference) is double
    assert checks.yours_or_attnlib("test_double", also_double, reference) is also_double
    capsys.readouterr()

    def not_yet(x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    assert not _check(not_yet).passed  # "not done yet" for another answer
    assert checks.yours_or_attnlib("test_double", double, reference) is double
    assert capsys.readouterr().out.endswith("Using your double: its check passed.\n")


def test_an_answer_edited_in_place_falls_back_until_it_is_checked_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def double(x: torch.Tensor, factor: float = 2.0) -> torch.Tensor:
        return factor * x

    def reference(x: torch.Tensor) -> torch.Tensor:
        return x + x

    assert _check(double).passed
    double.__code__ = (lambda x, factor=2.0: factor * x + 1).__code__  # its code, edited
    assert checks.yours_or_attnlib("test_double", double, reference) is reference
    assert "changed since" in capsys.readouterr().out
    assert not _check(double).passed  # the same object, checked again, now fails
    double.__code__ = (lambda x, factor=2.0: factor * x).__code__
    assert checks.yours_or_attnlib("test_double", double, reference) is reference  # forgotten
    assert _check(double).passed
    double.__defaults__ = (3.0,)  # its default, edited
    assert checks.yours_or_attnlib("test_double", double, reference) is reference


def test_a_class_is_remembered_with_its_methods(capsys: pytest.CaptureFixture[str]) -> None:
    # Notebooks 08, 10 and 11 check classes: the class is the answer a later cell builds from.
    class Doubler:
        def __call__(self, x: torch.Tensor) -> torch.Tensor:
            return 2 * x

    class Reference(Doubler):
        pass

    _exercise._remember(DOUBLE, Doubler, ok=True)  # what a class's check records when it passes
    assert checks.yours_or_attnlib("test_double", Doubler, Reference) is Doubler
    double = Doubler()
    assert _check(double.__call__).passed  # a bound method: a new object at every access
    assert checks.yours_or_attnlib("test_double", double.__call__, Reference) == double.__call__
    Doubler.__call__ = lambda self, x: 3 * x  # a method replaced on the class
    assert checks.yours_or_attnlib("test_double", Doubler, Reference) is Reference
    assert checks.yours_or_attnlib("test_double", double.__call__, Reference) is Reference
    capsys.readouterr()


def _answer_cells() -> list[tuple[str, dict]]:
    found = []
    for path in SOURCES:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("solution"):
                found.append((path.name[:2], meta))
    return found


def test_every_exercise_in_a_notebook_is_registered_with_hints_in_levels() -> None:
    registered = {k: v for k, v in _exercise.all_exercises().items() if not k.startswith("test_")}
    in_notebooks = {meta["grade_id"]: number for number, meta in _answer_cells()}
    assert set(registered) == set(in_notebooks)
    for exercise_id, exercise in registered.items():
        assert exercise.notebook == in_notebooks[exercise_id]
        assert re.fullmatch(rf"ex{exercise.number}_\w+", exercise_id)
        assert len(exercise.hints) >= 2, f"{exercise_id}: hints come in levels"


_exercise.register(DOUBLE)
