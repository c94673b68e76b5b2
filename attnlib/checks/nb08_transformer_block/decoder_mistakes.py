"""Notebook 08, Exercise 5: the mistakes learners make building the paper's decoder layer.

Each is a class written as a learner would write it, with the parts the task names
(:class:`Parts`) and a ``forward`` that makes one mistake, most of them through :func:`wired`
(the paper's layer with the steps its keywords name done otherwise); :func:`with_steps` makes a
learner's layer class of it, and :func:`dropout_left_out_of` one that forgets the dropout in one
block. The structural ones (names, sizes, a shared module, dropout drawn in ``forward``) are in
:mod:`.decoder_layer`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

import attnlib
from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor


class Parts(nn.Module):
    """The parts the task names, built as it asks; the mistakes differ in ``forward``."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


def learner_layer(forward: Any, parts: type[nn.Module] = Parts) -> type[nn.Module]:
    return type("MyDecoderLayer", (parts,), {"forward": forward})


def _mask(kind: str, t: int, s: int, memory_mask: Any) -> Any:
    causal = attnlib.causal_mask(t)
    return {
        "causal": causal,
        "inverted": ~causal,
        "none": None,
        "strict": causal & ~torch.eye(t, dtype=torch.bool),
        "source length": attnlib.causal_mask(s),
        "causal and memory": (
            attnlib.causal_mask(t, s)
            if memory_mask is None
            else attnlib.causal_mask(t, s) & memory_mask
        ),
        "memory": memory_mask,
        "inverted memory": None if memory_mask is None else ~memory_mask,
    }[kind]


def wired(
    self: Any,
    y: Tensor,
    memory: Tensor,
    memory_mask: Any = None,
    *,
    self_mask: str = "causal",
    cross: tuple[str, str] = ("h1", "memory"),  # where the queries and the keys/values come from
    cross_mask: str = "memory",
    block: Any = None,
    norms: tuple[str, str, str] = ("norm_1", "norm_2", "norm_3"),
    cross_module: str = "cross_attention",
    ffn_reads: str = "h2",
    skip_ffn: bool = False,
    need_weights: bool = True,
) -> Any:
    """The paper's decoder layer, with the steps the keywords name done otherwise."""
    t, s = y.shape[1], memory.shape[1]
    n1, n2, n3 = (getattr(self, name) for name in norms)
    add_norm = block or (lambda inp, out, norm: norm(inp + self.dropout(out)))
    mask = _mask(self_mask, t, s, memory_mask)
    a, w_self = self.self_attention(y, mask=mask, need_weights=need_weights)
    h1 = add_norm(y, a, n1)
    source = {"h1": h1, "memory": memory, "y": y}
    mask = _mask(cross_mask, t, s, memory_mask)
    attend = getattr(self, cross_module)
    c, w_cross = attend(source[cross[0]], source[cross[1]], mask=mask, need_weights=need_weights)
    h2 = add_norm(h1, c, n2)
    if skip_ffn:
        return h2, w_self, w_cross
    inner = {"h2": h2, "h1": h1}[ffn_reads]
    return add_norm(h2, self.feed_forward(inner), n3), w_self, w_cross


def with_steps(**how: Any) -> type[nn.Module]:
    """A learner's layer that does the steps ``how`` names otherwise."""
    return learner_layer(
        lambda self, y, memory, memory_mask=None: wired(self, y, memory, memory_mask, **how)
    )


def dropout_left_out_of(which: int) -> type[nn.Module]:
    """A learner's layer that forgets the dropout in block ``which`` (0, 1 or 2) only."""

    def block(self: Any) -> Any:
        count = iter(range(3))
        return lambda i, o, n: n(i + (o if next(count) == which else self.dropout(o)))

    return learner_layer(
        lambda self, y, memory, memory_mask=None: wired(
            self, y, memory, memory_mask, block=block(self)
        )
    )


Tensor = torch.Tensor


def _pre_norm(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    a, w_self = self.self_attention(self.norm_1(y), mask=attnlib.causal_mask(y.shape[1]))
    h1 = y + self.dropout(a)
    c, w_cross = self.cross_attention(self.norm_2(h1), memory, mask=memory_mask)
    h2 = h1 + self.dropout(c)
    return h2 + self.dropout(self.feed_forward(self.norm_3(h2))), w_self, w_cross


def _no_residual(which: int) -> Any:
    def add_norm(self: Any) -> Any:
        count = iter(range(3))
        return lambda inp, out, norm: norm(
            self.dropout(out) if next(count) == which else inp + self.dropout(out)
        )

    return learner_layer(
        lambda self, y, memory, memory_mask=None: wired(
            self, y, memory, memory_mask, block=add_norm(self)
        )
    )


def _blocks(block: Any) -> type[nn.Module]:
    """A learner's layer whose three blocks each do ``block(self, inp, out, norm)``."""
    return learner_layer(
        lambda self, y, memory, memory_mask=None: wired(
            self, y, memory, memory_mask, block=lambda i, o, n: block(self, i, o, n)
        )
    )


def _cross_first(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    c, w_cross = self.cross_attention(y, memory, mask=memory_mask)
    h1 = self.norm_1(y + self.dropout(c))
    a, w_self = self.self_attention(h1, mask=attnlib.causal_mask(y.shape[1]))
    h2 = self.norm_2(h1 + self.dropout(a))
    return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), w_self, w_cross


def _cross_skip_from_y(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
    h1 = self.norm_1(y + self.dropout(a))
    c, w_cross = self.cross_attention(h1, memory, mask=memory_mask)
    h2 = self.norm_2(y + self.dropout(c))
    return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), w_self, w_cross


MISTAKES = (
    Mistake(
        "wired it pre-norm, y + f(LN(y)): the paper's layer is post-norm",
        "in the paper's layer (Add & Norm) the LayerNorm comes after each sublayer, on the sum "
        "LN(y + f(y)); pre-norm, section 6's layer, normalises the sublayer's input instead.",
        learner_layer(_pre_norm),
    ),
    Mistake(
        "inverted the causal mask",
        "attnlib.causal_mask(T) is True on and below the diagonal, where a position may attend "
        "(this course's polarity): inverted, each position reads only the positions after it.",
        with_steps(self_mask="inverted"),
    ),
    Mistake(
        "gave the self-attention no causal mask",
        "without it each target position reads the positions after it, which do not exist yet "
        "when the model generates: the layer must not depend on any later position.",
        with_steps(self_mask="none"),
    ),
    Mistake(
        "hid each position from itself too (a mask strictly below the diagonal)",
        "causal means no *later* position: a position may read itself, and the first one has "
        "nothing else to read.",
        with_steps(self_mask="strict"),
    ),
    Mistake(
        "built the causal mask for the source's length instead of the target's",
        "the self-attention's scores are (T, T), target against target: the mask covers the T "
        "target positions, whatever the source's length S.",
        with_steps(self_mask="source length"),
    ),
    Mistake(
        "took the cross-attention's keys and values from the decoder (h1), not from memory",
        "cross-attention is where the target reads the source: its queries come from the "
        "decoder, its keys and values from the encoder's output, memory.",
        with_steps(cross=("h1", "h1")),
    ),
    Mistake(
        "took the cross-attention's keys and values from the decoder and dropped the memory mask",
        "cross-attention's keys and values are the encoder's output, memory (with its padding "
        "mask): attending over h1 again is a second self-attention, which never reads the "
        "source.",
        with_steps(cross=("h1", "h1"), cross_mask="none"),
    ),
    Mistake(
        "swapped the cross-attention's roles: queries from memory, keys and values from h1",
        "each target position asks the question (the query) and the source answers (keys and "
        "values): one output per target position, (B, T, C), not one per source position.",
        with_steps(cross=("memory", "h1")),
    ),
    Mistake(
        "gave the cross-attention the layer's input y as its queries, not h1",
        "the blocks are in a row: the cross-attention's queries are what the self-attention "
        "block returned, h1, and its residual adds h1 too.",
        with_steps(cross=("y", "memory")),
    ),
    Mistake(
        "did not pass the memory mask to the cross-attention",
        "without it the target reads the source's padding too, and its outputs change with "
        "whatever the pad vectors hold.",
        with_steps(cross_mask="none"),
    ),
    Mistake(
        "inverted the memory mask",
        "in this course True means 'may attend': the padding mask marks the real source tokens, "
        "so it is passed to attention as it is.",
        with_steps(cross_mask="inverted memory"),
    ),
    Mistake(
        "gave the memory mask to the self-attention and the causal mask to the cross-attention",
        "the causal mask is about the target (T × T, self-attention); the memory mask is about "
        "the source's padding (keys of cross-attention).",
        with_steps(self_mask="memory", cross_mask="causal"),
    ),
    Mistake(
        "gave the cross-attention the causal mask instead of the memory mask",
        "the cross-attention's keys are the source's positions: what it must hide is the "
        "source's padding (memory_mask); which target position may read which source position "
        "is not restricted.",
        with_steps(cross_mask="causal"),
    ),
    Mistake(
        "also gave the cross-attention a causal mask, on top of the memory mask",
        "causality is about the target: no target position may read a later *target* position. "
        "The source is all there from the start, so every target position may read every real "
        "source token; only its padding is hidden.",
        with_steps(cross_mask="causal and memory"),
    ),
    Mistake(
        "left out the residual around the self-attention",
        "norm_1 must normalise y plus the self-attention's output: without y each position "
        "loses its own vector.",
        _no_residual(0),
    ),
    Mistake(
        "left out the residual around the cross-attention",
        "norm_2 must normalise h1 plus the cross-attention's output: without h1 everything the "
        "target computed so far is replaced by what it read from the source.",
        _no_residual(1),
    ),
    Mistake(
        "left out the residual around the feed-forward network",
        "norm_3 must normalise h2 plus the FFN's output.",
        _no_residual(2),
    ),
    Mistake(
        "normalised each block's input and added the sublayer's output, LN(y) + f(y)",
        "Add & Norm adds first and normalises the sum, LN(y + f(y)): the sublayer's output goes "
        "through the norm too.",
        _blocks(lambda self, i, o, n: n(i) + self.dropout(o)),
    ),
    Mistake(
        "put the cross-attention block before the self-attention block",
        "the paper's decoder layer first lets the target read its own past (masked "
        "self-attention), then lets what it computed read the source: cross-attention's queries "
        "are the self-attention block's output.",
        learner_layer(_cross_first),
    ),
    Mistake(
        "added y, not h1, on the cross-attention block's skip path",
        "each block adds its own input back: the cross-attention block's input is h1, what the "
        "self-attention block returned.",
        learner_layer(_cross_skip_from_y),
    ),
    Mistake(
        "left out the LayerNorms",
        "each residual sum goes through its LayerNorm (Add & Norm): without them the sums grow "
        "from layer to layer.",
        _blocks(lambda self, i, o, n: i + self.dropout(o)),
    ),
    Mistake(
        "put the norms in the wrong order",
        "norm_1 closes the self-attention block, norm_2 the cross-attention block, norm_3 the "
        "FFN block; the check gives them different γ and β, so their order shows.",
        with_steps(norms=("norm_3", "norm_2", "norm_1")),
    ),
    Mistake(
        "used norm_1 for every block",
        "each block has its own LayerNorm with its own γ and β.",
        with_steps(norms=("norm_1", "norm_1", "norm_1")),
    ),
    Mistake(
        "used the self-attention module for the cross-attention too",
        "self-attention and cross-attention are two modules with their own weights: "
        "cross_attention is the one that reads memory.",
        with_steps(cross_module="self_attention"),
    ),
    Mistake(
        "gave the feed-forward network h1 instead of h2",
        "the blocks are in a row: the FFN transforms what the cross-attention block returned, "
        "so that what the target read from the source reaches it.",
        with_steps(ffn_reads="h1"),
    ),
    Mistake(
        "applied dropout to the residual sum instead of the sublayer's output",
        "the paper drops entries of each sublayer's output before the addition; dropping "
        "entries of the sum cuts the skip path as well.",
        _blocks(lambda self, i, o, n: n(self.dropout(i + o))),
    ),
    Mistake(
        "applied dropout after the LayerNorm",
        "dropout acts on the sublayer's output before the addition; after the norm it hits "
        "the skip path and undoes the normalisation.",
        _blocks(lambda self, i, o, n: self.dropout(n(i + o))),
    ),
    Mistake(
        "left dropout out",
        "the paper applies dropout to the output of each sublayer (P_drop = 0.1 in the base "
        "model); in training mode the check's dropout drops a fixed third of the entries.",
        _blocks(lambda self, i, o, n: n(i + o)),
    ),
    Mistake(
        "left the self-attention block without dropout",
        "the paper applies dropout to the output of every sublayer: in training the first block "
        "drops entries of what the self-attention returns before adding y.",
        dropout_left_out_of(0),
    ),
    Mistake(
        "left the cross-attention block without dropout",
        "the paper applies dropout to the output of every sublayer: in training the second "
        "block drops entries of what the cross-attention read from memory before adding h1.",
        dropout_left_out_of(1),
    ),
    Mistake(
        "left the feed-forward block without dropout",
        "the paper applies dropout to the output of every sublayer: in training the third block "
        "drops entries of what the FFN returns before adding h2.",
        dropout_left_out_of(2),
    ),
    Mistake(
        "left out the feed-forward block: returned what the cross-attention block gives",
        "a decoder layer is three blocks in a row; the last, the FFN, transforms each position "
        "after it has read the source.",
        with_steps(skip_ffn=True),
    ),
    Mistake(
        "asked the attentions for no weights (need_weights=False)",
        "the layer returns both attentions' weights: with need_weights=False attention hands "
        "back None instead.",
        with_steps(need_weights=False),
    ),
    Mistake(
        "returned only z, not (z, self_weights, cross_weights)",
        "forward returns three things: the layer's output and the weights of both attentions.",
        learner_layer(
            lambda self, y, memory, memory_mask=None: wired(self, y, memory, memory_mask)[0]
        ),
    ),
    Mistake(
        "returned the two attentions' weights in the other order",
        "the self-attention's weights, (B, H, T, T), come first, the cross-attention's, "
        "(B, H, T, S), second.",
        learner_layer(
            lambda self, y, memory, memory_mask=None: (
                lambda z, w_self, w_cross: (z, w_cross, w_self)
            )(*wired(self, y, memory, memory_mask))
        ),
    ),
)
