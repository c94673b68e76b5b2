r"""The usual mistakes in notebook 11's capstone modules, recomputed from a learner's weights.

A learner builds MiniLM's encoder from four modules of their own: a LayerNorm, a
multi-head attention with a padding mask, a GELU feed-forward network and the post-norm
layer that wires them. When one of them departs from the reference, the checkers in
:mod:`attnlib.checks.own_encoder` recompute what that module would give with each
mistake below (from the learner's own weights, which the loader made the reference's)
and name the one the learner's output matches.

Each ``*_variants`` function returns ``{cause: output}``. An output may hold NaN where a
mistake makes the result undefined (a query whose every key is masked); there any value
of the learner's counts as a match.

Notebook 11.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

Tensor = torch.Tensor

EPS_OUTSIDE_SQRT = (
    "epsilon is added outside the square root: (x - mean) / (sqrt(var) + eps) instead of "
    "(x - mean) / sqrt(var + eps)"
)
UNBIASED_VARIANCE = (
    "the variance divides by C - 1 (torch.var's default, unbiased=True); LayerNorm uses the "
    "population variance, the mean of the squared deviations"
)
NO_AFFINE = "the learned scale and shift are not applied: multiply by self.weight, add self.bias"

NO_SCALE = "the scores are not divided by sqrt(d_k)"
SCALED_BY_D_MODEL = (
    "the scores are divided by sqrt(d_model) instead of sqrt(d_k), the width of one head "
    "(d_model / num_heads)"
)
MASK_INVERTED = (
    "the padding mask is inverted: token_mask is True for a real token, which may be "
    "attended; mask out the keys where it is False"
)
MASK_IGNORED = "the padding mask is not applied: real tokens attend to the padding"
HEADS_SPLIT_WRONG = (
    "the heads are split in the wrong order: view(B, num_heads, T, d_k) cuts across tokens; "
    "split with view(B, T, num_heads, d_k).transpose(1, 2)"
)
HEADS_MERGED_WRONG = (
    "the heads are merged in the wrong order: reshape (B, num_heads, T, d_k) to (B, T, C) only "
    "after transpose(1, 2)"
)
SOFTMAX_OVER_QUERIES = (
    "the softmax runs over the queries (dim=-2); each query's weights over the keys (dim=-1) "
    "must sum to 1"
)

TANH_GELU = (
    "the GELU is the tanh approximation; BERT and MiniLM use the exact one, "
    "x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2)))"
)
RELU_NOT_GELU = "the activation is ReLU; MiniLM's feed-forward network uses GELU"
NO_ACTIVATION = "there is no activation between linear1 and linear2"

PRE_NORM = "the layer is pre-norm, x + f(LN(x)); BERT's layer is post-norm, LN(x + f(x))"
NORM_BEFORE_RESIDUAL = (
    "the residual is added after the norm, x + LN(f(x)); post-norm normalises the sum, LN(x + f(x))"
)
NO_ATTENTION_RESIDUAL = "the self-attention has no residual: norm_1 must get x + attention"
NO_FEED_FORWARD_RESIDUAL = "the feed-forward network has no residual: norm_2 must get h + FFN(h)"
NORMS_SWAPPED = "norm_1 and norm_2 are swapped: norm_1 follows the attention, norm_2 the FFN"


def layer_norm_variants(weight: Tensor, bias: Tensor, eps: float, x: Tensor) -> dict[str, Tensor]:
    """A LayerNorm's output with each usual mistake.

    Shapes:
        weight, bias: ``(C,)``; x: ``(..., C)``; each output ``(..., C)``.
    """
    centred = x - x.mean(dim=-1, keepdim=True)  # (..., C)
    variance = centred.pow(2).mean(dim=-1, keepdim=True)  # (..., 1), population
    unbiased = centred.pow(2).sum(dim=-1, keepdim=True) / (x.shape[-1] - 1)
    return {
        EPS_OUTSIDE_SQRT: centred / (variance.sqrt() + eps) * weight + bias,
        UNBIASED_VARIANCE: centred / (unbiased + eps).sqrt() * weight + bias,
        NO_AFFINE: centred / (variance + eps).sqrt(),
    }


def attention(
    module: nn.Module,
    x: Tensor,
    token_mask: Tensor,
    num_heads: int,
    *,
    scale: str = "d_k",
    mask: str = "right",
    split: str = "right",
    merge: str = "right",
    softmax_dim: int = -1,
) -> Tensor:
    """Multi-head self-attention from ``module``'s ``w_q, w_k, w_v, w_o``, right or with a slip.

    ``scale`` is ``"d_k"``, ``"d_model"`` or ``"none"``; ``mask`` is ``"right"``,
    ``"inverted"`` or ``"ignored"``; ``split`` and ``merge`` are ``"right"`` or ``"wrong"``.

    Shapes:
        x: ``(B, T, C)``; token_mask: ``(B, T)`` bool, ``True`` = real token; returns
        ``(B, T, C)``.
    """
    batch, length, width = x.shape
    d_k = width // num_heads

    def heads(linear: nn.Module) -> Tensor:
        projected = linear(x)  # (B, T, C)
        if split == "wrong":
            return projected.reshape(batch, num_heads, length, d_k)  # (B, H, T, D), scrambled
        return projected.view(batch, length, num_heads, d_k).transpose(1, 2)  # (B, H, T, D)

    q, k, v = heads(module.w_q), heads(module.w_k), heads(module.w_v)
    scores = q @ k.transpose(-2, -1)  # (B, H, T, T)
    divisor = {"d_k": math.sqrt(d_k), "d_model": math.sqrt(width), "none": 1.0}[scale]
    scores = scores / divisor
    keys = {"right": token_mask, "inverted": ~token_mask, "ignored": None}[mask]
    if keys is not None:
        scores = scores.masked_fill(~keys[:, None, None, :], float("-inf"))  # (B, H, T, T)
    weights = scores.softmax(dim=softmax_dim)  # (B, H, T, T)
    out = weights @ v  # (B, H, T, D)
    if merge == "wrong":
        out = out.reshape(batch, length, width)  # (B, T, C), scrambled
    else:
        out = out.transpose(1, 2).reshape(batch, length, width)  # (B, T, C)
    return module.w_o(out)


def attention_variants(
    module: nn.Module, x: Tensor, token_mask: Tensor, num_heads: int
) -> dict[str, Tensor]:
    """The attention output (not the weights) with each usual mistake."""
    run = lambda **slip: attention(module, x, token_mask, num_heads, **slip)  # noqa: E731
    return {
        NO_SCALE: run(scale="none"),
        SCALED_BY_D_MODEL: run(scale="d_model"),
        MASK_INVERTED: run(mask="inverted"),
        MASK_IGNORED: run(mask="ignored"),
        HEADS_SPLIT_WRONG: run(split="wrong", merge="wrong"),
        HEADS_MERGED_WRONG: run(merge="wrong"),
        SOFTMAX_OVER_QUERIES: run(softmax_dim=-2),
    }


def feed_forward_variants(module: nn.Module, x: Tensor) -> dict[str, Tensor]:
    """The feed-forward output with each usual mistake, from ``linear1`` and ``linear2``."""
    hidden = module.linear1(x)  # (..., d_ff)
    return {
        TANH_GELU: module.linear2(F.gelu(hidden, approximate="tanh")),
        RELU_NOT_GELU: module.linear2(F.relu(hidden)),
        NO_ACTIVATION: module.linear2(hidden),
    }


Sublayer = Callable[[Tensor], Tensor]


def layer_variants(
    attend: Sublayer, feed_forward: Sublayer, norm_1: Sublayer, norm_2: Sublayer, x: Tensor
) -> dict[str, Tensor]:
    """An encoder layer's output wired each usual wrong way, from its four sublayers.

    ``attend`` is the self-attention with its mask already applied (input to output).
    """

    def wired(first: Callable[[Tensor, Tensor], Tensor], second: Callable[..., Tensor]) -> Tensor:
        h = first(x, attend(x))
        return second(h, feed_forward(h))

    pre_h = x + attend(norm_1(x))
    return {
        PRE_NORM: pre_h + feed_forward(norm_2(pre_h)),
        NORM_BEFORE_RESIDUAL: wired(lambda x_, a: x_ + norm_1(a), lambda h, f: h + norm_2(f)),
        NO_ATTENTION_RESIDUAL: wired(lambda _x, a: norm_1(a), lambda h, f: norm_2(h + f)),
        NO_FEED_FORWARD_RESIDUAL: wired(lambda x_, a: norm_1(x_ + a), lambda _h, f: norm_2(f)),
        NORMS_SWAPPED: wired(lambda x_, a: norm_2(x_ + a), lambda h, f: norm_1(h + f)),
    }
