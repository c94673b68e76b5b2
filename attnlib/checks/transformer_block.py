"""Checkers for the exercises of notebook 08: the FFN, LayerNorm and residual blocks."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks import CheckResult
from attnlib.checks._framework import Case, fixed_generator, randn64, run_cases


def check_feed_forward(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``ffn(x, w1, b1, w2, b2) = relu(x @ w1 + b1) @ w2 + b2`` on each position."""
    g = fixed_generator()
    cases = []
    for description, (batch, t, d, d_ff) in [
        ("one sequence", (1, 3, 4, 8)),
        ("a batch", (2, 5, 6, 24)),
    ]:
        x = randn64(batch, t, d, generator=g)
        w1, b1 = randn64(d, d_ff, generator=g), randn64(d_ff, generator=g)
        w2, b2 = randn64(d_ff, d, generator=g), randn64(d, generator=g)
        cases.append(Case(description, (x, w1, b1, w2, b2), F.relu(x @ w1 + b1) @ w2 + b2))
    hints = {
        "default": "hidden = torch.relu(x @ w1 + b1) has width d_ff; return hidden @ w2 + b2. "
        "The ReLU goes between the two linear maps, not after the second.",
    }
    return run_cases("feed_forward", fn, cases, hints)


def check_layer_norm(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``layer_norm(x)``: per position, subtract the mean and divide by √(var + 1e-5)."""
    g = fixed_generator()
    cases = []
    for description, x in [
        ("[1, 2, 3, 4]", torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)),
        ("a batch of 2 × 3 positions", randn64(2, 3, 8, generator=g) * 5 + 2),
    ]:
        cases.append(Case(description, (x,), F.layer_norm(x, x.shape[-1:], eps=1e-5)))
    hints = {
        "default": "normalise over the last dim only: mean = x.mean(-1, keepdim=True), "
        "var = x.var(-1, keepdim=True, unbiased=False) (the population variance), "
        "then (x - mean) / torch.sqrt(var + 1e-5).",
    }
    return run_cases("layer_norm", fn, cases, hints)


def check_residual_block(
    fn: Callable[[torch.Tensor, Callable[[torch.Tensor], torch.Tensor], bool], torch.Tensor],
) -> CheckResult:
    """Check ``block(x, sublayer, norm_first)``: ``x + f(LN(x))`` or ``LN(x + f(x))``.

    LN here is LayerNorm without learned scale and shift (eps 1e-5).
    """
    g = fixed_generator()
    x = randn64(2, 3, 6, generator=g)
    weight = randn64(6, 6, generator=g) / 3

    def sublayer(h: torch.Tensor) -> torch.Tensor:
        return torch.tanh(h @ weight)

    def norm(h: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(h, h.shape[-1:], eps=1e-5)

    cases = [
        Case("pre-norm", (x, sublayer, True), x + sublayer(norm(x))),
        Case("post-norm (the paper)", (x, sublayer, False), norm(x + sublayer(x))),
    ]
    hints = {
        "default": "pre-norm: x + sublayer(layer_norm(x)); post-norm: layer_norm(x + "
        "sublayer(x)). In both the skip path adds the block's input x.",
    }
    return run_cases("residual_block", fn, cases, hints)
