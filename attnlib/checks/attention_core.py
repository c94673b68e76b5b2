"""Checkers for the exercises of notebooks 04–07: attention, heads, positions, masks."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.attention import scaled_dot_product_attention
from attnlib.checks import CheckResult
from attnlib.checks._framework import Case, fixed_generator, randn64, run_cases
from attnlib.masks import causal_mask, padding_mask
from attnlib.multi_head import merge_heads, split_heads
from attnlib.positional import apply_rotary, sinusoidal_encoding

Pair = tuple[torch.Tensor, torch.Tensor]


# --- notebook 04 ---------------------------------------------------------------------------


def check_scaled_dot_product_attention(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], Pair],
) -> CheckResult:
    """Check a learner's ``attention(q, k, v) -> (out, weights)`` = softmax(QKᵀ/√d_k) V."""
    g = fixed_generator()
    shapes = [
        ("3 queries, 3 keys, d_k = d_v = 4", (3, 4), (3, 4), (3, 4)),
        ("2 queries, 5 keys, d_k = 3, d_v = 2", (2, 3), (5, 3), (5, 2)),
        ("a batch of 2", (2, 4, 8), (2, 6, 8), (2, 6, 5)),
    ]
    cases = []
    for description, q_shape, k_shape, v_shape in shapes:
        q, k, v = (
            randn64(*q_shape, generator=g),
            randn64(*k_shape, generator=g),
            randn64(*v_shape, generator=g),
        )
        cases.append(Case(description, (q, k, v), scaled_dot_product_attention(q, k, v)))
    hints = {
        "default": "scores = q @ k.transpose(-2, -1) / math.sqrt(d_k) with d_k = q.shape[-1]; "
        "weights = softmax over the last dim; out = weights @ v. Return (out, weights).",
        "2 queries, 5 keys, d_k = 3, d_v = 2": "the weights are (T_q, T_k) and out is "
        "(T_q, d_v): divide by √d_k, the width of q and k, not of v.",
        "a batch of 2": "transpose only the last two dims of k: k.transpose(-2, -1).",
    }
    return run_cases("scaled_dot_product_attention", fn, cases, hints)


def check_attention_head(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], Pair],
) -> CheckResult:
    """Check ``head(x, w_q, w_k, w_v)``: project x with each matrix, then scaled attention."""
    g = fixed_generator()
    cases = []
    for description, (t, d_model, d_k, d_v) in [
        ("4-d tokens to 3-d queries and keys", (3, 4, 3, 3)),
        ("d_v different from d_k", (5, 6, 4, 2)),
    ]:
        x = randn64(t, d_model, generator=g)
        w_q, w_k = randn64(d_model, d_k, generator=g), randn64(d_model, d_k, generator=g)
        w_v = randn64(d_model, d_v, generator=g)
        expected = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
        cases.append(Case(description, (x, w_q, w_k, w_v), expected))
    hints = {
        "default": "q, k, v = x @ w_q, x @ w_k, x @ w_v; then softmax(q kᵀ / √d_k) v, where "
        "d_k = w_q.shape[1]. Return (out, weights).",
    }
    return run_cases("attention_head", fn, cases, hints)


def check_cross_attention(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], Pair],
) -> CheckResult:
    """Check ``cross(y, x, w_q, w_k, w_v)``: queries from ``y``, keys and values from ``x``."""
    g = fixed_generator()
    y, x = randn64(2, 4, generator=g), randn64(5, 4, generator=g)
    w_q, w_k, w_v = (randn64(4, 3, generator=g) for _ in range(3))
    expected = scaled_dot_product_attention(y @ w_q, x @ w_k, x @ w_v)
    cases = [Case("2 target tokens attend to 5 source tokens", (y, x, w_q, w_k, w_v), expected)]
    hints = {
        "default": "queries come from y (y @ w_q), keys and values from x (x @ w_k, x @ w_v): "
        "the weights have one row per y token and one column per x token, (2, 5).",
    }
    return run_cases("cross_attention", fn, cases, hints)


# --- notebook 05 ---------------------------------------------------------------------------


def check_split_heads(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``split(x, num_heads)``: ``(B, T, C)`` → ``(B, H, T, C/H)``."""
    g = fixed_generator()
    x = randn64(2, 3, 8, generator=g)
    cases = [
        Case("B=2, T=3, C=8 into 2 heads", (x, 2), split_heads(x, 2)),
        Case("the same into 4 heads", (x, 4), split_heads(x, 4)),
    ]
    hints = {
        "default": "x.view(B, T, H, C // H) cuts the width into heads; then .transpose(1, 2) "
        "moves the head dim before T: (B, H, T, D). A view straight to (B, H, T, D) would mix "
        "tokens into heads.",
    }
    return run_cases("split_heads", fn, cases, hints)


def check_merge_heads(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``merge(x)``: ``(B, H, T, D)`` → ``(B, T, H·D)``, the inverse of splitting."""
    g = fixed_generator()
    x = randn64(2, 4, 3, 2, generator=g)
    cases = [Case("B=2, H=4, T=3, D=2", (x,), merge_heads(x))]
    hints = {
        "default": "undo the split in reverse order: x.transpose(1, 2) gives (B, T, H, D), "
        "then .reshape(B, T, H * D) (reshape, because the transpose is not contiguous).",
    }
    return run_cases("merge_heads", fn, cases, hints)


def _multi_head_reference(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    num_heads: int,
) -> torch.Tensor:
    q = split_heads(x @ w_q, num_heads)  # (B, H, T, D)
    k = split_heads(x @ w_k, num_heads)
    v = split_heads(x @ w_v, num_heads)
    heads, _ = scaled_dot_product_attention(q, k, v)  # (B, H, T, D)
    return merge_heads(heads) @ w_o  # (B, T, C)


def check_multi_head_attention(
    fn: Callable[..., torch.Tensor],
) -> CheckResult:
    """Check ``mha(x, w_q, w_k, w_v, w_o, num_heads) -> out``, without biases."""
    g = fixed_generator()
    x = randn64(2, 5, 8, generator=g)
    weights = [randn64(8, 8, generator=g) / math.sqrt(8) for _ in range(4)]
    cases = [
        Case(f"B=2, T=5, C=8, {h} heads", (x, *weights, h), _multi_head_reference(x, *weights, h))
        for h in (2, 4)
    ]
    hints = {
        "default": "project (x @ w_q …), split into heads (B, H, T, D), attend with scale "
        "1/√D where D = C / H (not C), merge back to (B, T, C), then @ w_o.",
    }
    return run_cases("multi_head_attention", fn, cases, hints)


# --- notebook 06 ---------------------------------------------------------------------------


def check_sinusoidal_encoding(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``pe(max_len, d_model)`` against the paper's formula with base 10000."""
    cases = [
        Case("max_len=6, d_model=4", (6, 4), sinusoidal_encoding(6, 4).double()),
        Case("max_len=50, d_model=16", (50, 16), sinusoidal_encoding(50, 16).double()),
    ]
    hints = {
        "default": "PE[p, 2i] = sin(p / 10000**(2i / d_model)) and PE[p, 2i+1] = cos(same "
        "angle): the even dims hold sines, the odd dims cosines, and pair i shares one "
        "frequency. Check the base is 10000 (not 1000).",
    }
    return run_cases("sinusoidal_encoding", fn, cases, hints, atol=1e-5)


def check_rotary(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``rope(x)``: rotate pair (2i, 2i+1) of row p by angle p·10000^(-2i/D)."""
    g = fixed_generator()
    x_small, x_batch = randn64(4, 2, generator=g), randn64(2, 5, 8, generator=g)
    cases = [
        Case("4 positions, one pair", (x_small,), apply_rotary(x_small)),
        Case("a batch of 2, 5 positions, D=8", (x_batch,), apply_rotary(x_batch)),
    ]
    hints = {
        "default": "for pair i the angle is p * 10000**(-2i / D); new even = x_even·cos − "
        "x_odd·sin, new odd = x_even·sin + x_odd·cos; keep each pair in its own place.",
    }
    return run_cases("rotary", fn, cases, hints)


# --- notebook 07 ---------------------------------------------------------------------------


def check_causal_mask(fn: Callable[[int], torch.Tensor]) -> CheckResult:
    """Check ``causal(T)``: bool ``(T, T)``, True on and below the diagonal (may attend)."""
    cases = [Case(f"T={t}", (t,), causal_mask(t)) for t in (1, 4, 6)]
    hints = {
        "default": "query t may attend to keys 0…t: torch.ones(T, T, dtype=torch.bool).tril() "
        "(True = may attend, the diagonal included).",
    }
    return run_cases("causal_mask", fn, cases, hints)


def check_padding_mask(fn: Callable[[list[int], int], torch.Tensor]) -> CheckResult:
    """Check ``padding(lengths, max_len)``: bool ``(B, 1, 1, max_len)``, True for real tokens."""
    cases = [
        Case("lengths [3, 5, 1], max_len 5", ([3, 5, 1], 5), padding_mask([3, 5, 1], 5)),
        Case("one full sequence", ([4], 4), padding_mask([4], 4)),
    ]
    hints = {
        "default": "compare positions with lengths: torch.arange(max_len) < "
        "torch.tensor(lengths)[:, None] gives (B, max_len); then add the two singleton dims "
        "with [:, None, None, :] so it broadcasts over heads and queries.",
    }
    return run_cases("padding_mask", fn, cases, hints)


def check_masked_attention(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], Pair],
) -> CheckResult:
    """Check ``attend(q, k, v, mask)``, including a query row that may attend to nothing."""
    g = fixed_generator()
    q, k, v = randn64(4, 3, generator=g), randn64(4, 3, generator=g), randn64(4, 2, generator=g)
    causal = causal_mask(4)
    empty_row = causal.clone()
    empty_row[2] = False
    cases = [
        Case("causal mask", (q, k, v, causal), scaled_dot_product_attention(q, k, v, causal)),
        Case(
            "row 2 may attend to nothing",
            (q, k, v, empty_row),
            scaled_dot_product_attention(q, k, v, empty_row),
        ),
    ]
    hints = {
        "default": "fill blocked scores (where mask is False) with "
        "torch.finfo(scores.dtype).min, softmax, then set the blocked weights to exactly 0 "
        "with weights.masked_fill(~mask, 0.0).",
        "row 2 may attend to nothing": "a row with every key blocked gives NaN if you fill with "
        "-inf (0/0). Fill with torch.finfo(dtype).min instead and zero the blocked weights "
        "after the softmax: that row's weights and output become 0.",
    }
    return run_cases("masked_attention", fn, cases, hints)
