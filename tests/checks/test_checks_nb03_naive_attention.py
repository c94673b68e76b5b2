"""Notebook 03's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(loops, einsum, torch.where, float64, permute, F.normalize) must pass; answers that call an
attention function that takes a mask must be refused.
"""

from __future__ import annotations

import functools
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
Pair = tuple[Tensor, Tensor]


def _named(report: object, mistake: str) -> bool:
    return f"The mistake: {mistake}." in str(report)


def _layer(x: Tensor) -> Pair:
    w = torch.softmax(x @ x.mT, dim=-1)
    return w @ x, w


# -- Exercise 1: stacked layers -----------------------------------------------------------------


def stacked_loop(x: Tensor, layers: int) -> Pair:
    out = x
    mix = torch.eye(x.shape[-2], dtype=x.dtype).expand(*x.shape[:-2], -1, -1)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        mix = w @ mix
    return out, mix


def stacked_reduce(x: Tensor, layers: int) -> Pair:
    outs, recipes = [x], []
    for _ in range(layers):
        o, w = _layer(outs[-1])
        outs.append(o)
        recipes.append(w)
    eye = torch.eye(x.shape[-2], dtype=x.dtype).repeat(*x.shape[:-2], 1, 1)
    mix = functools.reduce(lambda acc, w: w @ acc, recipes, eye)
    return outs[-1], mix


def stacked_einsum_float64(x: Tensor, layers: int) -> Pair:
    out = x.double()
    mix = torch.zeros(*x.shape[:-1], x.shape[-2], dtype=torch.float64)
    mix[..., range(x.shape[-2]), range(x.shape[-2])] = 1.0
    for _ in range(layers):
        w = torch.softmax(torch.einsum("...ic,...jc->...ij", out, out), dim=-1)
        out = torch.einsum("...ij,...jc->...ic", w, out)
        mix = torch.einsum("...ij,...jk->...ik", w, mix)
    return out, mix


def stacked_recursive(x: Tensor, layers: int) -> Pair:
    if layers == 0:
        t = x.shape[-2]
        return x, torch.eye(t, dtype=x.dtype).expand(*x.shape[:-2], t, t).clone()
    below, mix = stacked_recursive(x, layers - 1)
    out, w = attnlib.naive_self_attention(below)
    return out, w @ mix


STACKED_RIGHT = {
    "a loop": stacked_loop,
    "functools.reduce": stacked_reduce,
    "einsum in float64, back in x's dtype": lambda x, n: tuple(
        t.to(x.dtype) for t in stacked_einsum_float64(x, n)
    ),
    "recursion": stacked_recursive,
}


def stacked_float32_eye(x: Tensor, layers: int) -> Pair:
    out, mix = x, torch.eye(x.shape[-2]).expand(*x.shape[:-2], -1, -1)  # float32, whatever x is
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        mix = w @ mix
    return out, mix


def stacked_scores_of_dot_t(x: Tensor, layers: int) -> Pair:
    out, mix = x, torch.eye(x.shape[-2], dtype=x.dtype).expand(*x.shape[:-2], -1, -1)
    for _ in range(layers):
        w = torch.softmax(out @ out.T, dim=-1)  # right for one sequence only
        out, mix = w @ out, w @ mix
    return out, mix


def local_additive_float32(x: Tensor, window: int) -> Pair:
    t = x.shape[-2]
    bias = torch.full((t, t), -math.inf)  # float32: a float16 x comes back float32
    bias[_tri(t, 1 - window, 0)] = 0.0
    w = torch.softmax(x @ x.mT + bias, dim=-1)
    return w @ x.to(w.dtype), w


# Named by the engine, not by an exercise's table: a result in another dtype than x's, a float32
# constant that float64 input breaks, a .T of a batch on the line that crashed (issue 40).
ENGINE_WRONG: dict[str, tuple[Callable[..., Pair], Callable[..., object], str]] = {
    "stacked: torch.eye in float32": (
        stacked_float32_eye,
        checks.check_stacked_naive_attention,
        "a float32 constant breaks float64",
    ),
    "stacked: einsum in float64": (
        stacked_einsum_float64,
        checks.check_stacked_naive_attention,
        "returns float64 for float32 input",
    ),
    "stacked: scores of out.T": (
        stacked_scores_of_dot_t,
        checks.check_stacked_naive_attention,
        "used .T on a batch",
    ),
    "local: a loop in float64": (
        lambda x, w: local_loop(x, w),
        checks.check_local_self_attention,
        "returns float64 for float32 input",
    ),
    "local: an additive mask of torch.full, float32": (
        lambda x, w: local_additive_float32(x, w),
        checks.check_local_self_attention,
        "returns float32 for float16 input",
    ),
}


@pytest.mark.parametrize("name", ENGINE_WRONG)
def test_each_slip_the_engine_names_is_caught_and_named(name: str) -> None:
    fn, checker, words = ENGINE_WRONG[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # x.T of a batch
        report = checker(fn)
    assert not report.passed and f"The mistake: {words}" in str(report), report


def _stack(x: Tensor, layers: int, step: Callable[[Tensor, Tensor, Tensor], Tensor]) -> Pair:
    out, mix = x, torch.eye(x.shape[-2]).repeat(*x.shape[:-2], 1, 1)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        mix = step(mix, w, out)
    return out, mix


def every_layer_on_x(x: Tensor, layers: int) -> Pair:
    out, mix = x, torch.eye(x.shape[-2]).repeat(*x.shape[:-2], 1, 1)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(x)
        mix = w @ mix
    return out, mix


def last_weights(x: Tensor, layers: int) -> Pair:
    weights = torch.eye(x.shape[-2]).repeat(*x.shape[:-2], 1, 1)
    out = x
    for _ in range(layers):
        out, weights = attnlib.naive_self_attention(out)
    return out, weights


def start_from(x: Tensor, layers: int, fill: float, op: str = "@") -> Pair:
    out = x
    mix = torch.full((*x.shape[:-1], x.shape[-2]), fill)
    for _ in range(layers):
        out, w = _layer(out)
        mix = w @ mix if op == "@" else (mix + w if op == "+" else mix * w)
    return out, mix


def one_identity(x: Tensor, layers: int) -> Pair:
    out, mix = x, torch.eye(x.shape[-2])
    for _ in range(layers):
        out, w = _layer(out)
        mix = torch.matmul(w, mix)
    return out, mix


def batch_size_eye(x: Tensor, layers: int) -> Pair:
    out, mix = x, torch.eye(len(x))
    for _ in range(layers):
        out, w = _layer(out)
        mix = w @ mix
    return out, mix


def stacked_from_none(x: Tensor, layers: int) -> Pair:
    out, mix = x, None
    for _ in range(layers):
        out, w = _layer(out)
        mix = w if mix is None else w @ mix
    return out, mix


def stacked_power(x: Tensor, layers: int) -> Pair:
    w1 = _layer(x)[1]
    mix = torch.eye(x.shape[-2]).expand_as(w1).clone()
    for _ in range(layers):
        mix = w1 @ mix  # the first layer's weights, again and again
    return stacked_loop(x, layers)[0], mix


def power_mix(x: Tensor, layers: int) -> Pair:
    _, w1 = _layer(x)
    recipe = torch.eye(x.shape[-2]).expand_as(w1).clone()
    for _ in range(layers):
        recipe = recipe @ w1  # every layer has the same weights, surely
    return recipe @ x, recipe


def scaled_stack(x: Tensor, layers: int) -> Pair:
    out, mix = x, torch.eye(x.shape[-2]).repeat(*x.shape[:-2], 1, 1)
    for _ in range(layers):
        w = torch.einsum("...ic,...jc->...ij", out, out) / x.size(-1) ** 0.5
        w = w.softmax(dim=-1)
        out, mix = w @ out, w @ mix
    return out, mix


STACKED_WRONG = {
    "first layer on the left": (
        lambda x, n: _stack(x, n, lambda mix, w, out: mix @ w),
        "in the wrong order",
    ),
    "the last weights": (last_weights, "returned the last layer's weights"),
    "every layer reads x": (every_layer_on_x, "fed every layer the original x"),
    "zeros": (lambda x, n: start_from(x, n, 0.0), "from a matrix of zeros"),
    "ones": (lambda x, n: start_from(x, n, 1.0), "from a matrix of ones"),
    "a sum": (lambda x, n: start_from(x, n, 0.0, "+"), "added the layers' weight matrices"),
    "entry by entry": (lambda x, n: start_from(x, n, 1.0, "*"), "not as matrices (@)"),
    "entry by entry from the identity": (
        lambda x, n: _stack(x, n, lambda mix, w, out: mix * w),
        "into an identity",
    ),
    "transposed": (
        lambda x, n: _stack(x, n, lambda mix, w, out: w.transpose(-1, -2) @ mix),
        "transposed, reading a column",
    ),
    "no loop": (lambda x, n: _layer(x), "ran a single layer"),
    "one too few": (lambda x, n: stacked_loop(x, max(n - 1, 0)), "one layer too few"),
    "one too many": (lambda x, n: stacked_loop(x, n + 1), "one layer too many"),
    "a (T, T) identity": (one_identity, "one (T, T) identity"),
    "T from shape[0]": (lambda x, n: batch_size_eye(x, n), "took T from x.shape[0]"),
    "(weights, out)": (
        lambda x, n: tuple(reversed(stacked_loop(x, n))),
        "returned the pair the wrong way round",
    ),
    "None for no layer": (stacked_from_none, "from None"),
    "a power of the first weights": (stacked_power, "to the power `layers`"),
    "a power mixes x too": (power_mix, "a power of the first layer's weights"),
    "scaled layers": (scaled_stack, "each layer's scores by √C"),
}


@pytest.mark.parametrize("name", STACKED_RIGHT)
def test_right_stacks_pass(name: str) -> None:
    report = checks.check_stacked_naive_attention(STACKED_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", STACKED_WRONG)
def test_each_stacking_mistake_is_caught_and_named(name: str) -> None:
    fn, words = STACKED_WRONG[name]
    report = checks.check_stacked_naive_attention(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


def test_a_stack_that_returns_only_the_output_is_told_the_shape() -> None:
    report = checks.check_stacked_naive_attention(lambda x, n: stacked_loop(x, n)[0])
    assert not report.passed and "should return 2 results" in str(report)


# -- Exercise 2: cosine self-attention -----------------------------------------------------------


def cosine_normalize(x: Tensor, tau: float) -> Pair:
    u = F.normalize(x, dim=-1)
    w = (u @ u.transpose(-2, -1) / tau).softmax(dim=-1)
    return w @ x, w


def cosine_divide_lengths(x: Tensor, tau: float) -> Pair:
    lengths = torch.sqrt((x * x).sum(dim=-1))  # (..., T)
    cos = (x @ x.mT) / (lengths[..., :, None] * lengths[..., None, :])
    w = attnlib.softmax(cos / tau)
    return torch.matmul(w, x), w


def cosine_attnlib_broadcast(x: Tensor, tau: float) -> Pair:
    cos = attnlib.cosine_similarity(x.unsqueeze(-2), x.unsqueeze(-3))
    w = torch.softmax(cos / tau, -1)
    return w @ x, w


def cosine_loop(x: Tensor, tau: float) -> Pair:
    flat = x.reshape(-1, *x.shape[-2:]).double()
    outs, ws = [], []
    for seq in flat:
        t = seq.shape[0]
        cos = torch.tensor(
            [
                [float(F.cosine_similarity(seq[i], seq[j], dim=0)) for j in range(t)]
                for i in range(t)
            ]
        )
        w = torch.softmax(cos / tau, dim=1).double()
        ws.append(w)
        outs.append(w @ seq)
    return torch.stack(outs).reshape(x.shape), torch.stack(ws).reshape(*x.shape[:-1], x.shape[-2])


def cosine_through_naive(x: Tensor, tau: float) -> Pair:
    _, w = attnlib.naive_self_attention(x / x.norm(dim=-1, keepdim=True) / math.sqrt(tau))
    return w @ x, w


COSINE_RIGHT = {
    "F.normalize": cosine_normalize,
    "dividing by both lengths": cosine_divide_lengths,
    "attnlib.cosine_similarity, broadcast": cosine_attnlib_broadcast,
    "a loop in float64": cosine_loop,
    "naive attention on scaled unit vectors": cosine_through_naive,
}


def _cos(x: Tensor, tau: float, unit: Callable[[Tensor], Tensor], mixed: str = "x") -> Pair:
    u = unit(x)
    w = torch.softmax(u @ u.transpose(-1, -2) / tau, dim=-1)
    return w @ (u if mixed == "u" else x), w


COSINE_WRONG = {
    "+ 1e-6 on the lengths": (
        lambda x, tau: _cos(x, tau, lambda v: v / (v.norm(dim=-1, keepdim=True) + 1e-6)),
        "an epsilon",
    ),
    "mixed unit vectors": (
        lambda x, tau: _cos(x, tau, lambda v: F.normalize(v, dim=-1), "u"),
        "mixed the vectors scaled to length 1",
    ),
    "dim 0 of a matrix": (
        lambda x, tau: _cos(x, tau, lambda v: v / torch.linalg.norm(v, dim=-2, keepdim=True)),
        "along dim -2",
    ),
    "no keepdim": (
        lambda x, tau: _cos(x, tau, lambda v: v / v.norm(dim=-1)),
        "without keeping its dimension",
    ),
    "one norm": (lambda x, tau: _cos(x, tau, lambda v: v / torch.norm(v)), "the whole tensor"),
    "times tau": (
        lambda x, tau: (lambda u: _attend(u @ u.mT * tau, x))(F.normalize(x, dim=-1)),
        "multiplied the cosines by τ",
    ),
    "no tau": (lambda x, tau: _cos(x, 1.0, lambda v: F.normalize(v, dim=-1)), "left out the temp"),
    "dot products": (lambda x, tau: _attend(x @ x.mT / tau, x), "plain dot products"),
    "one side": (
        lambda x, tau: _attend(F.normalize(x, dim=-1) @ x.mT / tau, x),
        "only one side",
    ),
    "norms * norms": (
        lambda x, tau: (lambda n: _attend(x @ x.mT / n**2 / tau, x))(
            torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        ),
        "row i of the dot products",
    ),
    "squared length": (
        lambda x, tau: _cos(x, tau, lambda v: v / (v**2).sum(-1, keepdim=True)),
        "squared length",
    ),
    "columns": (
        lambda x, tau: (lambda u: _attend(u @ u.mT / tau, x, 0 if x.dim() == 2 else -2))(
            F.normalize(x, dim=-1)
        ),
        "along the columns",
    ),
    "also √C": (
        lambda x, tau: (lambda u: _attend(u @ u.mT / (tau * x.shape[-1] ** 0.5), x))(
            F.normalize(x, dim=-1)
        ),
        "√C as well",
    ),
    "x.T": (lambda x, tau: _cos_t(x, tau), "x.T"),
    "dim 0": (lambda x, tau: _cos(x, tau, lambda v: F.normalize(v, dim=0)), "along dim 0"),
    "dim 1": (lambda x, tau: _cos(x, tau, lambda v: F.normalize(v, p=2, dim=1)), "along dim 1"),
    "tau after": (lambda x, tau: cosine_tau_after(x, tau), "after the softmax"),
    "(weights, out)": (
        lambda x, tau: cosine_normalize(x, tau)[::-1],
        "returned the pair the wrong way round",
    ),
}


def cosine_tau_after(x: Tensor, tau: float) -> Pair:
    u = F.normalize(x, dim=-1)
    w = torch.softmax(u @ u.mT, dim=-1) / tau
    return w @ x, w


def _attend(scores: Tensor, x: Tensor, dim: int = -1) -> Pair:
    w = scores.softmax(dim)
    return w @ x, w


def _cos_t(x: Tensor, tau: float) -> Pair:
    u = F.normalize(x, dim=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # x.T on more than 2 dimensions is deprecated
        scores = u @ u.T / tau
    return _attend(scores, x)


@pytest.mark.parametrize("name", COSINE_RIGHT)
def test_right_cosine_attentions_pass(name: str) -> None:
    report = checks.check_cosine_self_attention(COSINE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", COSINE_WRONG)
def test_each_cosine_mistake_is_caught_and_named(name: str) -> None:
    fn, words = COSINE_WRONG[name]
    report = checks.check_cosine_self_attention(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


# -- Exercise 3: local self-attention ------------------------------------------------------------


def local_where(x: Tensor, window: int) -> Pair:
    t = x.shape[-2]
    i = torch.arange(t)
    allowed = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < window)
    scores = torch.where(allowed, x @ x.transpose(-2, -1), float("-inf"))
    w = attnlib.softmax(scores, dim=-1)
    return w @ x, w


def local_tril_triu(x: Tensor, window: int) -> Pair:
    t = x.shape[-2]
    ones = torch.ones(t, t, dtype=torch.bool)
    allowed = ones.tril() & ones.triu(-(window - 1))
    scores = (x @ x.mT).masked_fill(~allowed, torch.finfo(x.dtype).min)
    w = torch.softmax(scores, dim=-1)
    return w @ x, w


def local_renormalise(x: Tensor, window: int) -> Pair:
    t = x.shape[-2]
    allowed = attnlib.causal_mask(t) & ~attnlib.causal_mask(t).tril(-window)
    e = torch.exp(x @ x.mT - (x @ x.mT).amax(-1, keepdim=True)) * allowed
    w = e / e.sum(-1, keepdim=True)
    return w @ x, w


def local_loop(x: Tensor, window: int) -> Pair:
    flat = x.reshape(-1, *x.shape[-2:]).double()
    t = x.shape[-2]
    outs, ws = [], []
    for seq in flat:
        w = torch.zeros(t, t, dtype=torch.float64)
        for i in range(t):
            keys = list(range(max(0, i - window + 1), i + 1))
            w[i, keys] = torch.softmax(seq[keys] @ seq[i], dim=0)
        ws.append(w)
        outs.append(w @ seq)
    return torch.stack(outs).reshape(x.shape), torch.stack(ws).reshape(*x.shape[:-1], t)


LOCAL_RIGHT = {
    "torch.where and arange": local_where,
    "tril and triu, the dtype's smallest number": local_tril_triu,
    "a loop over the rows in float64, back in x's dtype": lambda x, w: tuple(
        t.to(x.dtype) for t in local_loop(x, w)
    ),
}


def _local(x: Tensor, allowed: Tensor, fill: float = float("-inf"), scale: float = 1.0) -> Pair:
    w = torch.softmax((x @ x.mT * scale).masked_fill(~allowed, fill), dim=-1)
    return w @ x, w


def local_no_diagonal_attnlib(x: Tensor, window: int) -> Pair:
    t = x.shape[-2]
    i = torch.arange(t)
    hidden = (i[None, :] >= i[:, None]) | (i[:, None] - i[None, :] > window)  # itself too
    w = attnlib.softmax((x @ x.mT).masked_fill(hidden, float("-inf")), dim=-1)
    return w @ x, w


def _tri(t: int, lower: int, upper: int) -> Tensor:
    ones = torch.ones(t, t, dtype=torch.bool)
    return ones.tril(upper) & ones.triu(lower)


def local_plus_eps(x: Tensor, window: int) -> Pair:
    t = torch.arange(x.shape[-2])
    behind = t[:, None] - t[None, :]
    scores = (x @ x.mT).masked_fill((behind < 0) | (behind >= window), float("-inf"))
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    w = e / (e.sum(dim=-1, keepdim=True) + 1e-3)  # "never divide by 0"
    return w @ x, w


LOCAL_WRONG = {
    "+ 1e-3 in each row's total": (local_plus_eps, "(an epsilon) to each row's total"),
    "float32's smallest number": (
        lambda x, w: _local(x, _tri(x.shape[-2], 1 - w, 0), fill=torch.finfo(torch.float32).min),
        "float32's smallest number",
    ),
    "no mask": (lambda x, w: _attend(x @ x.mT, x), "left out the mask"),
    "causal only": (lambda x, w: _local(x, _tri(x.shape[-2], -x.shape[-2], 0)), "whole past"),
    "window + 1": (lambda x, w: _local(x, _tri(x.shape[-2], -w, 0)), "window + 1 positions"),
    "window - 1": (lambda x, w: _local(x, _tri(x.shape[-2], -w + 2, 0)), "stops one short"),
    "no diagonal": (lambda x, w: _local(x, _tri(x.shape[-2], -w, -1)), "the window ends at t − 1"),
    "no diagonal, attnlib.softmax": (lambda x, w: local_no_diagonal_attnlib(x, w), "refused"),
    "no diagonal, finfo": (
        lambda x, w: _local(x, _tri(x.shape[-2], -w, -1), torch.finfo(x.dtype).min),
        "filling with the smallest number",
    ),
    "anti-causal": (
        lambda x, w: _attend(
            (x @ x.mT).masked_fill(_tri(x.shape[-2], -x.shape[-2], -1), -math.inf), x
        ),
        "hid the past instead of the future",
    ),
    "the future": (lambda x, w: _local(x, _tri(x.shape[-2], 0, w - 1)), "towards the future"),
    "both sides": (lambda x, w: _local(x, _tri(x.shape[-2], 1 - w, w - 1)), "on both sides"),
    "inverted": (
        lambda x, w: _attend((x @ x.mT).masked_fill(_tri(x.shape[-2], 1 - w, 0), -math.inf), x),
        "used the mask the wrong way round",
    ),
    "zeroed after": (
        lambda x, w: (lambda a: (a @ x, a))(
            torch.softmax(x @ x.mT, -1) * _tri(x.shape[-2], 1 - w, 0)
        ),
        "after the softmax",
    ),
    "filled with 0": (
        lambda x, w: _local(x, _tri(x.shape[-2], 1 - w, 0), fill=0.0),
        "with 0 instead of -inf",
    ),
    "-1e9": (lambda x, w: _local(x, _tri(x.shape[-2], 1 - w, 0), fill=-1e9), "-1e9"),
    "T from shape[0]": (lambda x, w: _local(x, _tri(len(x), 1 - w, 0)), "x.shape[0]"),
    "T from shape[1]": (lambda x, w: _local(x, _tri(x.size(1), 1 - w, 0)), "x.shape[1]"),
    "(weights, out)": (
        lambda x, w: local_where(x, w)[::-1],
        "returned the pair the wrong way round",
    ),
    "scaled": (
        lambda x, w: _local(x, _tri(x.shape[-2], 1 - w, 0), scale=x.shape[-1] ** -0.5),
        "divided the scores by √C",
    ),
    "exp, zero and renormalise": (local_renormalise, "softmax of the whole row"),
    "lower end only": (lambda x, w: local_lower_end_only(x, w), "also saw the future"),
    "a float32 buffer": (lambda x, w: local_float32_buffer(x, w), "a float32 tensor"),
    "exp of the masked scores": (
        lambda x, w: local_exp_masked(x, w),
        "each row's largest first",
    ),
    "exp times the mask": (
        lambda x, w: local_exp_times_mask(x, w),
        "then zeroed the hidden ones",
    ),
}


def local_exp_masked(x: Tensor, window: int) -> Pair:
    scores = x @ x.mT
    e = scores.masked_fill(~_tri(x.shape[-2], 1 - window, 0), -math.inf).exp()
    w = e / e.sum(-1, keepdim=True)  # softmax from its formula
    return w @ x, w


def local_exp_times_mask(x: Tensor, window: int) -> Pair:
    e = torch.exp(x @ x.mT) * _tri(x.shape[-2], 1 - window, 0)  # hidden ones set to 0
    w = e / torch.sum(e, dim=-1, keepdim=True)
    return w @ x, w


def local_lower_end_only(x: Tensor, window: int) -> Pair:
    i = torch.arange(x.shape[-2])
    allowed = i[None, :] >= i[:, None] - window + 1  # not too far back
    return _attend((x @ x.mT).masked_fill(~allowed, -math.inf), x)


def local_float32_buffer(x: Tensor, window: int) -> Pair:
    t = x.shape[-2]
    weights = torch.zeros(*x.shape[:-1], t)  # float32, whatever x is
    for row in range(t):
        start = max(0, row - window + 1)
        seen = x[..., start : row + 1, :]
        weights[..., row, start : row + 1] = torch.softmax(seen @ x[..., row, :, None], -2)[..., 0]
    return weights @ x, weights


@pytest.mark.parametrize("name", LOCAL_RIGHT)
def test_right_local_attentions_pass(name: str) -> None:
    report = checks.check_local_self_attention(LOCAL_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", LOCAL_WRONG)
def test_each_local_mistake_is_caught_and_named(name: str) -> None:
    fn, words = LOCAL_WRONG[name]
    report = checks.check_local_self_attention(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


def _band(t: int, window: int) -> Tensor:
    i = torch.arange(t)
    return (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < window)


@pytest.mark.parametrize(
    "cheat",
    [
        lambda x, w: attnlib.scaled_dot_product_attention(
            x, x, x, _band(x.shape[-2], w), scale=1.0
        ),
        lambda x, w: (
            F.scaled_dot_product_attention(x, x, x, _band(x.shape[-2], w), scale=1.0),
            None,
        ),
        lambda x, w: (attnlib.tiled_attention(x, x, x, _band(x.shape[-2], w), scale=1.0), None),
    ],
    ids=["attnlib.scaled_dot_product_attention", "F.scaled_dot_product_attention", "tiled"],
)
def test_a_local_attention_that_calls_a_masked_attention_is_refused(
    cheat: Callable[[Tensor, int], Pair],
) -> None:
    report = checks.check_local_self_attention(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- every table --------------------------------------------------------------------------------

CHECKERS = {
    "ex1_stacked_naive_attention": checks.check_stacked_naive_attention,
    "ex2_cosine_self_attention": checks.check_cosine_self_attention,
    "ex3_local_self_attention": checks.check_local_self_attention,
}
WRONG = {
    "ex1_stacked_naive_attention": STACKED_WRONG,
    "ex2_cosine_self_attention": COSINE_WRONG,
    "ex3_local_self_attention": LOCAL_WRONG,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    for mistake in known_mistakes(exercise_id):
        assert _named(CHECKERS[exercise_id](mistake.fn), mistake.name), mistake.name


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_each_entry_of_the_table_is_written_again_here(exercise_id: str) -> None:
    table = list(dict.fromkeys(m.name for m in known_mistakes(exercise_id)))  # one per name
    for _, words in WRONG[exercise_id].values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(WRONG[exercise_id])


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_an_unfinished_answer_is_not_done(exercise_id: str) -> None:
    def stub(*args: object) -> Pair:
        raise NotImplementedError()

    report = CHECKERS[exercise_id](stub)
    assert not report.passed and not report.done and "not done yet" in str(report)


def test_minus_1e9_is_named_even_with_another_mistake() -> None:
    def anti_causal_minus_1e9(x: Tensor, window: int) -> Pair:
        t = x.shape[-2]
        hide = torch.ones(t, t, dtype=torch.bool).tril(-1)  # the past, by mistake
        w = torch.softmax((x @ x.mT).masked_fill(hide, -1e9), dim=-1)
        return w @ x, w

    report = checks.check_local_self_attention(anti_causal_minus_1e9)
    assert _named(
        report, next(m.name for m in known_mistakes("ex3_local_self_attention") if "-1e9" in m.name)
    ), report
