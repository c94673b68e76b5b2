"""Corpus c for notebook 04 (queries, keys and values), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F

from mistake_corpus.corpus import REFUSED, Entry

# ----------------------------------------------------------------- Exercise 1: my_attention


def ex1_wrong_einsum_3d_only(q, k, v):
    scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(q.shape[-1])
    weights = scores.softmax(-1)
    return torch.einsum("bqk,bkd->bqd", weights, v), weights


def ex1_wrong_softmax_dim1(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    weights = F.softmax(scores, dim=1)
    return torch.matmul(weights, v), weights


def ex1_wrong_times_sqrt(q, k, v):
    scores = q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_swapped_return(q, k, v):
    weights = torch.softmax(q @ k.mT / math.sqrt(k.shape[-1]), dim=-1)
    out = weights @ v
    return weights, out


def ex1_wrong_scale_by_tk(q, k, v):
    # "divide by the square root of the number of keys"
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex1_wrong_loop_2d(q, k, v):
    # one query at a time, the way the lesson's table does it
    rows, outs = [], []
    for i in range(q.shape[0]):
        s = torch.stack([q[i] @ k[j] for j in range(k.shape[0])]) / math.sqrt(q.shape[-1])
        w = torch.softmax(s, dim=0)
        rows.append(w)
        outs.append(w @ v)
    return torch.stack(outs), torch.stack(rows)


def ex1_wrong_float64_no_scale(q, k, v):
    scores = q.double() @ k.double().transpose(-2, -1)
    weights = torch.softmax(scores, dim=-1).to(q.dtype)
    return weights @ v, weights


def ex1_wrong_sum_not_softmax(q, k, v):
    # normalised the exponentials over the whole tensor, not per query
    e = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    weights = e / e.sum()
    return weights @ v, weights


def ex1_refused_torch_sdpa(q, k, v):
    out = F.scaled_dot_product_attention(q, k, v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return out, weights


def ex1_right_einsum_ellipsis(q, k, v):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def ex1_right_manual_stable_softmax(q, k, v):
    scores = torch.matmul(q, k.mT) / q.size(-1) ** 0.5
    e = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.matmul(weights, v), weights


# ----------------------------------------------------------- Exercise 2: my_cross_attention


def ex2_wrong_formula_convention(y, x, w_q, w_k, w_v):
    # used the weights as in Q = Y W^Q
    q, k, v = y @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_roles_swapped(y, x, w_q, w_k, w_v):
    # x asks, y answers
    q = F.linear(x, w_q)
    k = F.linear(y, w_k)
    v = F.linear(y, w_v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_dy(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(y.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_scale_dv(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(w_v.shape[0]), dim=-1)
    return weights @ v, weights


def ex2_wrong_k_dot_t(y, x, w_q, w_k, w_v):
    q = y @ w_q.T
    k = x @ w_k.T
    v = x @ w_v.T
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def ex2_wrong_values_unprojected(y, x, w_q, w_k, w_v):
    q, k = y @ w_q.T, x @ w_k.T
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ x, weights


def ex2_wrong_no_scale_float64(y, x, w_q, w_k, w_v):
    q = y.double() @ w_q.double().T
    k = x.double() @ w_k.double().T
    v = x.double() @ w_v.double().T
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    return (weights @ v).to(y.dtype), weights.to(y.dtype)


def ex2_wrong_scale_dx(y, x, w_q, w_k, w_v):
    q, k, v = y @ w_q.T, x @ w_k.T, x @ w_v.T
    d = w_k.shape[1]
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1)
    return weights @ v, weights


def ex2_right_linear_and_manual(y, x, w_q, w_k, w_v):
    q, k, v = F.linear(y, w_q), F.linear(x, w_k), F.linear(x, w_v)
    scores = torch.einsum("...id,...jd->...ij", q, k) / math.sqrt(w_q.shape[0])
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def ex2_right_via_attnlib(y, x, w_q, w_k, w_v):
    import attnlib

    q = torch.matmul(y, w_q.transpose(0, 1))
    k = torch.matmul(x, w_k.transpose(0, 1))
    v = torch.matmul(x, w_v.transpose(0, 1))
    return attnlib.scaled_dot_product_attention(q, k, v)


# ----------------------------------------------------------- Exercise 3: my_attention_pool


def ex3_wrong_no_scale(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query, dim=-1)
    out = (weights[..., None] * value_proj(x)).sum(dim=1)
    return out, weights


def ex3_wrong_scale_dmodel(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(x.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("bt,btd->bd", weights, value_proj(x)), weights


def ex3_wrong_softmax_over_batch(x, query, key_proj, value_proj):
    scores = key_proj(x) @ query / math.sqrt(query.shape[0])
    weights = torch.softmax(scores, dim=0)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(1), weights


def ex3_wrong_one_budget(x, query, key_proj, value_proj):
    # every token of the batch competes for one softmax
    B, T, _ = x.shape
    scores = key_proj(x) @ query / math.sqrt(query.numel())
    weights = torch.softmax(scores.reshape(-1), dim=0).reshape(B, T)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(1), weights


def ex3_wrong_mean_not_sum(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query / math.sqrt(len(query)), dim=-1)
    out = (weights.unsqueeze(-1) * value_proj(x)).mean(dim=1)
    return out, weights


def ex3_wrong_values_are_x(x, query, key_proj, value_proj):
    weights = torch.softmax(key_proj(x) @ query / math.sqrt(len(query)), dim=-1)
    return (weights.unsqueeze(-1) * x).sum(dim=1), weights


def ex3_wrong_values_from_keys(x, query, key_proj, value_proj):
    k = key_proj(x)
    weights = torch.softmax(k @ query / math.sqrt(len(query)), dim=-1)
    return (weights.unsqueeze(-1) * k).sum(dim=1), weights


def ex3_wrong_hard_max(x, query, key_proj, value_proj):
    # pick the best token instead of mixing
    scores = key_proj(x) @ query / math.sqrt(len(query))
    best = scores.argmax(dim=-1)
    weights = F.one_hot(best, x.shape[1]).to(x.dtype)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=1), weights


def ex3_right_weights_folded(x, query, key_proj, value_proj):
    # k_t · q = x_t · (W_K^T q): fold the query back into the model's space
    folded = key_proj.weight.T @ query  # (d_model,)
    weights = torch.softmax(x @ folded / math.sqrt(query.shape[0]), dim=1)
    out = torch.bmm(weights.unsqueeze(1), value_proj(x)).squeeze(1)
    return out, weights


def ex3_right_via_attnlib(x, query, key_proj, value_proj):
    import attnlib

    B = x.shape[0]
    q = query.expand(B, 1, -1)  # (B, 1, d_k): the same question for every sequence
    out, w = attnlib.scaled_dot_product_attention(q, key_proj(x), value_proj(x))
    return out[:, 0], w[:, 0]


E1, E2, E3 = "ex1_my_attention", "ex2_my_cross_attention", "ex3_my_attention_pool"
ENTRIES = [
    Entry(
        E1,
        "wrote it with einsum for a batch (3-D) only",
        ex1_wrong_einsum_3d_only,
        named="wrote the einsum subscripts for 3-D inputs only (one letter for a batch in front)",
    ),
    Entry(
        E1,
        "took the softmax over dim 1, right only for 2-D inputs",
        ex1_wrong_softmax_dim1,
        named="took the softmax along dim=1, the keys only when the input has 2 dimensions",
    ),
    Entry(
        E1,
        "multiplied the scores by √d_k instead of dividing",
        ex1_wrong_times_sqrt,
        named="multiplied the scores by √d_k instead of dividing by it",
    ),
    Entry(
        E1,
        "returned (weights, out) instead of (out, weights)",
        ex1_wrong_swapped_return,
        named="returned (weights, out) instead of (out, weights)",
    ),
    Entry(
        E1,
        "scaled by the square root of the number of keys",
        ex1_wrong_scale_by_tk,
        named="divided the scores by √T_k, the square root of the number of keys",
    ),
    Entry(E1, "looped over queries and keys of a 2-D input only", ex1_wrong_loop_2d),
    Entry(
        E1,
        "computed in float64 but forgot the scale",
        ex1_wrong_float64_no_scale,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E1,
        "normalised by the sum over the whole tensor",
        ex1_wrong_sum_not_softmax,
        named="divided the exponentials by their sum over the whole tensor (a sum with no dim)",
    ),
    Entry(E1, "called PyTorch's attention for out", ex1_refused_torch_sdpa, named=REFUSED),
    Entry(E1, "einsum with ... and a multiplied scale", ex1_right_einsum_ellipsis, right=True),
    Entry(E1, "a hand-written stable softmax", ex1_right_manual_stable_softmax, right=True),
    Entry(
        E2,
        "used the weights as y @ w_q, the formula convention",
        ex2_wrong_formula_convention,
        named="multiplied by the stored (out, in) weights as they are, without transposing them",
    ),
    Entry(
        E2,
        "let x ask and y answer (roles swapped)",
        ex2_wrong_roles_swapped,
        named="took the queries from x and the keys and values from y",
    ),
    Entry(
        E2,
        "scaled by √d_y, the width of y",
        ex2_wrong_scale_dy,
        named="divided the scores by the square root of y's width (the query tokens' d_model)",
    ),
    Entry(
        E2,
        "scaled by √d_v",
        ex2_wrong_scale_dv,
        named="divided the scores by √d_v, the width of the values",
    ),
    Entry(
        E2,
        "used k.T, 2-D only",
        ex2_wrong_k_dot_t,
        named=("transposed in a way that is right only for 2-D tensors (.T or transpose(0, 1))"),
    ),
    Entry(
        E2,
        "mixed x itself instead of its values",
        ex2_wrong_values_unprojected,
        named="mixed the tokens of x themselves, without projecting them with W^V",
    ),
    Entry(
        E2,
        "float64 throughout but no scale",
        ex2_wrong_no_scale_float64,
        named="did not scale the scores by 1/√d_k",
    ),
    Entry(
        E2,
        "scaled by √d_x, the width of x",
        ex2_wrong_scale_dx,
        named="divided the scores by the square root of x's width (the source tokens' d_model)",
    ),
    Entry(E2, "F.linear and einsum", ex2_right_linear_and_manual, right=True),
    Entry(E2, "projections then attnlib's attention", ex2_right_via_attnlib, right=True),
    Entry(E3, "forgot the scale", ex3_wrong_no_scale, named="did not scale the scores by 1/√d_k"),
    Entry(
        E3,
        "scaled by √d_model",
        ex3_wrong_scale_dmodel,
        named="divided the scores by √d_model, the width of the tokens",
    ),
    Entry(
        E3,
        "softmax over the batch (dim 0)",
        ex3_wrong_softmax_over_batch,
        named="took the softmax over the batch (dim=0) instead of over the positions",
    ),
    Entry(
        E3,
        "one softmax over every token of the batch",
        ex3_wrong_one_budget,
        named="took one softmax over the scores of the whole batch at once",
    ),
    Entry(
        E3,
        "averaged the weighted values instead of summing",
        ex3_wrong_mean_not_sum,
        named="averaged the weighted values (a mean) instead of summing them",
    ),
    Entry(
        E3,
        "mixed the tokens x instead of their values",
        ex3_wrong_values_are_x,
        named="mixed the tokens themselves instead of their values (no value projection)",
    ),
    Entry(
        E3,
        "mixed the keys instead of the values",
        ex3_wrong_values_from_keys,
        named="mixed the keys with the weights instead of the values",
    ),
    Entry(
        E3,
        "picked the best token (argmax) instead of a softmax",
        ex3_wrong_hard_max,
        named="gave all the weight to the best-scoring token (an argmax) instead of a softmax",
    ),
    Entry(E3, "folded the query through W_K, bmm", ex3_right_weights_folded, right=True),
    Entry(E3, "one query per sequence through attnlib", ex3_right_via_attnlib, right=True),
]
