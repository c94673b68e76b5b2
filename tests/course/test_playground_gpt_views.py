"""The char GPT's attention views (notebook 10): the causal mask, shares, notes and the widget."""

from __future__ import annotations

import pytest
import torch
from tiny_char_gpt import VOCAB, tiny_char_gpt

import attnlib
from attnlib.course.playgrounds import attention_views, gpt_views


@pytest.fixture(scope="module")
def gpt() -> attnlib.GPT:
    return tiny_char_gpt(num_layers=2, weight_scale=5.0)  # heads that differ visibly


@pytest.fixture(scope="module")
def source(gpt: attnlib.GPT) -> gpt_views.CharGPTSource:
    return gpt_views.CharGPTSource(gpt, VOCAB)


def test_char_word_ids_join_letters_and_digits_only() -> None:
    assert gpt_views.char_word_ids("ab c,d2 ") == [0, 0, 1, 2, 3, 4, 4, 5]


def test_text_is_read_as_the_sampler_reads_a_prompt(source: gpt_views.CharGPTSource) -> None:
    reading = source.read("hello world")
    assert reading.tokens == tuple("lo␣world") and reading.ids == tuple(VOCAB.encode("lo world"))
    assert reading.notes == (
        "The model reads at most 8 characters: only the last 8 of your 11 are used, 'lo world'.",
    )
    odd = source.read("héllo!")
    assert odd.tokens == tuple("hllo") and "'!', 'é'" in odd.notes[0]
    empty = source.read("")
    assert not empty.readable and empty.notes == ("Type a prompt, then press Enter.",)
    assert not source.read("€").readable


def test_the_model_view_is_the_models_causal_attention(
    gpt: attnlib.GPT, source: gpt_views.CharGPTSource
) -> None:
    view = source.run(source.read("hello wo"))
    ids = torch.tensor([VOCAB.encode("hello wo")])
    expected = torch.cat(gpt.attention_weights(ids))  # (L, H, T, T)
    torch.testing.assert_close(view.weights, expected)
    with torch.no_grad():  # what block 1's attention reads: its first LayerNorm of the embeddings
        x = gpt.token_embedding(ids) + gpt.position_embedding(torch.arange(8))
        torch.testing.assert_close(view.inputs[0], gpt.blocks[0].norm_1(x)[0])
        logits = gpt(ids)[0, -1]
    assert view.mask.tolist() == [[j <= i for j in range(8)] for i in range(8)]  # True = may attend
    assert view.weights.triu(diagonal=1).eq(0).all()  # no query sees its future
    assert view.summary == f"the likeliest next character: {VOCAB.chars[int(logits.argmax())]!r}"


def test_the_shares_suit_a_causal_model(source: gpt_views.CharGPTSource) -> None:
    reading = source.read("he low")
    view = source.run(reading)
    w = view.weights  # (L, H, 6, 6)
    torch.testing.assert_close(view.shares["prev"], w.diagonal(-1, -2, -1).mean(-1))
    torch.testing.assert_close(view.shares["first"], w[..., 1:, 0].mean(-1))  # not query 0
    # Words "he", " ", "low": queries with an earlier character of their word are e, o, w.
    by_hand = (w[..., 1, 0] + w[..., 4, 3] + w[..., 5, 3] + w[..., 5, 4]) / 3
    torch.testing.assert_close(view.shares["word"], by_hand)


def test_the_neuron_view_shows_the_causal_mask(source: gpt_views.CharGPTSource) -> None:
    view = source.run(source.read("hello"))
    for layer, head, query in [(1, 0, 0), (1, 1, 2), (2, 1, 4)]:
        neuron = attention_views.neuron_at(source, view, layer, head, query)
        row = attention_views.head_row(view, layer, head, query)
        torch.testing.assert_close(neuron.weights, row.row)
        torch.testing.assert_close(neuron.output, neuron.weights @ neuron.values)
        assert neuron.mask.tolist() == [j <= query for j in range(5)]
        assert neuron.weights[query + 1 :].eq(0).all()  # exactly: the future is blocked
        assert neuron.weights[: query + 1].sum() == pytest.approx(1.0)
    first = attention_views.neuron_at(source, view, 1, 0, 0)
    assert first.weights[0] == 1.0  # the first character can only look at itself


def test_the_widget_runs_the_model_only_when_text_is_entered(
    gpt: attnlib.GPT, source: gpt_views.CharGPTSource
) -> None:
    playground = gpt_views.show_gpt_views(gpt, VOCAB, text="hello")
    assert playground.view.tokens == tuple("hello") and playground.text.continuous_update is False
    image = playground.model_out.value
    calls: list[int] = []
    hook = gpt.token_embedding.register_forward_hook(lambda *_: calls.append(1))  # one per run
    try:
        playground.head.value = 1
        playground.layer.value = 2
        playground.query.value = 3
        assert calls == [] and playground.model_out.value is image
        assert "masked" in playground.head_out.value  # query 3 cannot see key 4
        playground.text.value = "wor ld"
        assert calls == [1] and playground.model_out.value != image
    finally:
        hook.remove()
    assert playground.draws["model"] == 2
    playground.text.value = "ééé"
    assert playground.view is None and "'é'" in playground.notes.value
    assert "Nothing is left for the model to read" in playground.notes.value
    assert playground.model_out.value == ""
