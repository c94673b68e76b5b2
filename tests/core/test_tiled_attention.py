"""The online softmax and tiled attention against the direct computation."""

from __future__ import annotations

import math

import pytest
import torch
from attention_shapes import EMPTY_SHAPES
from hypothesis import given
from hypothesis import strategies as st

from attnlib import (
    OnlineSoftmaxState,
    causal_mask,
    online_softmax,
    online_softmax_step,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
    tiled_attention,
)

# (q shape, k shape, v shape): T_q ≠ T_k, d_v ≠ d_k, lengths that tiles do not divide.
SHAPES = [
    ((1, 4), (1, 4), (1, 4)),
    ((7, 4), (5, 4), (5, 3)),
    ((2, 3, 9, 8), (2, 3, 11, 8), (2, 3, 11, 5)),
    ((2, 1, 300, 16), (2, 1, 300, 16), (2, 1, 300, 16)),
]
TILE_SIZES = [1, 3, 64, 1000]


def _qkv(shapes, dtype=torch.float64, seed=0, spread=1.0):
    g = torch.Generator().manual_seed(seed)
    return tuple(
        spread * torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in shapes
    )


def _masks(q_shape, k_shape) -> dict[str, torch.Tensor | None]:
    t_q, t_k = q_shape[-2], k_shape[-2]
    g = torch.Generator().manual_seed(3)
    random = torch.rand(*q_shape[:-2], t_q, t_k, generator=g) > 0.5
    empty_rows = random.clone()
    empty_rows[..., ::2, :] = False  # every other query may attend to nothing
    lengths = [max(1, t_k - 2 * i) for i in range(q_shape[0])] if len(q_shape) > 2 else [t_k - 1]
    padding = padding_mask(lengths, t_k)  # (B, 1, 1, T_k): over heads and queries
    if len(q_shape) == 2:
        padding = padding[0, 0]  # (1, T_k)
    return {
        "none": None,
        "causal": causal_mask(t_q, t_k) if t_k >= t_q else None,
        "padding": padding,
        "random": random,
        "empty rows": empty_rows,
    }


CASES = [
    (shapes, kind)
    for shapes in SHAPES
    for kind in ("none", "causal", "padding", "random", "empty rows")
    if not (kind == "causal" and shapes[0][-2] > shapes[1][-2])  # causal needs T_k >= T_q
]


@pytest.mark.parametrize(
    ("shapes", "kind", "tile_size"),
    [
        (shapes, kind, tile_size)
        for shapes, kind in CASES
        for tile_size in TILE_SIZES
        if not (tile_size == 1 and shapes[0][-2] > 100)  # 90,000 tiles of one score: slow
    ],
)
def test_equals_the_reference_in_float64(shapes, kind: str, tile_size: int) -> None:
    q, k, v = _qkv(shapes)
    mask = _masks(shapes[0], shapes[1])[kind]
    expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    got = tiled_attention(q, k, v, mask=mask, tile_size=tile_size)
    torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize(("shapes", "kind"), CASES)
def test_equals_the_reference_in_float32_within_2e_5(shapes, kind: str) -> None:
    q, k, v = _qkv(shapes, torch.float32)
    mask = _masks(shapes[0], shapes[1])[kind]
    expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    got = tiled_attention(q, k, v, mask=mask, tile_size=64)
    assert got.dtype == torch.float32
    assert (got - expected).abs().max() < 2e-5


def test_rows_with_nothing_to_attend_give_zeros_not_nan() -> None:
    q, k, v = _qkv(SHAPES[2])
    mask = torch.zeros(9, 11, dtype=torch.bool)
    mask[4:, :3] = True  # rows 0-3 blocked everywhere; rows 4+ only in the first block
    out = tiled_attention(q, k, v, mask=mask, tile_size=3)
    assert not out.isnan().any()
    assert torch.equal(out[..., :4, :], torch.zeros_like(out[..., :4, :]))
    expected, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    torch.testing.assert_close(out, expected)


def test_late_first_key_with_very_negative_scores() -> None:
    # A row whose only allowed key is in the last block and scores -2000: a reference
    # point of 0 instead of the running maximum would underflow e^{-2000} to 0.
    q = torch.full((1, 1, 4), 10.0)
    k = torch.full((1, 6, 4), -100.0)
    v = torch.randn(1, 6, 2, generator=torch.Generator().manual_seed(0))
    mask = torch.tensor([[False] * 5 + [True]])
    out = tiled_attention(q, k, v, mask=mask, tile_size=2)
    torch.testing.assert_close(out, v[:, 5:6])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_stable_for_large_scores(dtype: torch.dtype) -> None:
    q, k, v = _qkv(SHAPES[2], dtype, spread=40.0)  # scores in the thousands
    out = tiled_attention(q, k, v, tile_size=4)
    assert torch.isfinite(out).all()
    expected, _ = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)


def test_broadcast_batch_dims_and_custom_scale() -> None:
    q, k, v = _qkv(((2, 3, 6, 4), (1, 3, 5, 4), (1, 3, 5, 2)))
    expected, _ = scaled_dot_product_attention(q, k, v, scale=0.7)
    torch.testing.assert_close(tiled_attention(q, k, v, tile_size=2, scale=0.7), expected)


@pytest.mark.parametrize("kind", ["none", "causal", "padding", "random", "empty rows"])
@pytest.mark.parametrize("tile_size", [3, 4, 64])
def test_gradients_equal_the_reference(kind: str, tile_size: int) -> None:
    # The running maximum is detached and the tile updated in place: the gradients must
    # still be exact, for q, k and v, with every kind of mask (dropout off).
    q, k, v = (t.requires_grad_() for t in _qkv(SHAPES[2]))
    mask = _masks(SHAPES[2][0], SHAPES[2][1])[kind]
    upstream = torch.randn(2, 3, 9, 5, generator=torch.Generator().manual_seed(1), dtype=q.dtype)
    out = tiled_attention(q, k, v, mask, tile_size=tile_size)
    ours = torch.autograd.grad((out * upstream).sum(), (q, k, v))
    expected_out, _ = scaled_dot_product_attention(q, k, v, mask)
    reference = torch.autograd.grad((expected_out * upstream).sum(), (q, k, v))
    for got, expected in zip(ours, reference, strict=True):
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)


def test_the_same_loop_with_and_without_autograd() -> None:
    q, k, v = _qkv(SHAPES[2])
    mask = _masks(SHAPES[2][0], SHAPES[2][1])["random"]
    with torch.no_grad():
        inference = tiled_attention(q, k, v, mask, tile_size=4)
    training = tiled_attention(*(t.clone().requires_grad_() for t in (q, k, v)), mask, tile_size=4)
    assert training.requires_grad
    assert torch.equal(training.detach(), inference)


@pytest.mark.slow  # averages many draws: `make unit` runs it, `make unit-fast` does not
def test_dropout_drops_normalised_weights() -> None:
    # Averaged over many draws, dropout with rescaling leaves the expected output unchanged.
    torch.manual_seed(0)
    q, k, v = _qkv(((1, 3, 4), (1, 5, 4), (1, 5, 2)))
    expected, _ = scaled_dot_product_attention(q, k, v)
    draws = torch.stack([tiled_attention(q, k, v, tile_size=2, dropout_p=0.3) for _ in range(4000)])
    assert not torch.allclose(draws[0], expected)
    torch.testing.assert_close(draws.mean(0), expected, atol=0.05, rtol=0)


# Every attention function answers an empty query or key set without torch's IndexError:
# T_q = 0 gives an empty output; T_k = 0 leaves every query with nothing to attend to.
# The shapes are test_attention.py's (tests/support/attention_shapes.py), so the reference and
# the tiled loop face the same cases.


@pytest.mark.parametrize("shapes", EMPTY_SHAPES)
@pytest.mark.parametrize("with_mask", [False, True])
def test_empty_queries_or_keys(shapes, with_mask: bool) -> None:
    q, k, v = _qkv(shapes)
    mask = torch.ones(shapes[0][-2], shapes[1][-2], dtype=torch.bool) if with_mask else None
    out = tiled_attention(q, k, v, mask, tile_size=4)
    expected_shape = (*q.shape[:-1], v.shape[-1])  # (..., T_q, d_v)
    assert out.shape == expected_shape
    assert not out.isnan().any()
    assert torch.equal(out, torch.zeros(expected_shape, dtype=out.dtype))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tile_size": 0}, ValueError, "tile_size must be a positive int, got 0"),
        ({"tile_size": 2.0}, TypeError, "tile_size must be an int"),
        ({"dropout_p": 1.0}, ValueError, r"dropout_p must be in \[0, 1\)"),
        ({"scale": "big"}, TypeError, "scale must be a number"),
    ],
)
def test_bad_arguments(kwargs: dict, error: type[Exception], match: str) -> None:
    q, k, v = _qkv(SHAPES[1])
    with pytest.raises(error, match=match):
        tiled_attention(q, k, v, **kwargs)


def test_bad_input() -> None:
    q, k, v = _qkv(SHAPES[1])
    with pytest.raises(TypeError, match="True = may attend"):
        tiled_attention(q, k, v, mask=torch.ones(7, 5))
    with pytest.raises(ValueError, match="same last dim d_k"):
        tiled_attention(q, k[:, :2], v)


@pytest.mark.parametrize("name", ["q", "k", "v"])
@pytest.mark.parametrize(
    ("value", "match"),
    [
        (math.nan, r"holds NaN \(1 of \d+ values, the first at index \(2, 1\)\)"),
        (
            math.inf,
            r"holds inf \(1 of \d+ values, the first at index \(2, 1\)\); it must be finite",
        ),
        (-math.inf, r"holds inf \(1 of \d+ values.*pass a bool mask instead"),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_non_finite_inputs_are_refused(
    name: str, value: float, match: str, dtype: torch.dtype
) -> None:
    inputs = dict(zip("qkv", _qkv(SHAPES[1], dtype=dtype), strict=True))
    inputs[name][2, 1] = value
    with pytest.raises(ValueError, match=f"^{name} {match}"):
        tiled_attention(**inputs, tile_size=2)


def test_a_tensor_holding_both_nan_and_inf_is_called_nan() -> None:
    q, k, v = _qkv(SHAPES[2])
    v[1, 2, 3, 4], v[0, 0, 0, 0] = math.inf, math.nan
    with pytest.raises(
        ValueError, match=r"^v holds NaN \(1 of 330 values, the first at index \(0, 0, 0, 0\)\)"
    ):
        tiled_attention(q, k, v)


# --- the online softmax ------------------------------------------------------------------


@pytest.mark.parametrize("tile_size", [1, 2, 5, 7, 100])
def test_online_softmax_equals_softmax(tile_size: int) -> None:
    x = torch.randn(4, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 20
    torch.testing.assert_close(online_softmax(x, tile_size), softmax(x), atol=1e-15, rtol=1e-12)


@given(
    st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=40),
    st.integers(1, 50),
)
def test_online_softmax_any_scores_any_tiles(values: list[float], tile_size: int) -> None:
    x = torch.tensor(values, dtype=torch.float64)
    torch.testing.assert_close(online_softmax(x, tile_size), softmax(x), atol=1e-12, rtol=1e-9)


def test_online_softmax_of_blocked_scores() -> None:
    x = torch.tensor([[-math.inf, -math.inf, -math.inf], [0.0, -math.inf, 1.0]])
    out = online_softmax(x, 2)
    assert torch.equal(out[0], torch.zeros(3))
    torch.testing.assert_close(out[1], softmax(x[1]))


def test_step_keeps_the_running_max_and_sum() -> None:
    x = torch.tensor([1.0, 3.0, 0.5, 2.0, 6.0, 1.0, -1.0], dtype=torch.float64)
    state = OnlineSoftmaxState(
        torch.tensor(-math.inf, dtype=torch.float64), torch.tensor(0.0, dtype=torch.float64)
    )
    for start in range(0, 7, 3):
        state = online_softmax_step(state, x[start : start + 3])
        seen = x[: start + 3]
        assert state.running_max == seen.max()
        torch.testing.assert_close(state.running_sum, torch.exp(seen - seen.max()).sum())


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 4), (2, 0, 0)])
def test_online_softmax_of_nothing_is_empty(shape: tuple[int, ...]) -> None:
    x = torch.empty(shape, dtype=torch.float64)
    out = online_softmax(x, 2)
    assert out.shape == shape and not out.isnan().any()
    assert torch.equal(out, softmax(x))


def test_an_empty_step_changes_nothing() -> None:
    state = OnlineSoftmaxState(torch.tensor([1.0, -math.inf]), torch.tensor([2.0, 0.0]))
    assert online_softmax_step(state, torch.empty(2, 0)) is state


def test_online_softmax_bad_input() -> None:
    with pytest.raises(ValueError, match="tile_size"):
        online_softmax(torch.ones(3), 0)
    with pytest.raises(TypeError, match="floating-point"):
        online_softmax(torch.ones(3, dtype=torch.long), 2)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., n\)"):
        online_softmax(torch.tensor(1.0), 2)
