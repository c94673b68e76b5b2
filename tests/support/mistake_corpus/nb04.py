"""Learner answers to notebook 04's exercises (queries, keys, values), written blind."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

import attnlib
from mistake_corpus.corpus import Entry

# --- Exercise 1: my_attention(q, k, v) for any leading dimensions -----------------------------


def ex1_wrong_k_dot_t(q, k, v):
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_no_scale(q, k, v):
    scores = q @ k.transpose(-2, -1)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def ex1_wrong_sqrt_dv(q, k, v):
    d = v.shape[-1]
    weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)
    return torch.matmul(weights, v), weights


def ex1_wrong_softmax_dim_minus2(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    weights = torch.softmax(scores, dim=-2)
    return weights @ v, weights


def ex1_wrong_divide_by_dk(q, k, v):
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d_k
    weights = torch.softmax(scores, -1)
    return weights @ v, weights


def ex1_wrong_sqrt_tk(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_2d_only(q, k, v):
    scores = torch.mm(q, k.t()) / math.sqrt(q.shape[1])
    weights = torch.softmax(scores, dim=1)
    return torch.mm(weights, v), weights


def ex1_wrong_swapped_return(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights, weights @ v


def ex1_wrong_multiply_sqrt(q, k, v):
    scores = (q @ k.transpose(-2, -1)) * math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_mix_keys(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1]), dim=-1)
    return weights @ k, weights


def ex1_wrong_precedence(q, k, v):
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / d_k**1 / 2  # meant the square root
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_softmax_no_keepdim(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    e = torch.exp(scores - scores.max())
    weights = e / e.sum(dim=-1)
    return weights @ v, weights


def ex1_wrong_unstable_softmax(q, k, v):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ v, weights


def ex1_wrong_float64_no_scale(q, k, v):
    q64, k64, v64 = q.double(), k.double(), v.double()
    weights = torch.softmax(q64 @ k64.transpose(-2, -1), dim=-1)
    return (weights @ v64).to(q.dtype), weights.to(q.dtype)


def ex1_wrong_einsum_transposed(q, k, v):
    scores = torch.einsum("...qd,...kd->...kq", q, k) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...kq,...kv->...qv", weights, v), weights


def ex1_right_einsum(q, k, v):
    scores = torch.einsum("...id,...jd->...ij", q, k) * k.shape[-1] ** -0.5
    weights = scores.softmax(dim=-1)
    out = torch.einsum("...ij,...jd->...id", weights, v)
    return out, weights


def ex1_right_bmm_reshape(q, k, v):
    lead = q.shape[:-2]
    T_q, d_k = q.shape[-2:]
    T_k, d_v = v.shape[-2:]
    q3 = q.reshape(-1, T_q, d_k)
    k3 = k.reshape(-1, T_k, d_k)
    v3 = v.reshape(-1, T_k, d_v)
    scores = torch.bmm(q3, k3.transpose(1, 2)) / math.sqrt(d_k)
    weights = attnlib.softmax(scores, dim=-1)
    out = torch.bmm(weights, v3)
    return out.reshape(*lead, T_q, d_v), weights.reshape(*lead, T_q, T_k)


def ex1_right_manual_float64(q, k, v):
    scale = 1.0 / math.sqrt(q.size(-1))
    scores = torch.matmul(q.double(), k.double().swapaxes(-1, -2)) * scale
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    out = torch.matmul(weights, v.double())
    return out.to(q.dtype), weights.to(q.dtype)


# --- Exercise 2: my_cross_attention(y, x, w_q, w_k, w_v) --------------------------------------


def _attend(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_no_transpose(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q, x @ w_k, x @ w_v
    return _attend(q, k, v)


def ex2_wrong_roles_swapped(y, x, w_q, w_k, w_v):
    # queries from x, keys and values from y
    return _attend(x @ w_q.T, y @ w_k.T, y @ w_v.T)


def ex2_wrong_values_from_y(y, x, w_q, w_k, w_v):
    return _attend(y @ w_q.T, x @ w_k.T, y @ w_v.T)


def ex2_wrong_scale_dy(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(y.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_dv(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_dx(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / x.shape[-1] ** 0.5, dim=-1)
    return weights @ v, weights


def ex2_wrong_no_scale(y, x, w_q, w_k, w_v):
    q = F.linear(y, w_q)
    k = F.linear(x, w_k)
    v = F.linear(x, w_v)
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights


def ex2_wrong_k_dot_t(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_values_with_wk(y, x, w_q, w_k, w_v):
    q, k = y @ w_q.T, x @ w_k.T
    return _attend(q, k, k)


def ex2_wrong_weights_transposed(y, x, w_q, w_k, w_v):
    out, weights = _attend(y @ w_q.T, x @ w_k.T, x @ w_v.T)
    return out, weights.transpose(-2, -1)


def ex2_wrong_softmax_over_queries(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-2)
    return weights @ v, weights


def ex2_wrong_float64_roles_swapped(y, x, w_q, w_k, w_v):
    y64, x64 = y.double(), x.double()
    q = y64 @ w_k.double().T  # used the key matrix for the queries
    k = x64 @ w_q.double().T
    out, weights = _attend(q, k, x64 @ w_v.double().T)
    return out.float(), weights.float()


def ex2_right_flinear_attnlib(y, x, w_q, w_k, w_v):
    return attnlib.scaled_dot_product_attention(
        F.linear(y, w_q), F.linear(x, w_k), F.linear(x, w_v)
    )


def ex2_right_values_after_mixing(y, x, w_q, w_k, w_v):
    q = torch.einsum("...td,kd->...tk", y, w_q)
    k = torch.einsum("...sd,kd->...sk", x, w_k)
    scores = torch.einsum("...tk,...sk->...ts", q, k) / math.sqrt(w_k.shape[0])
    weights = torch.softmax(scores, dim=-1)
    mixed = weights @ x  # (..., T_y, d_x): mix the tokens, then project them to values
    return mixed @ w_v.transpose(0, 1), weights


def ex2_right_transpose_other_way(y, x, w_q, w_k, w_v):
    q = (w_q @ y.transpose(-2, -1)).transpose(-2, -1)
    k = (w_k @ x.transpose(-2, -1)).transpose(-2, -1)
    v = (w_v @ x.transpose(-2, -1)).transpose(-2, -1)
    d_k = w_q.size(0)
    scores = torch.matmul(q, k.transpose(-2, -1)) / d_k**0.5
    weights = scores.softmax(-1)
    return torch.matmul(weights, v), weights


# --- Exercise 3: my_attention_pool(x, query, key_proj, value_proj) ----------------------------


def ex3_wrong_softmax_over_batch(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=0)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1), weights


def ex3_wrong_no_scale(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query
    weights = torch.softmax(scores, dim=-1)
    return (weights[..., None] * value_proj(x)).sum(1), weights


def ex3_wrong_scale_dmodel(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(x.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1), weights


def ex3_wrong_scale_t(x, query, key_proj, value_proj):
    T = x.shape[1]
    scores = key_proj(x) @ query / math.sqrt(T)
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1), weights


def ex3_wrong_scale_dv(x, query, key_proj, value_proj):
    v = value_proj(x)
    scores = key_proj(x) @ query / math.sqrt(v.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * v).sum(dim=1), weights


def ex3_wrong_mean_of_values(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return value_proj(x).mean(dim=1), weights


def ex3_wrong_matmul_broadcast(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)  # (B, T)
    return weights @ value_proj(x), weights


def ex3_wrong_projections_swapped(x, query, key_proj, value_proj):
    scores = value_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * key_proj(x)).sum(dim=1), weights


def ex3_wrong_global_softmax(x, query, key_proj, value_proj):
    B, T, _ = x.shape
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores.reshape(-1), dim=0).reshape(B, T)
    return torch.einsum("bt,btd->bd", weights, value_proj(x)), weights


def ex3_wrong_no_squeeze(x, query, key_proj, value_proj):
    q = query.expand(x.shape[0], 1, -1)  # (B, 1, d_k)
    return attnlib.scaled_dot_product_attention(q, key_proj(x), value_proj(x))


def ex3_wrong_sum_over_batch(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=0), weights


def ex3_wrong_weighted_mean(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights.unsqueeze(-1) * value_proj(x)).mean(dim=1), weights


def ex3_wrong_float64_no_scale(x, query, key_proj, value_proj):
    k = key_proj(x).double()
    weights = torch.softmax(k @ query.double(), dim=-1)
    out = torch.einsum("bt,btd->bd", weights, value_proj(x).double())
    return out.to(x.dtype), weights.to(x.dtype)


def ex3_right_expand_attnlib(x, query, key_proj, value_proj):
    q = query.expand(x.shape[0], 1, query.shape[0])  # (B, 1, d_k)
    out, weights = attnlib.scaled_dot_product_attention(q, key_proj(x), value_proj(x))
    return out.squeeze(1), weights.squeeze(1)


def ex3_right_einsum_flinear(x, query, key_proj, value_proj):
    k = F.linear(x, key_proj.weight)
    v = F.linear(x, value_proj.weight)
    scores = torch.einsum("btd,d->bt", k, query) / math.sqrt(len(query))
    weights = scores.softmax(dim=1)
    return torch.einsum("bt,btv->bv", weights, v), weights


def ex3_right_bmm(x, query, key_proj, value_proj):
    k, v = key_proj(x), value_proj(x)
    scores = (k * query).sum(dim=-1) / math.sqrt(k.shape[-1])  # (B, T)
    weights = attnlib.softmax(scores, dim=-1)
    out = torch.bmm(weights.unsqueeze(1), v).squeeze(1)  # (B, d_v)
    return out, weights


E1, E2, E3 = "ex1_my_attention", "ex2_my_cross_attention", "ex3_my_attention_pool"

ENTRIES = [
    Entry(
        E1,
        "transposed k with .T, which flips every dimension of a batch",
        ex1_wrong_k_dot_t,
        named="transposed k in a way that is right only for a 2-D k (.T or transpose(0, 1))",
    ),
    Entry(
        E1,
        "forgot to divide the scores by the square root of d_k",
        ex1_wrong_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E1,
        "divided by the square root of the value width instead",
        ex1_wrong_sqrt_dv,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E1,
        "took the softmax over the queries (dim=-2)",
        ex1_wrong_softmax_dim_minus2,
        named="took the softmax over the queries (dim=-2) instead of over the keys",
    ),
    Entry(
        E1,
        "divided by d_k, not its square root",
        ex1_wrong_divide_by_dk,
        named="divided the scores by d_k instead of √d_k",
    ),
    Entry(
        E1,
        "divided by the square root of the number of keys",
        ex1_wrong_sqrt_tk,
        named="divided the scores by √T_k, the square root of the number of keys",
    ),
    Entry(
        E1,
        "wrote it for 2-D matrices only (mm and .t())",
        ex1_wrong_2d_only,
        named="transposed k in a way that is right only for a 2-D k (.T or transpose(0, 1))",
    ),
    Entry(
        E1,
        "returned (weights, out) instead of (out, weights)",
        ex1_wrong_swapped_return,
        named="returned (weights, out) instead of (out, weights)",
    ),
    Entry(
        E1,
        "multiplied by the square root of d_k instead of dividing",
        ex1_wrong_multiply_sqrt,
        named="multiplied the scores by √d_k instead of dividing by it",
    ),
    Entry(
        E1,
        "mixed the keys instead of the values",
        ex1_wrong_mix_keys,
        named="mixed the keys with the weights instead of the values",
    ),
    Entry(
        E1,
        "wrote d_k**1/2 for the square root",
        ex1_wrong_precedence,
        named="wrote √d_k as d_k ** 1/2, which Python reads as (d_k ** 1) / 2",
    ),
    Entry(
        E1,
        "own softmax: summed without keepdim",
        ex1_wrong_softmax_no_keepdim,
        named="summed the exponentials without keepdim in a softmax written by hand",
    ),
    Entry(
        E1,
        "own softmax without subtracting the maximum",
        ex1_wrong_unstable_softmax,
        named="wrote the softmax by hand without subtracting each row's largest score",
    ),
    Entry(
        E1,
        "in float64, and forgot the scale",
        ex1_wrong_float64_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E1,
        "einsum with the output indices the wrong way round",
        ex1_wrong_einsum_transposed,
        named=("put the keys on the rows of the weights, (T_k, T_q), each key's row summing to 1"),
    ),
    Entry(E1, "einsum, scale as d_k ** -0.5", ex1_right_einsum, right=True),
    Entry(E1, "flattened the leading dims, bmm, reshaped back", ex1_right_bmm_reshape, right=True),
    Entry(E1, "own stable softmax in float64", ex1_right_manual_float64, right=True),
    Entry(
        E2,
        "multiplied by the stored weights without transposing",
        ex2_wrong_no_transpose,
        named="multiplied by the stored (out, in) weights as they are, without transposing them",
    ),
    Entry(
        E2,
        "queries from x, keys and values from y",
        ex2_wrong_roles_swapped,
        named="took the queries from x and the keys and values from y",
    ),
    Entry(
        E2,
        "took the values from y",
        ex2_wrong_values_from_y,
        named="took the values from y instead of x",
    ),
    Entry(
        E2,
        "scaled by the square root of d_y",
        ex2_wrong_scale_dy,
        named="divided the scores by the square root of y's width (the query tokens' d_model)",
    ),
    Entry(
        E2,
        "scaled by the square root of d_v",
        ex2_wrong_scale_dv,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E2,
        "scaled by the square root of d_x",
        ex2_wrong_scale_dx,
        named="divided the scores by the square root of x's width (the source tokens' d_model)",
    ),
    Entry(
        E2,
        "F.linear for the projections, forgot the scale",
        ex2_wrong_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E2,
        "k.T to transpose the keys of a batch",
        ex2_wrong_k_dot_t,
        named="transposed in a way that is right only for 2-D tensors (.T or transpose(0, 1))",
    ),
    Entry(
        E2,
        "used the key projection for the values too",
        ex2_wrong_values_with_wk,
        named="projected the values with W^K instead of W^V",
    ),
    Entry(
        E2,
        "returned the weights transposed, (T_x, T_y)",
        ex2_wrong_weights_transposed,
        named=(
            "returned the weights transposed, one row per token of x instead of one per token of y"
        ),
    ),
    Entry(
        E2,
        "softmax over the queries (dim=-2)",
        ex2_wrong_softmax_over_queries,
        named="took the softmax over the queries (dim=-2) instead of over the keys",
    ),
    Entry(
        E2,
        "float64, and mixed up w_q and w_k",
        ex2_wrong_float64_roles_swapped,
        named=("swapped W^Q and W^K: projected the queries with W^K and the keys with W^Q"),
    ),
    Entry(E2, "F.linear then attnlib's attention", ex2_right_flinear_attnlib, right=True),
    Entry(
        E2, "einsum; mixed the tokens, then projected", ex2_right_values_after_mixing, right=True
    ),
    Entry(E2, "w @ xᵀ, transposed back", ex2_right_transpose_other_way, right=True),
    Entry(
        E3,
        "softmax over the batch (dim=0)",
        ex3_wrong_softmax_over_batch,
        named="took the softmax over the batch (dim=0) instead of over the positions",
    ),
    Entry(E3, "forgot the scale", ex3_wrong_no_scale, named="did not scale the scores by 1/√d_k"),
    Entry(
        E3,
        "scaled by the square root of d_model",
        ex3_wrong_scale_dmodel,
        named="divided the scores by √d_model, the width of the tokens",
    ),
    Entry(
        E3,
        "scaled by the square root of T",
        ex3_wrong_scale_t,
        named="divided the scores by √T, the square root of the number of tokens",
    ),
    Entry(
        E3,
        "scaled by the square root of d_v",
        ex3_wrong_scale_dv,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E3,
        "returned the plain mean of the values, ignoring the weights",
        ex3_wrong_mean_of_values,
        named=("computed the weights but returned the plain mean of the values as out"),
    ),
    Entry(
        E3,
        "weights (B, T) @ values (B, T, d_v) gives (B, B, d_v)",
        ex3_wrong_matmul_broadcast,
        named="multiplied the (B, T) weights by the (B, T, d_v) values with @",
    ),
    Entry(
        E3,
        "used value_proj for the keys and key_proj for the values",
        ex3_wrong_projections_swapped,
        named=("swapped the two layers: scored the query against value_proj(x), mixed key_proj(x)"),
    ),
    Entry(
        E3,
        "one softmax over all the batch's tokens at once",
        ex3_wrong_global_softmax,
        named="took one softmax over the scores of the whole batch at once",
    ),
    Entry(
        E3,
        "left the query dimension in: (B, 1, d_v) and (B, 1, T)",
        ex3_wrong_no_squeeze,
        named="kept the query's length-1 dimension in the results",
    ),
    Entry(
        E3,
        "summed the weighted values over the batch",
        ex3_wrong_sum_over_batch,
        named=("summed the weighted values over the batch (dim=0) instead of over the positions"),
    ),
    Entry(
        E3,
        "averaged the weighted values instead of summing them",
        ex3_wrong_weighted_mean,
        named="averaged the weighted values (a mean) instead of summing them",
    ),
    Entry(
        E3,
        "float64 and forgot the scale",
        ex3_wrong_float64_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E3,
        "expanded the query to (B, 1, d_k), attnlib, squeezed",
        ex3_right_expand_attnlib,
        right=True,
    ),
    Entry(E3, "F.linear with the layers' weights, einsum", ex3_right_einsum_flinear, right=True),
    Entry(E3, "elementwise product and sum, then bmm", ex3_right_bmm, right=True),
]
