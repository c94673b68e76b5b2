"""Each checker accepts a right answer and explains a wrong one, never raising."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

import attnlib
from attnlib import CheckResult


def _not_done(*_: object) -> None:
    raise NotImplementedError("write the function body")


def _crashes(*_: object) -> None:
    raise ZeroDivisionError("oops")


def _softmax_no_shift(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)


def _softmax_stable(x: torch.Tensor) -> torch.Tensor:
    return _softmax_no_shift(x - x.max(-1, keepdim=True).values)


def _naive(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.softmax(x @ x.transpose(-2, -1), -1)
    return w @ x, w


def _naive_reversing_all_dims(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # What x.T does: reverse every dim, which is right for (T, C) but wrong for (B, T, C).
    w = torch.softmax(x @ x.permute(*reversed(range(x.dim()))), -1)
    return w @ x, w


def _scaled(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.softmax(x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1]), -1)
    return w @ x, w


def _causal(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    t = x.shape[-2]
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    w = torch.softmax((x @ x.transpose(-2, -1)).masked_fill(future, -torch.inf), -1)
    return w @ x, w


CHECKERS: list[tuple[Callable[..., CheckResult], Callable, Callable, str]] = [
    # checker, a right answer, a wrong answer, a phrase the report must contain
    (attnlib.check_dot, lambda a, b: (a * b).sum(-1), lambda a, b: (a * b).sum(), "batch of 3"),
    (
        attnlib.check_cosine_similarity,
        lambda a, b: (a * b).sum() / (a.norm() * b.norm()),
        lambda a, b: (a * b).sum() / a.norm(),
        "same direction, different lengths",
    ),
    (attnlib.check_score_table, lambda x: x @ x.T, lambda x: x.T @ x, "shape"),
    (attnlib.check_softmax, _softmax_stable, _softmax_no_shift, "subtract the row maximum"),
    (
        attnlib.check_softmax_jacobian,
        lambda p: torch.diag(p) - torch.outer(p, p),
        lambda p: torch.diag(p) - p * p,
        "differs at index",
    ),
    (attnlib.check_naive_self_attention, _naive, lambda x: _naive(x)[0], "pair (out, weights)"),
    (attnlib.check_scaled_self_attention, _scaled, _naive, "math.sqrt"),
    (attnlib.check_causal_self_attention, _causal, _naive, "-inf"),
]


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_right_answer_passes(checker, right, wrong, phrase) -> None:
    result = checker(right)
    assert result.passed and bool(result) and result.done
    assert repr(result).startswith("✓") and "correct" in repr(result)


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_wrong_answer_is_explained(checker, right, wrong, phrase) -> None:
    result = checker(wrong)
    assert not result.passed and result.done
    assert result.message.startswith("✗") and "case '" in result.message
    assert phrase in result.message and "hint:" in result.message


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_unfinished_exercise_is_not_done_yet(checker, right, wrong, phrase) -> None:
    result = checker(_not_done)
    assert not result.passed and not result.done
    assert "not done yet" in result.message and "write the function body" in result.message


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_learner_exception_is_reported_not_raised(checker, right, wrong, phrase) -> None:
    result = checker(_crashes)
    assert not result.passed
    assert "raised ZeroDivisionError: oops" in result.message and "hint:" in result.message


def test_softmax_without_stability_requirement_accepts_plain_formula() -> None:
    assert attnlib.check_softmax(_softmax_no_shift, require_stable=False)
    assert "NaN" in attnlib.check_softmax(_softmax_no_shift).message


def test_transpose_of_a_batch_gets_a_specific_hint() -> None:
    result = attnlib.check_naive_self_attention(_naive_reversing_all_dims)
    assert "batch" in result.message and "transpose(-2, -1)" in result.message


def test_non_tensor_results_and_non_functions_are_explained() -> None:
    result = attnlib.check_softmax(lambda x: x.tolist())
    assert "should be a torch.Tensor, but your function returned list" in result.message
    assert "expected a function" in attnlib.check_dot(42).message  # type: ignore[arg-type]


def test_checker_does_not_let_the_learner_mutate_its_cases() -> None:
    def mutating_softmax(x: torch.Tensor) -> torch.Tensor:
        x.zero_()
        return torch.softmax(x, -1)

    attnlib.check_softmax(mutating_softmax)  # must not corrupt the next run's cases
    assert attnlib.check_softmax(_softmax_stable)


def test_report_is_printable_and_deterministic() -> None:
    first, second = (
        attnlib.check_softmax(_softmax_no_shift),
        attnlib.check_softmax(_softmax_no_shift),
    )
    assert str(first) == repr(first) == first.message == second.message
