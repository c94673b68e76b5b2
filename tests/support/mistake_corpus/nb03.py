"""Learner answers to notebook 03's exercises (naive self-attention), written before reading the
checkers' tables."""

import math

import torch
import torch.nn.functional as F

import attnlib
from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- ex1: stacked_naive_attention


def _eye_like(x):
    T = x.shape[-2]
    return torch.eye(T, dtype=x.dtype).expand(*x.shape[:-2], T, T)


def ex1_wrong_order(x, layers):
    out, recipe = x, _eye_like(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = recipe @ w
    return out, recipe


def ex1_wrong_none_for_zero(x, layers):
    out, recipe = x, None
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = w if recipe is None else w @ recipe
    return out, recipe


def ex1_wrong_last_weights(x, layers):
    out = x
    w = _eye_like(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
    return out, w


def ex1_wrong_always_on_x(x, layers):
    out, recipe = x, _eye_like(x)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(x)
        recipe = w @ recipe
    return out, recipe


def ex1_wrong_eye_no_batch(x, layers):
    T = x.shape[-2]
    out, recipe = x, torch.eye(T, dtype=x.dtype)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = w @ recipe
    return out, recipe


def ex1_wrong_eye_default_dtype(x, layers):
    out, recipe = x, torch.eye(x.shape[-2]).expand(*x.shape[:-2], -1, -1)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = w @ recipe
    return out, recipe


def ex1_wrong_one_layer_short(x, layers):
    out, recipe = x, _eye_like(x)
    for _ in range(1, layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = w @ recipe
    return out, recipe


def ex1_wrong_added(x, layers):
    out = x
    recipe = torch.zeros(*x.shape[:-1], x.shape[-2], dtype=x.dtype)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = recipe + w
    if layers == 0:
        recipe = _eye_like(x)
    return out, recipe


def ex1_wrong_matrix_power(x, layers):
    out = x
    for _ in range(layers):
        out, _ = attnlib.naive_self_attention(out)
    first = attnlib.naive_self_attention(x)[1]
    return out, torch.linalg.matrix_power(first, layers)


def ex1_wrong_float64_order(x, layers):
    out = x.double()
    recipe = _eye_like(out)
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        recipe = recipe @ w
    return out.to(x.dtype), recipe.to(x.dtype)


def ex1_right_recursive(x, layers):
    if layers == 0:
        return x.clone(), _eye_like(x)
    before, recipe = ex1_right_recursive(x, layers - 1)
    out, w = attnlib.naive_self_attention(before)
    return out, w @ recipe


def ex1_right_out_from_recipe(x, layers):
    recipe = torch.diag_embed(torch.ones_like(x[..., 0]))  # (..., T, T)
    out = x
    for _ in range(layers):
        _, w = attnlib.naive_self_attention(out)
        recipe = torch.matmul(w, recipe)
        out = recipe @ x
    return out, recipe


def ex1_right_list_of_weights(x, layers):
    out, all_w = x, []
    for _ in range(layers):
        out, w = attnlib.naive_self_attention(out)
        all_w.append(w)
    recipe = _eye_like(x)
    for w in all_w:
        recipe = w @ recipe
    return out, recipe


# ---------------------------------------------------------------- ex2: cosine_self_attention


def _units(x):
    return x / x.norm(dim=-1, keepdim=True)


def ex2_wrong_times_tau(x, tau):
    u = _units(x)
    w = attnlib.softmax(u @ u.transpose(-2, -1) * tau, dim=-1)
    return w @ x, w


def ex2_wrong_mixes_units(x, tau):
    u = _units(x)
    w = attnlib.softmax(u @ u.transpose(-2, -1) / tau, dim=-1)
    return w @ u, w


def ex2_wrong_dot_products(x, tau):
    w = attnlib.softmax(x @ x.transpose(-2, -1) / tau, dim=-1)
    return w @ x, w


def ex2_wrong_norm_no_keepdim(x, tau):
    u = x / x.norm(dim=-1)
    w = attnlib.softmax(u @ u.transpose(-2, -1) / tau, dim=-1)
    return w @ x, w


def ex2_wrong_softmax_columns(x, tau):
    u = _units(x)
    w = attnlib.softmax(u @ u.transpose(-2, -1) / tau, dim=-2)
    return w @ x, w


def ex2_wrong_dot_t(x, tau):
    u = _units(x)
    w = attnlib.softmax(u @ u.T / tau, dim=-1)
    return w @ x, w


def ex2_wrong_one_side_normalised(x, tau):
    w = attnlib.softmax(_units(x) @ x.transpose(-2, -1) / tau, dim=-1)
    return w @ x, w


def ex2_wrong_swapped_return(x, tau):
    u = _units(x)
    w = attnlib.softmax(u @ u.transpose(-2, -1) / tau, dim=-1)
    return w, w @ x


def ex2_wrong_also_sqrt_c(x, tau):
    u = _units(x)
    scores = u @ u.transpose(-2, -1) / (tau * math.sqrt(x.shape[-1]))
    w = attnlib.softmax(scores, dim=-1)
    return w @ x, w


def ex2_wrong_float64_times_tau(x, tau):
    x64 = x.double()
    u = _units(x64)
    w = attnlib.softmax(u @ u.transpose(-2, -1) * tau, dim=-1)
    return (w @ x64).to(x.dtype), w.to(x.dtype)


def ex2_right_normalize_einsum(x, tau):
    u = F.normalize(x, dim=-1)
    cos = torch.einsum("...ic,...jc->...ij", u, u)
    w = torch.softmax(cos / tau, dim=-1)
    return torch.einsum("...ij,...jc->...ic", w, x), w


def ex2_right_outer_norms(x, tau):
    n = x.norm(dim=-1)
    cos = (x @ x.mT) / (n.unsqueeze(-1) * n.unsqueeze(-2))
    w = attnlib.softmax(cos / tau, dim=-1)
    return w @ x, w


def ex2_right_float64(x, tau):
    x64 = x.double()
    u = x64 / torch.linalg.vector_norm(x64, dim=-1, keepdim=True)
    w = attnlib.softmax(u @ u.mT / tau, dim=-1)
    return (w @ x64).to(x.dtype), w.to(x.dtype)


# ---------------------------------------------------------------- ex3: local_self_attention


def _behind(T):
    pos = torch.arange(T)
    return pos[:, None] - pos[None, :]  # (T, T): query t minus key j


def _masked_attention(x, allowed, fill=float("-inf")):
    scores = x @ x.transpose(-2, -1)
    w = attnlib.softmax(scores.masked_fill(~allowed, fill), dim=-1)
    return w @ x, w


def ex3_wrong_one_too_many(x, window):
    b = _behind(x.shape[-2])
    return _masked_attention(x, (b >= 0) & (b <= window))


def ex3_wrong_causal_only(x, window):
    b = _behind(x.shape[-2])
    return _masked_attention(x, b >= 0)


def ex3_wrong_two_sided(x, window):
    b = _behind(x.shape[-2])
    return _masked_attention(x, b.abs() < window)


def ex3_wrong_minus_1e9(x, window):
    b = _behind(x.shape[-2])
    return _masked_attention(x, (b >= 0) & (b < window), fill=-1e9)


def ex3_wrong_mask_after_softmax(x, window):
    b = _behind(x.shape[-2])
    allowed = (b >= 0) & (b < window)
    w = attnlib.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    return w @ x, w


def ex3_wrong_renormalised(x, window):
    b = _behind(x.shape[-2])
    allowed = (b >= 0) & (b < window)
    w = attnlib.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    w = w / w.sum(dim=-1, keepdim=True)
    return w @ x, w


def ex3_wrong_key_minus_query(x, window):
    pos = torch.arange(x.shape[-2])
    ahead = pos[None, :] - pos[:, None]  # key minus query
    return _masked_attention(x, (ahead >= 0) & (ahead < window))


def ex3_wrong_scaled(x, window):
    b = _behind(x.shape[-2])
    allowed = (b >= 0) & (b < window)
    scores = x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1])
    w = attnlib.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    return w @ x, w


def ex3_wrong_one_too_few(x, window):
    b = _behind(x.shape[-2])
    return _masked_attention(x, (b >= 0) & (b < window - 1))


def ex3_wrong_float64_causal_only(x, window):
    x64 = x.double()
    b = _behind(x.shape[-2])
    out, w = _masked_attention(x64, b >= 0)
    return out.to(x.dtype), w.to(x.dtype)


def ex3_right_tril_difference(x, window):
    T = x.shape[-2]
    ones = torch.ones(T, T)
    allowed = (torch.tril(ones) - torch.tril(ones, diagonal=-window)).bool()
    scores = torch.where(allowed, x @ x.mT, torch.tensor(float("-inf"), dtype=x.dtype))
    w = attnlib.softmax(scores, dim=-1)
    return w @ x, w


def ex3_right_loop(x, window):
    T = x.shape[-2]
    w = torch.zeros(*x.shape[:-2], T, T, dtype=x.dtype)
    for t in range(T):
        lo = max(0, t - window + 1)
        seen = x[..., lo : t + 1, :]  # (..., k, C)
        s = (x[..., t : t + 1, :] @ seen.mT)[..., 0, :]  # (..., k)
        w[..., t, lo : t + 1] = attnlib.softmax(s, dim=-1)
    return w @ x, w


def ex3_right_band(x, window):
    T = x.shape[-2]
    band = torch.ones(T, T).tril().triu(-(window - 1)).bool()
    return _masked_attention(x, band)


E1, E2, E3 = "ex1_stacked_naive_attention", "ex2_cosine_self_attention", "ex3_local_self_attention"

ENTRIES = [
    # ex1
    Entry(
        E1,
        "multiplied the recipe by the new weights on the right",
        ex1_wrong_order,
        named="multiplied the layers' weights in the wrong order, the first layer's on the left",
    ),
    Entry(
        E1,
        "returned None as the weights for 0 layers",
        ex1_wrong_none_for_zero,
        named="started the product of the weights from None, so 0 layers return no weights",
    ),
    Entry(
        E1,
        "returned the last layer's weights",
        ex1_wrong_last_weights,
        named=(
            "returned the last layer's weights, not the mix of x that all the layers make together"
        ),
    ),
    Entry(
        E1,
        "ran every layer on x, not on the previous output",
        ex1_wrong_always_on_x,
        named="fed every layer the original x instead of the previous layer's output",
    ),
    Entry(
        E1,
        "torch.eye(T) without the batch dimensions",
        ex1_wrong_eye_no_batch,
        named=(
            "for 0 layers, returned one (T, T) identity instead of one for each sequence of a batch"
        ),
    ),
    Entry(
        E1,
        "torch.eye(T) in its default float32 (written as a mistake, relabelled right after "
        "the blind run, a mistake again since issue 40: a float64 x must work, and breaks it)",
        ex1_wrong_eye_default_dtype,
        named="a float32 constant breaks float64",
    ),
    Entry(
        E1,
        "range(1, layers): one layer too few",
        ex1_wrong_one_layer_short,
        named="ran one layer too few",
    ),
    Entry(
        E1,
        "added the layers' weights",
        ex1_wrong_added,
        named="added the layers' weight matrices instead of multiplying them",
    ),
    Entry(
        E1,
        "matrix_power of the first layer's weights",
        ex1_wrong_matrix_power,
        named="raised the first layer's weights to the power `layers`, as if every layer had them",
    ),
    Entry(
        E1,
        "in float64, recipe multiplied on the right",
        ex1_wrong_float64_order,
        named="multiplied the layers' weights in the wrong order, the first layer's on the left",
    ),
    Entry(E1, "recursion on layers - 1", ex1_right_recursive, True),
    Entry(E1, "out recomputed from the recipe each layer", ex1_right_out_from_recipe, True),
    Entry(E1, "kept a list of weights, combined at the end", ex1_right_list_of_weights, True),
    # ex2
    Entry(
        E2,
        "multiplied by tau instead of dividing",
        ex2_wrong_times_tau,
        named="multiplied the cosines by τ instead of dividing by it",
    ),
    Entry(
        E2,
        "mixed the unit vectors instead of x",
        ex2_wrong_mixes_units,
        named="mixed the vectors scaled to length 1 instead of the original vectors",
    ),
    Entry(
        E2,
        "dot products, not cosines",
        ex2_wrong_dot_products,
        named=(
            "scored with plain dot products divided by τ, without scaling the vectors to length 1"
        ),
    ),
    Entry(
        E2,
        "lengths without keepdim",
        ex2_wrong_norm_no_keepdim,
        named="took each vector's length without keeping its dimension",
    ),
    Entry(
        E2,
        "softmax over the columns",
        ex2_wrong_softmax_columns,
        named="took the softmax along the columns (dim -2), not along each row",
    ),
    Entry(
        E2,
        "u @ u.T, which breaks for a batch",
        ex2_wrong_dot_t,
        named="transposed with x.T, which reverses every dimension of a batch (B, T, C)",
    ),
    Entry(
        E2,
        "normalised only the queries' side",
        ex2_wrong_one_side_normalised,
        named="scaled only one side of the product to length 1",
    ),
    Entry(
        E2,
        "returned (weights, out)",
        ex2_wrong_swapped_return,
        named="returned the pair the wrong way round, (weights, out)",
    ),
    Entry(
        E2, "also divided by sqrt(C)", ex2_wrong_also_sqrt_c, named="divided by √C as well as by τ"
    ),
    Entry(
        E2,
        "in float64, multiplied by tau",
        ex2_wrong_float64_times_tau,
        named="multiplied the cosines by τ instead of dividing by it",
    ),
    Entry(E2, "F.normalize, einsum, torch.softmax", ex2_right_normalize_einsum, True),
    Entry(E2, "dot products over the outer product of lengths", ex2_right_outer_norms, True),
    Entry(E2, "in float64, cast back", ex2_right_float64, True),
    # ex3
    Entry(
        E3,
        "behind <= window: one position too many",
        ex3_wrong_one_too_many,
        named="let each position see window + 1 positions, t − window … t",
    ),
    Entry(
        E3,
        "only causal, no window",
        ex3_wrong_causal_only,
        named="kept the whole past: a causal mask without the window",
    ),
    Entry(
        E3,
        "a window on both sides",
        ex3_wrong_two_sided,
        named="let each position see window − 1 positions on both sides, past and future",
    ),
    Entry(
        E3,
        "masked with -1e9 instead of -inf",
        ex3_wrong_minus_1e9,
        named="filled the hidden scores with -1e9, which float16 cannot hold",
    ),
    Entry(
        E3,
        "zeroed the weights after the softmax",
        ex3_wrong_mask_after_softmax,
        named="set the hidden weights to 0 after the softmax, without renormalising",
    ),
    Entry(
        E3,
        "softmax of the whole row, zeroed, renormalised",
        ex3_wrong_renormalised,
        named="took the softmax of the whole row, then zeroed the hidden weights and renormalised",
    ),
    Entry(
        E3,
        "key minus query: looks ahead",
        ex3_wrong_key_minus_query,
        named="turned the window towards the future: positions t … t + window − 1",
    ),
    Entry(
        E3,
        "divided the scores by sqrt(C)",
        ex3_wrong_scaled,
        named="divided the scores by √C: this exercise is naive, unscaled attention",
    ),
    Entry(
        E3,
        "behind < window - 1: one position too few",
        ex3_wrong_one_too_few,
        named="let each position see only window − 1 positions: the window stops one short",
    ),
    Entry(
        E3,
        "float64, and only causal",
        ex3_wrong_float64_causal_only,
        named="kept the whole past: a causal mask without the window",
    ),
    Entry(E3, "tril minus tril(-window), torch.where", ex3_right_tril_difference, True),
    Entry(E3, "a loop over the positions", ex3_right_loop, True),
    Entry(E3, "a band from tril().triu()", ex3_right_band, True),
]
