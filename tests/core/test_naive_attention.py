from __future__ import annotations

import pytest
import torch

from attnlib import naive_self_attention

SHAPES = [(1, 3), (3, 4), (6, 8), (2, 5, 3), (2, 3, 4, 5)]


def _float64_reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x = x.double()
    scores = torch.einsum("...tc,...sc->...ts", x, x)
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ts,...sc->...tc", weights, x), weights


@pytest.mark.parametrize("shape", SHAPES)
def test_matches_float64_reference(shape: tuple[int, ...], generator: torch.Generator) -> None:
    x = torch.randn(shape, generator=generator)
    out, weights = naive_self_attention(x)
    expected_out, expected_weights = _float64_reference(x)
    assert out.shape == shape and weights.shape == (*shape[:-1], shape[-2])
    torch.testing.assert_close(weights.double(), expected_weights, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(out.double(), expected_out, atol=1e-5, rtol=1e-5)


def test_equals_torch_sdpa_with_scale_one(generator: torch.Generator) -> None:
    # softmax(X Xᵀ) X is scaled dot-product attention with q = k = v = X and scale 1.
    x = torch.randn(2, 5, 4, generator=generator)
    out, _ = naive_self_attention(x)
    expected = torch.nn.functional.scaled_dot_product_attention(x, x, x, scale=1.0)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


def test_hand_worked_orthogonal_tokens() -> None:
    # Two orthogonal unit vectors: score 1 with itself, 0 with the other.
    x = torch.eye(2, dtype=torch.float64)
    e = torch.e
    expected = torch.tensor([[e, 1.0], [1.0, e]], dtype=torch.float64) / (e + 1)
    out, weights = naive_self_attention(x)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize("shape", SHAPES)
def test_properties(shape: tuple[int, ...], generator: torch.Generator) -> None:
    x = torch.randn(shape, generator=generator) * 3
    out, weights = naive_self_attention(x)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
    assert (weights >= 0).all()
    # A weighted average stays inside the inputs' range, coordinate by coordinate.
    low = x.amin(dim=-2, keepdim=True) - 1e-5
    high = x.amax(dim=-2, keepdim=True) + 1e-5
    assert ((out >= low) & (out <= high)).all()


def test_order_blindness_permutes_outputs(generator: torch.Generator) -> None:
    x = torch.randn(6, 4, generator=generator)
    permutation = torch.randperm(6, generator=generator)
    out, weights = naive_self_attention(x)
    out_perm, weights_perm = naive_self_attention(x[permutation])
    torch.testing.assert_close(out_perm, out[permutation])
    torch.testing.assert_close(weights_perm, weights[permutation][:, permutation])


def test_it_sees_the_future(generator: torch.Generator) -> None:
    x = torch.randn(4, 3, generator=generator)
    changed = x.clone()
    changed[-1] += 1.0
    assert not torch.allclose(naive_self_attention(x)[0][0], naive_self_attention(changed)[0][0])


def test_large_inputs_stay_finite() -> None:
    x = torch.tensor([[30.0, 0.0], [0.0, 30.0], [21.0, 21.0]])
    out, weights = naive_self_attention(x)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()


@pytest.mark.parametrize(
    ("x", "error", "match"),
    [
        ([[1.0, 2.0]], TypeError, "x must be a torch.Tensor"),
        (torch.ones(3, 2, dtype=torch.long), TypeError, "floating-point"),
        (torch.ones(4), ValueError, r"x must have shape \(\.\.\., T, C\).*got shape \(4,\)"),
    ],
)
def test_bad_input(x: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        naive_self_attention(x)  # type: ignore[arg-type]
