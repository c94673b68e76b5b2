"""Notebook 04's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(einsum, loops, ``mT``, ``F.linear``, float64, attnlib's attention where it is allowed) must pass;
answers that call an implementation of attention (or a whole head) must be refused.
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


def attention_loop(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    lead = q.shape[:-2]
    qs, ks, vs = (t.reshape(-1, *t.shape[-2:]) for t in (q, k, v))
    outs, ws = [], []
    for qi, ki, vi in zip(qs, ks, vs, strict=True):
        w = torch.stack([torch.softmax(ki @ row / math.sqrt(ki.shape[-1]), 0) for row in qi])
        outs.append(w @ vi)
        ws.append(w)
    return torch.stack(outs).reshape(*lead, *outs[0].shape), torch.stack(ws).reshape(
        *lead, *ws[0].shape
    )


def attention_shifted_by_hand(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    s = torch.matmul(q, k.swapaxes(-1, -2)) * q.shape[-1] ** -0.5
    e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
    w = e / e.sum(-1, keepdim=True)
    return torch.matmul(w, v), w


ATTENTION_RIGHT = {
    "transpose(-2, -1)": lambda q, k, v: (
        (w := torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), -1)) @ v,
        w,
    ),
    "mT and F.softmax": lambda q, k, v: (
        (w := F.softmax(q @ k.mT / q.shape[-1] ** 0.5, dim=-1)) @ v,
        w,
    ),
    "einsum": lambda q, k, v: (
        torch.einsum(
            "...qk,...kd->...qd",
            w := torch.einsum("...qd,...kd->...qk", q, k).div(math.sqrt(k.shape[-1])).softmax(-1),
            v,
        ),
        w,
    ),
    "a loop over the batch": attention_loop,
    "softmax by hand, shifted": attention_shifted_by_hand,
    "attnlib.softmax in float64": lambda q, k, v: (
        (w := attnlib.softmax(q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[-1])))
        @ v.double(),
        w,
    ),
    "a list": lambda q, k, v: list(ATTENTION_RIGHT["transpose(-2, -1)"](q, k, v)),
}


def _att(scores_fn: Callable[[Tensor, Tensor], Tensor], dim: int = -1) -> Callable:
    def answer(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        w = torch.softmax(scores_fn(q, k), dim=dim)
        return w @ v, w

    return answer


def attention_plus_eps(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    scores = q @ k.mT / q.shape[-1] ** 0.5
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    weights = e / (e.sum(dim=-1, keepdim=True) + 1e-3)  # "never divide by 0"
    return weights @ v, weights


ATTENTION_WRONG: dict[str, tuple[Callable, str]] = {
    "+ 1e-3 in each row's total": (attention_plus_eps, "(an epsilon) to each row's total"),
    "no scale": (_att(lambda q, k: q @ k.mT), "did not scale"),
    "√d_v": (
        lambda q, k, v: _att(lambda q, k: q @ k.mT / v.shape[-1] ** 0.5)(q, k, v),
        "√d_v",
    ),
    "√T_k": (_att(lambda q, k: q @ k.mT / math.sqrt(k.shape[-2])), "√T_k"),
    "d_k": (_att(lambda q, k: q @ k.mT / q.shape[-1]), "by d_k instead of √d_k"),
    "times √d_k": (_att(lambda q, k: q @ k.mT * math.sqrt(q.shape[-1])), "multiplied the scores"),
    "q.shape[1]": (_att(lambda q, k: q @ k.mT / math.sqrt(q.size(1))), "q.shape[1]"),
    "dim=-2": (_att(lambda q, k: q @ k.mT / math.sqrt(q.shape[-1]), dim=-2), "over the queries"),
    "dim=1": (_att(lambda q, k: q @ k.mT / math.sqrt(q.shape[-1]), dim=1), "along dim=1"),
    "whole matrix": (
        lambda q, k, v: (
            (
                w := torch.softmax(
                    (s := q @ k.mT / math.sqrt(q.shape[-1])).reshape(*s.shape[:-2], -1), -1
                ).view(s.shape)
            )
            @ v,
            w,
        ),
        "whole score matrix",
    ),
    "k.T": (_att(lambda q, k: torch.matmul(q, k.T) / math.sqrt(q.shape[-1])), "right only for"),
    "transpose(0, 1)": (
        _att(lambda q, k: q @ k.transpose(0, 1) / math.sqrt(q.shape[-1])),
        "right only for",
    ),
    "k qᵀ": (
        lambda q, k, v: ((w := torch.softmax(k @ q.mT / math.sqrt(q.shape[-1]), -1)) @ v, w),
        "keys on the rows",
    ),
    "no softmax": (
        lambda q, k, v: ((s := q @ k.mT / math.sqrt(q.shape[-1])) @ v, s),
        "without a softmax",
    ),
    "scale after softmax": (
        lambda q, k, v: ((w := (q @ k.mT).softmax(-1) / math.sqrt(q.shape[-1])) @ v, w),
        "after the softmax",
    ),
    "unshifted exp": (
        lambda q, k, v: (
            (w := (e := torch.exp(q @ k.mT / math.sqrt(q.shape[-1]))) / e.sum(-1, keepdim=True))
            @ v,
            w,
        ),
        "without subtracting",
    ),
    "mixes keys": (
        lambda q, k, v: ((w := torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1)) @ k, w),
        "mixed the keys",
    ),
    "(weights, out)": (
        lambda q, k, v: ((w := torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1)), w @ v),
        "returned (weights, out)",
    ),
    "transpose(1, 2)": (
        _att(lambda q, k: q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])),
        "dims 1 and 2 of k",
    ),
    "bmm": (
        lambda q, k, v: (
            torch.bmm(w := torch.bmm(q, k.mT).div(math.sqrt(q.shape[-1])).softmax(-1), v),
            w,
        ),
        "torch.bmm",
    ),
    "dim=2": (_att(lambda q, k: q @ k.mT / math.sqrt(q.shape[-1]), dim=2), "along dim=2"),
    "√T_q": (_att(lambda q, k: q @ k.mT / math.sqrt(len(q.unbind(-2)))), "√T_q"),
    "v @ w": (
        lambda q, k, v: (v @ (w := (q @ k.mT / math.sqrt(q.shape[-1])).softmax(-1)), w),
        "wrong order",
    ),
    "only out": (
        lambda q, k, v: torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1) @ v,
        "returned only out",
    ),
    "d_k ** 1/2": (_att(lambda q, k: q @ k.mT / q.shape[-1] ** 1 / 2), "d_k ** 1/2"),
    "sum without keepdim": (
        lambda q, k, v: (
            (w := (e := (q @ k.mT / math.sqrt(q.shape[-1])).exp()) / e.sum(dim=-1)) @ v,
            w,
        ),
        "without keepdim",
    ),
    "einsum for a batch only": (
        lambda q, k, v: (
            torch.einsum(
                "nij,njd->nid",
                w := torch.einsum("nid,njd->nij", q, k).div(math.sqrt(q.shape[-1])).softmax(-1),
                v,
            ),
            w,
        ),
        "einsum subscripts for 3-D inputs only",
    ),
    "sum() of every exponential": (
        lambda q, k, v: (
            (w := (e := (q @ k.mT).div(math.sqrt(q.shape[-1])).exp()) / e.sum()) @ v,
            w,
        ),
        "sum over the whole tensor",
    ),
    "einsum with a row per key": (
        lambda q, k, v: (
            torch.einsum(
                "...kq,...kd->...qd",
                w := torch.einsum("...qd,...kd->...kq", q, k).div(q.shape[-1] ** 0.5).softmax(-1),
                v,
            ),
            w,
        ),
        "keys on the rows of the weights",
    ),
}


@pytest.mark.parametrize("name", ATTENTION_RIGHT)
def test_right_attentions_pass(name: str) -> None:
    report = checks.check_attention_any_shape(ATTENTION_RIGHT[name])
    assert report.passed, report


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize("name", ATTENTION_WRONG)
def test_each_attention_mistake_is_caught_and_named(name: str) -> None:
    fn, words = ATTENTION_WRONG[name]
    report = checks.check_attention_any_shape(fn)
    assert not report.passed
    assert _named(report, words), report


def attention_rows_of_a_matrix(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """A learner's loop over the rows of 2-D inputs: wrong for a batch, but not k.T."""
    w = torch.stack(
        [torch.softmax(torch.stack([qi @ kj for kj in k]) / q.shape[-1] ** 0.5, 0) for qi in q]
    )
    return w @ v, w


def test_a_loop_for_two_dimensions_is_caught_and_not_taken_for_k_dot_t() -> None:
    report = checks.check_attention_any_shape(attention_rows_of_a_matrix)
    assert not report.passed
    assert "right only for a 2-D k" not in str(report), report


def _sdpa_cheat(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    w = torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1)
    return F.scaled_dot_product_attention(q, k, v), w


def _head_cheat(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    head = attnlib.AttentionHead(q.shape[-1], q.shape[-1], v.shape[-1]).to(q.dtype)
    for layer, size in ((head.w_q, q.shape[-1]), (head.w_k, q.shape[-1]), (head.w_v, None)):
        with torch.no_grad():
            layer.weight.copy_(torch.eye(size or v.shape[-1], layer.in_features, dtype=q.dtype))
    return head(q, k, v)


ATTENTION_CHEATS = {
    "attnlib.scaled_dot_product_attention": lambda q, k, v: attnlib.scaled_dot_product_attention(
        q, k, v
    ),
    "F.scaled_dot_product_attention": _sdpa_cheat,
    "attnlib.AttentionHead": _head_cheat,
    "attnlib.fused_attention": lambda q, k, v: (
        attnlib.fused_attention(q, k, v),
        torch.softmax(q @ k.mT / math.sqrt(q.shape[-1]), -1),
    ),
}


@pytest.mark.parametrize("name", ATTENTION_CHEATS)
def test_an_attention_that_calls_an_implementation_is_refused(name: str) -> None:
    report = checks.check_attention_any_shape(ATTENTION_CHEATS[name])
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 2 ---------------------------------------------------------------------------------


def cross_linear(y, x, w_q, w_k, w_v):
    return attnlib.scaled_dot_product_attention(
        F.linear(y, w_q), F.linear(x, w_k), F.linear(x, w_v)
    )


def cross_by_hand(y, x, w_q, w_k, w_v):
    q = torch.einsum("...td,kd->...tk", y, w_q)
    k = torch.einsum("...td,kd->...tk", x, w_k)
    v = torch.matmul(x, w_v.t())
    w = (q @ k.transpose(-1, -2) / math.sqrt(w_q.shape[0])).softmax(dim=-1)
    return w @ v, w


CROSS_RIGHT = {
    "F.linear and attnlib": cross_linear,
    "einsum and by hand": cross_by_hand,
    "weights transposed as (in, out) first": lambda y, x, w_q, w_k, w_v: ATTENTION_RIGHT[
        "mT and F.softmax"
    ](y @ w_q.T.contiguous(), x @ w_k.T.contiguous(), x @ w_v.T.contiguous()),
    "float64": lambda y, x, w_q, w_k, w_v: cross_linear(
        y.double(), x.double(), w_q.double(), w_k.double(), w_v.double()
    ),
}


def _cross(q_of, k_of, v_of, scale_of=lambda y, x, w_q, w_k, w_v: math.sqrt(w_q.shape[0]), dim=-1):
    def answer(y, x, w_q, w_k, w_v):
        q, k, v = q_of(y, x, w_q, w_k, w_v), k_of(y, x, w_q, w_k, w_v), v_of(y, x, w_q, w_k, w_v)
        w = torch.softmax(q @ k.transpose(-2, -1) / scale_of(y, x, w_q, w_k, w_v), dim=dim)
        return w @ v, w

    return answer


Q = lambda y, x, w_q, w_k, w_v: y @ w_q.T  # noqa: E731
K = lambda y, x, w_q, w_k, w_v: x @ w_k.T  # noqa: E731
V = lambda y, x, w_q, w_k, w_v: x @ w_v.T  # noqa: E731

CROSS_WRONG = {
    "no transpose": (
        _cross(
            lambda y, x, wq, wk, wv: y @ wq, lambda y, x, wq, wk, wv: x @ wk, lambda *a: a[1] @ a[4]
        ),
        "without transposing",
    ),
    "queries from x": (
        _cross(
            lambda y, x, wq, wk, wv: F.linear(x, wq),
            lambda y, x, wq, wk, wv: F.linear(y, wk),
            lambda y, x, wq, wk, wv: F.linear(y, wv),
        ),
        "queries from x",
    ),
    "keys from y": (_cross(Q, lambda y, x, wq, wk, wv: y @ wk.T, V), "keys from y"),
    "values from y": (_cross(Q, K, lambda y, x, wq, wk, wv: F.linear(y, wv)), "values from y"),
    "keys with W^Q": (_cross(Q, lambda y, x, wq, wk, wv: x @ wq.T, V), "keys with W^Q"),
    "values with W^K": (_cross(Q, K, lambda y, x, wq, wk, wv: x @ wk.T), "values with W^K"),
    "no W^V": (_cross(Q, K, lambda y, x, wq, wk, wv: x), "without projecting them"),
    "√d_v": (_cross(Q, K, V, lambda y, x, wq, wk, wv: math.sqrt(wv.size(0))), "√d_v"),
    "√d_y": (_cross(Q, K, V, lambda y, x, wq, wk, wv: math.sqrt(y.shape[-1])), "y's width"),
    "√d_x": (_cross(Q, K, V, lambda y, x, wq, wk, wv: math.sqrt(wk.shape[1])), "x's width"),
    "√T_x": (_cross(Q, K, V, lambda y, x, wq, wk, wv: x.shape[-2] ** 0.5), "√T_x"),
    "no scale": (_cross(Q, K, V, lambda *a: 1), "did not scale"),
    "dim=-2": (_cross(Q, K, V, dim=-2), "over the queries"),
    "k.T": (
        lambda y, x, w_q, w_k, w_v: (
            (w := torch.softmax((y @ w_q.T) @ (x @ w_k.T).T / math.sqrt(w_q.shape[0]), -1))
            @ (x @ w_v.T),
            w,
        ),
        "right only for 2-D",
    ),
    "(weights, out)": (lambda *a: tuple(reversed(cross_linear(*a))), "returned (weights, out)"),
    "only out": (lambda *a: cross_linear(*a)[0], "returned only out"),
    "W^Q and W^K swapped": (
        _cross(lambda y, x, wq, wk, wv: y @ wk.T, lambda y, x, wq, wk, wv: x @ wq.T, V),
        "swapped W^Q and W^K",
    ),
    "weights transposed": (
        lambda *a: (cross_linear(*a)[0], cross_linear(*a)[1].mT),
        "returned the weights transposed",
    ),
}


@pytest.mark.parametrize("name", CROSS_RIGHT)
def test_right_cross_attentions_pass(name: str) -> None:
    report = checks.check_cross_attention_widths(CROSS_RIGHT[name])
    assert report.passed, report


@pytest.mark.filterwarnings("ignore:The use of `x.T`")
@pytest.mark.parametrize("name", CROSS_WRONG)
def test_each_cross_attention_mistake_is_caught_and_named(name: str) -> None:
    fn, words = CROSS_WRONG[name]
    report = checks.check_cross_attention_widths(fn)
    assert not report.passed
    assert _named(report, words), report


def _cross_module(y, x, w_q, w_k, w_v):
    torch_mha = torch.nn.MultiheadAttention(
        w_q.shape[0], 1, kdim=x.shape[-1], vdim=x.shape[-1], bias=False, batch_first=True
    )
    return torch_mha(y, x, x)


def _cross_head(y, x, w_q, w_k, w_v):
    head = attnlib.AttentionHead(y.shape[-1], w_q.shape[0], w_v.shape[0]).double()
    return head(y, x @ torch.zeros(x.shape[-1], y.shape[-1], dtype=x.dtype))


@pytest.mark.parametrize(
    "cheat", [_cross_module, _cross_head], ids=["nn.MultiheadAttention", "AttentionHead"]
)
def test_a_cross_attention_that_runs_a_module_is_refused(cheat: Callable) -> None:
    report = checks.check_cross_attention_widths(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 3 ---------------------------------------------------------------------------------


def pool_with_sdpa(x, query, key_proj, value_proj):
    out, w = attnlib.scaled_dot_product_attention(
        query.expand(x.shape[0], 1, -1), key_proj(x), value_proj(x)
    )
    return out.squeeze(1), w.squeeze(1)


def pool_loop(x, query, key_proj, value_proj):
    outs, ws = [], []
    for seq in x:
        w = F.softmax(key_proj(seq) @ query / math.sqrt(len(query)), dim=0)
        outs.append(w @ value_proj(seq))
        ws.append(w)
    return torch.stack(outs), torch.stack(ws)


def pool_bmm(x, query, key_proj, value_proj):
    k = x @ key_proj.weight.T
    s = torch.einsum("btk,k->bt", k, query) / query.numel() ** 0.5
    w = torch.exp(s - s.amax(1, keepdim=True))
    w = w / w.sum(1, keepdim=True)
    return torch.bmm(w.unsqueeze(1), value_proj(x)).squeeze(1), w


def pool_loop_from_the_second(x, query, key_proj, value_proj):
    outs, ws = [], []
    for seq in x[1:]:
        w = F.softmax(key_proj(seq) @ query / math.sqrt(len(query)), dim=0)
        outs.append(w @ value_proj(seq))
        ws.append(w)
    return torch.stack(outs), torch.stack(ws)


POOL_RIGHT = {
    "attnlib's attention": pool_with_sdpa,
    "a loop over the sequences": pool_loop,
    "bmm and a softmax by hand": pool_bmm,
}


def _pool(scores_of, dim=-1, values_of=lambda x, vp: vp(x)):
    def answer(x, query, key_proj, value_proj):
        w = torch.softmax(scores_of(x, query, key_proj), dim=dim)
        return (w[:, :, None] * values_of(x, value_proj)).sum(1), w

    return answer


S = lambda x, q, kp: kp(x) @ q / math.sqrt(q.shape[0])  # noqa: E731


def pool_one_softmax_for_the_batch(x, query, key_proj, value_proj):
    scores = S(x, query, key_proj)  # (B, T)
    w = torch.softmax(scores.reshape(-1), dim=0).reshape(scores.shape)
    return torch.einsum("bt,btv->bv", w, value_proj(x)), w


def pool_plus_eps(x, query, key_proj, value_proj):  # type: ignore[no-untyped-def]
    scores = key_proj(x) @ query / query.shape[-1] ** 0.5  # (B, T)
    e = (scores - scores.max(dim=-1, keepdim=True).values).exp()
    weights = e / (e.sum(dim=-1, keepdim=True) + 1e-3)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1), weights


POOL_WRONG = {
    "+ 1e-3 in each row's total": (pool_plus_eps, "(an epsilon) to each row's total"),
    "dim=0": (_pool(S, dim=0), "over the batch"),
    "whole batch": (pool_one_softmax_for_the_batch, "whole batch at once"),
    "no scale": (_pool(lambda x, q, kp: kp(x) @ q), "did not scale"),
    "√d_v": (
        lambda x, q, kp, vp: _pool(lambda x, q, kp: kp(x) @ q / vp.weight.shape[0] ** 0.5)(
            x, q, kp, vp
        ),
        "√d_v",
    ),
    "√d_model": (_pool(lambda x, q, kp: kp(x) @ q / math.sqrt(x.size(-1))), "√d_model"),
    "√T": (_pool(lambda x, q, kp: kp(x) @ q / math.sqrt(x.shape[1])), "√T"),
    "no W^V": (_pool(S, values_of=lambda x, vp: x), "tokens themselves instead of their values"),
    "no W^K": (_pool(lambda x, q, kp: x @ q / math.sqrt(len(q))), "instead of their keys"),
    "query projected": (
        _pool(lambda x, q, kp: kp(x) @ kp(q) / math.sqrt(len(q))),
        "through the key projection",
    ),
    "mean": (lambda x, q, kp, vp: (vp(x).mean(1), torch.ones(x.shape[:2]) / x.shape[1]), "evenly"),
    "kept (B, 1, ·)": (
        lambda x, q, kp, vp: attnlib.scaled_dot_product_attention(
            q[None].expand(x.shape[0], 1, -1), kp(x), vp(x)
        ),
        "length-1 dimension",
    ),
    "unshifted exp": (
        lambda x, q, kp, vp: (
            ((w := (e := S(x, q, kp).exp()) / e.sum(-1, keepdim=True))[..., None] * vp(x)).sum(1),
            w,
        ),
        "without subtracting",
    ),
    "(weights, out)": (lambda *a: pool_loop(*a)[::-1], "returned (weights, out)"),
    "squeeze()": (
        lambda x, q, kp, vp: tuple(
            t.squeeze()
            for t in attnlib.scaled_dot_product_attention(
                q.unsqueeze(0).unsqueeze(0).expand(len(x), 1, len(q)), kp(x), vp(x)
            )
        ),
        "squeezed every size-1 dimension",
    ),
    "(B, T) @ (B, T, d_v)": (
        lambda x, q, kp, vp: (
            (w := torch.softmax(kp(x) @ q / math.sqrt(q.numel()), dim=1)) @ vp(x),
            w,
        ),
        "with @",
    ),
    "only out": (lambda *a: pool_loop(*a)[0], "returned only out"),
    "weights unused": (
        lambda x, q, kp, vp: (vp(x).mean(dim=1), pool_loop(x, q, kp, vp)[1]),
        "plain mean of the values",
    ),
    "layers swapped": (lambda x, q, kp, vp: pool_loop(x, q, vp, kp), "swapped the two layers"),
    "summed over the batch": (
        lambda x, q, kp, vp: (
            ((w := torch.softmax(S(x, q, kp), dim=-1)).unsqueeze(2) * vp(x)).sum(0),
            w,
        ),
        "over the batch (dim=0)",
    ),
    "keys mixed": (
        lambda x, q, kp, vp: (
            torch.einsum("bt,btk->bk", w := torch.softmax(S(x, q, kp), -1), kp(x)),
            w,
        ),
        "mixed the keys with the weights",
    ),
    "scale after the softmax": (
        lambda x, q, kp, vp: (
            ((w := F.softmax(kp(x) @ q, dim=1) * len(q) ** -0.5)[..., None] * vp(x)).sum(1),
            w,
        ),
        "after the softmax",
    ),
    "loop from 1": (pool_loop_from_the_second, "left out the first sequence"),
    "argmax instead of a softmax": (
        lambda x, q, kp, vp: (
            (
                (w := F.one_hot(S(x, q, kp).argmax(1), x.shape[1]).to(x.dtype))[..., None] * vp(x)
            ).sum(1),
            w,
        ),
        "an argmax",
    ),
    "mean of the weighted values": (
        lambda x, q, kp, vp: (
            torch.einsum("bt,btv->btv", w := torch.softmax(S(x, q, kp), 1), vp(x)).mean(1),
            w,
        ),
        "a mean",
    ),
}


@pytest.mark.parametrize("name", POOL_RIGHT)
def test_right_attention_pools_pass(name: str) -> None:
    report = checks.check_attention_pool(POOL_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", POOL_WRONG)
def test_each_attention_pool_mistake_is_caught_and_named(name: str) -> None:
    fn, words = POOL_WRONG[name]
    report = checks.check_attention_pool(fn)
    assert not report.passed
    assert _named(report, words), report


def _pool_module(x, query, key_proj, value_proj):
    mha = torch.nn.MultiheadAttention(query.shape[0], 1, batch_first=True, dtype=x.dtype)
    out, w = mha(query.expand(x.shape[0], 1, -1), key_proj(x), key_proj(x))
    return out[:, 0], w[:, 0]


def test_an_attention_pool_that_runs_a_module_is_refused() -> None:
    report = checks.check_attention_pool(_pool_module)
    assert not report.passed and "does not accept it" in str(report), report


# -- every exercise -----------------------------------------------------------------------------

CHECKERS = {
    "ex1_my_attention": checks.check_attention_any_shape,
    "ex2_my_cross_attention": checks.check_cross_attention_widths,
    "ex3_my_attention_pool": checks.check_attention_pool,
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
        assert "transpose(-2, -1)" not in ours and "softmax(" not in ours, ours


# -- slips the engine names (issue 40) ------------------------------------------------------------


def pool_of_dot_t(x: Tensor, query: Tensor, key_proj: Callable, value_proj: Callable):  # type: ignore[type-arg]
    keys = key_proj(x)  # (B, T, d_k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        weights = torch.softmax(query @ keys.T / math.sqrt(query.shape[0]), dim=-1)
    return weights @ value_proj(x), weights


def test_a_dot_t_of_a_batch_is_named_at_its_line() -> None:
    report = checks.check_attention_pool(pool_of_dot_t)
    assert report.mistake.startswith("used .T on a batch"), report
    assert "`query @ keys.T`" in str(report) and "keys is (2, 5, 4)" in str(report), report
