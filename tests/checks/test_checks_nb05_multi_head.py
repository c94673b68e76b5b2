"""Notebook 05's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(chunk or slicing, view or reshape, transpose or permute, einsum, loops over the heads, float64)
must pass; answers that call attnlib's split or multi-head attention, or PyTorch's, must be
refused.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes

Tensor = torch.Tensor


def _named(report: object, words: str) -> bool:
    return "The mistake:" in str(report) and words in str(report)


# -- Exercise 1 ---------------------------------------------------------------------------------


def split_permute(qkv: Tensor, num_heads: int):
    b, t, c3 = qkv.shape
    d = c3 // 3 // num_heads
    q, k, v = qkv.reshape(b, t, 3, num_heads, d).permute(2, 0, 3, 1, 4)
    return q, k, v


def split_slices(qkv: Tensor, num_heads: int):
    c = qkv.shape[-1] // 3
    parts = [qkv[:, :, i * c : (i + 1) * c] for i in range(3)]
    return tuple(p.unflatten(-1, (num_heads, -1)).transpose(1, 2) for p in parts)


def split_stack_of_heads(qkv: Tensor, num_heads: int):
    out = []
    for part in qkv.split(qkv.shape[-1] // 3, dim=-1):
        out.append(torch.stack(part.chunk(num_heads, dim=-1), dim=1))  # (B, H, T, D)
    return out


def split_with_slash(qkv: Tensor, num_heads: int):
    B, T, C3 = qkv.shape
    C = C3 / 3
    q, k, v = qkv.reshape(B, T, 3, num_heads, C / num_heads).permute(2, 0, 3, 1, 4)
    return q, k, v


def _three(parts):  # a learner's unpacking: three parts, or a ValueError
    q, k, v = parts
    return q, k, v


def _kqv(first, second, third):
    k, q, v = first, second, third  # read the fused projection as keys first
    return q, k, v


SPLIT_RIGHT = {
    "view(B, T, 3, H, D) and permute": split_permute,
    "slices and unflatten": split_slices,
    "chunks stacked per head, as a list": split_stack_of_heads,
    "one tensor (3, B, H, T, D)": lambda qkv, h: torch.stack(split_permute(qkv, h)),
    "contiguous then view": lambda qkv, h: tuple(
        p.contiguous().view(p.shape[0], p.shape[1], h, -1).permute(0, 2, 1, 3)
        for p in qkv.chunk(3, -1)
    ),
}


def _each_part(how: Callable[[Tensor, int], Tensor]) -> Callable:
    return lambda qkv, h: tuple(how(p, h) for p in torch.chunk(qkv, 3, dim=2))


SPLIT_WRONG = {
    "heads first": (
        lambda qkv, h: tuple(
            p.transpose(1, 2)
            for p in qkv.reshape(qkv.shape[0], qkv.shape[1], h, -1).chunk(3, dim=-1)
        ),
        "into heads before separating",
    ),
    "reshape straight": (
        _each_part(lambda p, h: p.reshape(p.shape[0], h, p.shape[1], -1)),
        "without the transpose",
    ),
    "reshape to (B, 3, T, C)": (
        lambda qkv, h: tuple(
            part.reshape(qkv.shape[0], qkv.shape[1], h, -1).transpose(1, 2)
            for part in qkv.reshape(qkv.shape[0], 3, qkv.shape[1], -1).unbind(1)
        ),
        "straight as (B, 3, T, C)",
    ),
    "view straight": (
        _each_part(lambda p, h: p.view(p.shape[0], h, p.shape[1], p.shape[2] // h)),
        "without the transpose",
    ),
    "(B, T, H, D)": (
        _each_part(lambda p, h: p.reshape(*p.shape[:2], h, -1)),
        "left the heads after the tokens",
    ),
    "(B, H, D, T)": (
        _each_part(lambda p, h: p.reshape(*p.shape[:2], h, -1).permute(0, 2, 3, 1)),
        "moved the tokens to the last dimension",
    ),
    "(H, B, T, D)": (
        _each_part(lambda p, h: p.reshape(*p.shape[:2], h, -1).permute(2, 0, 1, 3)),
        "in front of the batch",
    ),
    "interleaved": (
        _each_part(lambda p, h: p.reshape(*p.shape[:2], -1, h).permute(0, 3, 1, 2)),
        "interleaved",
    ),
    "3C / H": (
        lambda qkv, h: tuple(
            p.reshape(p.shape[0], p.shape[1], h, qkv.shape[-1] // h).transpose(1, 2)
            for p in qkv.chunk(3, -1)
        ),
        "head size from the fused width",
    ),
    "along the tokens": (
        lambda qkv, h: tuple(
            p.reshape(qkv.shape[0], qkv.shape[1], h, -1).transpose(1, 2)
            for p in qkv.chunk(3, dim=1)
        ),
        "along the tokens",
    ),
    "alternating": (
        lambda qkv, h: tuple(
            qkv[..., i::3].reshape(*qkv.shape[:2], h, -1).transpose(1, 2) for i in range(3)
        ),
        "alternating entries",
    ),
    "along the tokens, -1 for T": (
        lambda qkv, h: tuple(
            p.view(qkv.shape[0], -1, h, qkv.shape[-1] // 3 // h).permute(0, 2, 1, 3)
            for p in _three(qkv.chunk(3, 1))
        ),
        "along the tokens",
    ),
    "sizes with /": (lambda qkv, h: split_with_slash(qkv, h), "with /, which gives a float"),
    "split(qkv, 3)": (
        lambda qkv, h: tuple(
            p.unflatten(-1, (h, -1)).transpose(1, 2) for p in _three(qkv.split(3, dim=-1))
        ),
        "gave torch.split the number of parts",
    ),
    "k, q, v": (lambda qkv, h: _kqv(*split_permute(qkv, h)), "the keys as q"),
    "H and D mixed up": (
        _each_part(lambda p, h: p.view(p.shape[0], p.shape[1], -1, h).transpose(1, 2)),
        "took num_heads for the head size",
    ),
}


@pytest.mark.parametrize("name", SPLIT_RIGHT)
def test_right_splits_pass(name: str) -> None:
    report = checks.check_split_qkv(SPLIT_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", SPLIT_WRONG)
def test_each_split_mistake_is_caught_and_named(name: str) -> None:
    fn, words = SPLIT_WRONG[name]
    report = checks.check_split_qkv(fn)
    assert not report.passed
    assert _named(report, words), report


def test_a_split_that_calls_attnlibs_is_refused() -> None:
    report = checks.check_split_qkv(
        lambda qkv, h: tuple(attnlib.split_heads(p.contiguous(), h) for p in qkv.chunk(3, -1))
    )
    assert not report.passed and "does not accept it" in str(report), report


def test_the_accepted_split_is_the_learners_own(capsys: pytest.CaptureFixture[str]) -> None:
    assert checks.check_split_qkv(split_permute).passed
    assert checks.yours_or_attnlib("ex1_my_split_qkv", split_permute, split_slices) is split_permute
    assert "Using your split_permute" in capsys.readouterr().out


# -- Exercise 2 ---------------------------------------------------------------------------------


def contributions_loop(heads: Tensor, w_o: Tensor) -> Tensor:
    d = heads.shape[-1]
    return torch.stack(
        [heads[:, h] @ w_o[h * d : (h + 1) * d] for h in range(heads.shape[1])], dim=1
    )


def contributions_by_masking(heads: Tensor, w_o: Tensor) -> Tensor:
    n = heads.shape[1]
    parts = []
    for h in range(n):
        keep = torch.zeros(1, n, 1, 1, dtype=heads.dtype)
        keep[0, h] = 1
        parts.append(attnlib.merge_heads(heads * keep) @ w_o)
    return torch.stack(parts, 1)


def contributions_zeroed_in_place(heads: Tensor, w_o: Tensor) -> Tensor:
    parts = []
    for h in range(heads.shape[1]):
        masked = heads
        for other in range(heads.shape[1]):
            if other != h:
                masked[:, other] = 0.0
        parts.append(attnlib.merge_heads(masked) @ w_o)
    return torch.stack(parts, dim=1)


def contributions_shape_read_as_b_t_h_d(heads: Tensor, w_o: Tensor) -> Tensor:
    _, _, H, _ = heads.shape  # read as (B, T, H, D): "H" is the number of tokens
    return heads @ w_o.view(H, -1, w_o.shape[-1])


CONTRIBUTIONS_RIGHT = {
    "view and broadcasting": lambda heads, w_o: heads @ w_o.view(heads.shape[1], -1, w_o.shape[1]),
    "einsum": lambda heads, w_o: torch.einsum(
        "bhtd,hdc->bhtc", heads, w_o.unflatten(0, (heads.shape[1], heads.shape[3]))
    ),
    "a loop over the heads": contributions_loop,
    "zero the other heads and merge": contributions_by_masking,
}


def _through_join(join: Callable[[Tensor], Tensor], zero: bool = True) -> Callable:
    def answer(heads: Tensor, w_o: Tensor) -> Tensor:
        parts = []
        for h in range(heads.shape[1]):
            masked = torch.zeros_like(heads) if zero else heads.clone()
            masked[:, h] = heads[:, h]
            parts.append(join(masked) @ w_o)
        return torch.stack(parts, 1)

    return answer


CONTRIBUTIONS_WRONG = {
    "head 0's rows for every head": (
        lambda heads, w_o: torch.stack(
            [heads[:, i] @ w_o[: heads.shape[-1]] for i in range(heads.shape[1])], dim=1
        ),
        "the first D rows of W^O",
    ),
    "whole W^O": (
        lambda heads, w_o: torch.stack([heads[:, i] @ w_o for i in range(heads.shape[1])], 1),
        "the whole of W^O",
    ),
    "columns": (
        lambda heads, w_o: torch.stack(
            [
                heads[:, i] @ w_o[:, i * heads.shape[3] : (i + 1) * heads.shape[3]].t()
                for i in range(heads.shape[1])
            ],
            1,
        ),
        "columns of W^O",
    ),
    "every H-th row": (
        lambda heads, w_o: torch.stack(
            [heads[:, i] @ w_o[i :: heads.shape[1]] for i in range(heads.shape[1])], 1
        ),
        "every H-th row",
    ),
    "W^O transposed": (
        lambda heads, w_o: heads @ w_o.t().reshape(heads.shape[1], heads.shape[3], -1),
        "transposed into the heads' blocks",
    ),
    "the sum": (
        lambda heads, w_o: heads.transpose(1, 2).flatten(2) @ w_o,
        "returned the sum over the heads",
    ),
    "averaged": (
        lambda heads, w_o: contributions_loop(heads, w_o) / heads.size(1),
        "divided each head's part",
    ),
    "(B, T, H, C)": (
        lambda heads, w_o: contributions_loop(heads, w_o).permute(0, 2, 1, 3),
        "as (B, T, H, C)",
    ),
    "merge without transpose": (
        _through_join(lambda x: x.reshape(x.shape[0], x.shape[2], -1)),
        "without the transpose",
    ),
    "view after transpose": (
        _through_join(lambda x: x.transpose(1, 2).view(x.shape[0], x.shape[2], -1)),
        "with view after a transpose",
    ),
    "not zeroed": (
        _through_join(lambda x: x.permute(0, 2, 1, 3).flatten(2), zero=False),
        "the whole output instead",
    ),
    "rows h to h + D": (
        lambda heads, w_o: torch.stack(
            [heads[:, i] @ w_o[i : i + heads.shape[-1]] for i in range(heads.shape[1])], 1
        ),
        "rows h to h + D − 1",
    ),
    "equal shares": (
        lambda heads, w_o: torch.stack(
            [attnlib.merge_heads(heads) @ w_o / heads.shape[1]] * heads.shape[1], dim=1
        ),
        "an equal share of the output",
    ),
    "(H, B, T, C)": (
        lambda heads, w_o: torch.stack(
            [heads[:, i] @ w_o.chunk(heads.shape[1])[i] for i in range(heads.shape[1])]
        ),
        "in front of the batch",
    ),
    "zeroed in place": (contributions_zeroed_in_place, "not in a copy"),
    "H rows per head": (
        lambda heads, w_o: torch.stack(
            [
                heads[:, i] @ w_o[heads.size(1) * i : heads.size(1) * (i + 1)]
                for i in range(heads.size(1))
            ],
            dim=1,
        ),
        "blocks of H rows instead of D",
    ),
    "T taken for H": (contributions_shape_read_as_b_t_h_d, "one block per token"),
}


@pytest.mark.parametrize("name", CONTRIBUTIONS_RIGHT)
def test_right_contributions_pass(name: str) -> None:
    report = checks.check_head_contributions(CONTRIBUTIONS_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", CONTRIBUTIONS_WRONG)
def test_each_contribution_mistake_is_caught_and_named(name: str) -> None:
    fn, words = CONTRIBUTIONS_WRONG[name]
    report = checks.check_head_contributions(fn)
    assert not report.passed
    assert _named(report, words), report


def test_parts_split_wrongly_but_adding_up_are_told_so() -> None:
    def all_in_head_0(heads: Tensor, w_o: Tensor) -> Tensor:
        parts = torch.zeros(*heads.shape[:3], w_o.shape[1], dtype=heads.dtype)
        parts[:, 0] = heads.transpose(1, 2).flatten(2) @ w_o
        return parts

    report = str(checks.check_head_contributions(all_in_head_0))
    assert "add up to Concat(heads) W^O, but they are not split by head" in report, report


# -- Exercise 3 ---------------------------------------------------------------------------------


def mha_permute(y, x, w_q, w_k, w_v, w_o, num_heads):
    b, t_y, c = y.shape
    d = c // num_heads

    def heads(t):  # (B, T, C) → (B, H, T, D)
        return t.reshape(b, t.shape[1], num_heads, d).permute(0, 2, 1, 3)

    q, k, v = heads(y @ w_q), heads(x @ w_k), heads(x @ w_v)
    w = F.softmax(q @ k.mT * d**-0.5, dim=-1)
    return (w @ v).permute(0, 2, 1, 3).contiguous().view(b, t_y, c) @ w_o, w


def mha_loop(y, x, w_q, w_k, w_v, w_o, num_heads):
    d = y.shape[-1] // num_heads
    outs, ws = [], []
    for i in range(num_heads):
        cols = slice(i * d, (i + 1) * d)
        q, k, v = y @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols]
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d), -1)
        outs.append(w @ v)
        ws.append(w)
    return torch.cat(outs, dim=-1) @ w_o, torch.stack(ws, dim=1)


def mha_einsum(y, x, w_q, w_k, w_v, w_o, num_heads):
    split = lambda t: t.unflatten(-1, (num_heads, -1))  # (B, T, H, D)  # noqa: E731
    q, k, v = split(y @ w_q), split(x @ w_k), split(x @ w_v)
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
    w = s.softmax(-1)
    return torch.einsum("bhqk,bkhd->bqhd", w, v).flatten(2) @ w_o, w


MHA_RIGHT = {
    "permute and contiguous view": mha_permute,
    "a loop over the heads": mha_loop,
    "einsum": mha_einsum,
    "float64": lambda *a: mha_permute(*(t.double() for t in a[:-1]), a[-1]),
}


def _mha(**change):
    """mha_permute with one step changed, written out the way a learner would."""

    def answer(y, x, w_q, w_k, w_v, w_o, num_heads):
        b, _, c = y.shape
        h = 1 if change.get("one_head") else num_heads
        d = c // h
        q_in, kv_in = {"yx": (y, x), "xy": (x, y), "yy": (y, y)}[change.get("sources", "yx")]
        lin = change.get("lin", lambda t, w: t @ w)
        split = change.get("split", lambda t: t.view(b, t.shape[1], h, d).transpose(1, 2))
        q, k, v = split(lin(q_in, w_q)), split(lin(kv_in, w_k)), split(lin(kv_in, w_v))
        s = q @ k.transpose(-1, -2) / change.get("scale", lambda c, d: math.sqrt(d))(c, d)
        w = change.get("softmax", lambda s: torch.softmax(s, -1))(s)
        merge = change.get("merge", lambda o: o.transpose(1, 2).reshape(b, o.shape[2], c))
        concat = merge(w @ v)
        out = change.get("project", lambda z, w_o: z @ w_o)(concat, w_o)
        return change.get("result", lambda out, w: (out, w))(out, w)

    return answer


def mha_with_one_length(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T, C = y.shape
    D = C // num_heads
    q = (y @ w_q).view(B, T, num_heads, D).transpose(1, 2)
    k = (x @ w_k).view(B, T, num_heads, D).transpose(1, 2)
    v = (x @ w_v).view(B, T, num_heads, D).transpose(1, 2)
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return (w @ v).transpose(1, 2).reshape(B, T, C) @ w_o, w


def mha_keys_transposed_1_2(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q = (y @ w_q).view(B, T_y, num_heads, D).transpose(1, 2)
    k = (x @ w_k).view(B, -1, num_heads, D).transpose(1, 2)
    v = (x @ w_v).view(B, -1, num_heads, D).transpose(1, 2)
    w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(D), dim=-1)
    return (w @ v).transpose(1, 2).reshape(B, T_y, C) @ w_o, w


def _unshifted(s):
    e = s.exp()
    return e / e.sum(dim=-1, keepdim=True)


MHA_WRONG = {
    "merge straight": (
        _mha(merge=lambda o: o.reshape(o.shape[0], o.shape[2], -1)),
        "joined the heads by reading (B, H, T, D) straight",
    ),
    "merge with view": (
        _mha(merge=lambda o: o.transpose(1, 2).view(o.shape[0], o.shape[2], -1)),
        "with view after the transpose",
    ),
    "merge swaps T and D": (
        _mha(merge=lambda o: o.transpose(-1, -2).reshape(o.shape[0], o.shape[2], -1)),
        "swapped the last two dimensions",
    ),
    "√C": (_mha(scale=lambda c, d: c**0.5), "√C"),
    "no scale": (_mha(scale=lambda c, d: 1), "did not scale"),
    "D": (_mha(scale=lambda c, d: d), "by D instead of √D"),
    "dim=-2": (_mha(softmax=lambda s: s.softmax(dim=-2)), "over the queries"),
    "dim=1": (_mha(softmax=lambda s: F.softmax(s, dim=1)), "over the heads"),
    "unshifted": (_mha(softmax=_unshifted), "without subtracting"),
    "no W^O": (_mha(project=lambda z, w_o: z), "forgot W^O"),
    "x @ w.T": (_mha(lin=lambda t, w: t @ w.T), "as nn.Linear stores it"),
    "x @ w.T, W^O too": (
        _mha(lin=lambda t, w: F.linear(t, w), project=lambda z, w_o: F.linear(z, w_o)),
        "as nn.Linear stores it",
    ),
    "k.transpose(1, 2)": (mha_keys_transposed_1_2, "swapped k's dims 1 and 2"),
    "queries from x": (_mha(sources="xy"), "queries from x"),
    "self-attention on y": (_mha(sources="yy"), "self-attention, not cross-attention"),
    "averaged weights": (
        _mha(result=lambda out, w: (out, w.mean(1))),
        "averaged over the heads",
    ),
    "one head": (_mha(one_head=True), "ignored num_heads"),
    "T_y for x": (mha_with_one_length, "with y's length"),
    "only out": (_mha(result=lambda out, w: out), "returned only out"),
    "(weights, out)": (_mha(result=lambda out, w: (w, out)), "returned (weights, out)"),
}


def _split_straight(t: Tensor, h: int) -> Tensor:
    b, n, c = t.shape
    return t.view(b, h, n, c // h)


MHA_WRONG["split straight"] = (
    lambda y, x, w_q, w_k, w_v, w_o, h: _mha(split=lambda t: _split_straight(t, h))(
        y, x, w_q, w_k, w_v, w_o, h
    ),
    "split into heads by reading (B, T, C) straight",
)
MHA_WRONG["split and merge straight"] = (
    lambda y, x, w_q, w_k, w_v, w_o, h: _mha(
        split=lambda t: t.reshape(t.shape[0], h, t.shape[1], -1),
        merge=lambda o: o.reshape(o.shape[0], o.shape[2], -1),
    )(y, x, w_q, w_k, w_v, w_o, h),
    "without either transpose",
)
MHA_WRONG["split (B, T, H, D)"] = (
    lambda y, x, w_q, w_k, w_v, w_o, h: _mha(
        split=lambda t: t.reshape(t.shape[0], t.shape[1], h, -1)
    )(y, x, w_q, w_k, w_v, w_o, h),
    "left the heads after the tokens",
)
MHA_WRONG["split interleaved"] = (
    lambda y, x, w_q, w_k, w_v, w_o, h: _mha(
        split=lambda t: t.reshape(t.shape[0], t.shape[1], -1, h).permute(0, 3, 1, 2)
    )(y, x, w_q, w_k, w_v, w_o, h),
    "interleaved",
)
MHA_WRONG["split and merge interleaved"] = (
    lambda y, x, w_q, w_k, w_v, w_o, h: _mha(
        split=lambda t: t.unflatten(-1, (-1, h)).permute(0, 3, 1, 2),
        merge=lambda o: o.permute(0, 2, 3, 1).flatten(2),
    )(y, x, w_q, w_k, w_v, w_o, h),
    "interleaved",
)
MHA_WRONG["block-diagonal W^O"] = (
    lambda y, x, w_q, w_k, w_v, w_o, h: _mha(
        project=lambda z, w_o: torch.cat(
            [
                z[..., i * (z.shape[-1] // h) : (i + 1) * (z.shape[-1] // h)]
                @ w_o[
                    i * (z.shape[-1] // h) : (i + 1) * (z.shape[-1] // h),
                    i * (z.shape[-1] // h) : (i + 1) * (z.shape[-1] // h),
                ]
                for i in range(h)
            ],
            dim=-1,
        )
    )(y, x, w_q, w_k, w_v, w_o, h),
    "split W^O among the heads",
)


@pytest.mark.parametrize("name", MHA_RIGHT)
def test_right_multi_head_attentions_pass(name: str) -> None:
    report = checks.check_multi_head_from_scratch(MHA_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", MHA_WRONG)
def test_each_multi_head_mistake_is_caught_and_named(name: str) -> None:
    fn, words = MHA_WRONG[name]
    report = checks.check_multi_head_from_scratch(fn)
    assert not report.passed
    assert _named(report, words), report


def _with_module(y, x, w_q, w_k, w_v, w_o, num_heads):
    mha = attnlib.MultiHeadAttention(y.shape[-1], num_heads, bias=False).to(y.dtype)
    with torch.no_grad():
        layers = (mha.w_q, mha.w_k, mha.w_v, mha.w_o)
        for layer, w in zip(layers, (w_q, w_k, w_v, w_o), strict=True):
            layer.weight.copy_(w.T)
    return mha(y, x)


def _with_torch(y, x, w_q, w_k, w_v, w_o, num_heads):
    mha = torch.nn.MultiheadAttention(y.shape[-1], num_heads, bias=False, batch_first=True)
    mha = mha.to(y.dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w_q.T, w_k.T, w_v.T]))
        mha.out_proj.weight.copy_(w_o.T)
    return mha(y, x, x, average_attn_weights=False)


def _with_sdpa(y, x, w_q, w_k, w_v, w_o, num_heads):
    q, k, v = (attnlib.split_heads(t, num_heads) for t in (y @ w_q, x @ w_k, x @ w_v))
    heads, w = attnlib.scaled_dot_product_attention(q, k, v)
    return attnlib.merge_heads(heads) @ w_o, w


def _with_torch_sdpa(y, x, w_q, w_k, w_v, w_o, num_heads):
    _, w = mha_permute(y, x, w_q, w_k, w_v, w_o, num_heads)
    b, t, c = y.shape
    split = lambda t: t.view(b, t.shape[1], num_heads, -1).transpose(1, 2)  # noqa: E731
    heads = F.scaled_dot_product_attention(split(y @ w_q), split(x @ w_k), split(x @ w_v))
    return heads.transpose(1, 2).reshape(b, t, c) @ w_o, w


@pytest.mark.parametrize(
    "cheat",
    [_with_module, _with_torch, _with_sdpa, _with_torch_sdpa],
    ids=["attnlib.MultiHeadAttention", "nn.MultiheadAttention", "attnlib's parts", "F.sdpa"],
)
def test_a_multi_head_attention_that_calls_an_implementation_is_refused(cheat: Callable) -> None:
    report = checks.check_multi_head_from_scratch(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- every exercise -----------------------------------------------------------------------------

CHECKERS = {
    "ex1_my_split_qkv": checks.check_split_qkv,
    "ex2_my_head_contributions": checks.check_head_contributions,
    "ex3_my_multi_head_attention": checks.check_multi_head_from_scratch,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    table = known_mistakes(exercise_id)
    assert 6 <= len(table) <= 40
    for mistake in table:
        report = CHECKERS[exercise_id](mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_no_report_prints_code_of_a_solution(exercise_id: str) -> None:
    for mistake in known_mistakes(exercise_id):
        # The first line may quote the error torch raised; the rest is the checker's own words.
        ours = "\n".join(str(CHECKERS[exercise_id](mistake.fn)).splitlines()[1:])
        assert "transpose(1, 2)" not in ours and ".reshape(" not in ours, ours


# -- the diagram of section 3 -------------------------------------------------------------------


def test_the_head_split_diagram_draws_what_split_heads_and_a_plain_view_do() -> None:
    import matplotlib.pyplot as plt

    from attnlib.course.diagrams import nb05_head_split as diagram

    t, c, h = diagram.T, diagram.C, diagram.H
    index = torch.arange(t * c).view(1, t, c)  # entry t·C + dim
    as_entries = lambda heads: [  # noqa: E731
        [[(int(i) // c, int(i) % c) for i in row] for row in head] for head in heads[0]
    ]
    assert diagram._right_heads() == as_entries(attnlib.split_heads(index, h))
    assert diagram._plain_view_heads() == as_entries(index.view(1, h, t, c // h))
    assert diagram._plain_view_heads()[0][1] == [(0, d) for d in range(c // h, c)]
    fig = diagram.draw()
    assert fig.get_suptitle()
    plt.close(fig)


# -- slips the engine names (issue 40) ------------------------------------------------------------


def contributions_of_dot_t(heads: Tensor, w_o: Tensor) -> Tensor:
    blocks = w_o.view(heads.shape[1], heads.shape[-1], -1)  # (H, D, C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return (blocks.T @ heads.T).T


def test_a_dot_t_of_a_batch_is_named_where_heads_are_joined() -> None:
    report = checks.check_head_contributions(contributions_of_dot_t)
    assert report.mistake.startswith("used .T on a batch"), report
