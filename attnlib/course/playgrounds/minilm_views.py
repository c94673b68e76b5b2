"""MiniLM's attention for the learner's own text: how it is read and run for the views.

:func:`read_text` turns typed text into WordPiece pieces and says what it had to change;
:class:`MiniLMSource` runs the encoder once per text (:func:`attention_views.record_attention`)
and measures three shares per head (see ``attention_views``): ``prev``, the previous
token; ``CLS``, the first token ``[CLS]``, where most heads of layers 2–6 park their
weight; ``word``, the other pieces of the same word (a piece that does not start with
``##`` opens a word, ``[CLS]``, ``[SEP]`` and punctuation are words of their own).
:func:`show_minilm_views` is the playground.

Notebook 11.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.course.playgrounds.attention_views import (
    ModelView,
    TextReading,
    key_share,
    previous_share,
    record_attention,
    same_word_share,
)
from attnlib.course.playgrounds.attention_widget import AttentionViewsPlayground
from attnlib.formats.wordpiece import UNKNOWN, pre_tokenize
from attnlib.sentence_encoder import SentenceEncoder

LEGEND = "prev: the previous token; CLS: [CLS]; word: the other pieces of the same word"
FOX = "The quick brown fox jumps over the lazy dog."


def _unknown(encoder: SentenceEncoder, text: str) -> tuple[list[str], list[str]]:
    """Characters with no WordPiece piece, and words that became ``[UNK]`` for another reason."""
    tokenizer = encoder.tokenizer
    chars: set[str] = set()
    words = []
    for word in pre_tokenize(text, tokenizer.lowercase):
        if tokenizer.split_word(word) != [UNKNOWN]:
            continue
        bad = {ch for ch in word if tokenizer.split_word(ch) == [UNKNOWN]}
        chars |= bad
        if not bad:
            words.append(word)
    return sorted(chars), words


def read_text(typed: str, encoder: SentenceEncoder) -> TextReading:
    """The pieces of ``typed`` MiniLM reads (``[CLS]`` … ``[SEP]``), and a note for each change.

    Never raises on what a learner types: an empty text, characters WordPiece has no
    piece for (named: their words become ``[UNK]``) and a text longer than the model's
    ``max_len`` tokens (cropped to its first ``max_len - 2`` pieces) each give a note. A
    text with no pieces at all gives no ids (nothing to run).
    """
    if not isinstance(typed, str):
        raise TypeError(f"typed must be a str, got {type(typed).__name__}")
    tokenizer = encoder.tokenizer
    pieces = tokenizer.tokenize(typed)
    notes = []
    if not typed.strip():
        notes.append("Type a text, then press Enter.")
    elif not pieces:
        notes.append("Nothing in this text is a word MiniLM can read: type some words.")
    chars, words = _unknown(encoder, typed)
    if chars:
        named = ", ".join(repr(ch) for ch in chars)
        notes.append(f"WordPiece has no piece for {named}: each word with one became [UNK].")
    if words:
        named = ", ".join(repr(w[:20] + "…" if len(w) > 20 else w) for w in words)
        notes.append(f"Too long for WordPiece, so read as [UNK]: {named}.")
    room = tokenizer.max_len - 2
    if len(pieces) > room:
        notes.append(
            f"MiniLM reads at most {tokenizer.max_len} tokens, [CLS] and [SEP] included: only "
            f"the first {room} of your {len(pieces)} pieces are used (up to {pieces[room - 1]!r})."
        )
    if not pieces:
        return TextReading(typed, (), (), tuple(notes))
    ids = tokenizer.encode(typed)
    return TextReading(typed, tuple(tokenizer.ids_to_pieces(ids)), tuple(ids), tuple(notes))


def word_ids(pieces: tuple[str, ...] | list[str]) -> list[int]:
    """The word each WordPiece piece belongs to: a ``##`` piece continues the word before it."""
    ids: list[int] = []
    for piece in pieces:
        ids.append(ids[-1] if piece.startswith("##") and ids else (ids[-1] + 1 if ids else 0))
    return ids


class MiniLMSource:
    """all-MiniLM-L6-v2 (an :class:`attnlib.SentenceEncoder`) as the views' model."""

    name = "MiniLM"
    example = "The bears by the river ate the honey."

    def __init__(self, encoder: SentenceEncoder) -> None:
        self.encoder = encoder
        self.num_layers = encoder.config.num_layers
        self.num_heads = encoder.config.num_heads

    def read(self, typed: str) -> TextReading:
        """:func:`read_text`."""
        return read_text(typed, self.encoder)

    def attention(self, layer: int) -> nn.Module:
        """Layer ``layer``'s self-attention; its input is the layer's input (post-norm BERT)."""
        return self.encoder.bert.encoder.layers[layer - 1].self_attention

    def run(self, reading: TextReading) -> ModelView:
        """Run the encoder once on ``reading`` (one unpadded text: every key may be attended)."""
        if not reading.readable:
            raise ValueError("reading has no pieces to run the model on: check reading.notes")
        device = next(self.encoder.parameters()).device
        ids = torch.tensor([reading.ids], device=device)  # (1, T)
        modules = [self.attention(layer) for layer in range(1, self.num_layers + 1)]
        inputs, weights = record_attention(
            self.encoder, modules, lambda: self.encoder(ids, torch.ones_like(ids, dtype=torch.bool))
        )  # (L, T, C), (L, H, T, T)
        weights = weights.cpu()
        length = len(reading.ids)
        return ModelView(
            reading=reading, weights=weights, inputs=inputs.cpu(),
            mask=torch.ones(length, length, dtype=torch.bool),
            shares={
                "prev": previous_share(weights), "CLS": key_share(weights, 0),
                "word": same_word_share(weights, word_ids(reading.tokens)),
            },
            legend=LEGEND,
        )  # fmt: skip


def show_minilm_views(encoder: SentenceEncoder, text: str = FOX) -> AttentionViewsPlayground:
    """The attention-views playground for MiniLM, ready to display: layer 1, head 2 chosen."""
    return AttentionViewsPlayground(MiniLMSource(encoder), text, layer=1, head=2, query=4)
