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


# -- the course's questions: kept in attnlib, revealed from what the cell measured ------------

from attnlib.course.predictions import Question  # noqa: E402
from attnlib.course.questions import QUESTIONS, question  # noqa: E402

SHAPE = Question(
    "00.test-shape",
    checks.Prediction("?", choices={"a": "(4, 3)", "b": "an error"}, why={"a": "from the right"}),
    answer="a",
    observe=lambda shape: "b" if shape is None else "a",
)


def test_a_reveal_picks_the_letter_from_the_measurements() -> None:
    assert str(SHAPE.reveal("a", shape=(4, 3))).startswith("✓ You predicted (a) (4, 3)")
    assert str(SHAPE.reveal("a", shape=None)).startswith("✗ You predicted (a) (4, 3); the run")


def test_a_reveal_without_a_prediction_says_so_and_still_shows() -> None:
    text = str(SHAPE.reveal(None, shape=(4, 3)))
    assert text.startswith("No prediction yet. The run shows (a) (4, 3).")
    assert "Why: from the right" in text


def test_wrong_measurements_are_named() -> None:
    with pytest.raises(TypeError, match=r"measurements \['shape'\], got \['shap'\]"):
        SHAPE.reveal("a", shap=(4, 3))


def test_confirm_holds_the_course_to_its_answer() -> None:
    SHAPE.confirm(shape=(4, 3))
    with pytest.raises(AssertionError, match=r"shows \(b\) an error, but the course says \(a\)"):
        SHAPE.confirm(shape=None)


def test_a_question_whose_answer_is_not_a_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="answer 'z'"):
        Question("00.x", SHAPE.prediction, answer="z", observe=SHAPE.observe)


def test_an_unknown_question_lists_its_notebooks_questions() -> None:
    with pytest.raises(KeyError, match=r"00\.broadcast-shape"):
        question("00.no-such-question")


@pytest.mark.parametrize("question_id", sorted(QUESTIONS))
def test_every_course_question_is_whole(question_id: str) -> None:
    asked = QUESTIONS[question_id]
    assert asked.id == question_id and asked.answer in asked.prediction.choices
    assert asked.answer in asked.prediction.why, "the answer's explanation is the lesson"
