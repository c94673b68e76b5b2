"""FeedForward and Residual against their formulas, worked out by hand in float64."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

import attnlib
import attnlib.gpt
from attnlib.feed_forward import FeedForward
from attnlib.residual import Residual, residual_connection


def _gelu_by_hand(x: torch.Tensor) -> torch.Tensor:
    """GELU(x) = x · Φ(x), Φ the standard normal CDF, written with erf."""
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _layer_norm_by_hand(x: torch.Tensor, norm: nn.LayerNorm) -> torch.Tensor:
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # biased, as LayerNorm uses
    return (x - mean) / torch.sqrt(variance + norm.eps) * norm.weight + norm.bias


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize(("shape", "d_ff"), [((5, 8), 32), ((2, 3, 8), 16), ((2, 1, 4, 8), 8)])
def test_feed_forward_equals_its_formula(
    activation: str, shape: tuple[int, ...], d_ff: int
) -> None:
    torch.manual_seed(0)
    ffn = FeedForward(shape[-1], d_ff, activation=activation).double()
    x = torch.randn(shape, dtype=torch.float64)
    hidden = x @ ffn.linear1.weight.T + ffn.linear1.bias  # (..., d_ff)
    if activation == "relu":
        hidden = torch.where(hidden > 0, hidden, torch.zeros_like(hidden))
    else:
        hidden = _gelu_by_hand(hidden)
    expected = hidden @ ffn.linear2.weight.T + ffn.linear2.bias
    out = ffn(x)
    assert out.shape == x.shape
    torch.testing.assert_close(out, expected)
    assert ffn.linear1.weight.shape == (d_ff, shape[-1])
    assert ffn.linear2.weight.shape == (shape[-1], d_ff)


def test_feed_forward_acts_on_each_position_alone() -> None:
    torch.manual_seed(0)
    ffn = FeedForward(8, 16).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    out = ffn(x)
    for t in range(5):
        torch.testing.assert_close(out[:, t], ffn(x[:, t]))
    changed = x.clone()
    changed[:, 3] += 1.0
    torch.testing.assert_close(ffn(changed)[:, :3], out[:, :3])


def test_feed_forward_relu_is_piecewise_linear() -> None:
    """With every hidden unit active ReLU is the identity, so the FFN is one affine map."""
    ffn = FeedForward(3, 4).double()
    with torch.no_grad():
        ffn.linear1.weight.copy_(torch.eye(4, 3, dtype=torch.float64))
        ffn.linear1.bias.fill_(10.0)  # every hidden unit is positive for small inputs
    x = torch.randn(6, 3, dtype=torch.float64)
    affine = (x @ torch.eye(4, 3, dtype=torch.float64).T + 10.0) @ ffn.linear2.weight.T
    torch.testing.assert_close(ffn(x), affine + ffn.linear2.bias)


def test_feed_forward_dropout_only_in_training() -> None:
    torch.manual_seed(0)
    ffn = FeedForward(8, 32, dropout=0.5)
    x = torch.randn(4, 8)
    ffn.eval()
    torch.testing.assert_close(ffn(x), ffn(x))
    ffn.train()
    assert not torch.allclose(ffn(x), ffn(x))


def test_feed_forward_bad_inputs() -> None:
    with pytest.raises(
        ValueError, match=r"activation must be one of \('gelu', 'relu'\), got 'tanh'"
    ):
        FeedForward(8, 16, activation="tanh")
    with pytest.raises(ValueError, match="d_ff must be a positive int, got 0"):
        FeedForward(8, 0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\), got 1.0"):
        FeedForward(8, 16, dropout=1.0)
    with pytest.raises(
        ValueError, match=r"x must have shape \(\.\.\., d_model=8\), got \(2, 3, 6\)"
    ):
        FeedForward(8, 16)(torch.randn(2, 3, 6))
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., d_model=8\), got \(\)"):
        FeedForward(8, 16)(torch.tensor(1.0))


@pytest.mark.parametrize("norm_first", [True, False])
def test_residual_bad_input_names_the_width(norm_first: bool) -> None:
    block = Residual(8, norm_first=norm_first)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., d_model=8\), got \(4, 5\)"):
        block(torch.randn(4, 5), lambda h: h)


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 6), (1, 2, 5, 6)])
def test_residual_post_norm_is_norm_of_the_sum(shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    block = Residual(shape[-1], norm_first=False).double()
    with torch.no_grad():  # a non-trivial affine LayerNorm
        block.norm.weight.normal_()
        block.norm.bias.normal_()
    sublayer = nn.Linear(shape[-1], shape[-1]).double()
    x = torch.randn(shape, dtype=torch.float64)
    expected = _layer_norm_by_hand(x + sublayer(x), block.norm)
    torch.testing.assert_close(block(x, sublayer), expected)


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 6), (1, 2, 5, 6)])
def test_residual_pre_norm_adds_the_sublayer_of_the_norm(shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    block = Residual(shape[-1], norm_first=True).double()
    with torch.no_grad():
        block.norm.weight.normal_()
        block.norm.bias.normal_()
    sublayer = nn.Linear(shape[-1], shape[-1]).double()
    x = torch.randn(shape, dtype=torch.float64)
    expected = x + sublayer(_layer_norm_by_hand(x, block.norm))
    torch.testing.assert_close(block(x, sublayer), expected)


def test_residual_with_a_zero_sublayer() -> None:
    """A sublayer giving 0: pre-norm returns x itself, post-norm returns LN(x)."""
    x = torch.randn(3, 4, 8, dtype=torch.float64)
    zero = torch.zeros_like
    pre = Residual(8, norm_first=True).double()
    post = Residual(8, norm_first=False).double()
    torch.testing.assert_close(pre(x, zero), x)
    out = post(x, zero)
    torch.testing.assert_close(out.mean(-1), torch.zeros(3, 4, dtype=torch.float64))
    torch.testing.assert_close(
        out.var(-1, unbiased=False), torch.ones(3, 4, dtype=torch.float64), atol=1e-4, rtol=0
    )


def test_residual_default_is_pre_norm_and_dropout_hits_the_sublayer_only() -> None:
    assert Residual(4).norm_first is True
    torch.manual_seed(0)
    block = Residual(4, dropout=0.5, norm_first=True).train()
    x = torch.randn(50, 4)
    out = block(x, torch.ones_like)  # the sublayer gives 1 everywhere
    # Each entry is x + 0 (dropped) or x + 1/(1 - p) = x + 2 (kept and rescaled).
    dropped, kept = (out - x).abs() < 1e-5, (out - x - 2).abs() < 1e-5
    assert (dropped | kept).all() and dropped.any() and kept.any()
    block.eval()
    torch.testing.assert_close(block(x, torch.ones_like), x + 1)


@given(st.integers(0, 2**31 - 1), st.booleans())
def test_residual_gradient_reaches_the_input_through_the_skip_path(
    seed: int, norm_first: bool
) -> None:
    """Pre-norm: ∂y/∂x = I + ∂f/∂x exactly, so a sublayer with zero Jacobian passes the identity."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 5, generator=g, dtype=torch.float64, requires_grad=True)
    block = Residual(5, norm_first=norm_first).double()
    constant = torch.randn(2, 5, generator=g, dtype=torch.float64)
    y = block(x, lambda h: constant + 0 * h)
    (grad,) = torch.autograd.grad(y.sum(), x)
    if norm_first:
        torch.testing.assert_close(grad, torch.ones_like(x))
    else:  # the gradient of a sum through LayerNorm is (almost) 0 in every direction
        torch.testing.assert_close(grad, torch.zeros_like(x), atol=1e-6, rtol=0)


@pytest.mark.parametrize("norm_first", [True, False])
def test_residual_connection_is_the_residual_blocks_wiring(norm_first: bool) -> None:
    torch.manual_seed(0)
    block, sublayer = Residual(8, dropout=0.3, norm_first=norm_first).train(), FeedForward(8, 16)
    x = torch.randn(2, 5, 8)
    torch.manual_seed(1)
    expected = block(x, sublayer)
    torch.manual_seed(1)  # the same dropout draws
    got = residual_connection(x, sublayer, block.norm, block.dropout, norm_first)
    assert torch.equal(got, expected)


@pytest.mark.parametrize("norm_first", [True, False])
def test_residual_connection_passes_a_sublayers_extra_output_through(norm_first: bool) -> None:
    """Attention returns (out, weights): the block adds out and hands the weights back."""
    norm, x, extra = nn.LayerNorm(4), torch.randn(3, 4), object()
    y, passed = residual_connection(x, lambda h: (2 * h, extra), norm, nn.Identity(), norm_first)
    assert passed is extra
    torch.testing.assert_close(
        y, residual_connection(x, lambda h: 2 * h, norm, nn.Identity(), norm_first)
    )
    _, none = residual_connection(x, lambda h: (h, None), norm, nn.Identity(), norm_first)
    assert none is None  # attention without weights: still a pair


@pytest.mark.parametrize(
    ("module", "build", "blocks"),
    [
        ("encoder", lambda: attnlib.EncoderLayer(8, 2, 16), 2),
        ("decoder", lambda: attnlib.DecoderLayer(8, 2, 16), 3),
        ("gpt", lambda: attnlib.gpt.GPTBlock(attnlib.GPTConfig(d_model=8, num_heads=2)), 2),
    ],
)
def test_every_layer_is_wired_by_residual_connection(
    module: str, build: Callable[[], nn.Module], blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One wiring: each layer's residual blocks are residual_connection's, none written out."""
    import importlib

    calls = []

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return residual_connection(*args, **kwargs)

    monkeypatch.setattr(
        importlib.import_module(f"attnlib.{module}"), "residual_connection", counted
    )
    layer, x = build().eval(), torch.randn(1, 3, 8)
    with torch.no_grad():
        layer(x, x, attnlib.causal_mask(3)) if module == "decoder" else layer(
            x, attnlib.causal_mask(3)
        )
    assert len(calls) == blocks
