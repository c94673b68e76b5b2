"""Learner answers to notebook 03's exercises (naive self-attention), corpus d, written blind:
float32 identities and masks against float64 and float16 inputs, epsilons in the cosine, `.T`
on a batch, crashes."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_stacked_naive_attention", "ex2_cosine_self_attention", "ex3_local_self_attention"

# ------------------------------------------ Exercise 1: stacked_naive_attention


def _layer(x):
    w = torch.softmax(x @ x.transpose(-2, -1), dim=-1)
    return w @ x, w


def ex1_wrong_eye_matmul(x, layers):
    T = x.shape[-2]
    total = torch.eye(T)  # nothing mixed yet
    out = x
    for _ in range(layers):
        out, w = _layer(out)
        total = w @ total
    return out, total.expand(*x.shape[:-2], T, T)


def ex1_wrong_eye_float32_weights(x, layers):
    T = x.shape[-2]
    total = torch.eye(T).expand(*x.shape[:-2], T, T)
    out = x
    for _ in range(layers):
        out, w = _layer(out)
        total = torch.matmul(w, total.to(w.dtype))
    return out, total


def ex1_wrong_dot_t_batch(x, layers):
    T = x.shape[-2]
    total = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    out = x
    for _ in range(layers):
        w = torch.softmax(out @ out.T, dim=-1)
        out = w @ out
        total = w @ total
    return out, total


def ex1_wrong_order(x, layers):
    T = x.shape[-2]
    total = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    out = x
    for _ in range(layers):
        out, w = _layer(out)
        total = total @ w
    return out, total


def ex1_right_eye_like(x, layers):
    T = x.shape[-2]
    total = torch.eye(T, dtype=x.dtype).repeat(*x.shape[:-2], 1, 1)
    out = x
    for _ in range(layers):
        out, w = _layer(out)
        total = w @ total
    return out, total


def ex1_right_out_from_total(x, layers):
    eye = torch.diag_embed(torch.ones(x.shape[:-1], dtype=x.dtype))
    total, out = eye, x
    for _ in range(layers):
        w = torch.softmax(torch.einsum("...ic,...jc->...ij", out, out), dim=-1)
        total = torch.einsum("...ij,...jk->...ik", w, total)
        out = total @ x
    return out, total


# ------------------------------------------ Exercise 2: cosine_self_attention


def ex2_wrong_eps_norms(x, tau):
    unit = x / (x.norm(dim=-1, keepdim=True) + 1e-6)
    w = torch.softmax(unit @ unit.transpose(-2, -1) / tau, dim=-1)
    return w @ x, w


def ex2_wrong_eps_product(x, tau):
    norms = x.norm(dim=-1)
    cos = (x @ x.transpose(-2, -1)) / (norms[..., :, None] * norms[..., None, :] + 1e-5)
    w = torch.softmax(cos / tau, dim=-1)
    return w @ x, w


def ex2_wrong_dot_t_batch(x, tau):
    unit = x / x.norm(dim=-1, keepdim=True)
    w = torch.softmax(unit @ unit.T / tau, dim=-1)
    return w @ x, w


def ex2_wrong_mixes_units(x, tau):
    unit = x / x.norm(dim=-1, keepdim=True)
    w = torch.softmax(unit @ unit.transpose(-2, -1) / tau, dim=-1)
    return w @ unit, w


def ex2_right_normalize_by_hand(x, tau):
    unit = x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True))
    w = (unit @ unit.mT).div(tau).softmax(dim=-1)
    return w @ x, w


def ex2_right_cos_table(x, tau):
    norms = torch.linalg.vector_norm(x, dim=-1)
    cos = (x @ x.transpose(-1, -2)) / (norms.unsqueeze(-1) * norms.unsqueeze(-2))
    w = torch.softmax(cos * (1.0 / tau), dim=-1)
    return torch.einsum("...ij,...jc->...ic", w, x), w


# ------------------------------------------ Exercise 3: local_self_attention


def _window(T, window):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (j <= i) & (j > i - window)


def ex3_wrong_float32_bias(x, window):
    T = x.shape[-2]
    bias = torch.full((T, T), float("-inf"))
    bias[_window(T, window)] = 0.0
    w = torch.softmax(x @ x.transpose(-2, -1) + bias, dim=-1)
    return w @ x.to(w.dtype), w


def ex3_wrong_minus_1e9(x, window):
    T = x.shape[-2]
    scores = (x @ x.transpose(-2, -1)).masked_fill(~_window(T, window), -1e9)
    w = torch.softmax(scores, dim=-1)
    return w @ x, w


def ex3_wrong_finfo_float32(x, window):
    T = x.shape[-2]
    lowest = torch.finfo(torch.float32).min
    scores = (x @ x.transpose(-2, -1)).masked_fill(~_window(T, window), lowest)
    w = torch.softmax(scores, dim=-1)
    return w @ x, w


def ex3_wrong_softmax_float32(x, window):
    T = x.shape[-2]
    scores = (x @ x.transpose(-2, -1)).masked_fill(~_window(T, window), float("-inf"))
    w = torch.softmax(scores, dim=-1, dtype=torch.float32)
    return w @ x.float(), w


def ex3_wrong_scaled(x, window):
    T, C = x.shape[-2], x.shape[-1]
    scores = (x @ x.transpose(-2, -1)) / math.sqrt(C)
    w = torch.softmax(scores.masked_fill(~_window(T, window), float("-inf")), dim=-1)
    return w @ x, w


def ex3_right_float32_softmax_back(x, window):
    T = x.shape[-2]
    scores = (x @ x.mT).float().masked_fill(~_window(T, window), float("-inf"))
    w = torch.softmax(scores, dim=-1).to(x.dtype)
    return w @ x, w


def ex3_right_finfo_of_dtype(x, window):
    T = x.shape[-2]
    keep = torch.ones(T, T, dtype=torch.bool).tril().triu(-(window - 1))
    scores = torch.where(keep, x @ x.transpose(-2, -1), torch.finfo(x.dtype).min)
    w = torch.softmax(scores, dim=-1) * keep
    return w @ x, w


ENTRIES = [
    Entry(
        E1,
        "starts from torch.eye(T) (float32), total = w @ total",
        ex1_wrong_eye_matmul,
        named="a float32 constant breaks float64",
    ),
    Entry(
        E1,
        "a float32 eye, cast in the loop only",
        ex1_wrong_eye_float32_weights,
        named="returns float32 for float64 input",
    ),
    Entry(
        E1,
        "scores out @ out.T (reverses a batch)",
        ex1_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(
        E1,
        "total @ w: the product in the wrong order",
        ex1_wrong_order,
        named=("multiplied the layers' weights in the wrong order, the first layer's on the left"),
    ),
    Entry(E1, "an eye of x's dtype, repeat", ex1_right_eye_like, right=True),
    Entry(E1, "out as total @ x, einsum", ex1_right_out_from_total, right=True),
    Entry(
        E2,
        "+ 1e-6 on the lengths of the unit vectors",
        ex2_wrong_eps_norms,
        named=("added a small number (an epsilon) to the lengths, which changes every cosine"),
    ),
    Entry(
        E2,
        "+ 1e-5 on the product of the lengths",
        ex2_wrong_eps_product,
        named=("added a small number (an epsilon) to the lengths, which changes every cosine"),
    ),
    Entry(
        E2,
        "unit @ unit.T (reverses a batch)",
        ex2_wrong_dot_t_batch,
        named=("transposed with x.T, which reverses every dimension of a batch (B, T, C)"),
    ),
    Entry(
        E2,
        "mixed the unit vectors, not x",
        ex2_wrong_mixes_units,
        named="mixed the vectors scaled to length 1 instead of the original vectors",
    ),
    Entry(E2, "rsqrt of the squared lengths, .mT", ex2_right_normalize_by_hand, right=True),
    Entry(E2, "a cosine table, times 1 / tau", ex2_right_cos_table, right=True),
    Entry(
        E3,
        "an additive -inf bias made by torch.full (float32)",
        ex3_wrong_float32_bias,
        named="returns float32 for float16 input",
    ),
    Entry(
        E3,
        "masked_fill with -1e9",
        ex3_wrong_minus_1e9,
        named="filled the hidden scores with -1e9, which float16 cannot hold",
    ),
    Entry(
        E3,
        "masked_fill with float32's lowest number",
        ex3_wrong_finfo_float32,
        named=(
            "filled the hidden scores with float32's smallest number, which float16 cannot hold"
        ),
    ),
    Entry(
        E3,
        "softmax(dtype=float32), x.float(): float32 back",
        ex3_wrong_softmax_float32,
        named="returns float32 for float16 input",
    ),
    Entry(
        E3,
        "scaled by sqrt(C)",
        ex3_wrong_scaled,
        named="divided the scores by √C: this exercise is naive, unscaled attention",
    ),
    Entry(E3, "softmax in float32, weights cast back", ex3_right_float32_softmax_back, right=True),
    Entry(E3, "finfo of x's dtype, times the window", ex3_right_finfo_of_dtype, right=True),
]
