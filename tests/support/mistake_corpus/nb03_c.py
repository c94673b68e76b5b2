"""Learner answers to notebook 03's exercises (naive self-attention), corpus c, written blind."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

E1, E2, E3 = "ex1_stacked_naive_attention", "ex2_cosine_self_attention", "ex3_local_self_attention"

# ------------------------------------------ Exercise 1: stacked_naive_attention


def _identity(x):
    T = x.shape[-2]
    return torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)


def ex1_wrong_order(x, layers):
    out, total = x, _identity(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        total = total @ w
    return out, total


def ex1_wrong_last_weights(x, layers):
    out, w = x, _identity(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
    return out, w


def ex1_wrong_original_each_time(x, layers):
    out, total = x, _identity(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(x)
        total = w @ total
    return out, total


def ex1_wrong_added(x, layers):
    out = x
    total = torch.zeros(*x.shape[:-1], x.shape[-2], dtype=x.dtype)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        total = total + w
    return out, total


def ex1_wrong_eye_not_batched(x, layers):
    out = x
    total = torch.eye(x.shape[-2], dtype=x.dtype)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        total = w @ total
    return out, total


def ex1_wrong_elementwise(x, layers):
    out, total = x, _identity(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        total = w * total
    return out, total


def ex1_wrong_one_layer_short(x, layers):
    if layers == 0:
        return x, _identity(x)
    out, total = attnlib.naive_self_attention(x)
    for _ in range(1, layers - 1):
        out, w = attnlib.naive_self_attention(out)
        total = w @ total
    return out, total


def ex1_wrong_zero_layers_none(x, layers):
    out, total = x, None
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        total = w if total is None else w @ total
    return out, total


def ex1_right_out_from_recipe(x, layers):
    T = x.shape[-2]
    recipe = torch.zeros(*x.shape[:-2], T, T, dtype=x.dtype)
    recipe.diagonal(dim1=-2, dim2=-1).fill_(1.0)
    h = x
    for _ in range(layers):
        scores = h @ h.transpose(-2, -1)
        w = torch.softmax(scores, dim=-1)
        h = w @ h
        recipe = w @ recipe
    return h, recipe


def ex1_right_recursive(x, layers):
    if layers == 0:
        return x.clone(), _identity(x).clone()
    below, recipe = ex1_right_recursive(x, layers - 1)
    out, w = attnlib.naive_self_attention(below)
    return out, torch.matmul(w, recipe)


# ------------------------------------------ Exercise 2: cosine_self_attention


def _unit(x):
    return x / x.norm(dim=-1, keepdim=True)


def ex2_wrong_times_tau(x, tau):
    u = _unit(x)
    w = torch.softmax(u @ u.transpose(-2, -1) * tau, dim=-1)
    return w @ x, w


def ex2_wrong_mixes_units(x, tau):
    u = _unit(x)
    w = torch.softmax(u @ u.transpose(-2, -1) / tau, dim=-1)
    return w @ u, w


def ex2_wrong_columns(x, tau):
    u = _unit(x)
    w = torch.softmax(u @ u.transpose(-2, -1) / tau, dim=-2)
    return w @ x, w


def ex2_wrong_raw_dots(x, tau):
    w = torch.softmax(x @ x.transpose(-2, -1) / tau, dim=-1)
    return w @ x, w


def ex2_wrong_norm_positions(x, tau):
    u = x / x.norm(dim=-2, keepdim=True)
    w = torch.softmax(u @ u.transpose(-2, -1) / tau, dim=-1)
    return w @ x, w


def ex2_wrong_tau_after_softmax(x, tau):
    u = _unit(x)
    w = torch.softmax(u @ u.transpose(-2, -1), dim=-1) / tau
    return w @ x, w


def ex2_wrong_dot_dot_t(x, tau):
    u = _unit(x)
    w = torch.softmax(u @ u.T / tau, dim=-1)
    return w @ x, w


def ex2_wrong_extra_sqrt(x, tau):
    u = _unit(x)
    scores = u @ u.transpose(-2, -1) / math.sqrt(x.shape[-1])
    w = torch.softmax(scores / tau, dim=-1)
    return w @ x, w


def ex2_right_normalize(x, tau):
    u = F.normalize(x, dim=-1)
    w = (torch.einsum("...ic,...jc->...ij", u, u) / tau).softmax(-1)
    return w @ x, w


def ex2_right_outer_norms(x, tau):
    n = torch.linalg.vector_norm(x, dim=-1)  # (..., T)
    cos = (x @ x.transpose(-2, -1)) / (n.unsqueeze(-1) * n.unsqueeze(-2))
    w = attnlib.softmax(cos / tau, dim=-1)
    return torch.matmul(w, x), w


# ------------------------------------------ Exercise 3: local_self_attention


def _band(T, lo, hi):
    """True where 0 <= t - j: lo <= t - j < hi."""
    pos = torch.arange(T)
    behind = pos[:, None] - pos[None, :]
    return (behind >= lo) & (behind < hi)


def _attend(x, allowed, fill=float("-inf")):
    scores = x @ x.transpose(-2, -1)
    w = torch.softmax(scores.masked_fill(~allowed, fill), dim=-1)
    return w @ x, w


def ex3_wrong_one_too_many(x, window):
    return _attend(x, _band(x.shape[-2], 0, window + 1))


def ex3_wrong_future(x, window):
    pos = torch.arange(x.shape[-2])
    ahead = pos[None, :] - pos[:, None]
    return _attend(x, (ahead >= 0) & (ahead < window))


def ex3_wrong_fill_zero(x, window):
    return _attend(x, _band(x.shape[-2], 0, window), fill=0.0)


def ex3_wrong_zeroed_after(x, window):
    allowed = _band(x.shape[-2], 0, window)
    w = torch.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    return w @ x, w


def ex3_wrong_causal_only(x, window):
    T = x.shape[-2]
    return _attend(x, torch.tril(torch.ones(T, T, dtype=torch.bool)))


def ex3_wrong_symmetric_band(x, window):
    pos = torch.arange(x.shape[-2])
    return _attend(x, (pos[:, None] - pos[None, :]).abs() < window)


def ex3_wrong_scaled(x, window):
    allowed = _band(x.shape[-2], 0, window)
    scores = x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1])
    w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return w @ x, w


def ex3_wrong_manual_exp(x, window):
    allowed = _band(x.shape[-2], 0, window)
    e = torch.exp(x @ x.transpose(-2, -1)) * allowed
    w = e / e.sum(dim=-1, keepdim=True)
    return w @ x, w


def ex3_wrong_triu_offset(x, window):
    T = x.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool)
    return _attend(x, torch.tril(ones) & torch.triu(ones, diagonal=-window))


def ex3_refused_sdpa(x, window):
    allowed = _band(x.shape[-2], 0, window)
    out = F.scaled_dot_product_attention(x, x, x, attn_mask=allowed, scale=1.0)
    w = torch.softmax((x @ x.transpose(-2, -1)).masked_fill(~allowed, -torch.inf), -1)
    return out, w


def ex3_right_where(x, window):
    T = x.shape[-2]
    t = torch.arange(T).unsqueeze(1)
    j = torch.arange(T).unsqueeze(0)
    visible = (j <= t) & (j > t - window)
    scores = torch.einsum("...tc,...jc->...tj", x, x)
    w = torch.where(visible, scores, torch.tensor(float("-inf"), dtype=x.dtype)).softmax(-1)
    return w @ x, w


def ex3_right_row_loop(x, window):
    T = x.shape[-2]
    scores = x @ x.transpose(-2, -1)
    w = torch.zeros_like(scores)
    for t in range(T):
        lo = max(0, t - window + 1)
        w[..., t, lo : t + 1] = torch.softmax(scores[..., t, lo : t + 1], dim=-1)
    return w @ x, w


ENTRIES = [
    Entry(
        E1,
        "multiplied the mixes in the wrong order",
        ex1_wrong_order,
        named="multiplied the layers' weights in the wrong order, the first layer's on the left",
    ),
    Entry(
        E1,
        "returned only the last layer's weights",
        ex1_wrong_last_weights,
        named=(
            "returned the last layer's weights, not the mix of x that all the layers make together"
        ),
    ),
    Entry(
        E1,
        "every layer read the original x",
        ex1_wrong_original_each_time,
        named="fed every layer the original x instead of the previous layer's output",
    ),
    Entry(
        E1,
        "added the layers' weights",
        ex1_wrong_added,
        named="added the layers' weight matrices instead of multiplying them",
    ),
    Entry(
        E1,
        "torch.eye(T) not expanded to the batch",
        ex1_wrong_eye_not_batched,
        named=(
            "for 0 layers, returned one (T, T) identity instead of one for each sequence of a batch"
        ),
    ),
    Entry(
        E1,
        "combined the weights entry by entry (*)",
        ex1_wrong_elementwise,
        named=(
            "multiplied the weights entry by entry (*) into an identity, which keeps only its "
            "diagonal"
        ),
    ),
    Entry(
        E1,
        "range(1, layers - 1): one layer short",
        ex1_wrong_one_layer_short,
        named="ran one layer too few",
    ),
    Entry(
        E1,
        "weights None when layers = 0",
        ex1_wrong_zero_layers_none,
        named="started the product of the weights from None, so 0 layers return no weights",
    ),
    Entry(E1, "softmax by hand, identity via diagonal fill", ex1_right_out_from_recipe, right=True),
    Entry(E1, "recursive, one layer on top of layers - 1", ex1_right_recursive, right=True),
    Entry(
        E2,
        "multiplied by tau instead of dividing",
        ex2_wrong_times_tau,
        named="multiplied the cosines by τ instead of dividing by it",
    ),
    Entry(
        E2,
        "mixed the unit vectors, not x",
        ex2_wrong_mixes_units,
        named="mixed the vectors scaled to length 1 instead of the original vectors",
    ),
    Entry(
        E2,
        "softmax over the columns (dim=-2)",
        ex2_wrong_columns,
        named="took the softmax along the columns (dim -2), not along each row",
    ),
    Entry(
        E2,
        "used raw dot products, no lengths divided out",
        ex2_wrong_raw_dots,
        named=(
            "scored with plain dot products divided by τ, without scaling the vectors to length 1"
        ),
    ),
    Entry(
        E2,
        "normalised along the positions (dim=-2)",
        ex2_wrong_norm_positions,
        named="scaled each coordinate across the vectors (along dim -2) instead of each vector",
    ),
    Entry(
        E2,
        "divided the weights by tau after the softmax",
        ex2_wrong_tau_after_softmax,
        named="divided the weights by τ after the softmax instead of the cosines before it",
    ),
    Entry(
        E2,
        "u.T, which reverses every dim of a batch",
        ex2_wrong_dot_dot_t,
        named="transposed with x.T, which reverses every dimension of a batch (B, T, C)",
    ),
    Entry(
        E2, "also divided by sqrt(C)", ex2_wrong_extra_sqrt, named="divided by √C as well as by τ"
    ),
    Entry(E2, "F.normalize and einsum", ex2_right_normalize, right=True),
    Entry(E2, "dots over the outer product of the norms", ex2_right_outer_norms, right=True),
    Entry(
        E3,
        "window + 1 positions: off by one",
        ex3_wrong_one_too_many,
        named="let each position see window + 1 positions, t − window … t",
    ),
    Entry(
        E3,
        "looked ahead instead of back",
        ex3_wrong_future,
        named="turned the window towards the future: positions t … t + window − 1",
    ),
    Entry(
        E3,
        "filled the hidden scores with 0, not -inf",
        ex3_wrong_fill_zero,
        named="filled the hidden scores with 0 instead of -inf",
    ),
    Entry(
        E3,
        "zeroed the hidden weights after softmax, no renormalising",
        ex3_wrong_zeroed_after,
        named="set the hidden weights to 0 after the softmax, without renormalising",
    ),
    Entry(
        E3,
        "plain causal mask, window ignored",
        ex3_wrong_causal_only,
        named="kept the whole past: a causal mask without the window",
    ),
    Entry(
        E3,
        "a band on both sides |t - j| < window",
        ex3_wrong_symmetric_band,
        named="let each position see window − 1 positions on both sides, past and future",
    ),
    Entry(
        E3,
        "divided the scores by sqrt(C)",
        ex3_wrong_scaled,
        named="divided the scores by √C: this exercise is naive, unscaled attention",
    ),
    Entry(
        E3,
        "softmax by hand without the max: overflows on long vectors",
        ex3_wrong_manual_exp,
        named=(
            "exponentiated the scores by hand without subtracting each row's largest, then zeroed "
            "the hidden ones"
        ),
    ),
    Entry(
        E3,
        "tril & triu(-window): one position too many",
        ex3_wrong_triu_offset,
        named="let each position see window + 1 positions, t − window … t",
    ),
    Entry(E3, "F.scaled_dot_product_attention with a mask", ex3_refused_sdpa, named=REFUSED),
    Entry(E3, "torch.where with a -inf tensor, einsum scores", ex3_right_where, right=True),
    Entry(
        E3, "a loop over positions, softmax of each visible slice", ex3_right_row_loop, right=True
    ),
]
