"""Head patterns and contextual vectors: hand-worked matrices, then the real model's known facts."""

from __future__ import annotations

import pytest
import torch
from matplotlib.figure import Figure

from attnlib import SentenceEncoder
from attnlib.course import inspection, plots, sliders
from attnlib.course.inspection import layerwise_cosine, previous_token_share

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Attention lets every token look at every other token.",
    "She sold the old piano to a collector in Vienna.",
]


def test_previous_token_share_hand_examples() -> None:
    shifted = torch.tensor(  # query i looks at key i-1 (query 0 at itself)
        [[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
    )
    assert previous_token_share(shifted).item() == 1.0
    assert previous_token_share(torch.full((5, 5), 0.2)).item() == pytest.approx(0.2)
    assert previous_token_share(torch.eye(3)).item() == 0.0
    batch = torch.stack([shifted, torch.full((4, 4), 0.25)])  # (2, 4, 4)
    assert previous_token_share(batch).tolist() == pytest.approx([1.0, 0.25])


def test_previous_token_share_bad_input() -> None:
    with pytest.raises(ValueError, match=r"\(\.\.\., T, T\)"):
        previous_token_share(torch.ones(2, 3))
    with pytest.raises(ValueError, match="T >= 2"):
        previous_token_share(torch.ones(1, 1))


def test_layer_1_head_2_is_a_previous_token_head(minilm: SentenceEncoder) -> None:
    summary = inspection.summarize_heads(minilm, SENTENCES)
    assert summary.previous.shape == summary.first.shape == (6, 12)
    assert summary.previous[0, 2] > 0.95
    assert int(summary.previous.argmax()) == 2  # flat index: layer 1 (row 0), head 2
    assert summary.first[1:].mean() > 0.5  # in layers 2-6 most weight goes to [CLS]


def test_head_view(minilm: SentenceEncoder) -> None:
    view = sliders.head_view(minilm, SENTENCES[0], layer=1, head=2)
    assert view.tokens[0] == "[CLS]" and view.tokens[-1] == "[SEP]"
    assert view.weights.shape == (len(view.tokens), len(view.tokens))
    assert view.previous_token_share > 0.95
    torch.testing.assert_close(view.weights.sum(-1), torch.ones(len(view.tokens)))
    assert isinstance(sliders.show_head_view(minilm, SENTENCES[0], 3, 7), Figure)
    with pytest.raises(ValueError, match="layer"):
        sliders.head_view(minilm, SENTENCES[0], layer=0, head=0)
    with pytest.raises(ValueError, match="head"):
        sliders.head_view(minilm, SENTENCES[0], layer=1, head=12)


def test_contextual_vectors_separate_the_verb_from_the_noun(minilm: SentenceEncoder) -> None:
    noun = inspection.contextual_vectors(minilm, "I love bears", "bears")
    verb = inspection.contextual_vectors(minilm, "She bears the pain", "bears")
    other_noun = inspection.contextual_vectors(
        minilm, "Grizzly bears live in the mountains.", "bears"
    )
    assert noun.shape == (7, 384)
    noun_verb = layerwise_cosine(noun, verb)
    noun_noun = layerwise_cosine(noun, other_noun)
    assert noun_verb[0] > 0.95  # the embedding layer knows the word, not its sense
    assert noun_verb[-1] < 0.7 < 0.85 < noun_noun[-1]


def test_contextual_vectors_average_a_split_word(minilm: SentenceEncoder) -> None:
    sentence = "Tokenization matters."
    pieces = minilm.tokenizer.tokenize("tokenization")
    assert len(pieces) == 2
    input_ids, real = minilm.tokenize([sentence])
    with torch.no_grad():
        hidden = minilm(input_ids, real).hidden_states[:, 0]
    expected = hidden[:, 1:3].mean(dim=1)  # after [CLS]
    torch.testing.assert_close(
        inspection.contextual_vectors(minilm, sentence, "Tokenization"), expected
    )
    with pytest.raises(ValueError, match="is not in the tokens"):
        inspection.contextual_vectors(minilm, sentence, "bears")
    with pytest.raises(ValueError, match="no WordPiece pieces"):
        inspection.contextual_vectors(minilm, sentence, "  ")


def test_layerwise_cosine_bad_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(L \+ 1, C\)"):
        layerwise_cosine(torch.ones(3, 4), torch.ones(2, 4))


def test_plot_attention_lines() -> None:
    weights = torch.tensor([[1.0, 0.0, 0.0], [0.9, 0.1, 0.0], [0.0, 0.01, 0.99]])
    ax = plots.plot_attention_lines(weights, ["a", "b", "c"], title="lines")
    # One line per weight >= min_weight: 1.0, 0.9, 0.1, 0.99 (0.01 is too faint to draw).
    assert len(ax.lines) == 4 and ax.get_title() == "lines" and ax.get_ylabel()
    with pytest.raises(ValueError, match="tokens has 2 entries"):
        plots.plot_attention_lines(weights, ["a", "b"], title="x")
    with pytest.raises(ValueError, match=r"\(T, T\)"):
        plots.plot_attention_lines(torch.ones(2, 3), ["a", "b"], title="x")
