"""The sampler playground's pure half (notebook 10): bad input gets a note, numbers are right."""

from __future__ import annotations

import re

import pytest
import torch
from displayed import displayed, displayed_views
from tiny_char_gpt import MAX_LEN, VOCAB, tiny_char_gpt

import attnlib
from attnlib.course.playgrounds import bar_chart, sampler


@pytest.fixture(scope="module")
def gpt() -> attnlib.GPT:
    return tiny_char_gpt(num_layers=1)


def test_a_prompt_the_model_can_read_is_kept_as_it_is() -> None:
    prompt = sampler.read_prompt("hello", VOCAB, MAX_LEN)
    assert prompt == sampler.Prompt("hello", VOCAB.encode("hello"), ())
    assert prompt.readable


def test_an_empty_prompt_asks_for_text() -> None:
    prompt = sampler.read_prompt("", VOCAB, MAX_LEN)
    assert not prompt.readable and prompt.notes == ("Type a prompt, then press Enter.",)


def test_unknown_characters_are_named_and_left_out() -> None:
    prompt = sampler.read_prompt("héllo, wörld!", VOCAB, 64)
    assert prompt.text == "hllo wrld"
    assert prompt.notes == (
        f"Not among the model's {VOCAB.vocab_size} characters, so left out: '!', ',', 'é', 'ö'.",
    )
    nothing = sampler.read_prompt("€€", VOCAB, MAX_LEN)
    assert not nothing.readable
    assert (
        nothing.notes[-1] == "Nothing is left for the model to read: type some of its characters."
    )


def test_a_prompt_longer_than_the_context_says_which_part_is_read() -> None:
    prompt = sampler.read_prompt("hello world", VOCAB, MAX_LEN)
    assert prompt.text == "hello world" and len(prompt.ids) == 11  # all kept; the model crops
    assert prompt.notes == (
        "The model reads at most 8 characters: only the last 8 of your 11 are used, 'lo world'.",
    )


def test_a_non_text_prompt_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="typed must be a str, got int"):
        sampler.read_prompt(3, VOCAB, MAX_LEN)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("temperature", "top_k", "top_p"),
    [(1.0, None, None), (0.5, 3, None), (1.5, None, 0.6), (1.0, 4, 0.9), (0.0, None, None)],
)
def test_choices_are_next_token_probs_and_its_best_candidates(
    temperature: float, top_k: int | None, top_p: float | None
) -> None:
    logits = torch.randn(VOCAB.vocab_size, generator=torch.Generator().manual_seed(1)).double()
    choices = sampler.choices_at(logits, VOCAB, temperature, top_k, top_p, shown=5)
    expected = attnlib.next_token_probs(logits, temperature, top_k, top_p)
    assert torch.equal(choices.distribution, expected)
    assert torch.isclose(choices.distribution.sum(), torch.tensor(1.0, dtype=torch.float64))
    assert choices.top_probs.tolist() == sorted(expected.tolist(), reverse=True)[:5]
    assert torch.equal(expected[choices.top_ids], choices.top_probs)
    assert choices.kept == int((expected > 0).sum())
    assert choices.top_labels == [sampler.visible(VOCAB.chars[i]) for i in choices.top_ids]
    if top_k is not None:
        assert choices.kept <= top_k
    if temperature == 0:
        assert choices.kept == 1 and choices.top_ids[0] == logits.argmax()


def test_invisible_characters_get_visible_labels() -> None:
    assert [sampler.visible(ch) for ch in " \n\tx"] == ["␣", "⏎", "⇥", "x"]


def test_the_model_reads_the_last_max_len_characters(gpt: attnlib.GPT) -> None:
    ids = VOCAB.encode("hello world")
    choices = sampler.next_token_choices(gpt, VOCAB, ids, 1.0)
    with torch.no_grad():
        expected = gpt(torch.tensor([ids[-MAX_LEN:]]))[0, -1]
    assert torch.equal(choices.logits, expected)
    gpt.train()
    sampler.next_token_choices(gpt, VOCAB, ids, 1.0)
    assert gpt.training  # the mode it had is given back
    gpt.eval()
    with pytest.raises(ValueError, match="ids is empty"):
        sampler.next_token_choices(gpt, VOCAB, [], 1.0)


def test_draws_come_only_from_the_kept_characters() -> None:
    logits = torch.randn(VOCAB.vocab_size, generator=torch.Generator().manual_seed(2)).double()
    choices = sampler.choices_at(logits, VOCAB, 1.0, top_k=2)
    generator = torch.Generator().manual_seed(0)
    drawn = {sampler.draw(choices, generator) for _ in range(200)}
    assert drawn == set(choices.top_ids[:2].tolist())
    greedy = sampler.choices_at(logits, VOCAB, 0.0)
    assert sampler.draw(greedy, generator) == int(logits.argmax())


def test_wrong_logits_are_refused() -> None:
    with pytest.raises(ValueError, match=r"logits must have shape \(9,\), got \(3,\)"):
        sampler.choices_at(torch.zeros(3), VOCAB, 1.0)


def test_the_widget_reads_the_prompt_on_enter_and_draws_on_each_button(gpt: attnlib.GPT) -> None:
    playground = sampler.SamplerPlayground(gpt, VOCAB, prompt="hello", seed=0)
    classes = set(playground.widget._dom_classes)
    assert {"attnlib-playground", "attnlib-playground-sampler"} <= classes
    assert playground.prompt.placeholder == sampler.EXAMPLE != playground.prompt.value
    assert playground.text == "hello" and playground.logits is not None
    playground.buttons["next"].click()
    assert len(playground.text) == 6 and playground.text.startswith("hello")
    first = playground.text
    playground.buttons["20 more"].click()
    assert len(playground.text) == 26 and playground.text.startswith(first)
    assert "<b style='color:#ff7f0e'>" in playground.shown.value
    playground.buttons["reset"].click()
    assert playground.text == "hello"
    playground.buttons["next"].click()
    assert playground.text == first  # the same seed draws the same character again
    playground.prompt.value = "wörld"  # what Enter does with continuous_update=False
    assert playground.text == "wrld" and "'ö'" in playground.notes.value


def test_sliders_change_the_distribution_without_running_the_model(gpt: attnlib.GPT) -> None:
    playground = sampler.SamplerPlayground(gpt, VOCAB, prompt="hello")
    calls = []
    handle = gpt.register_forward_hook(lambda *_: calls.append(1))
    try:
        playground.temperature.value = 0.0
        playground.top_k.value = 2
        playground.top_p.value = 0.5
    finally:
        handle.remove()
    assert calls == []
    playground.buttons["next"].click()  # greedy at temperature 0
    assert playground.text[-1] == VOCAB.chars[int(playground.drawn)]


def test_the_widget_answers_an_empty_prompt_with_a_note(gpt: attnlib.GPT) -> None:
    playground = sampler.SamplerPlayground(gpt, VOCAB, prompt="")
    assert playground.logits is None and "Type a prompt" in playground.notes.value
    playground.buttons["20 more"].click()  # nothing to continue: nothing happens
    assert playground.text == ""


def test_the_bars_mark_the_drawn_character() -> None:
    logits = torch.randn(VOCAB.vocab_size, generator=torch.Generator().manual_seed(3)).double()
    choices = sampler.choices_at(logits, VOCAB, 1.0, shown=4)
    chart = sampler.sampler_bars(choices, drawn=int(choices.top_ids[1]))
    bars = re.findall(r"height:(\d+)px;background:(#[0-9a-f]{6})", chart)
    heights = [round(bar_chart.PLOT_HEIGHT * p) for p in choices.top_probs.tolist()]
    assert [int(h) for h, _ in bars] == heights
    assert [c for _, c in bars] == [
        bar_chart.BAR,
        bar_chart.HIGHLIGHT,
        bar_chart.BAR,
        bar_chart.BAR,
    ]
    # Every setting is in the title, so moving any slider visibly changes the bars.
    assert f"<b>{choices.settings}: " in chart and "probability" in chart
    # A drawn character outside the likeliest shown is highlighted nowhere.
    outside = int(logits.argsort()[0])
    assert bar_chart.HIGHLIGHT not in sampler.sampler_bars(choices, drawn=outside)


@pytest.mark.parametrize(
    ("temperature", "top_k", "top_p", "expected"),
    [
        (1.0, None, None, "T 1.00, top-k off, top-p off"),
        (0.8, 5, None, "T 0.80, top-k 5, top-p off"),
        (1.15, 3, 0.85, "T 1.15, top-k 3, top-p 0.85"),
    ],
)
def test_the_settings_are_written_out(
    temperature: float, top_k: int | None, top_p: float | None, expected: str
) -> None:
    logits = torch.zeros(VOCAB.vocab_size)
    assert sampler.choices_at(logits, VOCAB, temperature, top_k, top_p).settings == expected


def test_the_notebook_output_is_the_widget_with_a_stand_in_the_same_everywhere(
    gpt: attnlib.GPT,
) -> None:
    playground = sampler.show_sampler(gpt, VOCAB, prompt="hello")
    (bundle,) = displayed(playground)
    (view,) = displayed_views(bundle)
    assert view.children == (playground.widget,)
    assert bundle["text/plain"] == (
        "the sampler, prompt 'hello' (run the notebook to use the playground)"
    )
