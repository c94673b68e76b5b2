"""Corpus b for notebook 12 (efficient attention), written blind from the learner's edition."""

import math

import torch

from mistake_corpus.corpus import REFUSED, Entry

# ------------------------------------------------------------ Exercise 1: causal_tile_flops


def ex1_wrong_no_skipping(batch_heads, t, d, tile_size):
    return 4 * batch_heads * t * t * d


def ex1_wrong_exact_pairs(batch_heads, t, d, tile_size):
    # only the (query, key) pairs the mask allows
    return 4 * batch_heads * d * t * (t + 1) // 2


def ex1_wrong_assumes_divides(batch_heads, t, d, tile_size):
    n = t // tile_size
    tiles = n * (n + 1) // 2
    return 4 * batch_heads * d * tiles * tile_size * tile_size


def ex1_wrong_full_size_tiles(batch_heads, t, d, tile_size):
    n = math.ceil(t / tile_size)
    tiles = n * (n + 1) // 2
    return 4 * batch_heads * d * tiles * tile_size**2


def ex1_wrong_only_scores(batch_heads, t, d, tile_size):
    pairs = 0
    for start in range(0, t, tile_size):
        end = min(start + tile_size, t)
        pairs += (end - start) * end
    return 2 * batch_heads * d * pairs


def ex1_wrong_no_batch_heads(batch_heads, t, d, tile_size):
    pairs = 0
    for start in range(0, t, tile_size):
        end = min(start + tile_size, t)
        pairs += (end - start) * end
    return 4 * d * pairs


def ex1_wrong_skips_diagonal(batch_heads, t, d, tile_size):
    # the key tiles strictly before the query tile
    pairs = 0
    for q0 in range(0, t, tile_size):
        rows = min(q0 + tile_size, t) - q0
        for k0 in range(0, q0, tile_size):
            pairs += rows * (min(k0 + tile_size, t) - k0)
    return 4 * batch_heads * d * pairs


def ex1_wrong_off_by_one_keys(batch_heads, t, d, tile_size):
    pairs = 0
    for first_row in range(0, t, tile_size):
        last_row = min(first_row + tile_size, t)
        pairs += (last_row - first_row) * (last_row + 1)
    return batch_heads * 4 * d * pairs


def ex1_wrong_float_result(batch_heads, t, d, tile_size):
    pairs = 0
    for start in range(0, t, tile_size):
        end = min(start + tile_size, t)
        pairs += (end - start) * end
    return 4 * batch_heads * d * pairs / 1  # a float: the exact count, as a number


def ex1_wrong_triangle_per_tile(batch_heads, t, d, tile_size):
    # the diagonal tile counted as half: only its lower triangle
    pairs = 0
    for start in range(0, t, tile_size):
        rows = min(start + tile_size, t) - start
        pairs += rows * start + rows * (rows + 1) // 2
    return 4 * batch_heads * d * pairs


def ex1_right_closed_form(batch_heads, t, d, tile_size):
    n, r = divmod(t, tile_size)
    full = tile_size * tile_size * n * (n + 1) // 2  # the n whole query tiles
    last = r * t  # the short last query tile sees every key
    return 4 * batch_heads * d * (full + last)


def ex1_right_tile_grid(batch_heads, t, d, tile_size):
    total = 0
    for q0 in range(0, t, tile_size):
        q1 = min(q0 + tile_size, t)
        for k0 in range(0, t, tile_size):
            k1 = min(k0 + tile_size, t)
            if k0 <= q1 - 1:  # the tile's first key is visible to its last query
                total += 2 * d * (q1 - q0) * (k1 - k0) * 2
    return int(total * batch_heads)


def ex1_right_torch(batch_heads, t, d, tile_size):
    ends = torch.clamp(torch.arange(tile_size, t + tile_size, tile_size), max=t)
    starts = torch.arange(0, t, tile_size)
    return int(4 * batch_heads * d * ((ends - starts) * ends).sum().item())


# ------------------------------------------------------------ Exercise 2: merge_parts


def ex2_wrong_no_rescale(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    return torch.maximum(m_a, m_b), ell_a + ell_b, o_a + o_b


def ex2_wrong_factor_inverted(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    fa, fb = torch.exp(m - m_a), torch.exp(m - m_b)
    return m, ell_a * fa + ell_b * fb, o_a * fa[..., None] + o_b * fb[..., None]


def ex2_wrong_nan_when_empty(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, ell_a * fa + ell_b * fb, o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)


def ex2_wrong_no_unsqueeze(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ref = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    fa, fb = torch.exp(m_a - ref), torch.exp(m_b - ref)
    return m, ell_a * fa + ell_b * fb, o_a * fa + o_b * fb


def ex2_wrong_normalised_o(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ref = m.masked_fill(m == -math.inf, 0.0)
    fa, fb = torch.exp(m_a - ref), torch.exp(m_b - ref)
    ell = ell_a * fa + ell_b * fb
    o = o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)
    return m, ell, torch.nan_to_num(o / ell.unsqueeze(-1))  # the output, divided by ell


def ex2_wrong_python_max(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = max(m_a, m_b)
    fa, fb = math.exp(m_a - m), math.exp(m_b - m)
    return m, ell_a * fa + ell_b * fb, o_a * fa + o_b * fb


def ex2_wrong_minimum(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.minimum(m_a, m_b)
    ref = m.masked_fill(m == -math.inf, 0.0)
    fa, fb = torch.exp(m_a - ref), torch.exp(m_b - ref)
    return m, ell_a * fa + ell_b * fb, o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)


def ex2_wrong_empty_m_zero(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    m = torch.where(m == -math.inf, torch.zeros_like(m), m)  # no -inf any more
    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, ell_a * fa + ell_b * fb, o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)


def ex2_wrong_in_place(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ref = m.masked_fill(m == -math.inf, 0.0)
    fa, fb = torch.exp(m_a - ref), torch.exp(m_b - ref)
    ell_a.mul_(fa).add_(ell_b * fb)
    o_a.mul_(fa.unsqueeze(-1)).add_(o_b * fb.unsqueeze(-1))
    return m, ell_a, o_a


def ex2_wrong_weighted_by_ell(part_a, part_b):
    # averaged the two outputs by their sums, forgetting the maxima
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ell = ell_a + ell_b
    w = (ell_a / ell.clamp_min(1e-30)).unsqueeze(-1)
    return m, ell, w * o_a + (1 - w) * o_b


def ex2_right_where(part_a, part_b):
    (m_a, ell_a, o_a), (m_b, ell_b, o_b) = part_a, part_b
    m = torch.where(m_a > m_b, m_a, m_b)
    fa = torch.where(ell_a > 0, torch.exp(m_a - m), torch.zeros_like(m))
    fb = torch.where(ell_b > 0, torch.exp(m_b - m), torch.zeros_like(m))
    return m, fa * ell_a + fb * ell_b, fa[..., None] * o_a + fb[..., None] * o_b


def ex2_right_nan_to_num(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    m = torch.max(torch.stack([m_a, m_b]), dim=0).values
    fa = torch.nan_to_num(torch.exp(m_a - m), nan=0.0)
    fb = torch.nan_to_num(torch.exp(m_b - m), nan=0.0)
    ell = ell_a * fa + ell_b * fb
    o = torch.einsum("...,...d->...d", fa, o_a) + torch.einsum("...,...d->...d", fb, o_b)
    return m, ell, o


def ex2_right_sort_larger(part_a, part_b):
    m_a, ell_a, o_a = part_a
    m_b, ell_b, o_b = part_b
    hi = torch.maximum(m_a, m_b)
    lo = torch.minimum(m_a, m_b)
    safe_hi = torch.where(torch.isfinite(hi), hi, torch.zeros_like(hi))
    # the part with the smaller maximum is the one to shrink; the other keeps its factor 1
    f_small = torch.exp(lo - safe_hi)
    a_small = m_a < m_b
    fa = torch.where(a_small, f_small, torch.exp(m_a - safe_hi))
    fb = torch.where(a_small, torch.exp(m_b - safe_hi), f_small)
    return hi, ell_a * fa + ell_b * fb, o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)


# ------------------------------------------------------------ Exercise 3: my_tiled_attention


def _tiled(q, k, v, mask, tile_size, *, scale=True, guard=True, fill=-math.inf, rescale_o=True):
    rows = (*q.shape[:-1], 1)
    m = torch.full(rows, -math.inf, dtype=q.dtype)
    ell = torch.zeros(rows, dtype=q.dtype)
    o = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for start in range(0, k.shape[-2], tile_size):
        s = q @ k[..., start : start + tile_size, :].transpose(-2, -1)
        if scale:
            s = s / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., start : start + tile_size], fill)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        shift = m_new.masked_fill(m_new == -math.inf, 0.0) if guard else m_new
        factor = torch.exp(m - shift)
        p = torch.exp(s - shift)
        ell = ell * factor + p.sum(-1, keepdim=True)
        o = (o * factor if rescale_o else o) + p @ v[..., start : start + tile_size, :]
        m = m_new
    return torch.where(ell > 0, o / ell.clamp_min(torch.finfo(q.dtype).tiny), 0.0)


def ex3_wrong_no_scale(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, scale=False)


def ex3_wrong_fill_minus_1e9(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, fill=-1e9)


def ex3_wrong_no_inf_guard(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, guard=False)


def ex3_wrong_o_not_rescaled(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, rescale_o=False)


def ex3_wrong_mask_rows_sliced(q, k, v, mask, tile_size):
    d = q.shape[-1]
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype)
    ell = torch.zeros_like(m)
    o = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for j in range(0, k.shape[-2], tile_size):
        s = q @ k[..., j : j + tile_size, :].transpose(-1, -2) / d**0.5
        if mask is not None:
            s = s.masked_fill(~mask[..., j : j + tile_size, :], float("-inf"))  # the tile's rows
        m_new = torch.maximum(m, s.max(-1, keepdim=True).values)
        sh = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - sh)
        f = torch.exp(m - sh)
        ell, o, m = (
            ell * f + p.sum(-1, keepdim=True),
            o * f + p @ v[..., j : j + tile_size, :],
            m_new,
        )
    return torch.where(ell > 0, o / ell.clamp_min(1e-30), torch.zeros_like(o))


def ex3_right_normalise_each_tile(q, k, v, mask, tile_size):
    # keeps o normalised: undoes the old division, adds the tile, divides by the new sum
    d = q.shape[-1]
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=q.dtype)
    ell = torch.zeros_like(m)
    o = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for j in range(0, k.shape[-2], tile_size):
        s = q @ k[..., j : j + tile_size, :].transpose(-1, -2) / math.sqrt(d)
        if mask is not None:
            s = s.masked_fill(~mask[..., j : j + tile_size], -math.inf)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        sh = m_new.masked_fill(torch.isinf(m_new), 0.0)
        p, f = torch.exp(s - sh), torch.exp(m - sh)
        new_ell = ell * f + p.sum(-1, keepdim=True)
        o = (o * ell * f + p @ v[..., j : j + tile_size, :]) / new_ell.clamp_min(1e-30)
        ell, m = new_ell, m_new
    return o


def ex3_wrong_k_dot_t(q, k, v, mask, tile_size):
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    m = torch.full(q.shape[:-1], -math.inf, dtype=q.dtype)
    ell = torch.zeros(q.shape[:-1], dtype=q.dtype)
    for i in range(0, k.shape[-2], tile_size):
        kt = k[..., i : i + tile_size, :].T  # the transpose
        s = (q @ kt) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., i : i + tile_size], -math.inf)
        mn = torch.maximum(m, s.amax(-1))
        sh = torch.where(mn == -math.inf, 0.0, mn)
        p = torch.exp(s - sh[..., None])
        f = torch.exp(m - sh)
        ell = ell * f + p.sum(-1)
        out = out * f[..., None] + p @ v[..., i : i + tile_size, :]
        m = mn
    return torch.where(ell[..., None] > 0, out / ell.clamp_min(1e-30)[..., None], 0.0)


def ex3_wrong_scale_by_d_v(q, k, v, mask, tile_size):
    q = q * math.sqrt(q.shape[-1]) / math.sqrt(v.shape[-1])  # so _tiled divides by sqrt(d_v)
    return _tiled(q, k, v, mask, tile_size)


def ex3_wrong_mask_polarity(q, k, v, mask, tile_size):
    blocked = None if mask is None else ~mask  # True means "hide" (thought the mask was blocked)
    return _tiled(q, k, v, blocked, tile_size)


def ex3_wrong_whole_softmax(q, k, v, mask, tile_size):
    # "tiled" over the values only: the whole score matrix first
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf)
    p = torch.nan_to_num(torch.softmax(s, dim=-1))
    out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for j in range(0, k.shape[-2], tile_size):
        out = out + p[..., j : j + tile_size] @ v[..., j : j + tile_size, :]
    return out


def ex3_wrong_fused_per_tile(q, k, v, mask, tile_size):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def ex3_right_query_tiles_too(q, k, v, mask, tile_size):
    outs = []
    for q0 in range(0, q.shape[-2], tile_size):
        qt = q[..., q0 : q0 + tile_size, :]
        mt = mask
        if mask is not None and mask.dim() >= 2 and mask.shape[-2] > 1:
            mt = mask[..., q0 : q0 + tile_size, :]  # this tile's queries
        outs.append(_tiled(qt, k, v, mt, tile_size))
    return torch.cat(outs, dim=-2)


def ex3_right_float64_state(q, k, v, mask, tile_size):
    q64, k64, v64 = q.double(), k.double(), v.double()
    scale = 1.0 / math.sqrt(q.shape[-1])
    m = torch.full((*q.shape[:-1], 1), -math.inf, dtype=torch.float64)
    ell = torch.zeros_like(m)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=torch.float64)
    for j in range(0, k.shape[-2], tile_size):
        s = torch.einsum("...qd,...kd->...qk", q64, k64[..., j : j + tile_size, :]) * scale
        if mask is not None:
            s = torch.where(mask[..., j : j + tile_size], s, -math.inf)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        finite = torch.isfinite(m_new)
        p = torch.where(finite, torch.exp(s - torch.where(finite, m_new, 0.0)), 0.0)
        f = torch.where(finite, torch.exp(m - torch.where(finite, m_new, 0.0)), 0.0)
        ell = ell * f + p.sum(-1, keepdim=True)
        acc = acc * f + p @ v64[..., j : j + tile_size, :]
        m = m_new
    out = torch.where(ell > 0, acc / torch.where(ell > 0, ell, 1.0), 0.0)
    return out.to(q.dtype)


E1, E2, E3 = "ex1_causal_tile_flops", "ex2_merge_parts", "ex3_my_tiled_attention"

ENTRIES = [
    Entry(
        E1,
        "counted every tile: no skipping at all",
        ex1_wrong_no_skipping,
        named="skipped nothing: counted every tile of the full T × T grid",
    ),
    Entry(
        E1,
        "counted only the pairs the mask allows",
        ex1_wrong_exact_pairs,
        named="counted the exact triangle of allowed pairs, not whole tiles",
    ),
    Entry(
        E1,
        "t // tile_size tiles: dropped the short last tile",
        ex1_wrong_assumes_divides,
        named="dropped the last, shorter tile when t is not a multiple of tile_size",
    ),
    Entry(
        E1,
        "the short last tiles counted as whole tiles",
        ex1_wrong_full_size_tiles,
        named="counted the last tile as a full tile of tile_size positions",
    ),
    Entry(
        E1,
        "counted QKᵀ only (2d per pair), not PV",
        ex1_wrong_only_scores,
        named="counted half the FLOPs: a multiply-add as one FLOP, or only one of the two products",
    ),
    Entry(
        E1,
        "forgot to multiply by batch_heads",
        ex1_wrong_no_batch_heads,
        named="counted one head only: batch_heads is missing",
    ),
    Entry(
        E1,
        "skipped the diagonal tiles too",
        ex1_wrong_skips_diagonal,
        named="skipped the tiles on the diagonal too",
    ),
    Entry(
        E1,
        "one key too many per query tile (off by one)",
        ex1_wrong_off_by_one_keys,
        named="counted one key too many for each query tile, its end taken as its last row",
    ),
    Entry(
        E1,
        "the right count, returned as a float (right until issue 40 asked a float named)",
        ex1_wrong_float_result,
        named="returned a float where the task asks for a whole number",
    ),
    Entry(
        E1,
        "diagonal tiles counted as their lower triangle",
        ex1_wrong_triangle_per_tile,
        named="counted the exact triangle of allowed pairs, not whole tiles",
    ),
    Entry(E1, "closed form with divmod", ex1_right_closed_form, right=True),
    Entry(E1, "loop over the grid of tiles", ex1_right_tile_grid, right=True),
    Entry(E1, "vectorised with torch.arange", ex1_right_torch, right=True),
    Entry(
        E2,
        "added ell and o without rescaling",
        ex2_wrong_no_rescale,
        named="added the two sums and outputs without rescaling them",
    ),
    Entry(
        E2,
        "rescaled by e^(m' - m) instead of e^(m - m')",
        ex2_wrong_factor_inverted,
        named="rescaled with the sign the wrong way round, e^(m − m_part)",
    ),
    Entry(
        E2,
        "two empty shares give NaN (-inf - -inf)",
        ex2_wrong_nan_when_empty,
        named="let two empty parts give NaN: −inf − (−inf)",
    ),
    Entry(
        E2,
        "multiplied o by the factor without unsqueeze",
        ex2_wrong_no_unsqueeze,
        named="multiplied õ by the factors without a trailing dimension",
    ),
    Entry(
        E2,
        "returned the normalised output o / ell",
        ex2_wrong_normalised_o,
        named="returned the normalised output õ / ℓ instead of the unnormalised sum",
    ),
    Entry(
        E2,
        "Python max and math.exp on tensors",
        ex2_wrong_python_max,
        named="compared the two maxima with Python's max or an if, which works for one row only",
    ),
    Entry(
        E2,
        "took the smaller maximum as the new m",
        ex2_wrong_minimum,
        named="took the smaller of the two maxima as the union's maximum",
    ),
    Entry(
        E2,
        "returned m = 0 for two empty shares",
        ex2_wrong_empty_m_zero,
        named="returned 0 instead of −inf as the maximum of a row with no allowed key",
    ),
    Entry(
        E2,
        "merged into part_a's tensors in place",
        ex2_wrong_in_place,
        named="changed the caller's part A in place (ell_a *= …, o_a += …)",
    ),
    Entry(
        E2,
        "averaged the outputs by ell, ignoring the maxima",
        ex2_wrong_weighted_by_ell,
        named="averaged the two õ weighted by their ℓ, as if each õ were already divided by its ℓ",
    ),
    Entry(E2, "torch.where on ell > 0", ex2_right_where, right=True),
    Entry(E2, "NaN factors set to 0, einsum", ex2_right_nan_to_num, right=True),
    Entry(E2, "the smaller part shrunk, the larger kept", ex2_right_sort_larger, right=True),
    Entry(E3, "forgot 1/sqrt(d_k)", ex3_wrong_no_scale, named="left out the scale 1/√d_k"),
    Entry(
        E3,
        "masked with -1e9: a fully masked row averages v",
        ex3_wrong_fill_minus_1e9,
        named=(
            "filled the masked scores with −1e9 instead of −inf, so a row with no "
            "allowed key averages the values"
        ),
    ),
    Entry(
        E3,
        "no guard: -inf - -inf gives NaN",
        ex3_wrong_no_inf_guard,
        named=(
            "measured a row that has seen only masked keys from −inf: its sums became NaN, "
            "and the row came out 0"
        ),
    ),
    Entry(
        E3,
        "rescaled ell but not the output",
        ex3_wrong_o_not_rescaled,
        named="did not rescale õ when the running maximum grew",
    ),
    Entry(
        E3,
        "sliced the mask's rows instead of its columns",
        ex3_wrong_mask_rows_sliced,
        named="sliced the mask's rows (the queries) instead of its columns (the keys)",
    ),
    Entry(
        E3,
        "kept o normalised, re-weighted by ell at every tile",
        ex3_right_normalise_each_tile,
        right=True,
    ),
    Entry(
        E3,
        "k.T: reverses every dimension of a batch",
        ex3_wrong_k_dot_t,
        named="transposed each tile of keys with .T, which reverses every dimension of a batch",
    ),
    Entry(
        E3,
        "scaled by sqrt(d_v)",
        ex3_wrong_scale_by_d_v,
        named="scaled the scores by 1/√d_v instead of 1/√d_k",
    ),
    Entry(
        E3,
        "True in the mask taken as blocked",
        ex3_wrong_mask_polarity,
        named="used the mask the wrong way round: the allowed scores were hidden",
    ),
    Entry(
        E3,
        "the whole score matrix, then tiles of V",
        ex3_wrong_whole_softmax,
        named="computed all the scores at once, as a whole (T_q, T_k) matrix",
    ),
    Entry(E3, "called PyTorch's fused attention", ex3_wrong_fused_per_tile, named=REFUSED),
    Entry(E3, "query tiles as well as key tiles", ex3_right_query_tiles_too, right=True),
    Entry(E3, "float64 state, einsum, torch.where", ex3_right_float64_state, right=True),
]
