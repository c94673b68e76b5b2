"""MultiHeadAttention against torch.nn.MultiheadAttention and a by-hand computation."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from attnlib import (
    MultiHeadAttention,
    causal_mask,
    merge_heads,
    padding_mask,
    split_heads,
    to_torch_key_padding_mask,
    to_torch_mha_mask,
)


def _pair(d_model: int, num_heads: int, bias: bool, seed: int = 0):
    torch.manual_seed(seed)
    theirs = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True)
    if bias:  # torch initialises biases to 0; make them count
        with torch.no_grad():
            theirs.in_proj_bias.normal_()
            theirs.out_proj.bias.normal_()
    return MultiHeadAttention.from_torch(theirs), theirs


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(
    ("d_model", "num_heads", "t_q", "t_k"), [(8, 1, 3, 3), (16, 4, 5, 7), (12, 3, 1, 4)]
)
def test_from_torch_same_outputs_and_per_head_weights(
    bias: bool, d_model: int, num_heads: int, t_q: int, t_k: int
) -> None:
    ours, theirs = _pair(d_model, num_heads, bias)
    g = torch.Generator().manual_seed(1)
    query, memory = (
        torch.randn(2, t_q, d_model, generator=g),
        torch.randn(2, t_k, d_model, generator=g),
    )
    out, weights = ours(query, memory)
    expected_out, expected_weights = theirs(query, memory, memory, average_attn_weights=False)
    torch.testing.assert_close(out, expected_out, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-5)
    _, averaged = theirs(query, memory, memory)  # the default averages over heads
    torch.testing.assert_close(weights.mean(dim=1), averaged, atol=1e-6, rtol=1e-5)
    assert weights.shape == (2, num_heads, t_q, t_k)


def test_from_torch_with_causal_and_padding_masks() -> None:
    ours, theirs = _pair(16, 4, bias=True)
    x = torch.randn(3, 5, 16, generator=torch.Generator().manual_seed(2))
    causal, padding = causal_mask(5), padding_mask([5, 3, 1], 5)
    out, weights = ours(x, mask=causal & padding)  # (B, 1, T, T)
    expected, expected_weights = theirs(
        x,
        x,
        x,
        attn_mask=to_torch_mha_mask(causal),
        key_padding_mask=to_torch_key_padding_mask(padding),
        average_attn_weights=False,
    )
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(weights, expected_weights, atol=1e-6, rtol=1e-5)


def test_same_mask_without_conversion_gives_different_results() -> None:
    """The polarity trap: torch reads True as blocked."""
    ours, theirs = _pair(8, 2, bias=True)
    x = torch.randn(1, 4, 8, generator=torch.Generator().manual_seed(3))
    causal = causal_mask(4)
    out, _ = ours(x, mask=causal)
    wrong, _ = theirs(x, x, x, attn_mask=causal)
    assert not torch.allclose(out, wrong, atol=1e-3)


def test_from_torch_separate_projection_weights_and_float64() -> None:
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64)
    assert theirs.in_proj_weight is not None
    ours = MultiHeadAttention.from_torch(theirs)
    assert ours.w_q.weight.dtype == torch.float64
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    torch.testing.assert_close(ours(x)[0], theirs(x, x, x)[0])


def test_from_torch_not_batch_first() -> None:
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(8, 2)  # (T, B, C) layout
    ours = MultiHeadAttention.from_torch(theirs)
    x = torch.randn(2, 3, 8)
    expected, _ = theirs(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))
    torch.testing.assert_close(ours(x)[0], expected.transpose(0, 1))


def test_forward_equals_a_by_hand_computation() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    mha = mha.double()
    heads = []
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)  # head h's rows of each projection
        q = x @ mha.w_q.weight[cols].T + mha.w_q.bias[cols]
        k = x @ mha.w_k.weight[cols].T + mha.w_k.bias[cols]
        v = x @ mha.w_v.weight[cols].T + mha.w_v.bias[cols]
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(4), -1)
        heads.append(weights @ v)
    expected = torch.cat(heads, dim=-1) @ mha.w_o.weight.T + mha.w_o.bias
    torch.testing.assert_close(mha(x)[0], expected)


def test_split_and_merge_are_inverse() -> None:
    x = torch.arange(2 * 3 * 8, dtype=torch.float32).reshape(2, 3, 8)
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    torch.testing.assert_close(heads[1, 2, 0], x[1, 0, 4:6])  # head 2 = dims 4–5
    torch.testing.assert_close(merge_heads(heads), x)


def test_self_attention_default_and_cross_attention_shapes() -> None:
    mha = MultiHeadAttention(16, 4)
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 9, 16)
    torch.testing.assert_close(mha(x)[0], mha(x, x, x)[0])
    out, weights = mha(x, memory)
    assert out.shape == (2, 5, 16) and weights.shape == (2, 4, 5, 9)


def test_dropout_only_in_training() -> None:
    mha = MultiHeadAttention(16, 4, dropout=0.5)
    x = torch.randn(2, 6, 16)
    mha.eval()
    torch.testing.assert_close(mha(x)[0], mha(x)[0])
    mha.train()
    torch.manual_seed(0)
    first = mha(x)[0]
    torch.manual_seed(0)
    torch.testing.assert_close(mha(x)[0], first)  # reproducible with a seed
    assert not torch.allclose(mha(x)[0], first)  # a different draw differs


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: MultiHeadAttention(10, 3), r"d_model \(10\) must be divisible by num_heads \(3\)"),
        (lambda: MultiHeadAttention(8, 0), "num_heads must be a positive int, got 0"),
        (lambda: MultiHeadAttention(0, 1), "d_model must be a positive int, got 0"),
        (lambda: MultiHeadAttention(8, 2, dropout=1.0), r"dropout must be in \[0, 1\), got 1.0"),
    ],
)
def test_bad_construction(build, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build()
    with pytest.raises(TypeError, match="num_heads must be an int, got float"):
        MultiHeadAttention(8, 2.0)  # type: ignore[arg-type]


def test_bad_inputs() -> None:
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"query must have shape \(B, T, 8\), got \(2, 3, 6\)"):
        mha(torch.randn(2, 3, 6))
    with pytest.raises(ValueError, match=r"query must have shape"):
        mha(torch.randn(3, 8))
    with pytest.raises(ValueError, match=r"key must have shape \(B, T, 8\), got \(2, 4, 6\)"):
        mha(torch.randn(2, 3, 8), torch.randn(2, 4, 6))
    with pytest.raises(TypeError, match="query must have a floating-point dtype"):
        mha(torch.ones(2, 3, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="share the batch size"):
        mha(torch.randn(2, 3, 8), torch.randn(3, 4, 8))
    with pytest.raises(ValueError, match="does not broadcast"):
        mha(torch.randn(2, 3, 8), mask=torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"torch\.nn\.MultiheadAttention"):
        MultiHeadAttention.from_torch(nn.Linear(2, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kdim and vdim"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, kdim=4, vdim=4))
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, add_bias_kv=True))


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("training", [False, True])
def test_need_weights_false_gives_the_same_output_by_the_fused_kernel(
    masked: bool, training: bool
) -> None:
    """need_weights=True: attnlib's function, with weights; False: PyTorch's fused kernel."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).train(training)  # dropout 0: training changes nothing
    query, key = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    mask = padding_mask([7, 3], 7) & causal_mask(5, 7) if masked else None
    with_weights, weights = mha(query, key, mask=mask)
    without, none = mha(query, key, mask=mask, need_weights=False)
    assert weights is not None and weights.shape == (2, 4, 5, 7) and none is None
    torch.testing.assert_close(without, with_weights, atol=1e-6, rtol=1e-6)


def test_each_path_calls_its_function(monkeypatch: pytest.MonkeyPatch) -> None:
    import attnlib.multi_head

    calls = []
    for name in ("attend", "attend_fused"):  # the unchecked paths: MHA checked its inputs
        original = getattr(attnlib.multi_head, name)

        def spy(*args, _name=name, _original=original, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(attnlib.multi_head, name, spy)
    mha, x = MultiHeadAttention(8, 2), torch.randn(1, 3, 8)
    mha(x)
    mha(x, need_weights=False)
    assert calls == ["attend", "attend_fused"]


def test_there_is_no_backend_argument() -> None:
    with pytest.raises(TypeError, match="backend"):
        MultiHeadAttention(8, 2, backend="fused")  # type: ignore[call-arg]
