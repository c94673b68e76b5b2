from __future__ import annotations

import pytest
import torch

from attnlib import (
    causal_mask,
    from_torch_mha_mask,
    padding_mask,
    padding_mask_from_ids,
    padding_mask_from_token_mask,
    to_torch_key_padding_mask,
    to_torch_mha_mask,
)


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


def test_padding_mask_hand_worked() -> None:
    mask = padding_mask([2, 4, 0], 4)
    assert mask.shape == (3, 1, 1, 4) and mask.dtype == torch.bool
    expected = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]], dtype=torch.bool)
    assert torch.equal(mask[:, 0, 0], expected)
    assert torch.equal(padding_mask(torch.tensor([2, 4, 0]), 4), mask)


def test_padding_mask_of_an_empty_batch() -> None:
    assert padding_mask([], 4).shape == (0, 1, 1, 4)
    assert padding_mask(torch.zeros(0, dtype=torch.long), 4).shape == (0, 1, 1, 4)


def test_padding_mask_from_ids_agrees_with_lengths() -> None:
    ids = torch.tensor([[5, 6, 0, 0], [7, 8, 9, 3]])
    assert torch.equal(padding_mask_from_ids(ids, pad_id=0), padding_mask([2, 4], 4))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: padding_mask([1, 5], 4), ValueError, r"lengths must lie in \[0, seq_len=4\]"),
        (lambda: padding_mask([[1, 2]], 4), ValueError, r"lengths must be a 1-D"),
        (lambda: padding_mask([1.5], 4), TypeError, r"lengths must be a 1-D sequence of ints"),
        (lambda: padding_mask("ab", 4), TypeError, r"lengths must be a sequence of ints"),
        (lambda: padding_mask_from_ids(torch.ones(2, 3).long(), 0.5), TypeError, "pad_id"),
        (lambda: to_torch_mha_mask([[True]]), TypeError, "mask must be a bool torch.Tensor"),
        (lambda: to_torch_mha_mask(torch.ones(2, dtype=torch.bool)), ValueError, r"\(T_q, T_k\)"),
        (
            lambda: to_torch_mha_mask(torch.ones(1, 3, 2, 2, dtype=torch.bool), num_heads=2),
            ValueError,
            "has 3 heads",
        ),
        (
            lambda: to_torch_mha_mask(torch.ones(1, 2, 2, dtype=torch.bool), num_heads=0),
            ValueError,
            "num_heads must be a positive int",
        ),
        (
            lambda: from_torch_mha_mask(torch.ones(2, 2), 2),
            TypeError,
            "attn_mask must be a bool torch.Tensor",
        ),
        (
            lambda: padding_mask_from_token_mask(torch.ones(2, 3)),
            TypeError,
            "token_mask must be a bool",
        ),
        (
            lambda: padding_mask_from_token_mask(torch.ones(3, dtype=torch.bool)),
            ValueError,
            r"token_mask must have shape \(B, T\)",
        ),
        (lambda: padding_mask([1], 0), ValueError, "seq_len must be a positive int"),
        (lambda: padding_mask_from_ids([[1, 0]], 0), TypeError, "token_ids must be"),
        (lambda: padding_mask_from_ids(torch.ones(2, 3), 0), TypeError, r"integer token ids"),
        (lambda: padding_mask_from_ids(torch.ones(3).long(), 0), ValueError, r"shape \(B, T\)"),
        (lambda: to_torch_mha_mask(torch.ones(2, 2)), TypeError, "mask must be a bool"),
        (lambda: to_torch_mha_mask(torch.ones(1, 2, 2, dtype=torch.bool)), ValueError, "num_heads"),
        (
            lambda: from_torch_mha_mask(torch.ones(3, 2, 2, dtype=torch.bool), 2),
            ValueError,
            "B \\*",
        ),
        (
            lambda: to_torch_key_padding_mask(torch.ones(2, 2, 2, dtype=torch.bool)),
            ValueError,
            "B, 1, 1",
        ),
    ],
)
def test_mask_builders_reject_bad_input(call, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_torch_polarity_round_trips() -> None:
    causal = causal_mask(4)
    assert torch.equal(to_torch_mha_mask(causal), ~causal)
    assert torch.equal(from_torch_mha_mask(to_torch_mha_mask(causal)), causal)
    per_head = torch.rand(2, 3, 4, 5, generator=torch.Generator().manual_seed(0)) > 0.5
    folded = to_torch_mha_mask(per_head, num_heads=3)
    assert folded.shape == (6, 4, 5)
    assert torch.equal(folded[4], ~per_head[1, 1])  # batch-major, as torch folds (b * H + h)
    assert torch.equal(from_torch_mha_mask(folded, num_heads=3), per_head)
    padding = padding_mask([2, 3], 3)
    assert torch.equal(to_torch_key_padding_mask(padding), ~padding[:, 0, 0])
    broadcast = to_torch_mha_mask(
        padding, num_heads=2
    )  # (B, 1, 1, T) expands over heads and queries
    assert broadcast.shape == (4, 1, 3) and torch.equal(broadcast[3, 0], ~padding[1, 0, 0])


def test_converted_masks_drive_torch_multihead_attention_the_same_way() -> None:
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 4, 8)
    causal = causal_mask(4)
    masked_out, masked_weights = module(x, x, x, attn_mask=to_torch_mha_mask(causal))
    assert (masked_weights[:, 0, 1:] == 0).all()  # query 0 sees only key 0
    per_head = to_torch_mha_mask(causal.expand(2, 2, 4, 4), num_heads=2)
    out_folded, _ = module(x, x, x, attn_mask=per_head)
    torch.testing.assert_close(out_folded, masked_out)
