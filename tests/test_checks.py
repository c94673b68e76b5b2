"""Each checker accepts a right answer and explains a wrong one, never raising."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from attnlib import checks
from attnlib.checks import CheckResult


def _not_done(*_: object) -> None:
    raise NotImplementedError("write the function body")


def _crashes(*_: object) -> None:
    raise ZeroDivisionError("oops")


def _softmax_no_shift(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)


def _softmax_stable(x: torch.Tensor) -> torch.Tensor:
    return _softmax_no_shift(x - x.max(-1, keepdim=True).values)


def _naive(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.softmax(x @ x.transpose(-2, -1), -1)
    return w @ x, w


def _naive_reversing_all_dims(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # What x.T does: reverse every dim, which is right for (T, C) but wrong for (B, T, C).
    w = torch.softmax(x @ x.permute(*reversed(range(x.dim()))), -1)
    return w @ x, w


def _scaled(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.softmax(x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1]), -1)
    return w @ x, w


def _causal(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    t = x.shape[-2]
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    w = torch.softmax((x @ x.transpose(-2, -1)).masked_fill(future, -torch.inf), -1)
    return w @ x, w


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1)
    return w @ v, w


def _attend_scaled_by_d_v(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), -1)
    return w @ v, w


def _split(x: torch.Tensor, h: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.view(b, t, h, c // h).transpose(1, 2)


def _split_wrong(x: torch.Tensor, h: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.reshape(b, h, t, c // h)  # mixes tokens into heads


def _merge(x: torch.Tensor) -> torch.Tensor:
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


def _mha(x, w_q, w_k, w_v, w_o, h, scale_by_head=True):
    q, k, v = _split(x @ w_q, h), _split(x @ w_k, h), _split(x @ w_v, h)
    d = q.shape[-1] if scale_by_head else x.shape[-1]
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), -1)
    return _merge(w @ v) @ w_o


def _pe(max_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    p = torch.arange(max_len, dtype=torch.float64)[:, None]
    angle = p / base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


def _rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    t, d = x.shape[-2], x.shape[-1]
    angle = torch.arange(t, dtype=x.dtype)[:, None] * base ** (
        -torch.arange(0, d, 2, dtype=x.dtype) / d
    )
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * torch.cos(angle) - odd * torch.sin(angle)
    out[..., 1::2] = even * torch.sin(angle) + odd * torch.cos(angle)
    return out


def _padding(lengths: list[int], max_len: int) -> torch.Tensor:
    return (torch.arange(max_len) < torch.tensor(lengths)[:, None])[:, None, None, :]


def _masked(q, k, v, mask, fill=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min if fill is None else fill)
    w = torch.softmax(scores, -1)
    if fill is None:
        w = w.masked_fill(~mask, 0.0)
    return w @ v, w


def _ln(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)


def _online_step(m: torch.Tensor, total: torch.Tensor, block: torch.Tensor) -> tuple:
    new_max = torch.maximum(m, block.max())
    return new_max, total * torch.exp(m - new_max) + torch.exp(block - new_max).sum()


def _online_step_without_rescaling(
    m: torch.Tensor, total: torch.Tensor, block: torch.Tensor
) -> tuple:
    new_max = torch.maximum(m, block.max())
    return new_max, total + torch.exp(block - new_max).sum()


def _tiled(q, k, v, block: int, subtract_max: bool) -> torch.Tensor:
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype)
    total = torch.zeros_like(m)
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for start in range(0, k.shape[-2], block):
        s = q @ k[..., start : start + block, :].transpose(-1, -2) / math.sqrt(q.shape[-1])
        if subtract_max:
            new_max = torch.maximum(m, s.amax(-1, keepdim=True))
        else:
            new_max = torch.zeros_like(m)
        p = torch.exp(s - new_max)
        rescale = torch.exp(m - new_max) if subtract_max else torch.ones_like(m)
        total = total * rescale + p.sum(-1, keepdim=True)
        out = out * rescale + p @ v[..., start : start + block, :]
        m = new_max
    return out / total


CHECKERS: list[tuple[Callable[..., CheckResult], Callable, Callable, str]] = [
    # checker, a right answer, a wrong answer, a phrase the report must contain
    (checks.check_dot, lambda a, b: (a * b).sum(-1), lambda a, b: (a * b).sum(), "batch of 3"),
    (
        checks.check_cosine_similarity,
        lambda a, b: (a * b).sum() / (a.norm() * b.norm()),
        lambda a, b: (a * b).sum() / a.norm(),
        "same direction, different lengths",
    ),
    (checks.check_score_table, lambda x: x @ x.T, lambda x: x.T @ x, "shape"),
    (checks.check_naive_self_attention, _naive, lambda x: _naive(x)[0], "pair (out, weights)"),
    (checks.check_scaled_self_attention, _scaled, _naive, "math.sqrt"),
    (checks.check_causal_self_attention, _causal, _naive, "-inf"),
    (checks.check_scaled_dot_product_attention, _attend, _attend_scaled_by_d_v, "√d_k"),
    (
        checks.check_attention_head,
        lambda x, w_q, w_k, w_v: _attend(x @ w_q, x @ w_k, x @ w_v),
        lambda x, w_q, w_k, w_v: _attend(x @ w_q, x @ w_k, x),
        "x @ w_v",
    ),
    (
        checks.check_cross_attention,
        lambda y, x, w_q, w_k, w_v: _attend(y @ w_q, x @ w_k, x @ w_v),
        lambda y, x, w_q, w_k, w_v: _attend(x @ w_q, y @ w_k, y @ w_v),
        "queries come from y",
    ),
    (checks.check_split_heads, _split, _split_wrong, "transpose(1, 2)"),
    (checks.check_merge_heads, _merge, lambda x: x.reshape(x.shape[0], x.shape[2], -1), "reverse"),
    (
        checks.check_multi_head_attention,
        _mha,
        lambda *args: _mha(*args, scale_by_head=False),
        "1/√D",
    ),
    (checks.check_sinusoidal_encoding, _pe, lambda t, d: _pe(t, d, base=1000.0), "10000"),
    (checks.check_rotary, _rope, lambda x: _rope(x, base=1000.0), "10000"),
    (
        checks.check_causal_mask,
        lambda t: torch.ones(t, t, dtype=torch.bool).tril(),
        lambda t: torch.ones(t, t, dtype=torch.bool).triu(1),
        "True means 'may attend'",
    ),
    (
        checks.check_padding_mask,
        _padding,
        lambda lengths, n: _padding(lengths, n)[:, 0, 0],
        "[:, None, None, :]",
    ),
    (
        checks.check_feed_forward,
        lambda x, w1, b1, w2, b2: torch.relu(x @ w1 + b1) @ w2 + b2,
        lambda x, w1, b1, w2, b2: torch.relu(x @ w1 @ w2 + b2),
        "between the two linear maps",
    ),
    (
        checks.check_layer_norm,
        lambda x: (
            (x - x.mean(-1, keepdim=True))
            / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)
        ),
        lambda x: (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5),
        "unbiased=False",
    ),
    (
        checks.check_residual_block,
        lambda x, f, pre: x + f(_ln(x)) if pre else _ln(x + f(x)),
        lambda x, f, pre: _ln(x + f(x)),
        "pre-norm",
    ),
    (
        checks.check_label_smoothed_loss,
        lambda z, y, e: torch.nn.functional.cross_entropy(z, y, label_smoothing=e),
        lambda z, y, e: torch.nn.functional.cross_entropy(z, y),
        "ε",
    ),
    (
        checks.check_warmup_schedule,
        lambda s, d, w: d**-0.5 * min(s**-0.5, s * w**-1.5),
        lambda s, d, w: d**-0.5 * s**-0.5,
        "linear rise",
    ),
    (
        checks.check_temperature_probs,
        lambda z, t: torch.softmax(z / t, -1),
        lambda z, t: torch.softmax(z * t, -1),
        "divide the logits",
    ),
    (
        checks.check_top_k_logits,
        lambda z, k: z.masked_fill(z < z.topk(k, -1).values[:, -1:], -torch.inf),
        lambda z, k: z.masked_fill(z <= z.topk(k, -1).values[:, -1:], -torch.inf),
        "k-th largest",
    ),
    (
        checks.check_mean_pool,
        lambda h, m: (h * m[..., None]).sum(1) / m.sum(1, keepdim=True),
        lambda h, m: (h * m[..., None]).mean(1),
        "number of real tokens",
    ),
    (
        checks.check_previous_token_share,
        lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1),
        lambda w: w.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / w.shape[-1],
        "T-1",
    ),
    (
        checks.check_semantic_search,
        lambda q, c, k: (c / c.norm(dim=1, keepdim=True) @ q).topk(k).indices,
        lambda q, c, k: (c @ q).topk(k).indices,
        "normalise the rows",
    ),
    (
        checks.check_attention_flops,
        lambda bh, t_q, t_k, d: 4 * bh * t_q * t_k * d,
        lambda bh, t_q, t_k, d: 2 * bh * t_q * t_k * d,
        "4 FLOPs",
    ),
    (
        checks.check_online_softmax_step,
        _online_step,
        _online_step_without_rescaling,
        "exp(m - m_new)",
    ),
    (
        checks.check_tiled_attention,
        lambda q, k, v, block: _tiled(q, k, v, block, subtract_max=True),
        lambda q, k, v, block: _tiled(q, k, v, block, subtract_max=False),
        "overflows",
    ),
    (
        checks.check_masked_attention,
        _masked,
        lambda q, k, v, mask: _masked(q, k, v, mask, fill=-torch.inf),
        "NaN",
    ),
]


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_right_answer_passes(checker, right, wrong, phrase) -> None:
    result = checker(right)
    assert result.passed and bool(result) and result.done
    assert repr(result).startswith("✓") and "correct" in repr(result)


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_wrong_answer_is_explained(checker, right, wrong, phrase) -> None:
    result = checker(wrong)
    assert not result.passed and result.done
    assert result.message.startswith("✗") and "case '" in result.message
    assert phrase in result.message and "hint:" in result.message


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_unfinished_exercise_is_not_done_yet(checker, right, wrong, phrase) -> None:
    result = checker(_not_done)
    assert not result.passed and not result.done
    assert "not done yet" in result.message and "write the function body" in result.message


@pytest.mark.parametrize(("checker", "right", "wrong", "phrase"), CHECKERS)
def test_learner_exception_is_reported_not_raised(checker, right, wrong, phrase) -> None:
    result = checker(_crashes)
    assert not result.passed
    assert "raised ZeroDivisionError: oops" in result.message and "hint:" in result.message


def test_transpose_of_a_batch_gets_a_specific_hint() -> None:
    result = checks.check_naive_self_attention(_naive_reversing_all_dims)
    assert "batch" in result.message and "transpose(-2, -1)" in result.message
