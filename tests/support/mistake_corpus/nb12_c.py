"""Corpus c of notebook 12 (efficient attention): learner answers written blind, see the package."""

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_causal_tile_flops", "ex2_merge_parts", "ex3_my_tiled_attention"

# ------------------------------------------------------------ Exercise 1: causal_tile_flops


def _computed_pairs(t, tile_size):
    pairs = 0
    for q0 in range(0, t, tile_size):
        q1 = min(q0 + tile_size, t)
        pairs += (q1 - q0) * q1
    return pairs


def ex1_wrong_forgets_d(batch_heads, t, d, tile_size):
    return 4 * batch_heads * _computed_pairs(t, tile_size)  # 2 FLOPs per score, 2 per weight


def ex1_wrong_counts_softmax(batch_heads, t, d, tile_size):
    pairs = _computed_pairs(t, tile_size)
    return batch_heads * (4 * d + 5) * pairs  # the softmax too


def ex1_right_extra_empty_tile(batch_heads, t, d, tile_size):
    n = t // tile_size + 1  # number of tiles per side
    pairs = 0
    for i in range(n):
        rows = min(tile_size, t - i * tile_size)
        pairs += rows * min((i + 1) * tile_size, t)
    return 4 * batch_heads * d * pairs


def ex1_wrong_float_closed_form(batch_heads, t, d, tile_size):
    n = t / tile_size
    tiles = n * (n + 1) / 2
    return 4 * batch_heads * d * tiles * tile_size**2


def ex1_wrong_keys_to_first_row(batch_heads, t, d, tile_size):
    pairs = 0
    for q0 in range(0, t, tile_size):
        rows = min(q0 + tile_size, t) - q0
        pairs += rows * (q0 + 1)  # keys up to the tile's first query
    return 4 * batch_heads * d * pairs


def ex1_wrong_full_query_tiles(batch_heads, t, d, tile_size):
    pairs = 0
    for q0 in range(0, t, tile_size):
        pairs += tile_size * min(q0 + tile_size, t)  # every query tile as tall as the tile
    return 4 * batch_heads * d * pairs


def ex1_wrong_half_of_full(batch_heads, t, d, tile_size):
    return 4 * batch_heads * d * t * t // 2  # causal: half the work


def ex1_wrong_below_diagonal_only(batch_heads, t, d, tile_size):
    pairs = 0
    for q0 in range(0, t, tile_size):
        rows = min(q0 + tile_size, t) - q0
        pairs += rows * q0  # the tiles left of the diagonal
    return 4 * batch_heads * d * pairs


def ex1_right_tile_grid(batch_heads, t, d, tile_size):
    total = 0
    for q0 in range(0, t, tile_size):
        q_end = min(q0 + tile_size, t)
        for k0 in range(0, t, tile_size):
            if k0 > q_end - 1:
                continue  # every query of the tile is before every key of it
            k_end = min(k0 + tile_size, t)
            total += 2 * (q_end - q0) * (k_end - k0) * d * 2
    return total * batch_heads


def ex1_right_closed_form(batch_heads, t, d, tile_size):
    full, rest = divmod(t, tile_size)
    pairs = tile_size * tile_size * full * (full + 1) // 2
    if rest:
        pairs += rest * t
    return 4 * d * batch_heads * pairs


# ---------------------------------------------------------------- Exercise 2: merge_parts


def ex2_wrong_no_rescale(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    return torch.maximum(m_a, m_b), l_a + l_b, o_a + o_b


def ex2_wrong_inverted_factor(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    m0 = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    fa, fb = torch.exp(m0 - m_a), torch.exp(m0 - m_b)
    return m, l_a * fa + l_b * fb, o_a * fa[..., None] + o_b * fb[..., None]


def ex2_wrong_ell_only(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ref = torch.where(m == -math.inf, 0.0, m)
    return m, l_a * torch.exp(m_a - ref) + l_b * torch.exp(m_b - ref), o_a + o_b


def ex2_wrong_nan_when_both_empty(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.max(m_a, m_b)
    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, fa * l_a + fb * l_b, fa.unsqueeze(-1) * o_a + fb.unsqueeze(-1) * o_b


def ex2_wrong_python_max(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = max(m_a, m_b)
    fa, fb = torch.exp(m_a - m), torch.exp(m_b - m)
    return m, fa * l_a + fb * l_b, fa.unsqueeze(-1) * o_a + fb.unsqueeze(-1) * o_b


def ex2_wrong_normalised_output(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ref = m.masked_fill(m == -math.inf, 0.0)
    fa, fb = torch.exp(m_a - ref), torch.exp(m_b - ref)
    ell = l_a * fa + l_b * fb
    o = o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)
    return m, ell, o / ell.clamp_min(1e-30).unsqueeze(-1)


def ex2_wrong_two_d_unsqueeze(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    ref = m.masked_fill(m == -math.inf, 0.0)
    fa, fb = torch.exp(m_a - ref), torch.exp(m_b - ref)
    return m, l_a * fa + l_b * fb, o_a * fa[:, None] + o_b * fb[:, None]


def ex2_wrong_a_is_reference(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    ref = m_a.masked_fill(m_a == -math.inf, 0.0)
    f = torch.exp(m_b - ref)  # bring B to A's maximum
    return m_a, l_a + l_b * f, o_a + o_b * f.unsqueeze(-1)


def ex2_right_where(part_a, part_b):
    (m_a, l_a, o_a), (m_b, l_b, o_b) = part_a, part_b
    m = torch.where(m_a > m_b, m_a, m_b)
    safe = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    fa = (m_a - safe).exp()
    fb = (m_b - safe).exp()
    return m, fa * l_a + fb * l_b, fa[..., None] * o_a + fb[..., None] * o_b


def ex2_right_nan_to_num(part_a, part_b):
    m_a, l_a, o_a = part_a
    m_b, l_b, o_b = part_b
    m = torch.maximum(m_a, m_b)
    fa = torch.nan_to_num(torch.exp(m_a - m), nan=0.0)  # -inf - -inf: no key on either side
    fb = torch.nan_to_num(torch.exp(m_b - m), nan=0.0)
    return m, l_a * fa + l_b * fb, o_a * fa.unsqueeze(-1) + o_b * fb.unsqueeze(-1)


# -------------------------------------------------------- Exercise 3: tiled attention


def _tiled(q, k, v, mask, tile_size, *, scale=True, rescale_o=True, guard=True, fill=-math.inf):
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
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        ref = m_new.masked_fill(m_new == -math.inf, 0.0) if guard else m_new
        factor = torch.exp(m - ref)
        p = torch.exp(s - ref)
        ell = ell * factor + p.sum(dim=-1, keepdim=True)
        o = (o * factor if rescale_o else o) + p @ v[..., start : start + tile_size, :]
        m = m_new
    if not guard:
        return o / ell
    return torch.where(ell > 0, o / ell.clamp_min(torch.finfo(q.dtype).tiny), 0.0)


def ex3_wrong_o_not_rescaled(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, rescale_o=False)


def ex3_wrong_no_scale(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, scale=False)


def ex3_wrong_nan_on_empty_rows(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, guard=False)


def ex3_wrong_minus_1e9(q, k, v, mask, tile_size):
    return _tiled(q, k, v, mask, tile_size, fill=-1e9)


def ex3_wrong_mask_rows(q, k, v, mask, tile_size):
    rows = (*q.shape[:-1], 1)
    m = torch.full(rows, -math.inf, dtype=q.dtype)
    ell = torch.zeros(rows, dtype=q.dtype)
    o = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for start in range(0, k.shape[-2], tile_size):
        s = q @ k[..., start : start + tile_size, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., start : start + tile_size, :], -math.inf)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        ref = m_new.masked_fill(m_new == -math.inf, 0.0)
        p = torch.exp(s - ref)
        factor = torch.exp(m - ref)
        ell = ell * factor + p.sum(-1, keepdim=True)
        o = o * factor + p @ v[..., start : start + tile_size, :]
        m = m_new
    return torch.where(ell > 0, o / ell.clamp_min(torch.finfo(q.dtype).tiny), 0.0)


def ex3_wrong_mean_of_tiles(q, k, v, mask, tile_size):
    outs = []
    for start in range(0, k.shape[-2], tile_size):
        s = q @ k[..., start : start + tile_size, :].transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., start : start + tile_size], -math.inf)
        e = torch.exp(s - s.amax(-1, keepdim=True).clamp_min(-1e30))
        w = e / e.sum(-1, keepdim=True).clamp_min(1e-30)
        outs.append(w @ v[..., start : start + tile_size, :])
    return torch.stack(outs).mean(dim=0)  # average the tiles' softmax outputs


def ex3_wrong_if_mask(q, k, v, mask, tile_size):
    if not mask:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool)
    return _tiled(q, k, v, mask, tile_size)


def ex3_wrong_drops_last_tile(q, k, v, mask, tile_size):
    n = k.shape[-2] // tile_size * tile_size  # whole tiles
    return _tiled(
        q, k[..., :n, :], v[..., :n, :], None if mask is None else mask[..., :n], tile_size
    )


def ex3_right_query_and_key_tiles(q, k, v, mask, tile_size):
    t_q = q.shape[-2]
    pieces = []
    for q0 in range(0, t_q, tile_size):
        sub_mask = None
        if mask is not None:
            mask = mask if mask.dim() >= 2 else mask.unsqueeze(0)
            full = mask.expand(*mask.shape[:-2], t_q, k.shape[-2]) if mask.shape[-2] == 1 else mask
            sub_mask = full[..., q0 : q0 + tile_size, :]
        pieces.append(_tiled(q[..., q0 : q0 + tile_size, :], k, v, sub_mask, tile_size))
    return torch.cat(pieces, dim=-2)


def ex3_right_where_mask(q, k, v, mask, tile_size):
    d = q.shape[-1]
    m = ell = o = None
    for start in range(0, k.shape[-2], tile_size):
        kt, vt = k[..., start : start + tile_size, :], v[..., start : start + tile_size, :]
        s = torch.einsum("...qd,...kd->...qk", q, kt) * d**-0.5
        if mask is not None:
            s = torch.where(mask[..., start : start + tile_size], s, -math.inf)
        block_max = s.amax(dim=-1, keepdim=True)
        m_new = block_max if m is None else torch.maximum(m, block_max)
        ref = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = (s - ref).exp()
        if m is None:
            ell, o = p.sum(-1, keepdim=True), p @ vt
        else:
            factor = (m - ref).exp()
            ell = ell * factor + p.sum(-1, keepdim=True)
            o = o * factor + p @ vt
        m = m_new
    out = o / torch.where(ell == 0, torch.ones_like(ell), ell)
    return torch.where(ell == 0, torch.zeros_like(out), out)


ENTRIES = [
    Entry(E1, "forgot the factor d", ex1_wrong_forgets_d, named="left out the head size d"),
    Entry(
        E1,
        "counted the softmax's 5 FLOPs per score too",
        ex1_wrong_counts_softmax,
        named="counted the softmax's FLOPs too, a few per score, on top of the two products",
    ),
    Entry(
        E1, "t // tile_size + 1 tiles, the extra one empty", ex1_right_extra_empty_tile, right=True
    ),
    Entry(
        E1,
        "closed form with / (a float, assumes it divides)",
        ex1_wrong_float_closed_form,
        named=(
            "used the closed form for n(n + 1)/2 square tiles with n = t / tile_size, a fraction "
            "of a tile when tile_size does not divide t"
        ),
    ),
    Entry(
        E1,
        "keys only up to the tile's first query",
        ex1_wrong_keys_to_first_row,
        named="went through the keys of a query tile only up to its first row",
    ),
    Entry(
        E1,
        "the last query tile counted full height",
        ex1_wrong_full_query_tiles,
        named="counted every query tile as tile_size rows, though the last one is shorter",
    ),
    Entry(
        E1,
        "half of the full attention's FLOPs",
        ex1_wrong_half_of_full,
        named="halved the full count",
    ),
    Entry(
        E1,
        "only the tiles left of the diagonal",
        ex1_wrong_below_diagonal_only,
        named="skipped the tiles on the diagonal too",
    ),
    Entry(E1, "a loop over the tile grid, skipping", ex1_right_tile_grid, right=True),
    Entry(E1, "closed form with divmod", ex1_right_closed_form, right=True),
    Entry(
        E2,
        "added the parts without rescaling",
        ex2_wrong_no_rescale,
        named="added the two sums and outputs without rescaling them",
    ),
    Entry(
        E2,
        "the factor e^(m - m_a) upside down",
        ex2_wrong_inverted_factor,
        named="rescaled with the sign the wrong way round, e^(m − m_part)",
    ),
    Entry(
        E2,
        "rescaled ell but not o",
        ex2_wrong_ell_only,
        named="rescaled ℓ but added the outputs õ as they were",
    ),
    Entry(
        E2,
        "two empty shares give NaN",
        ex2_wrong_nan_when_both_empty,
        named="let two empty parts give NaN: −inf − (−inf)",
    ),
    Entry(
        E2,
        "Python's max on tensors",
        ex2_wrong_python_max,
        named="compared the two maxima with Python's max or an if, which works for one row only",
    ),
    Entry(
        E2,
        "returned o divided by ell",
        ex2_wrong_normalised_output,
        named="returned the normalised output õ / ℓ instead of the unnormalised sum",
    ),
    Entry(
        E2,
        "[:, None] instead of the last axis",
        ex2_wrong_two_d_unsqueeze,
        named=(
            "gave the factors their size-1 dimension with [:, None], after the first dimension "
            "instead of at the end"
        ),
    ),
    Entry(
        E2,
        "kept A's maximum as the reference",
        ex2_wrong_a_is_reference,
        named="measured everything from part A's maximum, as if A always held the larger score",
    ),
    Entry(E2, "torch.where for the max and the guard", ex2_right_where, right=True),
    Entry(E2, "nan_to_num on the factors", ex2_right_nan_to_num, right=True),
    Entry(
        E3,
        "rescaled ell but not o",
        ex3_wrong_o_not_rescaled,
        named="did not rescale õ when the running maximum grew",
    ),
    Entry(
        E3, "forgot to divide by sqrt(d_k)", ex3_wrong_no_scale, named="left out the scale 1/√d_k"
    ),
    Entry(
        E3,
        "a row with no allowed key gives NaN",
        ex3_wrong_nan_on_empty_rows,
        named="let a row whose keys so far are all masked produce NaN: −inf − (−inf)",
    ),
    Entry(
        E3,
        "masked with -1e9",
        ex3_wrong_minus_1e9,
        named=(
            "filled the masked scores with −1e9 instead of −inf, so a row with no allowed key "
            "averages the values"
        ),
    ),
    Entry(
        E3,
        "sliced the mask along the queries",
        ex3_wrong_mask_rows,
        named="sliced the mask's rows (the queries) instead of its columns (the keys)",
    ),
    Entry(
        E3,
        "a softmax per tile, then the mean of the tiles",
        ex3_wrong_mean_of_tiles,
        named="took a softmax inside each tile and averaged the tiles' outputs",
    ),
    Entry(
        E3,
        "`if not mask` on a tensor",
        ex3_wrong_if_mask,
        named="tested for a mask with `if mask:`, which raises for a mask of more than one element",
    ),
    Entry(
        E3,
        "dropped the last, shorter tile",
        ex3_wrong_drops_last_tile,
        named="skipped the last, shorter tile of keys",
    ),
    Entry(E3, "query tiles too", ex3_right_query_and_key_tiles, right=True),
    Entry(E3, "einsum, torch.where, the first tile apart", ex3_right_where_mask, right=True),
]
