"""Learner answers to notebook 04's exercises (queries, keys, values), corpus d, written blind:
`.T` on a batch, crashes inside the learner's code, scales taken from the wrong width."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_my_attention", "ex2_my_cross_attention", "ex3_my_attention_pool"

# ------------------------------------------ Exercise 1: my_attention


def ex1_wrong_dot_t_batch(q, k, v):
    d_k = q.shape[-1]
    scores = q @ k.T / math.sqrt(d_k)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_transpose_0_1(q, k, v):
    scores = q @ k.transpose(0, 1) / math.sqrt(q.shape[-1])
    weights = scores.softmax(-1)
    return weights @ v, weights


def ex1_right_scale_tensor_int(q, k, v):
    d_k = torch.tensor(q.shape[-1])
    scores = q @ k.transpose(-2, -1) / d_k.sqrt()
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_v_width(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_bmm(q, k, v):
    scores = torch.bmm(q, k.transpose(1, 2)) / q.shape[-1] ** 0.5
    weights = torch.softmax(scores, dim=-1)
    return torch.bmm(weights, v), weights


def ex1_right_mt(q, k, v):
    weights = torch.softmax(q @ k.mT * q.shape[-1] ** -0.5, dim=-1)
    return weights @ v, weights


def ex1_right_einsum(q, k, v):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(k.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


# ------------------------------------------ Exercise 2: my_cross_attention


def ex2_wrong_dot_t_batch(y, x, w_q, w_k, w_v):
    q = (w_q @ y.T).T
    k = (w_k @ x.T).T
    v = (w_v @ x.T).T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_not_transposed(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_d_y(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(y.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_right_linear(y, x, w_q, w_k, w_v):
    q = torch.nn.functional.linear(y, w_q)
    k = torch.nn.functional.linear(x, w_k)
    v = torch.nn.functional.linear(x, w_v)
    weights = torch.softmax(q @ k.mT / k.shape[-1] ** 0.5, dim=-1)
    return weights @ v, weights


def ex2_right_einsum(y, x, w_q, w_k, w_v):
    q = torch.einsum("...ti,oi->...to", y, w_q)
    k = torch.einsum("...si,oi->...so", x, w_k)
    v = torch.einsum("...si,oi->...so", x, w_v)
    weights = torch.softmax(torch.einsum("...td,...sd->...ts", q, k) / math.sqrt(q.shape[-1]), -1)
    return weights @ v, weights


# ------------------------------------------ Exercise 3: my_attention_pool


def ex3_wrong_dot_t_batch(x, query, key_proj, value_proj):
    keys = key_proj(x)  # (B, T, d_k)
    scores = query @ keys.T / math.sqrt(query.shape[0])
    weights = torch.softmax(scores, dim=-1)
    return weights @ value_proj(x), weights


def ex3_wrong_softmax_dim0(x, query, key_proj, value_proj):
    keys, values = key_proj(x), value_proj(x)
    scores = keys @ query / math.sqrt(query.shape[-1])  # (B, T)
    weights = torch.softmax(scores, dim=0)
    return (weights.unsqueeze(-1) * values).sum(dim=1), weights


def ex3_wrong_matmul_values(x, query, key_proj, value_proj):
    keys, values = key_proj(x), value_proj(x)
    weights = torch.softmax(keys @ query / math.sqrt(query.shape[-1]), dim=-1)  # (B, T)
    return weights @ values, weights


def ex3_right_unsqueeze(x, query, key_proj, value_proj):
    keys, values = key_proj(x), value_proj(x)
    scores = (keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(keys.shape[-1])
    weights = scores.softmax(dim=-1)
    out = (weights.unsqueeze(1) @ values).squeeze(1)
    return out, weights


def ex3_right_einsum(x, query, key_proj, value_proj):
    keys = key_proj(x)
    weights = torch.softmax(torch.einsum("btd,d->bt", keys, query) / len(query) ** 0.5, dim=-1)
    return torch.einsum("bt,btv->bv", weights, value_proj(x)), weights


ENTRIES = [
    Entry(
        E1,
        "q @ k.T (reverses a batch)",
        ex1_wrong_dot_t_batch,
        named=("transposed k in a way that is right only for a 2-D k (.T or transpose(0, 1))"),
    ),
    Entry(
        E1,
        "k.transpose(0, 1)",
        ex1_wrong_transpose_0_1,
        named=("transposed k in a way that is right only for a 2-D k (.T or transpose(0, 1))"),
    ),
    Entry(E1, "sqrt of torch.tensor(d_k)", ex1_right_scale_tensor_int, right=True),
    Entry(
        E1,
        "scaled by sqrt(d_v)",
        ex1_wrong_v_width,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E1,
        "torch.bmm: three dimensions only",
        ex1_wrong_bmm,
        named="used torch.bmm, which takes 3-D tensors only",
    ),
    Entry(E1, "k.mT times d_k ** -0.5", ex1_right_mt, right=True),
    Entry(E1, "two einsums", ex1_right_einsum, right=True),
    Entry(
        E2,
        "(w @ y.T).T (reverses a batch)",
        ex2_wrong_dot_t_batch,
        named=("transposed in a way that is right only for 2-D tensors (.T or transpose(0, 1))"),
    ),
    Entry(
        E2,
        "y @ w_q without transposing the (out, in) weights",
        ex2_wrong_not_transposed,
        named=("multiplied by the stored (out, in) weights as they are, without transposing them"),
    ),
    Entry(
        E2,
        "scaled by sqrt(d_y)",
        ex2_wrong_scale_d_y,
        named=("divided the scores by the square root of y's width (the query tokens' d_model)"),
    ),
    Entry(E2, "F.linear for the projections", ex2_right_linear, right=True),
    Entry(E2, "einsum projections", ex2_right_einsum, right=True),
    Entry(
        E3,
        "query @ keys.T (reverses a batch)",
        ex3_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(
        E3,
        "softmax over the batch (dim 0)",
        ex3_wrong_softmax_dim0,
        named="took the softmax over the batch (dim=0) instead of over the positions",
    ),
    Entry(
        E3,
        "weights (B, T) @ values (B, T, d_v)",
        ex3_wrong_matmul_values,
        named="multiplied the (B, T) weights by the (B, T, d_v) values with @",
    ),
    Entry(E3, "matmul with unsqueezed query and weights", ex3_right_unsqueeze, right=True),
    Entry(E3, "einsum btd,d->bt", ex3_right_einsum, right=True),
]
