"""Corpus b for notebook 03 (naive self-attention), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ------------------------------------------------------ Exercise 1: stacked_naive_attention


def ex1_wrong_order(x, layers):
    T = x.shape[-2]
    total = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    out = x
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        total = total @ w
    return out, total


def ex1_wrong_last_weights(x, layers):
    T = x.shape[-2]
    out = x
    weights = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    for _ in range(layers):
        out, weights = attnlib.naive_self_attention(out)
    return out, weights


def ex1_wrong_same_input(x, layers):
    T = x.shape[-2]
    out = x
    combined = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(x)  # every layer reads x
        combined = w @ combined
    return out, combined


def ex1_wrong_power_of_first(x, layers):
    T = x.shape[-2]
    if layers == 0:
        return x, torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    _, a = attnlib.naive_self_attention(x)
    weights = torch.linalg.matrix_power(a, layers)
    return weights @ x, weights


def ex1_wrong_eye_not_batched(x, layers):
    T = x.shape[-2]
    weights = torch.eye(T, dtype=x.dtype)
    out = x
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        weights = w @ weights
    return out, weights


def ex1_wrong_elementwise(x, layers):
    T = x.shape[-2]
    weights = torch.ones(*x.shape[:-2], T, T, dtype=x.dtype)
    out = x
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        weights = weights * w
    if layers == 0:
        weights = torch.eye(T, dtype=x.dtype).expand_as(weights)
    return out, weights


def ex1_wrong_one_extra_layer(x, layers):
    out, weights = attnlib.naive_self_attention(x)
    for _ in range(layers - 1):
        out, w = attnlib.naive_self_attention(out)
        weights = w @ weights
    return out, weights


def ex1_wrong_2d_by_hand(x, layers):
    weights = torch.eye(x.shape[0], dtype=x.dtype)
    out = x
    for _ in range(layers):
        a = torch.softmax(out @ out.T, dim=-1)
        out = a @ out
        weights = a @ weights
    return out, weights


def ex1_wrong_scaled_layers(x, layers):
    T, C = x.shape[-2:]
    weights = torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)
    out = x
    for _ in range(layers):
        a = torch.softmax(out @ out.transpose(-2, -1) / math.sqrt(C), dim=-1)
        out = a @ out
        weights = a @ weights
    return out, weights


def ex1_right_recursive(x, layers):
    if layers == 0:
        T = x.shape[-2]
        eye = torch.diag_embed(torch.ones(x.shape[:-1], dtype=x.dtype))
        assert eye.shape[-1] == T
        return x.clone(), eye
    previous, mix = ex1_right_recursive(x, layers - 1)
    out, w = attnlib.naive_self_attention(previous)
    return out, w @ mix


def ex1_right_by_hand_then_mix(x, layers):
    T = x.size(-2)
    recipe = torch.zeros(*x.shape[:-2], T, T, dtype=x.dtype)
    recipe[..., range(T), range(T)] = 1.0
    h = x
    for _ in range(layers):
        a = torch.softmax(h @ h.mT, dim=-1)
        h = a @ h
        recipe = a @ recipe
    return recipe @ x, recipe


# ------------------------------------------------------ Exercise 2: cosine_self_attention


def ex2_wrong_no_normalise(x, tau):
    weights = torch.softmax(x @ x.transpose(-2, -1) / tau, dim=-1)
    return weights @ x, weights


def ex2_wrong_times_tau(x, tau):
    unit = x / x.norm(dim=-1, keepdim=True)
    weights = torch.softmax(unit @ unit.transpose(-2, -1) * tau, dim=-1)
    return weights @ x, weights


def ex2_wrong_norm_dim(x, tau):
    unit = x / torch.linalg.norm(x, dim=-2, keepdim=True)
    weights = attnlib.softmax(unit @ unit.mT / tau, dim=-1)
    return weights @ x, weights


def ex2_wrong_mix_directions(x, tau):
    x = x / x.norm(dim=-1, keepdim=True)
    weights = torch.softmax(x @ x.mT / tau, dim=-1)
    return weights @ x, weights


def ex2_wrong_one_norm(x, tau):
    norms = x.norm(dim=-1, keepdim=True)  # (..., T, 1)
    cos = (x @ x.transpose(-2, -1)) / (norms * norms)
    weights = torch.softmax(cos / tau, dim=-1)
    return weights @ x, weights


def ex2_wrong_softmax_columns(x, tau):
    unit = F.normalize(x, dim=-1)
    weights = torch.softmax(torch.einsum("...ic,...jc->...ij", unit, unit) / tau, dim=-2)
    return weights @ x, weights


def ex2_wrong_2d_only(x, tau):
    unit = x / x.norm(dim=1, keepdim=True)
    weights = torch.softmax(unit @ unit.T / tau, dim=1)
    return weights @ x, weights


def ex2_wrong_extra_sqrt(x, tau):
    unit = x / x.norm(dim=-1, keepdim=True)
    scores = unit @ unit.transpose(-1, -2) / math.sqrt(x.shape[-1])
    weights = attnlib.softmax(scores, dim=-1, temperature=tau)
    return weights @ x, weights


def ex2_wrong_float64_norm_squared(x, tau):
    xd = x.double()
    sq = (xd**2).sum(-1, keepdim=True)  # squared lengths, not lengths
    cos = xd @ xd.transpose(-2, -1) / (sq * sq.transpose(-2, -1))
    weights = torch.softmax(cos / tau, dim=-1).to(x.dtype)
    return weights @ x, weights


def ex2_wrong_in_place(x, tau):
    n = x.norm(dim=-1, keepdim=True)
    cos = (x @ x.mT) / (n * n.mT)
    weights = torch.softmax(cos / tau, dim=-1)
    out = weights @ x
    x /= n  # "tidy up": keep the directions
    return out, weights


def ex2_right_broadcast_cosine(x, tau):
    cos = F.cosine_similarity(x.unsqueeze(-2), x.unsqueeze(-3), dim=-1)  # (..., T, T)
    weights = torch.softmax(cos / tau, dim=-1)
    return weights @ x, weights


def ex2_right_attnlib_cosine(x, tau):
    cos = attnlib.cosine_similarity(x[..., :, None, :], x[..., None, :, :])
    weights = attnlib.softmax(cos, dim=-1, temperature=tau)
    return torch.einsum("...ij,...jc->...ic", weights, x), weights


def ex2_right_outer_norms(x, tau):
    n = torch.linalg.vector_norm(x, dim=-1)  # (..., T)
    cos = (x @ x.transpose(-2, -1)) / (n.unsqueeze(-1) * n.unsqueeze(-2))
    weights = (cos / tau).softmax(-1)
    return weights @ x, weights


# ------------------------------------------------------ Exercise 3: local_self_attention


def _allowed(T, lo, hi):
    t = torch.arange(T)
    d = t[:, None] - t[None, :]
    return (d >= lo) & (d <= hi)


def ex3_wrong_window_plus_one(x, window):
    T = x.shape[-2]
    ok = _allowed(T, 0, window)  # t - window … t
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_symmetric_window(x, window):
    T = x.shape[-2]
    t = torch.arange(T)
    ok = (t[:, None] - t[None, :]).abs() < window
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_looks_ahead(x, window):
    T = x.shape[-2]
    t = torch.arange(T)
    ahead = t[None, :] - t[:, None]  # wrote j - t instead of t - j
    ok = (ahead >= 0) & (ahead < window)
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_minus_1e9(x, window):
    T = x.shape[-2]
    ok = _allowed(T, 0, window - 1)
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_zero_after_softmax(x, window):
    T = x.shape[-2]
    ok = _allowed(T, 0, window - 1)
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1) * ok
    return weights @ x, weights


def ex3_wrong_scaled(x, window):
    T, C = x.shape[-2:]
    ok = _allowed(T, 0, window - 1)
    scores = x @ x.transpose(-2, -1) / math.sqrt(C)
    weights = torch.softmax(scores.masked_fill(~ok, float("-inf")), dim=-1)
    return weights @ x, weights


def ex3_wrong_only_lower_bound(x, window):
    T = x.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool)
    ok = torch.triu(ones, diagonal=1 - window)  # keeps j >= t - window + 1 …
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_float32_bias(x, window):
    T = x.shape[-2]
    bias = torch.zeros(T, T)  # float32
    bias[~_allowed(T, 0, window - 1)] = float("-inf")
    weights = torch.softmax(x @ x.transpose(-2, -1) + bias, dim=-1)
    return weights @ x, weights


def ex3_wrong_excludes_itself(x, window):
    T = x.shape[-2]
    ok = _allowed(T, 1, window)  # the window positions before t, not t itself
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_causal_only(x, window):
    T = x.shape[-2]
    ok = attnlib.causal_mask(T)
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_wrong_calls_sdpa(x, window):
    T = x.shape[-2]
    ok = _allowed(T, 0, window - 1)
    out = F.scaled_dot_product_attention(x, x, x, attn_mask=ok, scale=1.0)
    scores = (x @ x.transpose(-2, -1)).masked_fill(~ok, float("-inf"))
    return out, torch.softmax(scores, dim=-1)


def ex3_right_loop(x, window):
    T = x.shape[-2]
    weights = torch.zeros(*x.shape[:-2], T, T, dtype=x.dtype)
    for t in range(T):
        start = max(0, t - window + 1)
        seen = x[..., start : t + 1, :]  # (..., n, C)
        s = (seen @ x[..., t, :, None]).squeeze(-1)  # (..., n)
        weights[..., t, start : t + 1] = torch.softmax(s, dim=-1)
    return weights @ x, weights


def ex3_right_tril_triu(x, window):
    T = x.shape[-2]
    ones = torch.ones(T, T, dtype=torch.bool)
    keep = torch.tril(ones) & torch.triu(ones, diagonal=-(window - 1))
    scores = torch.where(keep, x @ x.mT, torch.tensor(float("-inf"), dtype=x.dtype))
    weights = attnlib.softmax(scores, dim=-1)
    return weights @ x, weights


def ex3_right_finfo_min(x, window):
    T = x.shape[-2]
    i = torch.arange(T).unsqueeze(1)
    j = torch.arange(T).unsqueeze(0)
    blocked = (j > i) | (j <= i - window)
    scores = torch.einsum("...tc,...sc->...ts", x, x)
    scores = scores.masked_fill(blocked, torch.finfo(x.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights


E1 = "ex1_stacked_naive_attention"
E2 = "ex2_cosine_self_attention"
E3 = "ex3_local_self_attention"

ENTRIES = [
    Entry(
        E1,
        "multiplied the running mix by the new layer on the wrong side",
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
        "ran every layer on the original x instead of the last output",
        ex1_wrong_same_input,
        named="fed every layer the original x instead of the previous layer's output",
    ),
    Entry(
        E1,
        "raised the first layer's weights to the power `layers`",
        ex1_wrong_power_of_first,
        named="mixed x with a power of the first layer's weights, the output included",
    ),
    Entry(
        E1,
        "started from a (T, T) identity, not one per batch element",
        ex1_wrong_eye_not_batched,
        named=(
            "for 0 layers, returned one (T, T) identity instead of one for each sequence of a batch"
        ),
    ),
    Entry(
        E1,
        "combined the layers' weights element by element",
        ex1_wrong_elementwise,
        named="multiplied the weight matrices entry by entry (*), not as matrices (@)",
    ),
    Entry(
        E1,
        "always ran one layer, even for layers = 0",
        ex1_wrong_one_extra_layer,
        named="ran a single layer, whatever `layers` is",
    ),
    Entry(
        E1,
        "wrote each layer by hand with .T and x.shape[0] (2-D only)",
        ex1_wrong_2d_by_hand,
        named="took T from x.shape[0], which for a batch is the number of sequences",
    ),
    Entry(
        E1,
        "divided each layer's scores by sqrt(C)",
        ex1_wrong_scaled_layers,
        named="divided each layer's scores by √C: naive layers are unscaled",
    ),
    Entry(E1, "recursive, identity by diag_embed", ex1_right_recursive, right=True),
    Entry(
        E1, "layers by hand, out = recipe @ x at the end", ex1_right_by_hand_then_mix, right=True
    ),
    Entry(
        E2,
        "forgot to normalise: dot products over tau",
        ex2_wrong_no_normalise,
        named=(
            "scored with plain dot products divided by τ, without scaling the vectors to length 1"
        ),
    ),
    Entry(
        E2,
        "multiplied the cosines by tau",
        ex2_wrong_times_tau,
        named="multiplied the cosines by τ instead of dividing by it",
    ),
    Entry(
        E2,
        "took the lengths over the positions (dim=-2)",
        ex2_wrong_norm_dim,
        named="scaled each coordinate across the vectors (along dim -2) instead of each vector",
    ),
    Entry(
        E2,
        "mixed the unit vectors instead of the original ones",
        ex2_wrong_mix_directions,
        named="mixed the vectors scaled to length 1 instead of the original vectors",
    ),
    Entry(
        E2,
        "divided by ‖x_i‖² (norms * norms, not the outer product)",
        ex2_wrong_one_norm,
        named="divided row i of the dot products by ‖x_i‖² instead of by ‖x_i‖·‖x_j‖",
    ),
    Entry(
        E2,
        "softmax over dim=-2",
        ex2_wrong_softmax_columns,
        named="took the softmax along the columns (dim -2), not along each row",
    ),
    Entry(
        E2,
        "wrote it for a 2-D x only (.T, dim=1)",
        ex2_wrong_2d_only,
        named="transposed with x.T, which reverses every dimension of a batch (B, T, C)",
    ),
    Entry(
        E2,
        "also divided by sqrt(C), as in scaled attention",
        ex2_wrong_extra_sqrt,
        named="divided by √C as well as by τ",
    ),
    Entry(
        E2,
        "float64, divided by squared lengths",
        ex2_wrong_float64_norm_squared,
        named="divided each vector by its squared length",
    ),
    Entry(
        E2,
        "normalised x in place after computing the output",
        ex2_wrong_in_place,
        named=(
            "changed a tensor it was given in place (an operation ending in _, "
            "`-=`, `/=`, or an assignment into it)"
        ),
    ),
    Entry(E2, "F.cosine_similarity with broadcasting", ex2_right_broadcast_cosine, right=True),
    Entry(E2, "attnlib.cosine_similarity, temperature=tau", ex2_right_attnlib_cosine, right=True),
    Entry(E2, "dot products over the outer product of norms", ex2_right_outer_norms, right=True),
    Entry(
        E3,
        "let t see window + 1 positions (t - window … t)",
        ex3_wrong_window_plus_one,
        named="let each position see window + 1 positions, t − window … t",
    ),
    Entry(
        E3,
        "a window on both sides (|t - j| < window)",
        ex3_wrong_symmetric_window,
        named="let each position see window − 1 positions on both sides, past and future",
    ),
    Entry(
        E3,
        "wrote j - t: looks at the next positions",
        ex3_wrong_looks_ahead,
        named="turned the window towards the future: positions t … t + window − 1",
    ),
    Entry(
        E3,
        "filled the hidden scores with -1e9",
        ex3_wrong_minus_1e9,
        named="filled the hidden scores with -1e9, which float16 cannot hold",
    ),
    Entry(
        E3,
        "zeroed the hidden weights after the softmax",
        ex3_wrong_zero_after_softmax,
        named="set the hidden weights to 0 after the softmax, without renormalising",
    ),
    Entry(
        E3,
        "divided the scores by sqrt(C)",
        ex3_wrong_scaled,
        named="divided the scores by √C: this exercise is naive, unscaled attention",
    ),
    Entry(
        E3,
        "kept only the lower bound: sees the future",
        ex3_wrong_only_lower_bound,
        named=(
            "cut the window off at t − window + 1 but not at t: each position also saw the future"
        ),
    ),
    Entry(
        E3,
        "added a float32 bias: float16 in, float32 out",
        ex3_wrong_float32_bias,
        named="mixed a float32 tensor into the float16 scores, so the weights could not mix x",
    ),
    Entry(
        E3,
        "the window positions before t, without t itself",
        ex3_wrong_excludes_itself,
        named="hid each position from itself: the window ends at t − 1",
    ),
    Entry(
        E3,
        "used the causal mask and forgot the window",
        ex3_wrong_causal_only,
        named="kept the whole past: a causal mask without the window",
    ),
    Entry(E3, "called scaled_dot_product_attention", ex3_wrong_calls_sdpa, named=REFUSED),
    Entry(E3, "a loop over t with slices", ex3_right_loop, right=True),
    Entry(E3, "tril & triu and torch.where", ex3_right_tril_triu, right=True),
    Entry(E3, "masked with finfo.min", ex3_right_finfo_min, right=True),
]
