"""Notebook 11, Exercise 7: the usual wiring mistakes in a post-norm encoder layer, each a
learner's ``MyEncoderLayer`` built from right parts (:mod:`.encoder_layer` checks the answer; a
part's own mistakes are named by its exercise's check, which runs first).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnlib.checks._exercise import Mistake
from attnlib.checks.nb11_pretrained import attention, feed_forward, layer_norm


class _Layer(nn.Module):
    """The parts every mistake below keeps, right ones written as a learner would (a part's
    mistakes are named by its own exercise's check, which runs first)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
        super().__init__()
        self.self_attention = attention.RightAttention(d_model, num_heads)
        self.norm_1 = layer_norm.RightLayerNorm(d_model, eps)
        self.feed_forward = feed_forward.RightFeedForward(d_model, d_ff)
        self.norm_2 = layer_norm.RightLayerNorm(d_model, eps)

    def attend(self, x: Tensor, token_mask: Tensor) -> tuple[Tensor, Tensor]:
        return self.self_attention(x, token_mask)


def _pre_norm(layer: _Layer, x: Tensor, m: Tensor) -> tuple[Tensor, Tensor]:
    a, w = layer.attend(layer.norm_1(x), m)
    h = x + a
    return h + layer.feed_forward(layer.norm_2(h)), w


def _norm_inside(layer: _Layer, x: Tensor, m: Tensor) -> tuple[Tensor, Tensor]:
    a, w = layer.attend(x, m)
    h = x + layer.norm_1(a)
    return h + layer.norm_2(layer.feed_forward(h)), w


def _post(
    layer: _Layer, x: Tensor, m: Tensor, *, residual_1: bool = True, residual_2: str = "h",
    norms: tuple[str, str] = ("norm_1", "norm_2"), ffn_input: str = "h",
    normalise_first: bool = False, pair: bool = True, mask: str = "given",
    unpacked: str = "out, weights",
) -> object:  # fmt: skip
    """A post-norm layer, right or with one slip."""
    m = {"given": m, "inverted": ~m, "all True": torch.ones_like(m)}[mask]
    a, w = layer.attend(layer.norm_1(x) if normalise_first else x, m)
    a, w = (w, a) if unpacked == "weights, out" else (a, w)
    h = getattr(layer, norms[0])(x + a if residual_1 else a)
    f = layer.feed_forward(h if ffn_input == "h" else x)
    y = getattr(layer, norms[1])({"h": h, "x": x, "none": 0}[residual_2] + f)
    return (y, w) if pair else y


def _no_feed_forward(layer: _Layer, x: Tensor, m: Tensor) -> tuple[Tensor, Tensor]:
    a, w = layer.attend(x, m)
    return layer.norm_1(x + a), w  # the first block's result, returned as the layer's


def _slip(**slips: object) -> type:
    """A learner's MyEncoderLayer wired with one slip."""
    return type(
        "MyEncoderLayer", (_Layer,), {"forward": lambda layer, x, m: _post(layer, x, m, **slips)}
    )


class _FixedEps(_Layer):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
        super().__init__(d_model, num_heads, d_ff, 1e-5)  # eps left out

    def forward(self, x: Tensor, token_mask: Tensor) -> object:
        return _post(self, x, token_mask)


MISTAKES = (
    Mistake(
        "wired the layer pre-norm, x + f(LN(x))",
        "pre-norm is GPT's order (notebook 10); BERT normalises the sum, LN(x + f(x)), and "
        "MiniLM's weights were trained that way.",
        type("MyEncoderLayer", (_Layer,), {"forward": _pre_norm}),
    ),
    Mistake(
        "normalised the sublayer's output before adding the residual, x + LN(f(x))",
        "post-norm normalises the sum of the residual and the sublayer: the residual must be "
        "inside the norm.",
        type("MyEncoderLayer", (_Layer,), {"forward": _norm_inside}),
    ),
    Mistake(
        "left out the residual around the self-attention",
        "norm_1 gets x plus the attention's output: without x, the token's own vector is lost "
        "and only the mixture of the others goes on.",
        _slip(residual_1=False),
    ),
    Mistake(
        "left out the residual around the feed-forward network",
        "norm_2 gets h plus the network's output: each sublayer adds to what it was given.",
        _slip(residual_2="none"),
    ),
    Mistake(
        "left out the feed-forward sublayer: returned h, the attention block's result",
        "a layer is two blocks, one after the other: h goes on through the feed-forward "
        "network, its residual and norm_2, and that second sum is the layer's output.",
        type("MyEncoderLayer", (_Layer,), {"forward": _no_feed_forward}),
    ),
    Mistake(
        "swapped norm_1 and norm_2",
        "each norm has its own trained weight and bias: norm_1 follows the attention, norm_2 "
        "the feed-forward network.",
        _slip(norms=("norm_2", "norm_1")),
    ),
    Mistake(
        "used norm_1 for both sublayers",
        "the second sum is normalised by norm_2, whose trained weight and bias differ from "
        "norm_1's.",
        _slip(norms=("norm_1", "norm_1")),
    ),
    Mistake(
        "fed the feed-forward network x instead of h",
        "the second block works on the first block's result h, not on the layer's input: the "
        "two blocks run one after the other.",
        _slip(ffn_input="x"),
    ),
    Mistake(
        "added the layer's input x, not h, around the feed-forward network",
        "each residual adds its own sublayer's input: the second one is h, the first block's "
        "result.",
        _slip(residual_2="x"),
    ),
    Mistake(
        "normalised x before the attention as well as after",
        "post-norm normalises only the sums: the attention gets x itself (MiniLM's input "
        "embeddings are already normalised once, by the embedding LayerNorm).",
        _slip(normalise_first=True),
    ),
    Mistake(
        "passed the attention the mask inverted (True = padding, as torch's layers take it)",
        "token_mask is True for a real token, and the attention takes it so: inverted, every "
        "query attends to the padding only, and a sentence without padding to nothing at all.",
        _slip(mask="inverted"),
    ),
    Mistake(
        "passed the attention an all-True mask, so real tokens attend to the padding",
        "the layer's token_mask is what keeps the padding out of every real token's mixture: "
        "the attention needs it as it is, True for a real token.",
        _slip(mask="all True"),
    ),
    Mistake(
        "unpacked the attention's pair the wrong way round, as (weights, out)",
        "the attention returns (out, weights): out, of shape (B, T, C), joins the residual, and "
        "the weights, of shape (B, h, T, T), are returned with y.",
        _slip(unpacked="weights, out"),
    ),
    Mistake(
        "returned only y, not the pair (y, weights)",
        "forward returns the layer's output and the self-attention's weights, as attnlib's "
        "layers do.",
        _slip(pair=False),
    ),
    Mistake(
        "built the LayerNorms without the eps the layer was given",
        "MiniLM's eps is 1e-12; a LayerNorm left at another value (PyTorch's 1e-5) moves the "
        "model visibly (section 2). Pass the layer's eps to both norms.",
        type("MyEncoderLayer", (_FixedEps,), {}),
    ),
)
