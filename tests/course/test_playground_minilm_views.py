"""MiniLM's attention views (notebook 11), on the packaged weights: numbers, notes, widget."""

from __future__ import annotations

import math

import pytest
import torch
from displayed import displayed

import attnlib
from attnlib.course import inspection
from attnlib.course.playgrounds import attention_views, minilm_views

FOX = minilm_views.FOX


@pytest.fixture(scope="module")
def source(minilm: attnlib.SentenceEncoder) -> minilm_views.MiniLMSource:
    return minilm_views.MiniLMSource(minilm)


def test_a_readable_text_is_read_as_the_encoder_reads_it(
    minilm: attnlib.SentenceEncoder,
) -> None:
    reading = minilm_views.read_text(FOX, minilm)
    assert reading.ids == tuple(minilm.tokenizer.encode(FOX)) and reading.notes == ()
    assert reading.tokens == tuple(minilm.tokens(FOX)) and reading.tokens[4] == "fox"
    assert reading.readable


@pytest.mark.parametrize("typed", ["", "   "])
def test_an_empty_text_asks_for_one(typed: str, minilm: attnlib.SentenceEncoder) -> None:
    reading = minilm_views.read_text(typed, minilm)
    assert not reading.readable and reading.notes == ("Type a text, then press Enter.",)


def test_characters_without_a_piece_are_named(minilm: attnlib.SentenceEncoder) -> None:
    reading = minilm_views.read_text("I saw a ☃ and a ☂☃ today", minilm)
    assert reading.notes == (
        "WordPiece has no piece for '☂', '☃': each word with one became [UNK].",
    )
    assert reading.tokens.count("[UNK]") == 2
    nothing = minilm_views.read_text("☃", minilm)
    assert nothing.readable  # [UNK] is a piece the model can read
    blank = minilm_views.read_text("\u200b", minilm)  # a zero-width space: no piece at all
    assert not blank.readable and "Nothing in this text" in blank.notes[0]


def test_a_text_longer_than_the_context_is_cropped_with_a_note(
    minilm: attnlib.SentenceEncoder,
) -> None:
    reading = minilm_views.read_text("one two " * 200, minilm)
    limit = minilm.tokenizer.max_len
    assert len(reading.ids) == limit and reading.tokens[-1] == "[SEP]"
    assert reading.notes == (
        f"MiniLM reads at most {limit} tokens, [CLS] and [SEP] included: only the first "
        f"{limit - 2} of your 400 pieces are used (up to 'two').",
    )


def test_a_non_text_is_a_type_error(minilm: attnlib.SentenceEncoder) -> None:
    with pytest.raises(TypeError, match="typed must be a str, got bytes"):
        minilm_views.read_text(b"fox", minilm)  # type: ignore[arg-type]


def test_word_ids_join_continuation_pieces() -> None:
    pieces = ["[CLS]", "the", "quo", "##kka", "##s", "smiled", ",", "[SEP]"]
    assert minilm_views.word_ids(pieces) == [0, 1, 2, 2, 2, 3, 4, 5]


def test_the_model_view_is_the_encoders_attention_recomputed_from_q_and_k(
    minilm: attnlib.SentenceEncoder, source: minilm_views.MiniLMSource
) -> None:
    text = "The naïve quokka smiled at the quokkas."
    view = source.run(source.read(text))
    ids, mask = minilm.tokenize([text])
    with torch.no_grad():
        out = minilm(ids, mask)
    assert view.weights.shape == (6, 12, ids.shape[1], ids.shape[1])
    torch.testing.assert_close(view.weights, out.attentions[:, 0])
    torch.testing.assert_close(view.inputs, out.hidden_states[:-1, 0])  # post-norm BERT
    d = minilm.config.d_head
    for layer in range(6):
        attention = source.attention(layer + 1)
        with torch.no_grad():
            x = view.inputs[layer].double()
            q = (x @ attention.w_q.weight.double().T + attention.w_q.bias.double()).view(-1, 12, d)
            k = (x @ attention.w_k.weight.double().T + attention.w_k.bias.double()).view(-1, 12, d)
        recomputed = (torch.einsum("ihd,jhd->hij", q, k) / math.sqrt(d)).softmax(-1)  # (H, T, T)
        torch.testing.assert_close(view.weights[layer].double(), recomputed, atol=1e-5, rtol=0)
    assert view.mask.all() and view.mask.shape == (ids.shape[1], ids.shape[1])


def test_the_shares_are_the_courses_measures(source: minilm_views.MiniLMSource) -> None:
    reading = source.read("The naïve quokka smiled at the quokkas.")
    view = source.run(reading)
    torch.testing.assert_close(view.shares["prev"], inspection.previous_token_share(view.weights))
    torch.testing.assert_close(view.shares["CLS"], view.weights[..., 0].mean(dim=-1))
    split = [i for i, t in enumerate(reading.tokens) if t.startswith("##")]  # quokka, quokkas
    assert reading.tokens[split[0] - 1 : split[0] + 1] == ("quo", "##kka")
    pairs = [(i, j) for i in range(len(reading.tokens)) for j in range(len(reading.tokens))
             if i != j and minilm_views.word_ids(reading.tokens)[i]
             == minilm_views.word_ids(reading.tokens)[j]]  # fmt: skip
    queries = sorted({i for i, _ in pairs})
    by_hand = sum(view.weights[..., i, j] for i, j in pairs) / len(queries)
    torch.testing.assert_close(view.shares["word"], by_hand)
    assert view.shares["prev"][0, 2] > 0.9  # layer 1, head 2: the previous-token head


def test_the_neuron_view_agrees_with_the_head_view(source: minilm_views.MiniLMSource) -> None:
    view = source.run(source.read(FOX))
    for layer, head, query in [(1, 2, 4), (3, 7, 0), (6, 11, 11)]:
        row = attention_views.head_row(view, layer, head, query)
        neuron = attention_views.neuron_at(source, view, layer, head, query)
        torch.testing.assert_close(neuron.weights.float(), row.row, atol=1e-5, rtol=0)
        torch.testing.assert_close(neuron.output, neuron.weights @ neuron.values)
        assert neuron.mask.all()
    with pytest.raises(ValueError, match=r"layer must be an int in \[1, 6\], got 7"):
        attention_views.neuron_at(source, view, 7, 0, 0)


def test_the_widget_runs_on_enter_and_redraws_only_the_selection(
    minilm: attnlib.SentenceEncoder,
) -> None:
    playground = minilm_views.show_minilm_views(minilm)
    assert playground.text.continuous_update is False  # the model runs on Enter, not per key
    assert "attnlib-playground" in playground.widget._dom_classes
    # The browser test types the placeholder: an example other than the starting text.
    assert playground.text.placeholder == minilm_views.MiniLMSource.example != playground.text.value
    assert playground.draws == {"model": 1, "head": 1, "neuron": 1}
    assert playground.query.value == 4 and "fox" in playground.head_out.value
    image, head_html, neuron_html = (
        playground.model_out.value,
        playground.head_out.value,
        playground.neuron_out.value,
    )
    calls: list[int] = []
    hook = minilm.register_forward_hook(lambda *_: calls.append(1))
    try:
        playground.head.value = 7
        playground.layer.value = 3
        playground.query.value = 1
    finally:
        hook.remove()
    assert calls == []  # selections never run the model
    assert playground.model_out.value is image  # nor redraw the model view
    assert playground.draws == {"model": 1, "head": 4, "neuron": 4}
    assert playground.head_out.value != head_html and playground.neuron_out.value != neuron_html
    assert "layer 3, head 7" in playground.head_out.value
    playground.text.value = "Quokkas smile."  # what Enter does with continuous_update=False
    assert playground.draws["model"] == 2 and playground.model_out.value != image
    assert playground.view.tokens == ("[CLS]", "quo", "##kka", "##s", "smile", ".", "[SEP]")
    assert playground.query.value == 1  # the same position, which still exists


def test_the_widget_answers_bad_input_with_notes(minilm: attnlib.SentenceEncoder) -> None:
    playground = minilm_views.show_minilm_views(minilm)
    playground.text.value = ""
    assert playground.view is None and "Type a text" in playground.notes.value
    assert playground.model_out.value == "" and playground.head_out.value == ""
    playground.layer.value = 2  # nothing to show: nothing breaks
    playground.text.value = "a ☃ " + "word " * 300
    assert "&#x27;☃&#x27;" not in playground.notes.value and "'☃'" in playground.notes.value
    assert "only the first 254" in playground.notes.value
    assert len(playground.view.tokens) == 256 and playground.query.value == 4
    (bundle,) = displayed(playground)
    assert bundle["text/plain"] == (
        "attention views of MiniLM, 256 tokens (run the notebook to use the playground)"
    )
    assert "application/vnd.jupyter.widget-view+json" in bundle
