"""Notebook 12's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(closed forms, loops over the grid, logaddexp, torch.where, tiles of queries too) must pass;
answers that call attnlib's online softmax or attention must be refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes

Tensor = torch.Tensor
Part = tuple[Tensor, Tensor, Tensor]


def _named(report: object, mistake: str) -> bool:
    return f"The mistake: {mistake}." in str(report)


# -- Exercise 1: FLOPs of causal tiles ----------------------------------------------------------


def flops_grid(batch_heads: int, t: int, d: int, tile_size: int) -> int:
    total = 0
    for q0 in range(0, t, tile_size):
        for k0 in range(0, t, tile_size):
            rows, cols = min(tile_size, t - q0), min(tile_size, t - k0)
            if k0 <= q0 + rows - 1:  # some key in the tile is not after every query
                total += 2 * rows * cols * d + 2 * rows * cols * d
    return batch_heads * total


def flops_closed_form(batch_heads: int, t: int, d: int, tile_size: int) -> int:
    n = math.ceil(t / tile_size)
    full = tile_size * tile_size * n * (n - 1) // 2  # every tile below the diagonal...
    full += sum(min(tile_size, t - i * tile_size) ** 2 for i in range(n))  # ...and on it
    last = t - (n - 1) * tile_size  # the last row of tiles has only `last` rows
    full -= (tile_size - last) * tile_size * (n - 1)
    return 4 * batch_heads * d * full


def flops_numpy_style(batch_heads: int, t: int, d: int, tile_size: int) -> float:
    ends = torch.arange(tile_size, t + tile_size, tile_size).clamp(max=t)
    rows = ends - torch.arange(0, t, tile_size)
    return float(4 * batch_heads * d * (rows * ends).sum())


FLOPS_RIGHT = {
    "a loop over the grid": flops_grid,
    "a closed form": flops_closed_form,
    "tensors, made a whole number": lambda *a: int(flops_numpy_style(*a)),
}

# The task asks for a whole number: a float of the right value is named by the engine, whatever
# the exercise's table holds (issue 40).
FLOPS_AS_A_FLOAT = {
    "tensors, returning a float": flops_numpy_style,
    "the count of a float tensor, .item()": lambda *a: torch.tensor(
        flops_grid(*a), dtype=torch.float64
    ).item(),
}


@pytest.mark.parametrize("name", FLOPS_AS_A_FLOAT)
def test_a_count_returned_as_a_float_is_named(name: str) -> None:
    report = checks.check_causal_tile_flops(FLOPS_AS_A_FLOAT[name])
    assert "The mistake: returned a float where the task asks for a whole number" in str(report)


FLOPS_WRONG = {
    "no skipping": (lambda bh, t, d, b: 2 * 2 * bh * t * t * d, "skipped nothing"),
    "the triangle": (lambda bh, t, d, b: 2 * bh * d * t * (t + 1), "exact triangle"),
    "half": (lambda bh, t, d, b: 4 * bh * t * t * d // 2, "halved the full count"),
    "no diagonal": (
        lambda bh, t, d, b: sum(4 * bh * d * min(b, t - q0) * q0 for q0 in range(0, t, b)),
        "skipped the tiles on the diagonal",
    ),
    "t // b": (
        lambda bh, t, d, b: 4 * bh * d * sum(b * (i + 1) * b for i in range(t // b)),
        "dropped the last, shorter tile",
    ),
    "last tile full": (
        lambda bh, t, d, b: (n := -(-t // b)) and 4 * bh * d * b * b * n * (n + 1) // 2,
        "counted the last tile as a full tile",
    ),
    "key tiles full": (
        lambda bh, t, d, b: (
            4 * bh * d * sum(min(b, t - q0) * (q0 // b + 1) * b for q0 in range(0, t, b))
        ),
        "every key tile as tile_size keys",
    ),
    "query tiles full": (
        lambda bh, t, d, b: 4 * bh * d * sum(b * min(q0 + b, t) for q0 in range(0, t, b)),
        "every query tile as tile_size rows",
    ),
    "2 instead of 4": (
        lambda bh, t, d, b: 2 * bh * d * sum(min(b, t - q) * min(q + b, t) for q in range(0, t, b)),
        "counted half the FLOPs",
    ),
    "no batch_heads": (lambda bh, t, d, b: flops_grid(1, t, d, b), "batch_heads is missing"),
    "no d": (lambda bh, t, d, b: flops_grid(bh, t, 1, b), "left out the head size d"),
    "one key too many": (
        lambda bh, t, d, b: sum(
            4 * bh * d * (min(q0 + b, t) - q0) * (min(q0 + b, t) + 1)  # keys 0 … "last row"
            for q0 in range(0, t, b)
        ),
        "one key too many for each query tile",
    ),
    "the softmax too": (
        lambda bh, t, d, b: sum(
            bh * (2 * d + 5 + 2 * d) * (min(q0 + b, t) - q0) * min(q0 + b, t)  # max, exp, sum …
            for q0 in range(0, t, b)
        ),
        "counted the softmax's FLOPs too",
    ),
    "keys to the first row": (
        lambda bh, t, d, b: (
            4 * bh * d * sum((min(q0 + b, t) - q0) * (q0 + 1) for q0 in range(0, t, b))
        ),
        "only up to its first row",
    ),
    "n = t / b": (
        lambda bh, t, d, b: 4 * bh * d * b * b * (t / b) * (t / b + 1) / 2,
        "a fraction of a tile",
    ),
}


@pytest.mark.parametrize("name", FLOPS_RIGHT)
def test_right_flop_counts_pass(name: str) -> None:
    report = checks.check_causal_tile_flops(FLOPS_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", FLOPS_WRONG)
def test_each_flop_mistake_is_caught_and_named(name: str) -> None:
    fn, words = FLOPS_WRONG[name]
    report = checks.check_causal_tile_flops(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


# -- Exercise 2: merging two parts --------------------------------------------------------------


def merge_where(a: Part, b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    m = torch.maximum(m_a, m_b)
    ref = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    f_a, f_b = (m_a - ref).exp(), (m_b - ref).exp()
    return m, f_a * l_a + f_b * l_b, f_a[..., None] * o_a + f_b[..., None] * o_b


def merge_logaddexp(a: Part, b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    m = torch.max(torch.stack([m_a, m_b]), dim=0).values
    safe = m.masked_fill(m == -math.inf, 0)
    log_l = torch.logaddexp(torch.log(l_a) + m_a - safe, torch.log(l_b) + m_b - safe)
    w_a = torch.exp(m_a - safe).unsqueeze(-1)
    w_b = torch.exp(m_b - safe).unsqueeze(-1)
    return m, torch.exp(log_l), w_a * o_a + w_b * o_b


def merge_branches(a: Part, b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    a_larger = (m_a >= m_b).unsqueeze(-1)
    m = torch.where(m_a >= m_b, m_a, m_b)
    gap = -(m_a - m_b).abs().nan_to_num(nan=0.0)  # ≤ 0; −inf − (−inf) is NaN: nothing to add
    shrink = gap.exp()
    ell = torch.where(m_a >= m_b, l_a + l_b * shrink, l_b + l_a * shrink)
    o = torch.where(a_larger, o_a + o_b * shrink.unsqueeze(-1), o_b + o_a * shrink.unsqueeze(-1))
    return m, ell, o


def merge_float32(a: Part, b: Part) -> Part:
    m, ell, o = merge_where(*(tuple(t.float() for t in part) for part in (a, b)))  # type: ignore[arg-type]
    return m, ell, o


MERGE_RIGHT = {
    "torch.where": merge_where,
    "logaddexp": merge_logaddexp,
    "branches on the larger maximum": merge_branches,
}


def _factors(a: Part, b: Part, sign: int = 1, safe: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    m = torch.maximum(a[0], b[0])
    ref = m.nan_to_num(neginf=0.0) if safe else m
    return m, torch.exp(sign * (a[0] - ref)), torch.exp(sign * (b[0] - ref))


def _wrong(a: Part, b: Part, how: str) -> Part:
    m, f_a, f_b = _factors(a, b, -1 if how == "sign" else 1, how != "nan")
    if how == "no factors":
        f_a = f_b = torch.ones_like(m)
    if how == "only b":
        f_a = torch.ones_like(m)
    if how == "only a":
        f_b = torch.ones_like(m)
    ell = a[1] * f_a + b[1] * f_b
    if how == "o as it is":
        return m, ell, a[2] + b[2]
    if how == "no trailing":
        return m, ell, a[2] * f_a + b[2] * f_b
    o = a[2] * f_a[..., None] + b[2] * f_b[..., None]
    if how == "normalised":
        return m, ell, o / ell[..., None]
    return m, ell, o


def _floored(a: Part, b: Part, low: float) -> Part:
    m = torch.maximum(torch.maximum(a[0], b[0]), torch.full_like(a[0], low))  # never -inf
    f_a, f_b = torch.exp(a[0] - m), torch.exp(b[0] - m)
    return m, a[1] * f_a + b[1] * f_b, a[2] * f_a[..., None] + b[2] * f_b[..., None]


def merge_l_unscaled(a: Part, b: Part) -> Part:
    m, f_a, f_b = _factors(a, b)
    return m, a[1] + b[1], a[2] * f_a[..., None] + b[2] * f_b[..., None]


def merge_exp_m(a: Part, b: Part) -> Part:
    total = a[1] * a[0].exp() + b[1] * b[0].exp()
    m = torch.maximum(a[0], b[0])
    o = a[2] * a[0].exp()[..., None] + b[2] * b[0].exp()[..., None]
    return m, total / m.exp(), o / m.exp()[..., None]


def merge_global_max(a: Part, b: Part) -> Part:
    top = max(a[0].max().item(), b[0].max().item())
    f_a, f_b = torch.exp(a[0] - top), torch.exp(b[0] - top)
    m = torch.ones_like(a[0]) * top
    return m, a[1] * f_a + b[1] * f_b, a[2] * f_a[..., None] + b[2] * f_b[..., None]


def merge_if(a: Part, b: Part) -> Part:
    if a[0] >= b[0]:  # fine for one row; ambiguous for several
        big, small = a, b
    else:
        big, small = b, a
    f = torch.exp(small[0] - big[0])
    return big[0], big[1] + small[1] * f, big[2] + small[2] * f[..., None]


def merge_smaller_max(a: Part, b: Part) -> Part:
    m = torch.min(a[0], b[0])
    ref = torch.where(m == -math.inf, 0.0, m)
    f_a, f_b = (a[0] - ref).exp(), (b[0] - ref).exp()
    return m, a[1] * f_a + b[1] * f_b, a[2] * f_a[..., None] + b[2] * f_b[..., None]


def merge_weighted_average(a: Part, b: Part) -> Part:
    total = a[1] + b[1]
    share = torch.where(total > 0, a[1] / total, 0.0)[..., None]  # part A's share of ℓ
    return torch.maximum(a[0], b[0]), total, share * a[2] + (1 - share) * b[2]


def merge_in_place(a: Part, b: Part) -> Part:
    m, f_a, f_b = _factors(a, b)
    a[1].copy_(a[1] * f_a + b[1] * f_b)
    a[2].copy_(a[2] * f_a[..., None] + b[2] * f_b[..., None])
    return m, a[1], a[2]


def merge_from_a(a: Part, b: Part) -> Part:
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    shift = torch.exp(m_b - torch.where(m_a == -math.inf, 0.0, m_a))  # B brought to A's max
    return m_a, l_a + shift * l_b, o_a + shift[..., None] * o_b


def merge_colon_none(a: Part, b: Part) -> Part:
    m, f_a, f_b = _factors(a, b)
    return m, a[1] * f_a + b[1] * f_b, a[2] * f_a[:, None] + b[2] * f_b[:, None]


MERGE_WRONG = {
    "m floored at -1e4": (
        lambda a, b: _floored(a, b, -1e4),
        "kept the maximum from falling below a finite floor",
    ),
    "no factors": (lambda a, b: _wrong(a, b, "no factors"), "without rescaling them"),
    "sign": (lambda a, b: _wrong(a, b, "sign"), "the sign the wrong way round"),
    "only b": (lambda a, b: _wrong(a, b, "only b"), "rescaled only part B"),
    "only a": (lambda a, b: _wrong(a, b, "only a"), "rescaled only part A"),
    "o as it is": (lambda a, b: _wrong(a, b, "o as it is"), "added the outputs õ as they were"),
    "no trailing": (lambda a, b: _wrong(a, b, "no trailing"), "without a trailing dimension"),
    "ℓ as it is": (merge_l_unscaled, "added the sums ℓ as they were"),
    "nan": (lambda a, b: _wrong(a, b, "nan"), "two empty parts give NaN"),
    "e^m": (merge_exp_m, "undid the shifts"),
    "one maximum": (merge_global_max, "one maximum for the whole batch"),
    "normalised": (lambda a, b: _wrong(a, b, "normalised"), "the normalised output"),
    "A's maximum": (lambda a, b: (a[0], *merge_where(a, b)[1:]), "returned part A's maximum"),
    "0 for an empty row": (
        lambda a, b: (merge_where(a, b)[0].nan_to_num(neginf=0.0), *merge_where(a, b)[1:]),
        "returned 0 instead of −inf",
    ),
    "in place": (merge_in_place, "in place"),
    "if on the maxima": (merge_if, "Python's max or an if"),
    "the smaller maximum": (merge_smaller_max, "the smaller of the two maxima"),
    "averaged by ℓ": (merge_weighted_average, "weighted by their ℓ"),
    "from A's maximum": (merge_from_a, "measured everything from part A's maximum"),
    "[:, None]": (merge_colon_none, "with [:, None]"),
}


@pytest.mark.parametrize("name", MERGE_RIGHT)
def test_right_merges_pass(name: str) -> None:
    report = checks.check_merge_parts(MERGE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", MERGE_WRONG)
def test_each_merge_mistake_is_caught_and_named(name: str) -> None:
    fn, words = MERGE_WRONG[name]
    report = checks.check_merge_parts(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


def test_a_merge_computed_in_float32_passes() -> None:
    report = checks.check_merge_parts(merge_float32)
    assert report.passed, report


def test_a_merge_that_calls_the_online_softmax_is_refused() -> None:
    def cheat(a: Part, b: Part) -> Part:
        attnlib.online_softmax(torch.zeros(3), 2)
        return merge_where(a, b)

    report = checks.check_merge_parts(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 3 (optional): tiled attention with a mask -----------------------------------------


def tiled_right(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int) -> Tensor:
    m = torch.full((*q.shape[:-1], 1), -math.inf)
    ell = torch.zeros(*q.shape[:-1], 1)
    o = torch.zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[-2], tile_size):
        s = q @ k[..., start : start + tile_size, :].mT / q.shape[-1] ** 0.5
        if mask is not None:
            s = s.masked_fill(~mask[..., start : start + tile_size], -math.inf)
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        ref = torch.where(m_new == -math.inf, 0.0, m_new)
        p = torch.exp(s - ref)
        ell = ell * torch.exp(m - ref) + p.sum(-1, keepdim=True)
        o = o * torch.exp(m - ref) + p @ v[..., start : start + tile_size, :]
        m = m_new
    return torch.where(ell > 0, o / ell, torch.zeros_like(o))


def tiled_both_ways(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int):
    """Tiles of queries as well as of keys, in float64, with a log-sum-exp state."""
    if mask is None:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool)
    mask = mask.expand(*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.shape[-2], -1)
    outs = []
    for q0 in range(0, q.shape[-2], tile_size):
        qt = q[..., q0 : q0 + tile_size, :].double()
        lse = torch.full((*qt.shape[:-1], 1), -math.inf, dtype=torch.float64)
        acc = torch.zeros(*qt.shape[:-1], v.shape[-1], dtype=torch.float64)
        for k0 in range(0, k.shape[-2], tile_size):
            s = qt @ k[..., k0 : k0 + tile_size, :].double().transpose(-2, -1)
            s = s / math.sqrt(q.shape[-1])
            s = torch.where(mask[..., q0 : q0 + tile_size, k0 : k0 + tile_size], s, -math.inf)
            tile_lse = torch.logsumexp(s, dim=-1, keepdim=True)
            new = torch.logaddexp(lse, tile_lse)
            safe = new.nan_to_num(neginf=0.0)
            acc = (
                acc * torch.exp(lse - safe)
                + torch.exp(s - safe) @ v[..., k0 : k0 + tile_size, :].double()
            )
            lse = new
        outs.append(acc)
    return torch.cat(outs, dim=-2).to(q.dtype)  # the task asks for q's dtype


TILED_RIGHT = {"keys in tiles": tiled_right, "queries and keys in tiles": tiled_both_ways}


def _tiled(q, k, v, mask, size, **wrong):  # type: ignore[no-untyped-def]
    m = torch.full((*q.shape[:-1], 1), wrong.get("m0", -math.inf))
    ell = torch.zeros(*q.shape[:-1], 1)
    o = torch.zeros(*q.shape[:-1], q.shape[-1] if wrong.get("width") else v.shape[-1])
    scale = wrong.get("scale", 1 / math.sqrt(q.shape[-1]))
    stop = k.shape[-2] - size + 1 if wrong.get("drop_last") else k.shape[-2]
    for start in range(0, stop, size):
        keys = k[..., start : start + size, :]
        s = q @ (keys.T if wrong.get("dot_t") else keys.transpose(-1, -2)) * scale
        given = bool(mask) if wrong.get("if_mask") and mask is not None else mask is not None
        if given and not wrong.get("ignore_mask"):
            keep = mask if wrong.get("whole_mask") else mask[..., start : start + size]
            if wrong.get("rows"):
                keep = mask[..., start : start + size, :]
            fill = {"zero": 0.0, "1e9": -1e9}.get(wrong.get("fill", ""), float("-inf"))
            fill = 0.0 if wrong.get("zero_fill") else fill
            s = torch.where(~keep if wrong.get("inverted") else keep, s, fill)
        m_new = torch.max(m, s.max(dim=-1, keepdim=not wrong.get("no_keepdim")).values)
        unsafe = wrong.get("nan") or wrong.get("nan_sums")
        ref = m_new if unsafe else torch.where(torch.isinf(m_new), 0.0, m_new)
        if wrong.get("no_shift"):
            p, r = s.exp(), torch.ones_like(m)
        elif wrong.get("tile_shift"):
            top = s.max(dim=-1, keepdim=True).values
            p, r = torch.exp(s - torch.where(torch.isinf(top), 0.0, top)), torch.exp(m - ref)
        else:
            p, r = torch.exp(s - ref), torch.exp(m - ref)
        ell = ell + p.sum(-1, keepdim=True) if wrong.get("keep_l") else ell * r + p.sum(-1, True)
        tile_out = p @ v[..., start : start + size, :]
        o = o + tile_out if wrong.get("keep_o") else o * r + tile_out
        m = m_new
    if wrong.get("no_division"):
        return o
    if wrong.get("eps"):  # "so that an empty row never divides by 0"
        return o / (ell + wrong["eps"])
    if wrong.get("nan"):
        return o / ell
    return torch.where(ell > 0, o / ell, 0.0)


def per_tile_softmax(q, k, v, mask, size):  # type: ignore[no-untyped-def]
    out = torch.zeros(*q.shape[:-1], v.shape[-1])
    for start in range(0, k.shape[-2], size):
        s = q @ k[..., start : start + size, :].mT / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., start : start + size], -math.inf)
        w = torch.softmax(s, dim=-1).nan_to_num(0.0)
        out = out + w @ v[..., start : start + size, :]
    return out


def tiles_averaged(q, k, v, mask, size):  # type: ignore[no-untyped-def]
    outs = []
    for start in range(0, k.shape[-2], size):
        s = q @ k[..., start : start + size, :].mT / math.sqrt(q.shape[-1])
        if mask is not None:
            s = s.masked_fill(~mask[..., start : start + size], -math.inf)
        outs.append(torch.softmax(s, dim=-1).nan_to_num(0.0) @ v[..., start : start + size, :])
    return sum(outs) / len(outs)  # each tile's softmax output, averaged


def all_scores(q, k, v, mask, size):  # type: ignore[no-untyped-def]
    s = q @ k.mT / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf)
    return torch.softmax(s, dim=-1).nan_to_num(0.0) @ v


TILED_WRONG = {
    "+ 1e-3 on ℓ": (lambda *a: _tiled(*a, eps=1e-3), "(an epsilon) to the running sum"),
    "õ kept": (lambda *a: _tiled(*a, keep_o=True), "did not rescale õ"),
    "ℓ kept": (lambda *a: _tiled(*a, keep_l=True), "did not rescale ℓ"),
    "tile's own max": (lambda *a: _tiled(*a, tile_shift=True), "that tile's own maximum"),
    "no shift": (lambda *a: _tiled(*a, no_shift=True), "without subtracting any maximum"),
    "softmax per tile": (per_tile_softmax, "a softmax inside each tile and added up"),
    "mean of the tiles": (tiles_averaged, "averaged the tiles' outputs"),
    "no scale": (lambda *a: _tiled(*a, scale=1.0), "left out the scale"),
    "√d_v": (lambda q, k, v, m, s: _tiled(q, k, v, m, s, scale=v.shape[-1] ** -0.5), "1/√d_v"),
    "drop the last tile": (lambda *a: _tiled(*a, drop_last=True), "skipped the last, shorter"),
    "no mask": (lambda *a: _tiled(*a, ignore_mask=True), "ignored the mask"),
    "inverted": (lambda *a: _tiled(*a, inverted=True), "the wrong way round"),
    "zero fill": (lambda *a: _tiled(*a, zero_fill=True), "with 0 instead of −inf"),
    "NaN rows": (lambda *a: _tiled(*a, nan=True), "produce NaN"),
    "query width": (lambda *a: _tiled(*a, width=True), "as wide as the queries"),
    "whole mask": (lambda *a: _tiled(*a, whole_mask=True), "the whole mask to each tile"),
    "m from 0": (lambda *a: _tiled(*a, m0=0.0), "running maximum at 0"),
    "no keepdim": (lambda *a: _tiled(*a, no_keepdim=True), "without keepdim"),
    "all scores": (all_scores, "computed all the scores at once"),
    "neither rescaled": (lambda *a: _tiled(*a, keep_o=True, keep_l=True), "neither ℓ nor õ"),
    "-1e9": (lambda *a: _tiled(*a, fill="1e9"), "with −1e9 instead of −inf"),
    "the mask's rows": (lambda *a: _tiled(*a, rows=True), "the mask's rows"),
    "if mask:": (lambda *a: _tiled(*a, if_mask=True), "`if mask:`"),
    "no division": (lambda *a: _tiled(*a, no_division=True), "final division"),
    "NaN sums, then 0": (lambda *a: _tiled(*a, nan_sums=True), "its sums became NaN"),
    ".T": (lambda *a: _tiled(*a, dot_t=True), "with .T"),
}


@pytest.mark.parametrize("name", TILED_RIGHT)
def test_right_tiled_attentions_pass(name: str) -> None:
    report = checks.check_my_tiled_attention(TILED_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", TILED_WRONG)
def test_each_tiled_mistake_is_caught_and_named(name: str) -> None:
    fn, words = TILED_WRONG[name]
    report = checks.check_my_tiled_attention(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda q, k, v, mask, size: attnlib.tiled_attention(q, k, v, mask, tile_size=size),
        lambda q, k, v, mask, size: attnlib.scaled_dot_product_attention(q, k, v, mask)[0],
        lambda q, k, v, mask, size: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
    ],
    ids=["attnlib.tiled_attention", "attnlib.scaled_dot_product_attention", "F.sdpa"],
)
def test_a_tiled_attention_that_calls_an_attention_is_refused(
    cheat: Callable[..., Tensor],
) -> None:
    report = checks.check_my_tiled_attention(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_the_optional_check_says_skipping_is_fine() -> None:
    def stub(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int) -> Tensor:
        raise NotImplementedError()

    report = checks.check_my_tiled_attention(stub)
    assert not report.done and "optional" in str(report)
    assert checks.check_my_tiled_attention.exercise.optional


# -- every table --------------------------------------------------------------------------------

CHECKERS = {
    "ex1_causal_tile_flops": checks.check_causal_tile_flops,
    "ex2_merge_parts": checks.check_merge_parts,
    "ex3_my_tiled_attention": checks.check_my_tiled_attention,
}
WRONG = {
    "ex1_causal_tile_flops": FLOPS_WRONG,
    "ex2_merge_parts": MERGE_WRONG,
    "ex3_my_tiled_attention": TILED_WRONG,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    for mistake in known_mistakes(exercise_id):
        assert _named(CHECKERS[exercise_id](mistake.fn), mistake.name), mistake.name


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_each_entry_of_the_table_is_written_again_here(exercise_id: str) -> None:
    table = list(dict.fromkeys(m.name for m in known_mistakes(exercise_id)))  # one per name
    for _, words in WRONG[exercise_id].values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(WRONG[exercise_id])
