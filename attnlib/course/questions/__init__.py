"""The course's predict-first questions, one module per notebook, keyed by id.

A notebook's experiment cell measures, then reveals: ``checks.reveal(id, my_prediction,
**measured)`` looks the question up here, lets its ``observe`` pick the letter the
measurements show, and prints the verdict with the explanation. The instructors' edition
follows each reveal with a cell (tagged ``instructors-only``, left out of the learner's
edition) that calls ``checks.confirm(id, **measured)``: the run shows the course's answer.

Adding a question: a :class:`~attnlib.course.predictions.Question` in the notebook's module,
its id ``"<notebook>.<what is asked>"``; the question's prose and its choices in the notebook,
its explanations only here. ``tests/notebooks/test_predictions_read_ahead.py`` fails when a
learner could read the answer on the page before the reveal.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from attnlib.course.predictions import INSTRUCTORS_ONLY_TAG, PredictionResult, Question
from attnlib.course.questions import (
    nb00_pytorch,
    nb01_dot_products,
    nb02_softmax,
    nb03_naive_attention,
    nb04_queries_keys_values,
    nb05_multi_head,
    nb06_positional,
    nb07_masking,
    nb08_transformer_block,
    nb09_encoder_decoder,
    nb10_gpt,
    nb11_pretrained,
    nb12_efficient,
)

_MODULES = (
    nb00_pytorch,
    nb01_dot_products,
    nb02_softmax,
    nb03_naive_attention,
    nb04_queries_keys_values,
    nb05_multi_head,
    nb06_positional,
    nb07_masking,
    nb08_transformer_block,
    nb09_encoder_decoder,
    nb10_gpt,
    nb11_pretrained,
    nb12_efficient,
)


def _registry() -> MappingProxyType[str, Question]:
    found: dict[str, Question] = {}
    for module in _MODULES:
        notebook = module.__name__.rsplit(".", 1)[1][2:4]
        for question in module.QUESTIONS:
            if not question.id.startswith(f"{notebook}."):
                raise ValueError(f"question {question.id} is in notebook {notebook}'s module")
            if question.id in found:
                raise ValueError(f"question id {question.id} is used twice")
            found[question.id] = question
    return MappingProxyType(found)


QUESTIONS = _registry()


def question(question_id: str) -> Question:
    """The question with this id (a KeyError lists the notebook's ids)."""
    try:
        return QUESTIONS[question_id]
    except KeyError:
        notebook = str(question_id).split(".")[0]
        same = sorted(known for known in QUESTIONS if known.startswith(f"{notebook}."))
        raise KeyError(
            f"no question {question_id!r}; notebook {notebook}'s are {same or 'none'}"
        ) from None


def reveal(question_id: str, my_prediction: str | None, **measured: Any) -> PredictionResult:
    """Compare ``my_prediction`` (a letter, or None) with the letter the measurements show.

    The result's repr is what the learner reads: their letter against the run's, and why.
    With no prediction (None) it says so and still shows what the run found.
    """
    return question(question_id).reveal(my_prediction, **measured)


def confirm(question_id: str, **measured: Any) -> None:
    """Raise AssertionError unless the measurements show the course's answer (instructors)."""
    question(question_id).confirm(**measured)


__all__ = ["INSTRUCTORS_ONLY_TAG", "QUESTIONS", "confirm", "question", "reveal"]
