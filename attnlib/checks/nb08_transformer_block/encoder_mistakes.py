"""Notebook 08, Exercise 4: the mistakes learners make building the paper's encoder layer.

Each is a class written as a learner would write it, with the parts the task names
(:class:`Parts`) and a ``forward`` that makes one mistake. The structural ones (names, sizes, a
shared module, dropout drawn in ``forward``) are in :mod:`.encoder_layer`.
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
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


def learner_layer(forward: Any, parts: type[nn.Module] = Parts) -> type[nn.Module]:
    return type("MyEncoderLayer", (parts,), {"forward": forward})


def wired(self: Any, x: Tensor, mask: Any, post: Any = None, attend_mask: Any = "same") -> Any:
    """The paper's layer, with the step ``post`` (the block, for each sublayer) replaced."""
    mask = mask if attend_mask == "same" else attend_mask
    a, w = self.self_attention(x, mask=mask)
    block = post or (lambda inp, out, norm: norm(inp + self.dropout(out)))
    h = block(x, a, self.norm_1)
    return block(h, self.feed_forward(h), self.norm_2), w


def _pre_norm(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(self.norm_1(x), mask=mask)
    h = x + self.dropout(a)
    return h + self.dropout(self.feed_forward(self.norm_2(h))), w


def _no_attention_residual(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(x, mask=mask)
    h = self.norm_1(self.dropout(a))
    return self.norm_2(h + self.dropout(self.feed_forward(h))), w


def _no_ffn_residual(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(x, mask=mask)
    h = self.norm_1(x + self.dropout(a))
    return self.norm_2(self.dropout(self.feed_forward(h))), w


def _norms(first: str, second: str) -> Any:
    def forward(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
        a, w = self.self_attention(x, mask=mask)
        h = getattr(self, first)(x + self.dropout(a))
        return getattr(self, second)(h + self.dropout(self.feed_forward(h))), w

    return forward


def _ffn_reads_x(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(x, mask=mask)
    h = self.norm_1(x + self.dropout(a))
    return self.norm_2(h + self.dropout(self.feed_forward(x))), w


def _ffn_skip_from_x(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(x, mask=mask)
    h = self.norm_1(x + self.dropout(a))
    return self.norm_2(x + self.dropout(self.feed_forward(h))), w


class _GeluParts(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, activation="gelu")


def _no_ffn_block(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(x, mask=mask)
    return self.norm_1(x + self.dropout(a)), w


def _no_weights(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(x, mask=mask, need_weights=False)
    h = self.norm_1(x + self.dropout(a))
    return self.norm_2(h + self.dropout(self.feed_forward(h))), w


def _normalised_twice(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(self.norm_1(x), mask=mask)
    h = self.norm_1(x + self.dropout(a))
    return self.norm_2(h + self.dropout(self.feed_forward(self.norm_2(h)))), w


def _ffn_first(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    h = self.norm_1(x + self.dropout(self.feed_forward(x)))
    a, w = self.self_attention(h, mask=mask)
    return self.norm_2(h + self.dropout(a)), w


def _y_only(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    return wired(self, x, mask)[0]


def _mask_as_key(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    return wired(self, x, mask, attend_mask=None) if mask is None else self.self_attention(x, mask)


def _no_dropout(inp: Tensor, out: Tensor, norm: nn.Module) -> Tensor:
    return norm(inp + out)


def _no_dropout_in(which: int) -> Any:
    """A learner's layer that forgets the dropout in block ``which`` (0 or 1) only."""

    def forward(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
        blocks = iter(range(2))
        return wired(
            self, x, mask, lambda i, o, n: n(i + (o if next(blocks) == which else self.dropout(o)))
        )

    return learner_layer(forward)


MISTAKES = (
    Mistake(
        "wired it pre-norm, x + f(LN(x)): the paper's layer is post-norm",
        "in the paper's layer (Add & Norm) the LayerNorm comes after each sublayer, on the sum "
        "LN(x + f(x)); pre-norm, section 5's layer, normalises the sublayer's input instead.",
        learner_layer(_pre_norm),
    ),
    Mistake(
        "left out the residual around the self-attention",
        "norm_1 must normalise x plus the attention's output: without x the layer loses the "
        "identity path of section 2, and each position forgets its own vector.",
        learner_layer(_no_attention_residual),
    ),
    Mistake(
        "left out the residual around the feed-forward network",
        "norm_2 must normalise h plus the FFN's output: without h, the second block throws "
        "away everything the attention block computed except through the FFN.",
        learner_layer(_no_ffn_residual),
    ),
    Mistake(
        "left out the LayerNorms",
        "each residual sum goes through its LayerNorm (Add & Norm): without them the sums grow "
        "from layer to layer.",
        learner_layer(
            lambda self, x, mask=None: wired(self, x, mask, lambda i, o, n: i + self.dropout(o))
        ),
    ),
    Mistake(
        "put norm_1 and norm_2 in each other's place",
        "norm_1 closes the attention block and norm_2 the feed-forward block; the check gives "
        "them different γ and β, so their order shows.",
        learner_layer(_norms("norm_2", "norm_1")),
    ),
    Mistake(
        "used norm_1 for both blocks",
        "each block has its own LayerNorm with its own γ and β: norm_2 closes the feed-forward "
        "block.",
        learner_layer(_norms("norm_1", "norm_1")),
    ),
    Mistake(
        "did not pass the padding mask to the self-attention",
        "without it the real tokens attend to the padding too, and their outputs change with "
        "whatever the pad vectors hold.",
        learner_layer(lambda self, x, mask=None: wired(self, x, mask, attend_mask=None)),
    ),
    Mistake(
        "passed the mask as the self-attention's second argument, which is its key",
        "MultiHeadAttention's arguments come in the order query, key, value, mask: in second "
        "place the mask is taken for the key, and no mask reaches the attention.",
        learner_layer(_mask_as_key),
    ),
    Mistake(
        "inverted the padding mask",
        "in this course True means 'may attend': the mask marks the real tokens, so it is "
        "passed to attention as it is.",
        learner_layer(
            lambda self, x, mask=None: wired(
                self, x, mask, attend_mask=None if mask is None else ~mask
            )
        ),
    ),
    Mistake(
        "gave the feed-forward network the layer's input x instead of h",
        "the two blocks are in a row: the FFN transforms what the attention block returned, "
        "so that what each position read from the others reaches it.",
        learner_layer(_ffn_reads_x),
    ),
    Mistake(
        "added the layer's input x, not h, on the feed-forward block's skip path",
        "each block adds its own input back: the feed-forward block's input is h, what the "
        "attention block returned; adding x skips the attention block's result on the path.",
        learner_layer(_ffn_skip_from_x),
    ),
    Mistake(
        "gave the feed-forward network GELU instead of the paper's ReLU",
        "the paper's FFN is max(0, xW₁ + b₁)W₂ + b₂, attnlib.FeedForward's default: GELU is "
        "BERT's and GPT's choice (section 1), and gives other outputs with the same weights.",
        learner_layer(wired, _GeluParts),
    ),
    Mistake(
        "normalised each sublayer's output and then added the residual, x + LN(f(x))",
        "Add & Norm adds first and normalises the sum, LN(x + f(x)); normalising the "
        "sublayer's output alone leaves the sum, and the layer's output, unnormalised.",
        learner_layer(
            lambda self, x, mask=None: wired(self, x, mask, lambda i, o, n: i + n(self.dropout(o)))
        ),
    ),
    Mistake(
        "normalised each block's input and added the sublayer's output, LN(x) + f(x)",
        "Add & Norm adds first and normalises the sum, LN(x + f(x)): the sublayer's output goes "
        "through the norm too.",
        learner_layer(
            lambda self, x, mask=None: wired(self, x, mask, lambda i, o, n: n(i) + self.dropout(o))
        ),
    ),
    Mistake(
        "gave each sublayer the normalised input and normalised the sum as well",
        "that mixes the two wirings: post-norm's sublayer reads the block's input as it is, and "
        "only the sum goes through the LayerNorm.",
        learner_layer(_normalised_twice),
    ),
    Mistake(
        "put the feed-forward block before the self-attention block",
        "the paper's layer first lets the positions read each other (self-attention), then "
        "transforms each one (the FFN) on what it read.",
        learner_layer(_ffn_first),
    ),
    Mistake(
        "applied dropout to the residual sum instead of the sublayer's output",
        "the paper drops entries of each sublayer's output before the addition; dropping "
        "entries of the sum cuts the skip path as well.",
        learner_layer(
            lambda self, x, mask=None: wired(self, x, mask, lambda i, o, n: n(self.dropout(i + o)))
        ),
    ),
    Mistake(
        "applied dropout after the LayerNorm",
        "dropout acts on the sublayer's output before the addition; after the norm it hits "
        "the skip path and undoes the normalisation.",
        learner_layer(
            lambda self, x, mask=None: wired(self, x, mask, lambda i, o, n: self.dropout(n(i + o)))
        ),
    ),
    Mistake(
        "left dropout out",
        "the paper applies dropout to the output of each sublayer (P_drop = 0.1 in the base "
        "model); in training mode the check's dropout drops a fixed third of the entries.",
        learner_layer(lambda self, x, mask=None: wired(self, x, mask, _no_dropout)),
    ),
    Mistake(
        "left the self-attention block without dropout",
        "the paper applies dropout to the output of every sublayer, the attention's too: in "
        "training the first block drops entries of what the attention returns before adding x.",
        _no_dropout_in(0),
    ),
    Mistake(
        "left the feed-forward block without dropout",
        "the paper applies dropout to the output of every sublayer, the FFN's too: in training "
        "the second block drops entries of what the FFN returns before adding h.",
        _no_dropout_in(1),
    ),
    Mistake(
        "left out the feed-forward block: returned what the attention block gives",
        "an encoder layer is two blocks in a row: attention mixes the positions, then the FFN "
        "transforms each one (section 1): without it the layer is close to linear in the values.",
        learner_layer(_no_ffn_block),
    ),
    Mistake(
        "asked the self-attention for no weights (need_weights=False)",
        "the layer returns the self-attention's weights, (B, H, S, S): with need_weights=False "
        "attention hands back None instead.",
        learner_layer(_no_weights),
    ),
    Mistake(
        "returned only y, not (y, weights)",
        "forward returns the pair: the layer's output and the self-attention's weights.",
        learner_layer(_y_only),
    ),
)
