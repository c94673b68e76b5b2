"""Predict, then run: a multiple-choice question asked before an experiment.

A notebook asks the question in prose, the learner writes an answer into a cell
(``my_prediction = "b"``), runs the experiment, and the run cell compares the
two: ``question.compare(my_prediction, observed)``. ``observed`` is computed from
the experiment's own numbers in the notebook, never typed in, so the comparison
stays true only while the experiment does. Notebooks 00 to 12 ask such questions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


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
