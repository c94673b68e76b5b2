"""Checkers for the exercises of notebook 12: the cost of attention and the online softmax."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.attention import scaled_dot_product_attention
from attnlib.checks import CheckResult
from attnlib.checks._framework import Case, fixed_generator, randn64, run_cases, vec
from attnlib.tiled_attention import OnlineSoftmaxState, online_softmax_step


def check_attention_flops(fn: Callable[[int, int, int, int], int]) -> CheckResult:
    """Check ``flops(batch_heads, t_q, t_k, d)``: 4 · BH · T_q · T_k · d for QKᵀ and PV."""
    shapes = [(1, 1, 1, 1), (8, 2048, 2048, 64), (12, 100, 300, 32)]
    cases = [
        Case(
            f"BH={bh}, T_q={t_q}, T_k={t_k}, d={d}",
            (bh, t_q, t_k, d),
            torch.tensor(4.0 * bh * t_q * t_k * d, dtype=torch.float64),
        )
        for bh, t_q, t_k, d in shapes
    ]
    hints = {
        "default": "QKᵀ is T_q·T_k dot products of length d (d multiplies and d adds each), "
        "and PV is T_q·d dot products of length T_k: 2·T_q·T_k·d FLOPs each, per head.",
        "BH=1, T_q=1, T_k=1, d=1": "one score (1 multiply + 1 add) and one weighted value "
        "(1 multiply + 1 add): 4 FLOPs. Count a multiply-add as 2 FLOPs.",
    }
    return run_cases("attention_flops", fn, cases, hints, atol=0.0, rtol=1e-12)


def check_online_softmax_step(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
) -> CheckResult:
    """Check ``step(m, l, block) -> (m', l')`` for a single row: the online softmax update."""
    g = fixed_generator()

    def case(description: str, m: float, total: float, block: torch.Tensor) -> Case:
        state = OnlineSoftmaxState(
            torch.tensor(m, dtype=torch.float64), torch.tensor(total, dtype=torch.float64)
        )
        new = online_softmax_step(state, block)
        return Case(
            description,
            (state.running_max, state.running_sum, block),
            (new.running_max, new.running_sum),
        )

    cases = [
        case("the first block", -math.inf, 0.0, vec(1.0, 2.0, 0.5)),
        case("a block with a new maximum", 2.0, 1.5, vec(0.5, 4.0, 1.0)),
        case("a block below the maximum", 5.0, 1.2, randn64(4, generator=g)),
    ]
    hints = {
        "default": "m_new = max(m, block.max()); l_new = l * exp(m - m_new) + exp(block - m_new)"
        ".sum(): return (m_new, l_new).",
        "the first block": "with m = -inf and l = 0 the old sum contributes nothing: make sure "
        "exp(m - m_new) is exp(-inf) = 0, not NaN.",
        "a block with a new maximum": "when the maximum grows, the old sum was measured from "
        "the old maximum: multiply it by exp(m - m_new) before adding the new terms.",
    }
    return run_cases(
        "online_softmax_step", fn, cases, hints, atol=1e-10, output_names=("m_new", "l_new")
    )


def check_tiled_attention(
    fn: Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int], torch.Tensor],
) -> CheckResult:
    """Check ``attend(q, k, v, tile_size) -> out`` (no mask) against the reference."""
    g = fixed_generator()
    q, k, v = (
        randn64(2, 5, 4, generator=g),
        randn64(2, 7, 4, generator=g),
        randn64(2, 7, 3, generator=g),
    )
    large = 30 * randn64(1, 6, 4, generator=g)  # scores in the thousands: needs the max
    reference = scaled_dot_product_attention
    cases = [
        Case("tile_size 7 (one tile)", (q, k, v, 7), reference(q, k, v)[0]),
        Case("tile_size 2 (T_k = 7 is not a multiple)", (q, k, v, 2), reference(q, k, v)[0]),
        Case("tile_size 1", (q, k, v, 1), reference(q, k, v)[0]),
        Case("large scores", (large, large, large, 4), reference(large, large, large)[0]),
    ]
    hints = {
        "default": "for each tile of keys: s = q @ k_tile.T / √d; m_new = max(m, s.max(-1)); "
        "p = exp(s - m_new); l = l·exp(m - m_new) + p.sum(-1); o = o·exp(m - m_new) + p @ v_tile; "
        "return o / l at the end.",
        "tile_size 2 (T_k = 7 is not a multiple)": "the last tile is shorter: slice "
        "k[..., start:start + tile_size, :] and let Python stop at the end.",
        "large scores": "subtract the running maximum before exp, or exp overflows to inf.",
    }
    return run_cases("tiled_attention", fn, cases, hints, atol=1e-9)
