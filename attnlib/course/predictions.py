"""Predict, then run: a multiple-choice question asked before an experiment.

A notebook asks the question in prose, the learner writes a letter into a cell
(``my_prediction = "b"``) and runs the experiment, whose cell measures and then asks
attnlib to reveal: ``checks.reveal("02.scores-times-ten", my_prediction, top_after=...)``.
Nothing on the learner's page says which letter is right, or why: the question's
choices, explanations and answer live here, in a :class:`Question`
(:mod:`attnlib.course.questions` holds the course's, keyed by id), and the letter the run
shows is picked by the question's ``observe`` from the numbers the cell measured, never
typed in, so the verdict stays true only while the experiment does.

Notebooks 00 to 12 ask their predict-first questions through this module.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The tag of the cells only the instructors' edition has (after each reveal, the asserts that
# the run shows the course's answer): left out of the learner's edition
# (instructors/editions.py) and of nbgrader's source (attnlib.grading.grader.course).
INSTRUCTORS_ONLY_TAG = "instructors-only"
# How a notebook cell reveals a question: ``checks.reveal("<id>", ...)``; group 1 is the id.
REVEAL_CALL = re.compile(r"checks\.reveal\(\s*[\"']([^\"']+)[\"']")


@dataclass(frozen=True)
class PredictionResult:
    """How a prediction compared with the run; its repr is the message a learner reads."""

    prediction: str | None
    observed: str
    message: str

    @property
    def correct(self) -> bool:
        return self.prediction == self.observed

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__


@dataclass(frozen=True)
class Prediction:
    """A question with lettered choices, and why its answer is what it is.

    ``why`` maps a choice to the sentence a learner who picked it should read; it
    may explain any choice, and the observed one's entry is the lesson itself.
    """

    question: str
    choices: Mapping[str, str]
    why: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.choices) < 2:
            raise ValueError(f"a prediction needs at least two choices, got {dict(self.choices)}")
        unknown = sorted(set(self.why) - set(self.choices))
        if unknown:
            raise ValueError(f"why explains choices {unknown} that are not among {self._letters}")

    @property
    def _letters(self) -> str:
        return ", ".join(repr(letter) for letter in self.choices)

    def compare(self, prediction: str | None, observed: str) -> PredictionResult:
        """Compare the learner's ``prediction`` (a choice's letter, or None) with ``observed``.

        ``observed`` is the letter the experiment's numbers select. A prediction that is
        not one of the letters is a ValueError naming them; ``None`` (no prediction yet)
        shows what the run found.
        """
        if observed not in self.choices:
            raise ValueError(f"observed={observed!r} is not one of the choices {self._letters}")
        if prediction is not None and not isinstance(prediction, str):
            raise TypeError(
                f"my_prediction should be one of {self._letters} (a str), "
                f"got {type(prediction).__name__} {prediction!r}"
            )
        if isinstance(prediction, str):
            prediction = prediction.strip().lower()
            if prediction not in self.choices:
                raise ValueError(
                    f"my_prediction should be one of {self._letters}, got {prediction!r}"
                )
        seen = f"({observed}) {self.choices[observed]}"
        lesson = self.why.get(observed, "")
        if prediction is None:
            head = f"No prediction yet. The run shows {seen}."
        elif prediction == observed:
            head = f"✓ You predicted {seen}, and that is what the run shows."
        else:
            mistaken = self.why.get(prediction, "")
            head = (
                f"✗ You predicted ({prediction}) {self.choices[prediction]}; the run shows {seen}."
                + (f"\n  Why not ({prediction}): {mistaken}" if mistaken else "")
            )
        message = head + (f"\n  Why: {lesson}" if lesson else "")
        return PredictionResult(prediction, observed, message)


@dataclass(frozen=True)
class Question:
    """A predict-first question of the course: what it asks, what the run shows, and why.

    ``id`` is ``"<notebook>.<name>"`` (``"00.broadcast-shape"``), named after what is asked,
    never after the answer (the id stands on the learner's page). ``observe`` takes the
    experiment's measurements as keywords and returns the letter they show; ``answer`` is the
    letter the course's own experiment shows, which the instructors' edition asserts
    (:meth:`confirm`) and the notebook's prose after the reveal builds on. ``giveaways`` are
    phrases that state the answer and so must not stand on the page before the reveal
    (``instructors/read_ahead.py`` looks for them, and for the right choice's own words).
    """

    id: str
    prediction: Prediction
    answer: str
    observe: Callable[..., str]
    giveaways: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.answer not in self.prediction.choices:
            raise ValueError(
                f"question {self.id}: answer {self.answer!r} is not one of "
                f"{self.prediction._letters}"
            )

    def observed(self, measured: Mapping[str, Any]) -> str:
        """The letter the measurements show (a TypeError names the measurements it takes)."""
        try:
            return self.observe(**measured)
        except TypeError as error:
            if "argument" not in str(error):
                raise
            raise TypeError(
                f"question {self.id} is revealed from the measurements "
                f"{_parameters(self.observe)}, got {sorted(measured)}"
            ) from error

    def reveal(self, prediction: str | None, **measured: Any) -> PredictionResult:
        """How ``prediction`` compares with what the measurements show, and why."""
        return self.prediction.compare(prediction, self.observed(measured))

    def confirm(self, **measured: Any) -> None:
        """Raise AssertionError unless the measurements show the course's ``answer``."""
        letter = self.observed(measured)
        if letter != self.answer:
            raise AssertionError(
                f"question {self.id}: the run shows ({letter}) {self.prediction.choices[letter]}, "
                f"but the course says ({self.answer}) {self.prediction.choices[self.answer]}"
            )


def _parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)
