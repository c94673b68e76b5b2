"""The char GPT's attention for the learner's own text: how it is read and run for the views.

The text is read as the sampler playground reads a prompt
(:func:`playgrounds.sampler.read_prompt`: characters the model has never seen are named
and left out, only the last ``max_len`` are read). :class:`CharGPTSource` runs the model
once per text and measures three shares per head (see ``attention_views``), chosen for
a causal model, which has no ``[CLS]``:

- ``prev``, the previous character;
- ``first``, the first character of the text, over queries 2…T (the first query can
  only attend to itself): the one position every query can see, where a head with
  nothing to look for can park its weight, as MiniLM's heads do on ``[CLS]``;
- ``word``, the earlier characters of the same word (letters and digits in a row;
  every other character is a word of its own), over queries with at least one.

The causal mask (``True`` = may attend: key ``j ≤`` query ``i``) is what the neuron view
shows. :func:`show_gpt_views` is the playground.

Notebook 10.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.course.char_data import CharTokenizer
from attnlib.course.playgrounds.attention_views import (
    ModelView,
    TextReading,
    key_share,
    previous_share,
    record_attention,
    same_word_share,
)
from attnlib.course.playgrounds.attention_widget import AttentionViewsPlayground
from attnlib.course.playgrounds.sampler import read_prompt, visible
from attnlib.gpt import GPT
from attnlib.masks import causal_mask

LEGEND = (
    "prev: the previous character; first: the first character (queries 2…T); "
    "word: the earlier characters of the same word"
)


def char_word_ids(text: str) -> list[int]:
    """The word each character belongs to: letters and digits in a row form one word."""
    ids: list[int] = []
    for i, ch in enumerate(text):
        joins = i > 0 and ch.isalnum() and text[i - 1].isalnum()
        ids.append(ids[-1] if joins else (ids[-1] + 1 if ids else 0))
    return ids


class CharGPTSource:
    """Notebook 10's char GPT and its vocabulary as the views' model."""

    name = "the char GPT"
    example = "The keys and the values "

    def __init__(self, model: GPT, vocab: CharTokenizer) -> None:
        self.model, self.vocab = model, vocab
        self.num_layers = model.config.num_layers
        self.num_heads = model.config.num_heads

    def read(self, typed: str) -> TextReading:
        """:func:`read_prompt`, then the last ``max_len`` characters, the ones the model reads."""
        prompt = read_prompt(typed, self.vocab, self.model.config.max_len)
        window = prompt.text[-self.model.config.max_len :] if prompt.readable else ""
        return TextReading(
            typed, tuple(visible(ch) for ch in window), tuple(self.vocab.encode(window)),
            prompt.notes,
        )  # fmt: skip

    def attention(self, layer: int) -> nn.Module:
        """Block ``layer``'s causal self-attention; it reads the block's first LayerNorm."""
        return self.model.blocks[layer - 1].attention

    def run(self, reading: TextReading) -> ModelView:
        """Run the model once on ``reading``; the summary names the character it expects next."""
        if not reading.readable:
            raise ValueError("reading has no characters to run the model on: check reading.notes")
        device = self.model.token_embedding.weight.device
        ids = torch.tensor([reading.ids], device=device)  # (1, T)
        modules = [self.attention(layer) for layer in range(1, self.num_layers + 1)]
        logits: list[torch.Tensor] = []  # forward() skips the weights: attention_weights()
        keep = self.model.head.register_forward_hook(lambda *io: logits.append(io[2][0, -1]))
        try:
            inputs, weights = record_attention(
                self.model, modules, lambda: self.model.attention_weights(ids)
            )  # (L, T, C), (L, H, T, T)
        finally:
            keep.remove()
        weights = weights.cpu()
        length = len(reading.ids)
        mask = causal_mask(length)  # (T, T), True = may attend
        text = self.vocab.decode(list(reading.ids))
        likeliest = visible(self.vocab.chars[int(logits[0].argmax())])
        return ModelView(
            reading=reading, weights=weights, inputs=inputs.cpu(), mask=mask,
            shares={
                "prev": previous_share(weights), "first": key_share(weights, 0, first_query=1),
                "word": same_word_share(weights, char_word_ids(text), mask),
            },
            legend=LEGEND, summary=f"the likeliest next character: {likeliest!r}",
        )  # fmt: skip


def show_gpt_views(
    model: GPT, vocab: CharTokenizer, text: str = "the keys and values of the past"
) -> AttentionViewsPlayground:
    """The attention-views playground for the char GPT, ready to display."""
    return AttentionViewsPlayground(CharGPTSource(model, vocab), text, layer=1, head=0)
