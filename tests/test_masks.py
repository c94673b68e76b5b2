from __future__ import annotations

import pytest
import torch

from attnlib import causal_mask


@pytest.mark.parametrize(("t_q", "t_k"), [(1, 1), (4, 4), (3, 7), (1, 5)])
def test_causal_mask_matches_a_float64_loop(t_q: int, t_k: int) -> None:
    expected = torch.tensor(
        [[j <= i + (t_k - t_q) for j in range(t_k)] for i in range(t_q)], dtype=torch.bool
    )
    got = causal_mask(t_q, t_k)
    assert got.dtype == torch.bool and torch.equal(got, expected)


def test_causal_mask_square_default_and_polarity() -> None:
    mask = causal_mask(3)
    assert torch.equal(mask, torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool))
    assert mask.diagonal().all()  # every position may attend to itself


def test_causal_mask_agrees_with_torch_is_causal() -> None:
    q = torch.randn(1, 1, 5, 4, generator=torch.Generator().manual_seed(0))
    expected = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    got = torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=causal_mask(5))
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize(("t_q", "t_k", "match"), [(0, None, "t_q"), (3, 2, "t_k must be >= t_q")])
def test_causal_mask_bad_input(t_q: int, t_k: int | None, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        causal_mask(t_q, t_k)
