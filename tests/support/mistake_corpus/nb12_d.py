"""Learner answers to notebook 12's exercises (efficient attention), corpus d, written blind:
FLOPs returned as floats, float32 accumulators against float64 inputs, epsilons in a merge,
crashes."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_causal_tile_flops", "ex2_merge_parts", "ex3_my_tiled_attention"

# ------------------------------------------ Exercise 1: causal_tile_flops


def _tiles(t, tile_size):
    starts = range(0, t, tile_size)
    return [(s, min(s + tile_size, t)) for s in starts]


def ex1_wrong_triangle_float(batch_heads, t, d, tile_size):
    n = math.ceil(t / tile_size)
    tiles = n * (n + 1) / 2  # the tiles on and below the diagonal
    return 4 * batch_heads * tiles * tile_size * tile_size * d  # wrong when tile_size ∤ t


def ex1_wrong_tensor_item(batch_heads, t, d, tile_size):
    n = math.ceil(t / tile_size)
    sizes = torch.tensor([min(tile_size, t - i * tile_size) for i in range(n)], dtype=torch.float)
    keep = torch.ones(n, n).tril()  # key tile j <= query tile i
    flops = 4 * d * batch_heads * (sizes[:, None] * sizes[None, :] * keep).sum()
    return flops.item()


def ex1_wrong_numpy_style_float(batch_heads, t, d, tile_size):
    total = 0.0
    for qs, qe in _tiles(t, tile_size):
        for ks, ke in _tiles(t, tile_size):
            if ks < qe:
                total += 4.0 * (qe - qs) * (ke - ks) * d
    return total * batch_heads


def ex1_wrong_half_of_full(batch_heads, t, d, tile_size):
    return 4 * batch_heads * t * t * d // 2


def ex1_wrong_strict_below(batch_heads, t, d, tile_size):
    total = 0
    for qs, qe in _tiles(t, tile_size):
        for ks, ke in _tiles(t, tile_size):
            if ks < qs:
                total += 4 * (qe - qs) * (ke - ks) * d
    return batch_heads * total


def ex1_right_loops(batch_heads, t, d, tile_size):
    total = 0
    for qs, qe in _tiles(t, tile_size):
        for ks, ke in _tiles(t, tile_size):
            if ks <= qe - 1:
                total += 4 * (qe - qs) * (ke - ks) * d
    return batch_heads * total


def ex1_right_int_of_float(batch_heads, t, d, tile_size):
    total = 0.0
    for qs, qe in _tiles(t, tile_size):
        keys = min(qe, t)  # every key tile up to the one holding the last query
        last = math.ceil(keys / tile_size) * tile_size
        total += 2.0 * 2.0 * (qe - qs) * min(last, t) * d
    return round(total * batch_heads)


# ------------------------------------------ Exercise 2: merge_parts


def ex2_wrong_eps_exp(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    a = torch.exp(m_a - m + 1e-9)
    b = torch.exp(m_b - m + 1e-9)
    a, b = torch.nan_to_num(a), torch.nan_to_num(b)
    return m, a * l_a + b * l_b, a[..., None] * o_a + b[..., None] * o_b


def ex2_wrong_m_floor(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(torch.maximum(m_a, m_b), torch.full_like(m_a, -1e4))
    a, b = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, a * l_a + b * l_b, a[..., None] * o_a + b[..., None] * o_b


def ex2_wrong_no_unsqueeze(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    a, b = torch.exp(m_a - safe), torch.exp(m_b - safe)
    return m, a * l_a + b * l_b, a * o_a + b * o_b


def ex2_right_float32_scale(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    safe = torch.where(torch.isinf(m), torch.zeros(m.shape), m)
    a, b = torch.exp(m_a - safe).float(), torch.exp(m_b - safe).float()
    return m, a * l_a + b * l_b, a[..., None] * o_a + b[..., None] * o_b


def ex2_right_where(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    both_empty = m == float("-inf")
    shift = torch.where(both_empty, torch.zeros_like(m), m)
    a, b = (m_a - shift).exp(), (m_b - shift).exp()
    return m, a * l_a + b * l_b, a.unsqueeze(-1) * o_a + b.unsqueeze(-1) * o_b


def ex2_right_nan_to_num(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.max(m_a, m_b)
    a = torch.nan_to_num(torch.exp(m_a - m), nan=0.0)
    b = torch.nan_to_num(torch.exp(m_b - m), nan=0.0)
    return m, l_a * a + l_b * b, o_a * a[..., None] + o_b * b[..., None]


# ------------------------------------------ Exercise 3: my_tiled_attention


def _tiled(q, k, v, mask, tile_size, make):
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    m = make((*q.shape[:-1],), float("-inf"), q)
    ell = make((*q.shape[:-1],), 0.0, q)
    acc = make((*q.shape[:-1], v.shape[-1]), 0.0, q)
    if mask is not None:
        mask = mask.expand(*q.shape[:-2], T_q, T_k)
    for s in range(0, T_k, tile_size):
        e = min(s + tile_size, T_k)
        scores = (q @ k[..., s:e, :].transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask[..., s:e], float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1))
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(scores - shift[..., None])
        alpha = torch.exp(m - shift)
        ell.mul_(alpha).add_(p.sum(dim=-1))
        acc.mul_(alpha[..., None]).add_(p @ v[..., s:e, :])
        m = m_new
    return torch.where(ell[..., None] > 0, acc / ell.clamp_min(1e-300)[..., None], 0.0)


def ex3_wrong_float32_accumulators(q, k, v, mask, tile_size):
    def make(shape, value, like):
        return torch.full(shape, value)  # float32

    return _tiled(q, k, v, mask, tile_size, make)


def ex3_wrong_eps_total(q, k, v, mask, tile_size):
    T_k = k.shape[-2]
    scale = q.shape[-1] ** -0.5
    m = torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype)
    ell = torch.zeros(q.shape[:-1], dtype=q.dtype)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for s in range(0, T_k, tile_size):
        scores = q @ k[..., s : s + tile_size, :].mT * scale
        if mask is not None:
            allowed = mask[..., s : s + tile_size].expand_as(scores)
            scores = scores.masked_fill(~allowed, float("-inf"))
        m_new = torch.maximum(m, scores.amax(-1))
        shift = torch.nan_to_num(m_new, neginf=0.0)
        p = torch.exp(scores - shift[..., None])
        alpha = torch.exp(m - shift)
        ell = ell * alpha + p.sum(-1)
        acc = acc * alpha[..., None] + p @ v[..., s : s + tile_size, :]
        m = m_new
    return acc / (ell[..., None] + 1e-6)  # 0 for a query with no key, never NaN


def ex3_right_full_like_dtype(q, k, v, mask, tile_size):
    def make(shape, value, like):
        return torch.full(shape, value, dtype=like.dtype, device=like.device)

    return _tiled(q, k, v, mask, tile_size, make)


ENTRIES = [
    Entry(
        E1,
        "n (n + 1) / 2 full tiles, a float",
        ex1_wrong_triangle_float,
        named="counted the last tile as a full tile of tile_size positions",
    ),
    Entry(
        E1,
        "a float tensor of tile sizes, .item()",
        ex1_wrong_tensor_item,
        named="returned a float where the task asks for a whole number",
    ),
    Entry(
        E1,
        "a float accumulator (0.0), right count",
        ex1_wrong_numpy_style_float,
        named="returned a float where the task asks for a whole number",
    ),
    Entry(E1, "half of the full count", ex1_wrong_half_of_full, named="halved the full count"),
    Entry(
        E1,
        "only the tiles strictly below the diagonal",
        ex1_wrong_strict_below,
        named="skipped the tiles on the diagonal too",
    ),
    Entry(E1, "loops over tiles, whole numbers", ex1_right_loops, right=True),
    Entry(E1, "floats, rounded to an int", ex1_right_int_of_float, right=True),
    Entry(E2, "+ 1e-9 in the exponents", ex2_wrong_eps_exp, right=True),
    Entry(
        E2,
        "m floored at -1e4",
        ex2_wrong_m_floor,
        named=(
            "kept the maximum from falling below a finite floor (such as -1e4) "
            "instead of letting it be -inf"
        ),
    ),
    Entry(
        E2,
        "scales not unsqueezed for o",
        ex2_wrong_no_unsqueeze,
        named="multiplied õ by the factors without a trailing dimension",
    ),
    Entry(E2, "scales cast to float32 (results promote back)", ex2_right_float32_scale, right=True),
    Entry(E2, "a safe shift with torch.where", ex2_right_where, right=True),
    Entry(E2, "exp then nan_to_num", ex2_right_nan_to_num, right=True),
    Entry(
        E3,
        "accumulators from torch.full (float32), updated in place",
        ex3_wrong_float32_accumulators,
        named="returns float32 for float64 input",
    ),
    Entry(E3, "divided by (1 + 1e-3) at the end", ex3_wrong_eps_total, right=True),
    Entry(E3, "accumulators of q's dtype", ex3_right_full_like_dtype, right=True),
]
