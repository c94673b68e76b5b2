"""Predict first: a multiple-choice question answered before a notebook's key slider appears.

The pure half, unit-tested without a browser: a :class:`SliderQuestion` holds a
:class:`attnlib.checks.Prediction` (the question, its lettered choices, and why each is or is
not the answer) and an ``observe`` function, which calls the slider's own pure function at the
settings the question names and returns an :class:`Observation`: the letter of the choice the
slider shows there, and the numbers that say so. :func:`judge` compares a learner's answer
with that observation; anything that is not one of the letters (no answer, a letter not
offered) gets a :class:`Verdict` with a message, never an exception.

The thin half: :class:`PredictFirstGate` shows the question as radio buttons with nothing
chosen and a "check my prediction" button, and adds the slider below only once an answer
has been judged; :func:`interact` is used like ``ipywidgets.interact``, with the question
first. The slider's function runs when the slider moves, as under ``interact``; a check
runs the question's ``observe`` once.

The questions, one per notebook, are in
:mod:`attnlib.course.playgrounds.predict_first_questions`. Notebooks 02, 03, 06 and 07.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from attnlib.course.predictions import Prediction

# The CSS class of the gate's box; its parts carry it with a suffix (for the browser test).
CSS_CLASS = "attnlib-predict-first"
CHECK_LABEL = "check my prediction"


@dataclass(frozen=True)
class Observation:
    """The choice the slider shows (``letter``) and the measured numbers behind it."""

    letter: str
    evidence: str


@dataclass(frozen=True)
class SliderQuestion:
    """A question about what a slider will show, and how to measure the answer.

    ``prediction`` holds the question, its lettered choices and why each is (or is not) the
    answer; ``where`` names the slider settings the question is about ("at scale 0.1");
    ``observe`` calls the slider's pure function there and returns an :class:`Observation`.
    """

    prediction: Prediction
    where: str
    observe: Callable[[], Observation]
    # Phrases that state the answer, which the page must not show before the gate's check
    # (instructors/read_ahead.py looks for them, and for the right choice's own words).
    giveaways: tuple[str, ...] = ()

    @property
    def letters(self) -> tuple[str, ...]:
        """The letters of the choices, in the order they are offered."""
        return tuple(self.prediction.choices)


@dataclass(frozen=True)
class Verdict:
    """How an answer compared with the slider.

    ``answered`` is False when there was nothing to judge (no answer, or not one of the
    letters); ``message`` then says what to do instead.
    """

    answered: bool
    correct: bool
    message: str


def judge(question: SliderQuestion, answer: object) -> Verdict:
    """Compare ``answer`` (a choice's letter) with what the slider's own function computes.

    Upper case and surrounding spaces are forgiven. Never raises on what a learner gives:
    ``None``, a blank string, a letter that is not offered or something that is not a letter
    at all gets ``answered=False`` and a message naming the letters to choose from.
    """
    letters = ", ".join(question.letters)
    if answer is None or (isinstance(answer, str) and not answer.strip()):
        return Verdict(False, False, f"Choose one of {letters} first: the slider appears then.")
    if not isinstance(answer, str) or answer.strip().lower() not in question.letters:
        return Verdict(False, False, f"{answer!r} is not one of the choices {letters}.")
    letter = answer.strip().lower()
    seen = question.observe()
    choices, why = question.prediction.choices, question.prediction.why
    if letter == seen.letter:
        head = (
            f"✓ You predicted ({letter}) {choices[letter]}, and {question.where} "
            "that is what the slider shows"
        )
    else:
        head = (
            f"✗ You predicted ({letter}) {choices[letter]}; {question.where} the slider shows "
            f"({seen.letter}) {choices[seen.letter]}"
        )
    lines = [f"{head}: {seen.evidence}."]
    if letter != seen.letter and why.get(letter):
        lines.append(f"Why not ({letter}): {why[letter]}")
    if why.get(seen.letter):
        lines.append(f"Why: {why[seen.letter]}")
    lines.append("Now move the slider and see for yourself.")
    return Verdict(True, letter == seen.letter, "\n".join(lines))


class PredictFirstGate:
    """The question, radio buttons with nothing chosen, a check button, then the slider.

    :attr:`widget` is a ``VBox`` of CSS class ``attnlib-predict-first``; its parts carry the
    classes ``attnlib-predict-first-choices``, ``-check`` and ``-verdict``. :attr:`slider`
    joins its children only once :meth:`submit` has judged an answer; that answer is then
    fixed (:attr:`result`), and the radio buttons and the button are disabled.
    """

    def __init__(self, question: SliderQuestion, slider: widgets.Widget) -> None:
        self.question, self.slider = question, slider
        self.result: Verdict | None = None
        prediction = question.prediction
        self.prompt = widgets.HTML(
            f"<b>Predict first.</b> {html.escape(prediction.question, quote=False)}"
        )
        self.choices = widgets.RadioButtons(
            options=[(f"({letter}) {text}", letter) for letter, text in prediction.choices.items()],
            value=None,
            layout=widgets.Layout(width="auto"),
        )
        self.check = widgets.Button(
            description=CHECK_LABEL,
            button_style="primary",
            layout=widgets.Layout(width="max-content"),
        )
        self.verdict = widgets.HTML()
        for part, suffix in ((self.choices, "choices"), (self.check, "check")):
            part.add_class(f"{CSS_CLASS}-{suffix}")
        self.verdict.add_class(f"{CSS_CLASS}-verdict")
        self.check.on_click(lambda _button: self.submit())
        self.widget = widgets.VBox([self.prompt, self.choices, self.check, self.verdict])
        self.widget.add_class(CSS_CLASS)

    @property
    def revealed(self) -> bool:
        """Whether the slider is shown (an answer has been judged)."""
        return self.slider in self.widget.children

    def submit(self) -> Verdict:
        """Judge the chosen answer and show the message; on a real answer, show the slider."""
        verdict = judge(self.question, self.choices.value)
        message = html.escape(verdict.message, quote=False)  # its lines kept, wrapped at words
        self.verdict.value = (
            f"<div style='white-space: pre-line; word-break: normal'>{message}</div>"
        )
        if verdict.answered and not self.revealed:
            self.result = verdict
            self.choices.disabled = self.check.disabled = True
            self.widget.children = (*self.widget.children, self.slider)
        return verdict


def interact(question: SliderQuestion, **controls: Any) -> Callable[[Callable[..., Any]], Any]:
    """Like ``@ipywidgets.interact(**controls)``, with ``question`` asked before the slider.

    Displays the :class:`PredictFirstGate`. The decorated function gets ``.widget`` (the
    ``ipywidgets.interactive`` slider, built at once but shown only after an answer) and
    ``.gate`` (the gate), and is otherwise returned unchanged.
    """

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        slider = widgets.interactive(function, **controls)
        gate = PredictFirstGate(question, slider)
        function.widget, function.gate = slider, gate  # type: ignore[attr-defined]
        display(gate.widget)
        return function

    return decorate
