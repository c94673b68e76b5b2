"""Notebook 11, Exercise 5: ``MyMultiHeadAttention(d_model, num_heads)`` with a padding mask.

Expected outputs come from :class:`attnlib.MultiHeadAttention` with the same weights and the
key-padding mask ``(B, 1, 1, T)``; only the real tokens' rows are compared (what a padding query
computes is never used). The cases show each mistake: 2, 3 and 4 heads (a split, a merge or a
scale that ignores the heads), padding on either side and a sentence of one real token (the
mask's polarity and axis), float16 (a fill of -1e9 does not fit) and two tokens, one of them
padding. The task asks for any float dtype: out and weights must come back in the module's
(float64 and float16 here), a softmax taken in float32 included.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
from torch import nn

import attnlib
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import CheckResult, fixed_generator
from attnlib.checks._implementations import ATTENTION as ATTENTION_FUNCTIONS
from attnlib.checks._implementations import ATTENTION_MODULES
from attnlib.checks.engine.classes import (
    ModuleCase,
    Verdict,
    check_module,
    random_state,
    real_rows,
    report,
)

Tensor = torch.Tensor

ATTENTION = register(
    Exercise(
        id="ex5_my_multi_head_attention",
        notebook="11",
        number=5,
        name="MyMultiHeadAttention",
        hints=(
            "Each of the h heads attends on its own, with its own d_k = C / h columns of Q, K "
            "and V (notebook 05); a padding key must get weight exactly 0 from every query "
            "(notebook 07). The heads' outputs, side by side again, go through W^O.",
            "Shapes guide you: (B, T, C) → (B, T, h, d_k) cuts each token's vector into heads; "
            "moving the head axis forward gives (B, h, T, d_k), so that one matrix product "
            "gives every head's (T, T) scores. The (B, T) mask needs two size-1 axes to "
            "broadcast over heads and queries, and blocks keys (the last axis of the scores).",
            "Block the padding keys' scores before the softmax with the lowest value the "
            "scores' dtype can hold (torch.finfo, as in notebook 07; a literal such as -1e9 "
            "does not fit in float16), scale by 1/√d_k, softmax over the last axis, multiply by "
            "V, then undo the cut in reverse order: move the heads back behind the tokens, "
            "then reshape to (B, T, C) and apply w_o.",
        ),
    )
)

# Attention itself, and every module that computes heads (transformers' BERT attention too).
FORBIDDEN = ATTENTION_FUNCTIONS | ATTENTION_MODULES


class _Attention(nn.Module):
    """The parameters every mistake below keeps, as the task names them."""

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    slips: ClassVar[dict[str, object]] = {}

    def forward(self, x: Tensor, token_mask: Tensor) -> object:
        return attend(self, x, token_mask, **self.slips)


def attend(
    m: _Attention, x: Tensor, token_mask: Tensor, *, scale: str = "√d_k", fill: str = "-inf",
    mask: str = "keys", split: bool = True, merge: bool = True, softmax_dim: int = -1,
    zero_after: bool = False, w_o: bool = True, heads: bool = True, returns: str = "pair",
) -> object:  # fmt: skip
    """Multi-head attention from ``m``'s four projections, right or with one slip."""
    B, T, C = x.shape
    h = m.num_heads if heads else 1
    d_k = C // h

    def cut(y: Tensor) -> Tensor:  # (B, T, C) -> (B, h, T, d_k)
        return y.view(B, T, h, d_k).transpose(1, 2) if split else y.reshape(B, h, T, d_k)

    q, k, v = cut(m.w_q(x)), cut(m.w_k(x)), cut(m.w_v(x))
    divisor = {"√d_k": math.sqrt(d_k), "√C": math.sqrt(C), "d_k": d_k, "none": 1.0}[scale]
    scores = q @ k.transpose(-2, -1) / divisor  # (B, h, T, T)
    keys = {"keys": token_mask, "inverted": ~token_mask, "none": None, "one axis": token_mask}[mask]
    lowest = {"min": torch.finfo(scores.dtype).min, "-inf": float("-inf"), "-1e9": -1e9}[fill]
    blocked = ~token_mask[:, None, :] if mask == "one axis" else None  # (B, 1, T): a slip
    if keys is not None and not zero_after:
        blocked = ~keys[:, None, None, :] if blocked is None else blocked
        scores = scores.masked_fill(blocked, lowest)
    weights = scores.softmax(dim=softmax_dim)  # (B, h, T, T)
    if zero_after:
        weights = weights.masked_fill(~token_mask[:, None, None, :], 0.0)
    out = weights @ v  # (B, h, T, d_k)
    out = out.transpose(1, 2).reshape(B, T, C) if merge else out.reshape(B, T, C)
    out = m.w_o(out) if w_o else out
    if returns == "out":
        return out
    return out, {"pair": weights, "scores": scores, "mean": weights.mean(dim=1)}[returns]


def _slip(**slips: object) -> type:
    """A learner's MyMultiHeadAttention with one slip."""
    return type("MyMultiHeadAttention", (_Attention,), {"slips": slips})


# A right one, for the encoder layer's table of mistakes (Exercise 7) to be built from.
RightAttention = _slip()

MISTAKES = (
    Mistake(
        "did not divide the scores by √d_k",
        "dot products of d_k numbers grow like √d_k; unscaled, the softmax is far sharper than "
        "the one the model was trained with (notebook 02).",
        _slip(scale="none"),
    ),
    Mistake(
        "divided the scores by √d_model instead of √d_k",
        "each head's dot product has d_k = d_model / h terms, so its scale is √d_k (√32 in "
        "MiniLM), not √384.",
        _slip(scale="√C"),
    ),
    Mistake(
        "divided the scores by d_k instead of its square root",
        "the variance of a dot product of d_k terms is d_k, so its spread is √d_k: dividing by "
        "d_k flattens every head's weights.",
        _slip(scale="d_k"),
    ),
    Mistake(
        "blocked the real tokens' keys and kept the padding's",
        "token_mask is True for a real token, and in this course True means 'may attend': the "
        "keys to block are those where it is False.",
        _slip(mask="inverted"),
    ),
    Mistake(
        "did not block the padding keys (no mask, or the mask applied to the queries)",
        "the real tokens of a padded sentence then attend to its padding; it is the keys, the "
        "last axis of the scores, that padding must be hidden from.",
        _slip(mask="none"),
    ),
    Mistake(
        "gave the (B, T) mask one new axis, (B, 1, T), instead of two",
        "broadcasting lines shapes up from the right: (B, 1, T) against (B, h, T, T) puts the "
        "batch on the heads' axis. The mask needs size-1 axes for the heads and the queries.",
        _slip(mask="one axis"),
    ),
    Mistake(
        "filled the padding scores with a fixed number (-1e9, or float32's smallest value) "
        "that float16 cannot hold",
        "float16 reaches only about ±65504, so the fill overflows and PyTorch refuses it; the "
        "value must come from the scores' own dtype (notebook 07).",
        _slip(fill="-1e9"),
    ),
    Mistake(
        "zeroed the padding weights after the softmax instead of blocking their scores before it",
        "each query's weights must still sum to 1 over the real keys: zeroing afterwards "
        "leaves the real keys' weights too small.",
        _slip(zero_after=True),
    ),
    Mistake(
        "cut the heads with a view to (B, h, T, d_k) straight from (B, T, C)",
        "that fills head 0 with the first tokens' whole vectors instead of every token's first "
        "d_k numbers: cut each token's vector (B, T, h, d_k), then move the head axis forward.",
        _slip(split=False, merge=False),
    ),
    Mistake(
        "viewed Q, K and V as (B, h, T, d_k) straight from (B, T, C), then merged the heads "
        "back with a transpose",
        "the view fills head 0 with the first tokens' whole vectors instead of every token's "
        "first d_k numbers: the cut must undo what the merge does, (B, T, h, d_k) first, then "
        "the head axis moved forward.",
        _slip(split=False),
    ),
    Mistake(
        "merged the heads with a reshape straight from (B, h, T, d_k) to (B, T, C)",
        "that interleaves tokens and heads: the head axis must move back behind the tokens "
        "before the heads are put side by side.",
        _slip(merge=False),
    ),
    Mistake(
        "took the softmax over the queries (dim −2) instead of the keys",
        "each query's weights over the keys must sum to 1: the softmax runs along the last "
        "axis of the (T, T) scores.",
        _slip(softmax_dim=-2),
    ),
    Mistake(
        "took the softmax over dim 1, the heads",
        "each query's weights over the keys must sum to 1: the softmax runs along the last "
        "axis, not across the heads.",
        _slip(softmax_dim=1),
    ),
    Mistake(
        "left out the output projection w_o",
        "the heads' outputs side by side are mixed by W^O; MiniLM's trained w_o is part of "
        "every layer.",
        _slip(w_o=False),
    ),
    Mistake(
        "attended with one head of width d_model instead of num_heads heads",
        "multi-head attention runs h softmaxes over d_k = C / h columns each: one wide head "
        "computes different weights.",
        _slip(heads=False),
    ),
    Mistake(
        "returned the scores before the softmax as the weights",
        "the weights are the softmax of the scores: each row non-negative, summing to 1.",
        _slip(returns="scores"),
    ),
    Mistake(
        "averaged the weights over the heads",
        "the weights keep one (T, T) matrix per head, shape (B, h, T, T), as attnlib's do.",
        _slip(returns="mean"),
    ),
    Mistake(
        "returned only out, not the pair (out, weights)",
        "forward returns the output and the weights, as attnlib's attention does: the layer "
        "passes the weights on, and section 5 plotted them.",
        _slip(returns="out"),
    ),
)


def reference_case(
    description: str, x: Tensor, token_mask: Tensor, num_heads: int, g: torch.Generator,
    dtype: torch.dtype = torch.float64,
) -> ModuleCase:  # fmt: skip
    """A case whose expected (out, weights) are attnlib's, computed in float64 from weights
    and inputs representable in ``dtype``."""
    reference = attnlib.MultiHeadAttention(x.shape[-1], num_heads)
    state = random_state(reference, g, dtype)
    x = x.to(dtype).double()
    with torch.no_grad():
        expected = reference(x, mask=token_mask[:, None, None, :])
    keep = real_rows(token_mask)
    loose = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.float16 else {}
    return ModuleCase(
        description, (x.shape[-1], num_heads), state, (x.to(dtype), token_mask),
        keep(expected), keep, dtype, **loose,
    )  # fmt: skip


def cases() -> list[ModuleCase]:
    # Every sentence has a real token and a padding one: whether the blocked scores are filled
    # with -inf or the dtype's minimum, a mask that blocks the wrong keys then gives the same.
    g = fixed_generator()
    padded = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]], dtype=torch.bool)
    sides = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0]], dtype=torch.bool)
    randn = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    mask = lambda *rows: torch.tensor(rows, dtype=torch.bool)  # noqa: E731
    return [
        reference_case("2 heads, d_model 8, both sentences padded", randn(2, 5, 8), padded, 2, g),
        reference_case("3 heads, d_model 12, one padding position",
                       randn(1, 4, 12), mask([1, 1, 1, 0]), 3, g),
        reference_case("4 heads, padding on the left, a sentence of one real token",
                       randn(2, 6, 8), sides, 4, g),
        reference_case("float16, 2 heads, both sentences padded",
                       randn(2, 5, 8), padded, 2, g, torch.float16),
        reference_case("one real token and one padding, 3 heads, d_model 6",
                       randn(1, 2, 6), mask([1, 0]), 3, g),
    ]  # fmt: skip


def verdict(cls: object) -> Verdict:
    """What the check finds for ``cls``, without recording it (the layer's check uses it)."""
    # "It must work in any float dtype": out and weights come back in the module's own.
    return check_module(
        cls, cases(), MISTAKES, forbidden=FORBIDDEN, output_names=("out", "weights"),
        keep_dtype=True,
    )  # fmt: skip


@checker_of(ATTENTION, MISTAKES)
def check_bert_attention(cls: type) -> CheckResult:
    """Check ``MyMultiHeadAttention(d_model, num_heads)``: forward ``(x (B, T, C), token_mask
    (B, T) bool) -> (out (B, T, C), weights (B, h, T, T))``."""
    return report(ATTENTION, cls, verdict(cls))
