from __future__ import annotations

import math

import pytest
import torch

from attnlib import AttentionHead, SelfAttention, causal_mask


def test_four_to_three_projection_matches_by_hand() -> None:
    torch.manual_seed(0)
    head = AttentionHead(d_model=4, d_k=3).double()
    x = torch.randn(3, 4, dtype=torch.float64)
    q, k, v = x @ head.w_q.weight.T, x @ head.w_k.weight.T, x @ head.w_v.weight.T  # (3, 3) each
    weights = torch.softmax(q @ k.T / math.sqrt(3), -1)
    out, got_weights = head(x)
    torch.testing.assert_close(got_weights, weights)
    torch.testing.assert_close(out, weights @ v)
    assert head.w_q.weight.shape == (3, 4) and head.w_q.bias is None  # no bias, as in the paper


def test_cross_attention_and_value_width() -> None:
    head = AttentionHead(d_model=6, d_k=4, d_v=2, bias=True)
    y, x = torch.randn(2, 3, 6), torch.randn(2, 5, 6)
    out, weights = head(y, x)
    assert out.shape == (2, 3, 2) and weights.shape == (2, 3, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))


def test_self_attention_module_with_mask() -> None:
    torch.manual_seed(0)
    head = SelfAttention(d_model=4, d_k=4)
    x = torch.randn(5, 4)
    out, weights = head(x, mask=causal_mask(5))
    assert (weights.triu(1) == 0).all()
    torch.testing.assert_close(out, AttentionHead.forward(head, x, mask=causal_mask(5))[0])


def test_dropout_only_in_training() -> None:
    head = SelfAttention(d_model=4, d_k=4, dropout=0.5).eval()
    x = torch.randn(6, 4)
    torch.testing.assert_close(head(x)[0], head(x)[0])


def test_bad_input() -> None:
    head = AttentionHead(d_model=4, d_k=3)
    with pytest.raises(ValueError, match=r"query must have shape \(\.\.\., T, 4\), got \(3, 5\)"):
        head(torch.randn(3, 5))
    with pytest.raises(ValueError, match=r"key must have shape \(\.\.\., T, 4\)"):
        head(torch.randn(3, 4), torch.randn(3, 2))
    with pytest.raises(TypeError, match="value must have a floating-point dtype"):
        head(torch.randn(3, 4), torch.randn(3, 4), torch.ones(3, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="d_k must be an int"):
        AttentionHead(d_model=4, d_k=2.5)
    with pytest.raises(TypeError, match="dropout must be a number"):
        AttentionHead(d_model=4, d_k=2, dropout="0.1")
    with pytest.raises(ValueError, match="d_k must be a positive int"):
        AttentionHead(d_model=4, d_k=0)
    with pytest.raises(ValueError, match="dropout"):
        AttentionHead(d_model=4, d_k=2, dropout=-0.1)
