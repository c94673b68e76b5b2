"""Corpus b for notebook 04 (queries, keys and values), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ----------------------------------------------------------------- Exercise 1: my_attention


def ex1_wrong_dot_t(q, k, v):
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_sqrt_dv(q, k, v):
    d = v.shape[-1]
    weights = torch.softmax(q @ k.transpose(-2, -1) / d**0.5, dim=-1)
    return weights @ v, weights


def ex1_wrong_divide_by_dk(q, k, v):
    weights = (q @ k.transpose(-1, -2) / q.size(-1)).softmax(dim=-1)
    return weights @ v, weights


def ex1_wrong_softmax_columns(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
    weights = torch.softmax(scores, dim=-2)
    return torch.matmul(weights, v), weights


def ex1_wrong_no_scale(q, k, v):
    weights = torch.softmax(q @ k.mT, dim=-1)
    return weights @ v, weights


def ex1_wrong_pair_swapped(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights, weights @ v


def ex1_wrong_shape_1(q, k, v):
    # written for (T, d) inputs: shape[1] is d_k there
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_in_place_scale(q, k, v):
    q /= math.sqrt(q.shape[-1])  # scale the queries first, saves a division
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return weights @ v, weights


def ex1_wrong_keys_as_values(q, k, v):
    weights = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ k, weights


def ex1_wrong_calls_attnlib(q, k, v):
    return attnlib.scaled_dot_product_attention(q, k, v)


def ex1_right_einsum_ellipsis(q, k, v):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(k.shape[-1])
    weights = scores.softmax(dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights


def ex1_right_manual_stable_softmax(q, k, v):
    q_scaled = q / math.sqrt(q.shape[-1])
    scores = torch.matmul(q_scaled, k.transpose(-2, -1))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ v, weights


def ex1_right_flatten_batch(q, k, v):
    lead = q.shape[:-2]
    q3 = q.reshape(-1, *q.shape[-2:])
    k3 = k.reshape(-1, *k.shape[-2:])
    v3 = v.reshape(-1, *v.shape[-2:])
    weights = attnlib.softmax(torch.bmm(q3, k3.transpose(1, 2)) * q.shape[-1] ** -0.5, dim=-1)
    out = torch.bmm(weights, v3)
    return out.reshape(*lead, *out.shape[-2:]), weights.reshape(*lead, *weights.shape[-2:])


# ----------------------------------------------------------- Exercise 2: my_cross_attention


def ex2_wrong_no_transpose(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_roles_swapped(y, x, w_q, w_k, w_v):
    # the encoder output asks, the decoder tokens answer
    q = x @ w_q.T
    k, v = y @ w_k.T, y @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_dy(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(y.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_in_dim(y, x, w_q, w_k, w_v):
    d_k = w_k.shape[1]  # (out, in): read the wrong one
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d_k), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_dv(y, x, w_q, w_k, w_v):
    q, k, v = F.linear(y, w_q), F.linear(x, w_k), F.linear(x, w_v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_w_k_for_values(y, x, w_q, w_k, w_v):
    q, k = y @ w_q.T, x @ w_k.T
    v = x @ w_k.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_dot_t(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_unscaled_float64(y, x, w_q, w_k, w_v):
    q = y.double() @ w_q.double().T
    k = x.double() @ w_k.double().T
    v = x.double() @ w_v.double().T
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return (weights @ v).to(y.dtype), weights.to(y.dtype)


def ex2_wrong_softmax_over_queries(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    scores = q @ k.transpose(-2, -1) / math.sqrt(w_q.shape[0])
    weights = scores.softmax(dim=-2)
    return weights @ v, weights


def ex2_wrong_module(y, x, w_q, w_k, w_v):
    head = attnlib.AttentionHead(y.shape[-1], w_q.shape[0], w_v.shape[0])
    with torch.no_grad():
        head.w_q.weight.copy_(w_q)
        head.w_k.weight.copy_(w_k)
        head.w_v.weight.copy_(w_v)
    return head(y, x)


def ex2_right_linear_attnlib(y, x, w_q, w_k, w_v):
    return attnlib.scaled_dot_product_attention(
        F.linear(y, w_q), F.linear(x, w_k), F.linear(x, w_v)
    )


def ex2_right_einsum(y, x, w_q, w_k, w_v):
    q = torch.einsum("...ti,oi->...to", y, w_q)
    k = torch.einsum("...si,oi->...so", x, w_k)
    v = torch.einsum("...si,oi->...so", x, w_v)
    scores = torch.einsum("...td,...sd->...ts", q, k) / w_k.shape[0] ** 0.5
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ts,...sd->...td", weights, v), weights


def _ex2_my_attention(q, k, v):
    weights = torch.softmax(q @ k.mT / math.sqrt(q.size(-1)), dim=-1)
    return weights @ v, weights


def ex2_right_own_attention(y, x, w_q, w_k, w_v):
    return _ex2_my_attention(
        torch.matmul(y, w_q.t()), torch.matmul(x, w_k.t()), torch.matmul(x, w_v.t())
    )


# ------------------------------------------------------------ Exercise 3: my_attention_pool


def ex3_wrong_softmax_over_batch(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])  # (B, T)
    weights = torch.softmax(scores, dim=0)
    out = (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1)
    return out, weights


def ex3_wrong_no_scale(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query, dim=-1)
    out = torch.einsum("bt,btd->bd", weights, value_proj(x))
    return out, weights


def ex3_wrong_scale_d_model(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(x.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return (weights[..., None] * value_proj(x)).sum(1), weights


def ex3_wrong_global_softmax(x, query, key_proj, value_proj):
    B, T, _ = x.shape
    scores = key_proj(x) @ query / math.sqrt(query.numel())
    weights = torch.softmax(scores.reshape(-1), dim=0).reshape(B, T)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1), weights


def ex3_wrong_forgot_unsqueeze(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query / math.sqrt(len(query)), dim=-1)
    return weights @ value_proj(x), weights


def ex3_wrong_values_unprojected(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query / math.sqrt(len(query)), dim=-1)
    return (weights.unsqueeze(-1) * x).sum(dim=1), weights


def ex3_wrong_keys_as_values(x, query, key_proj, value_proj):
    keys = key_proj(x)
    weights = torch.softmax(keys @ query / math.sqrt(len(query)), dim=-1)
    return (weights.unsqueeze(-1) * keys).sum(dim=1), weights


def ex3_wrong_squeeze_all(x, query, key_proj, value_proj):
    q = query.expand(x.shape[0], 1, -1)  # (B, 1, d_k): one question per sequence
    out, weights = attnlib.scaled_dot_product_attention(q, key_proj(x), value_proj(x))
    return out.squeeze(), weights.squeeze()


def ex3_wrong_scale_after_softmax(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query, dim=-1) / math.sqrt(query.shape[0])
    out = (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1)
    return out, weights


def ex3_wrong_loop_off_by_one(x, query, key_proj, value_proj):
    outs, ws = [], []
    for b in range(1, x.shape[0]):
        w = torch.softmax(key_proj(x[b]) @ query / math.sqrt(query.shape[0]), dim=0)
        outs.append(w @ value_proj(x[b]))
        ws.append(w)
    return torch.stack(outs), torch.stack(ws)


def ex3_right_sdpa_expand(x, query, key_proj, value_proj):
    q = query.expand(x.shape[0], 1, query.shape[0])  # (B, 1, d_k)
    out, weights = attnlib.scaled_dot_product_attention(q, key_proj(x), value_proj(x))
    return out.squeeze(1), weights.squeeze(1)


def ex3_right_fold_query(x, query, key_proj, value_proj):
    # x W_k^T q = x (W_k^T q): fold the query into the key projection
    u = key_proj.weight.T @ query / math.sqrt(query.numel())  # (d_model,)
    weights = (x @ u).softmax(dim=-1)  # (B, T)
    return torch.bmm(weights.unsqueeze(1), value_proj(x)).squeeze(1), weights


def ex3_right_loop(x, query, key_proj, value_proj):
    outs, ws = [], []
    for seq in x:  # (T, d_model)
        w = torch.softmax(key_proj(seq) @ query / math.sqrt(query.shape[0]), dim=0)
        outs.append(w @ value_proj(seq))
        ws.append(w)
    return torch.stack(outs), torch.stack(ws)


E1, E2, E3 = "ex1_my_attention", "ex2_my_cross_attention", "ex3_my_attention_pool"
ENTRIES = [
    Entry(
        E1,
        "used k.T, which only transposes a 2-D key matrix",
        ex1_wrong_dot_t,
        named="transposed k in a way that is right only for a 2-D k (.T or transpose(0, 1))",
    ),
    Entry(
        E1,
        "divided by the square root of the value width",
        ex1_wrong_sqrt_dv,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E1,
        "divided by d_k instead of its square root",
        ex1_wrong_divide_by_dk,
        named="divided the scores by d_k instead of √d_k",
    ),
    Entry(
        E1,
        "softmax over the queries (dim=-2) instead of the keys",
        ex1_wrong_softmax_columns,
        named="took the softmax over the queries (dim=-2) instead of over the keys",
    ),
    Entry(
        E1,
        "forgot to divide by sqrt(d_k)",
        ex1_wrong_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E1,
        "returned (weights, out) instead of (out, weights)",
        ex1_wrong_pair_swapped,
        named="returned (weights, out) instead of (out, weights)",
    ),
    Entry(
        E1,
        "took d_k from shape[1], right only for 2-D inputs",
        ex1_wrong_shape_1,
        named="read d_k from q.shape[1], which is the width only when q has 2 dimensions",
    ),
    Entry(
        E1,
        "scaled the queries in place with /=",
        ex1_wrong_in_place_scale,
        named=(
            "changed a tensor it was given in place (an operation ending "
            "in _, `-=`, `/=`, or an assignment into it)"
        ),
    ),
    Entry(
        E1,
        "mixed the keys instead of the values",
        ex1_wrong_keys_as_values,
        named="mixed the keys with the weights instead of the values",
    ),
    Entry(E1, "called attnlib's attention", ex1_wrong_calls_attnlib, named=REFUSED),
    Entry(E1, "einsum with ellipsis", ex1_right_einsum_ellipsis, right=True),
    Entry(E1, "queries scaled first, softmax by hand", ex1_right_manual_stable_softmax, right=True),
    Entry(E1, "flattened the batch and used bmm", ex1_right_flatten_batch, right=True),
    Entry(
        E2,
        "used the stored (out, in) weights untransposed",
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
        "scaled by the square root of y's width",
        ex2_wrong_scale_dy,
        named="divided the scores by the square root of y's width (the query tokens' d_model)",
    ),
    Entry(
        E2,
        "read d_k from the 'in' side of w_k",
        ex2_wrong_scale_in_dim,
        named="divided the scores by the square root of x's width (the source tokens' d_model)",
    ),
    Entry(
        E2,
        "scaled by the square root of d_v",
        ex2_wrong_scale_dv,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E2,
        "projected the values with w_k",
        ex2_wrong_w_k_for_values,
        named="projected the values with W^K instead of W^V",
    ),
    Entry(
        E2,
        "k.T, which breaks on a batch",
        ex2_wrong_dot_t,
        named=("transposed in a way that is right only for 2-D tensors (.T or transpose(0, 1))"),
    ),
    Entry(
        E2,
        "computed in float64 and forgot the scale",
        ex2_wrong_unscaled_float64,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E2,
        "softmax over the y tokens (dim=-2)",
        ex2_wrong_softmax_over_queries,
        named="took the softmax over the queries (dim=-2) instead of over the keys",
    ),
    Entry(E2, "used an AttentionHead module", ex2_wrong_module, named=REFUSED),
    Entry(E2, "F.linear and attnlib's attention", ex2_right_linear_attnlib, right=True),
    Entry(E2, "einsum throughout", ex2_right_einsum, right=True),
    Entry(E2, "projections with .t(), own attention helper", ex2_right_own_attention, right=True),
    Entry(
        E3,
        "softmax over the batch (dim=0)",
        ex3_wrong_softmax_over_batch,
        named="took the softmax over the batch (dim=0) instead of over the positions",
    ),
    Entry(
        E3,
        "forgot the 1/sqrt(d_k) scale",
        ex3_wrong_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E3,
        "scaled by the square root of d_model",
        ex3_wrong_scale_d_model,
        named="divided the scores by √d_model, the width of the tokens",
    ),
    Entry(
        E3,
        "one softmax over all B*T scores",
        ex3_wrong_global_softmax,
        named="took one softmax over the scores of the whole batch at once",
    ),
    Entry(
        E3,
        "weights (B, T) @ values (B, T, d_v) without unsqueeze",
        ex3_wrong_forgot_unsqueeze,
        named="multiplied the (B, T) weights by the (B, T, d_v) values with @",
    ),
    Entry(
        E3,
        "averaged the raw x instead of the projected values",
        ex3_wrong_values_unprojected,
        named="mixed the tokens themselves instead of their values (no value projection)",
    ),
    Entry(
        E3,
        "averaged the keys instead of the values",
        ex3_wrong_keys_as_values,
        named="mixed the keys with the weights instead of the values",
    ),
    Entry(
        E3,
        ".squeeze() drops the batch when B = 1",
        ex3_wrong_squeeze_all,
        named="squeezed every size-1 dimension, not only the query's",
    ),
    Entry(
        E3,
        "divided the weights by sqrt(d_k) after softmax",
        ex3_wrong_scale_after_softmax,
        named=("divided the weights by √d_k after the softmax instead of the scores before it"),
    ),
    Entry(
        E3,
        "loop starts at 1, skipping the first sequence",
        ex3_wrong_loop_off_by_one,
        named=("left out the first sequence of the batch (a loop over the batch that starts at 1)"),
    ),
    Entry(E3, "expanded query, attnlib's attention, squeeze(1)", ex3_right_sdpa_expand, right=True),
    Entry(E3, "query folded into the key weight, bmm", ex3_right_fold_query, right=True),
    Entry(E3, "a loop over the sequences", ex3_right_loop, right=True),
]
