"""The predict-then-run questions: a comparison a learner can trust, and clear errors."""

from __future__ import annotations

import pytest

from attnlib import checks

QUESTION = checks.Prediction(
    "Multiply every score by 10. The largest softmax weight …",
    choices={"a": "stays the same", "b": "moves towards 1", "c": "moves towards 1/n"},
    why={"b": "softmax depends on differences, which grow tenfold", "a": "it is not linear"},
)


@pytest.mark.parametrize("answer", ["b", "B", " b "])
def test_a_right_prediction_is_confirmed(answer: str) -> None:
    result = QUESTION.compare(answer, observed="b")
    assert result.correct
    assert str(result).startswith("✓ You predicted (b) moves towards 1")
    assert "differences" in str(result)


def test_a_wrong_prediction_names_both_and_explains_each() -> None:
    result = QUESTION.compare("a", observed="b")
    assert not result.correct
    text = str(result)
    assert text.startswith("✗ You predicted (a) stays the same; the run shows (b)")
    assert "Why not (a): it is not linear" in text and "Why: softmax depends" in text


def test_a_wrong_prediction_without_an_explanation_still_shows_the_lesson() -> None:
    text = str(QUESTION.compare("c", observed="b"))
    assert "Why not" not in text and "Why: softmax" in text


def test_no_prediction_shows_what_the_run_found() -> None:
    result = QUESTION.compare(None, observed="b")
    assert not result.correct and str(result).startswith("No prediction yet. The run shows (b)")


@pytest.mark.parametrize(
    ("prediction", "error", "words"),
    [("d", ValueError, "'a', 'b', 'c'"), (2, TypeError, "got int 2"), ("", ValueError, "got ''")],
)
def test_an_answer_that_is_not_a_choice_is_named(prediction, error, words) -> None:
    with pytest.raises(error, match=words):
        QUESTION.compare(prediction, observed="b")


def test_an_observed_letter_outside_the_choices_is_a_bug_in_the_notebook() -> None:
    with pytest.raises(ValueError, match="observed='z'"):
        QUESTION.compare("a", observed="z")


def test_a_question_needs_two_choices_and_explanations_only_of_choices() -> None:
    with pytest.raises(ValueError, match="at least two"):
        checks.Prediction("?", choices={"a": "yes"})
    with pytest.raises(ValueError, match=r"\['z'\]"):
        checks.Prediction("?", choices={"a": "yes", "b": "no"}, why={"z": "…"})
