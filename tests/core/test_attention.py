"""scaled_dot_product_attention against PyTorch's, plus its properties and errors."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from attention_shapes import EMPTY_SHAPES
from hypothesis import given
from hypothesis import strategies as st

from attnlib import causal_mask, padding_mask, scaled_dot_product_attention
from attnlib.attention import fused_attention

# (q shape, k shape, v shape): batch dims, T_q ≠ T_k, d_v ≠ d_k.
SHAPES = [
    ((3, 4), (3, 4), (3, 4)),
    ((2, 4), (5, 4), (5, 3)),
    ((2, 3, 4), (2, 6, 4), (2, 6, 7)),
    ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 2)),
    ((1, 2, 1, 6), (1, 2, 9, 6), (1, 2, 9, 6)),
]


def _qkv(shapes, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes)


def _mask_shapes(q_shape: tuple[int, ...], k_shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every way a mask may broadcast to the scores (..., T_q, T_k)."""
    t_q, t_k = q_shape[-2], k_shape[-2]
    batch = q_shape[:-2]
    shapes = [(t_q, t_k), (1, t_k), (t_q, 1), (*batch, t_q, t_k)]
    if batch:
        shapes.append((*(1 for _ in batch), t_q, t_k))
        shapes.append((batch[0], *(1 for _ in batch[1:]), 1, t_k))  # padding-style
    return shapes


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_equals_torch_without_mask(shapes, dtype: torch.dtype) -> None:
    q, k, v = _qkv(shapes, dtype)
    out, weights = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    expected_weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)
    torch.testing.assert_close(weights, expected_weights)
    assert out.shape == (*q.shape[:-1], v.shape[-1])
    assert weights.shape == (*q.shape[:-1], k.shape[-2])


SHAPES_AND_MASKS = [
    (shapes, mask_shape) for shapes in SHAPES for mask_shape in _mask_shapes(shapes[0], shapes[1])
]


@pytest.mark.parametrize(("shapes", "mask_shape"), SHAPES_AND_MASKS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_equals_torch_with_every_broadcastable_bool_mask(
    shapes: tuple[tuple[int, ...], ...], mask_shape: tuple[int, ...], dtype: torch.dtype
) -> None:
    q, k, v = _qkv(shapes, dtype)
    g = torch.Generator().manual_seed(len(mask_shape))
    mask = torch.rand(mask_shape, generator=g) > 0.4
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected)
    blocked = ~mask.expand_as(weights)
    assert (weights[blocked] == 0).all(), "masked weights must be exactly 0"


@pytest.mark.parametrize("shapes", SHAPES[1:])
def test_causal_and_padding_masks_equal_torch(shapes) -> None:
    q, k, v = _qkv(shapes)
    t_q, t_k = q.shape[-2], k.shape[-2]
    causal = causal_mask(t_q, t_k)
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, mask=causal)[0],
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal),
    )
    lengths = torch.arange(1, q.shape[0] + 1).clamp(max=t_k)
    padding = padding_mask(lengths, t_k)  # (B, 1, 1, T_k)
    if q.dim() == 3:
        padding = padding[:, 0]  # (B, 1, T_k) for 3-d inputs
    if q.dim() >= 3:
        torch.testing.assert_close(
            scaled_dot_product_attention(q, k, v, mask=padding)[0],
            F.scaled_dot_product_attention(q, k, v, attn_mask=padding),
        )


@pytest.mark.parametrize("scale", [0.1, 1.0, 3.0])
def test_custom_scale_equals_torch(scale: float) -> None:
    q, k, v = _qkv(SHAPES[2])
    torch.testing.assert_close(
        scaled_dot_product_attention(q, k, v, scale=scale)[0],
        F.scaled_dot_product_attention(q, k, v, scale=scale),
    )


def test_hand_worked_example() -> None:
    # One query equally similar to two keys: it averages their values.
    q = torch.tensor([[1.0, 0.0]])
    k = torch.tensor([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])
    v = torch.tensor([[2.0], [4.0], [100.0]])
    e = math.exp(math.sqrt(2.0))  # score 1/√2 vs −1/√2: a gap of √2
    out, weights = scaled_dot_product_attention(q, k, v)
    expected_weights = torch.tensor([[e, e, 1.0]]) / (2 * e + 1)
    torch.testing.assert_close(weights, expected_weights)
    torch.testing.assert_close(out, expected_weights @ v)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_fully_masked_row_gives_zeros_not_nan(dtype: torch.dtype) -> None:
    q, k, v = _qkv(((2, 3, 4), (2, 5, 4), (2, 5, 6)), dtype)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False  # query 1 may attend to nothing
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert not torch.isnan(out).any() and not torch.isnan(weights).any()
    assert (weights[:, 1] == 0).all() and (out[:, 1] == 0).all()
    tolerance = {"atol": 2e-2, "rtol": 2e-2} if dtype in (torch.float16, torch.bfloat16) else {}
    torch.testing.assert_close(weights[:, [0, 2]].sum(-1).float(), torch.ones(2, 2), **tolerance)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected, **tolerance)


def test_half_precision_masking_with_large_scores() -> None:
    # Scores near the float16 limit: a -1e9 fill would overflow; finfo.min does not.
    q = torch.full((1, 2, 4), 10.0, dtype=torch.float16)
    k = torch.full((1, 3, 4), 10.0, dtype=torch.float16)
    v = torch.arange(6, dtype=torch.float16).reshape(1, 3, 2)
    mask = torch.tensor([[True, False, True], [False, False, False]])
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    assert torch.isfinite(out).all() and torch.isfinite(weights).all()
    torch.testing.assert_close(weights[0, 0], torch.tensor([0.5, 0.0, 0.5], dtype=torch.float16))


def test_gradients_are_finite_with_fully_masked_rows() -> None:
    q, k, v = (t.requires_grad_() for t in _qkv(((3, 4), (5, 4), (5, 2)), torch.float64))
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[0] = False
    out, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    out.sum().backward()
    for tensor in (q, k, v):
        assert tensor.grad is not None and torch.isfinite(tensor.grad).all()
    assert (q.grad[0] == 0).all()


def test_gradients_equal_torch() -> None:
    shapes = ((2, 3, 4), (2, 5, 4), (2, 5, 3))
    ours = [t.requires_grad_() for t in _qkv(shapes, torch.float64)]
    theirs = [t.detach().clone().requires_grad_() for t in ours]
    mask = torch.rand(3, 5, generator=torch.Generator().manual_seed(3)) > 0.3
    upstream = torch.randn(2, 3, 3, dtype=torch.float64)
    (scaled_dot_product_attention(*ours, mask=mask)[0] * upstream).sum().backward()
    (F.scaled_dot_product_attention(*theirs, attn_mask=mask) * upstream).sum().backward()
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a.grad, b.grad)


class TestDropout:
    def test_zero_dropout_is_no_dropout(self) -> None:
        q, k, v = _qkv(SHAPES[2])
        torch.testing.assert_close(
            scaled_dot_product_attention(q, k, v, dropout_p=0.0)[0],
            scaled_dot_product_attention(q, k, v)[0],
        )

    def test_reproducible_with_a_seed_and_consistent(self) -> None:
        q, k, v = _qkv(((4, 16, 8), (4, 16, 8), (4, 16, 8)))
        torch.manual_seed(7)
        out_a, weights_a = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
        torch.manual_seed(7)
        out_b, _ = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
        torch.testing.assert_close(out_a, out_b)
        torch.testing.assert_close(out_a, weights_a @ v)  # out uses the dropped weights
        clean = scaled_dot_product_attention(q, k, v)[1]
        dropped = weights_a == 0
        assert 0.4 < dropped.float().mean() < 0.6
        torch.testing.assert_close(weights_a[~dropped], clean[~dropped] * 2)  # kept: 1/(1-p)


class TestErrors:
    def test_mismatched_d_k_names_both_shapes(self) -> None:
        q, k, v = _qkv(((3, 4), (5, 6), (5, 6)))
        with pytest.raises(ValueError, match=r"same last dim d_k.*\(3, 4\).*\(5, 6\)"):
            scaled_dot_product_attention(q, k, v)

    def test_mismatched_key_value_lengths(self) -> None:
        q, k, v = _qkv(((3, 4), (5, 4), (6, 4)))
        with pytest.raises(ValueError, match=r"same length T_k.*\(5, 4\).*\(6, 4\)"):
            scaled_dot_product_attention(q, k, v)

    def test_mask_that_does_not_broadcast_names_both_shapes(self) -> None:
        q, k, v = _qkv(((2, 3, 4), (2, 5, 4), (2, 5, 4)))
        with pytest.raises(ValueError, match=r"mask of shape \(3, 3\).*\(2, 3, 5\)"):
            scaled_dot_product_attention(q, k, v, mask=torch.ones(3, 3, dtype=torch.bool))
        with pytest.raises(ValueError, match="does not broadcast"):
            # Broadcastable in torch's sense, but it would enlarge the scores.
            scaled_dot_product_attention(q, k, v, mask=torch.ones(4, 2, 3, 5, dtype=torch.bool))

    @pytest.mark.parametrize("mask", [torch.zeros(3, 5), torch.ones(3, 5, dtype=torch.long)])
    def test_non_bool_mask(self, mask: torch.Tensor) -> None:
        q, k, v = _qkv(((3, 4), (5, 4), (5, 4)))
        with pytest.raises(TypeError, match=r"mask must be a bool torch\.Tensor .*got dtype"):
            scaled_dot_product_attention(q, k, v, mask=mask)

    def test_other_bad_inputs(self) -> None:
        q, k, v = _qkv(((3, 4), (5, 4), (5, 4)))
        with pytest.raises(TypeError, match=r"mask must be a bool torch\.Tensor"):
            scaled_dot_product_attention(q, k, v, mask=[[True]])  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"k must be a torch\.Tensor"):
            scaled_dot_product_attention(q, k.tolist(), v)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., T_q, d_k\)"):
            scaled_dot_product_attention(q[0], k, v)
        with pytest.raises(TypeError, match="share a dtype"):
            scaled_dot_product_attention(q, k, v.double())
        with pytest.raises(ValueError, match="dropout_p"):
            scaled_dot_product_attention(q, k, v, dropout_p=1.0)
        with pytest.raises(TypeError, match="dropout_p must be a number"):
            scaled_dot_product_attention(q, k, v, dropout_p="0.1")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="scale must be a number"):
            scaled_dot_product_attention(q, k, v, scale=torch.tensor(0.5))  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="q must have a floating-point dtype"):
            scaled_dot_product_attention(q.long(), k, v)
        with pytest.raises(ValueError, match=r"leading dims .* do not broadcast"):
            scaled_dot_product_attention(q.expand(2, 3, 4), k.expand(3, 5, 4), v)


# --- empty inputs: a defined answer, never torch's IndexError ------------------------------

# EMPTY_SHAPES (tests/support/attention_shapes.py): T_q = 0, nothing to compute; T_k = 0,
# every query has nothing to attend to (output 0).


@pytest.mark.parametrize("shapes", EMPTY_SHAPES)
@pytest.mark.parametrize("with_mask", [False, True])
def test_empty_queries_or_keys(shapes, with_mask: bool) -> None:
    q, k, v = _qkv(shapes)
    t_q, t_k = q.shape[-2], k.shape[-2]
    mask = torch.ones(t_q, t_k, dtype=torch.bool) if with_mask else None
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    fused = fused_attention(q, k, v, mask=mask)
    assert out.shape == fused.shape == (*q.shape[:-1], v.shape[-1])  # (..., T_q, d_v)
    assert weights.shape == (*q.shape[:-1], t_k)  # (..., T_q, T_k)
    for tensor in (out, weights, fused):
        assert not tensor.isnan().any()
    assert torch.equal(out, torch.zeros_like(out)) and torch.equal(fused, torch.zeros_like(fused))


# --- properties -----------------------------------------------------------------------------

dims = st.integers(min_value=1, max_value=6)


@st.composite
def attention_inputs(draw: st.DrawFn) -> tuple[torch.Tensor, ...]:
    batch, t_q, t_k, d_k, d_v = (draw(dims) for _ in range(5))
    seed = draw(st.integers(0, 2**16))
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, t_q, d_k, generator=g, dtype=torch.float64) * 3
    k = torch.randn(batch, t_k, d_k, generator=g, dtype=torch.float64) * 3
    v = torch.randn(batch, t_k, d_v, generator=g, dtype=torch.float64)
    mask = torch.rand(batch, t_q, t_k, generator=g) > draw(st.floats(0.0, 0.9))
    return q, k, v, mask


@given(attention_inputs())
def test_rows_sum_to_one_or_zero_and_masked_weights_are_zero(inputs) -> None:
    q, k, v, mask = inputs
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    sums = weights.sum(-1)
    expected = mask.any(-1).to(sums.dtype)  # 1 where the row may attend somewhere, else 0
    torch.testing.assert_close(sums, expected)
    assert (weights[~mask] == 0).all()
    assert torch.isfinite(out).all()


@given(attention_inputs(), st.integers(0, 5))
def test_changing_the_future_changes_nothing_earlier(inputs, t: int) -> None:
    q, k, v, _ = inputs
    t_len = min(q.shape[1], k.shape[1])
    q, k, v = q[:, :t_len], k[:, :t_len], v[:, :t_len]
    t = min(t, t_len - 1)
    mask = causal_mask(t_len)
    before, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    k2, v2 = k.clone(), v.clone()
    k2[:, t + 1 :] += 5.0
    v2[:, t + 1 :] -= 3.0
    after, _ = scaled_dot_product_attention(q, k2, v2, mask=mask)
    torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1])


@given(attention_inputs(), st.integers(1, 4))
def test_padding_changes_nothing_else(inputs, extra: int) -> None:
    q, k, v, _ = inputs
    lone, _ = scaled_dot_product_attention(q, k, v)
    g = torch.Generator().manual_seed(extra)
    k_pad = torch.cat(
        [k, torch.randn(k.shape[0], extra, k.shape[2], generator=g, dtype=k.dtype)], 1
    )
    v_pad = torch.cat(
        [v, torch.randn(v.shape[0], extra, v.shape[2], generator=g, dtype=v.dtype)], 1
    )
    lengths = torch.full((k.shape[0],), k.shape[1])
    mask = padding_mask(lengths, k_pad.shape[1])[:, 0]  # (B, 1, T_k + extra)
    padded, _ = scaled_dot_product_attention(q, k_pad, v_pad, mask=mask)
    torch.testing.assert_close(padded, lone)


@given(attention_inputs())
def test_permutation_equivariance_without_positions(inputs) -> None:
    q, k, v, _ = inputs
    g = torch.Generator().manual_seed(0)
    perm_q = torch.randperm(q.shape[1], generator=g)
    perm_k = torch.randperm(k.shape[1], generator=g)
    out, _ = scaled_dot_product_attention(q, k, v)
    # Reordering the keys with their values changes nothing; reordering queries reorders outputs.
    shuffled, _ = scaled_dot_product_attention(q[:, perm_q], k[:, perm_k], v[:, perm_k])
    torch.testing.assert_close(shuffled, out[:, perm_q])


# --- fused_attention: PyTorch's kernel behind attnlib's conventions -------------------------


@pytest.mark.parametrize(("shapes", "mask_shape"), SHAPES_AND_MASKS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_equals_the_math_path_with_every_mask(shapes, mask_shape, dtype) -> None:
    q, k, v = _qkv(shapes, dtype)
    g = torch.Generator().manual_seed(1)
    mask = torch.rand(mask_shape, generator=g) > 0.4
    mask[..., 0, :] = False  # a query row (or all of them) with nothing to attend to
    expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    got = fused_attention(q, k, v, mask=mask)
    assert not got.isnan().any()
    tolerance = 1e-12 if dtype == torch.float64 else 2e-6
    torch.testing.assert_close(got, expected, atol=tolerance, rtol=tolerance)


@pytest.mark.parametrize("shapes", SHAPES)
def test_fused_without_mask_and_with_scale(shapes) -> None:
    q, k, v = _qkv(shapes, torch.float64)
    torch.testing.assert_close(fused_attention(q, k, v), scaled_dot_product_attention(q, k, v)[0])
    torch.testing.assert_close(
        fused_attention(q, k, v, scale=0.3), scaled_dot_product_attention(q, k, v, scale=0.3)[0]
    )


def test_fused_checks_its_input_like_the_math_path() -> None:
    q, k, v = _qkv(SHAPES[1])
    with pytest.raises(ValueError, match="same last dim d_k"):
        fused_attention(q, k[..., :2], v)
    with pytest.raises(TypeError, match="True = may attend"):
        fused_attention(q, k, v, mask=torch.zeros(2, 5))
    with pytest.raises(ValueError, match="does not broadcast"):
        fused_attention(q, k, v, mask=torch.ones(3, 5, dtype=torch.bool))
