"""The mistakes learners make on notebook 12's tiled attention (optional Exercise 3).

Each is tiled attention written as a learner would write it, with one thing wrong: one
function, :func:`tiled`, whose keywords switch each mistake on. Notebook 12.
"""

from __future__ import annotations

import math
import warnings

import torch

from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import EPSILONS, with_epsilons

Tensor = torch.Tensor


def tiled(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None,
    tile_size: int,
    *,
    rescale_o: bool = True,
    rescale_l: bool = True,
    shift: str = "running",
    scale: str = "d_k",
    last_tile: bool = True,
    mask_use: str = "right",
    safe: bool = True,
    safe_end: bool | None = None,
    k_dot_t: bool = False,
    width: str = "d_v",
    start_max: float = -math.inf,
    keepdim: bool = True,
    divide: bool = True,
    eps: float = 0.0,
) -> Tensor:
    """Tiled attention over the keys for every query at once; one keyword per mistake."""
    d_k = q.shape[-1]
    factor = {"d_k": 1 / math.sqrt(d_k), "none": 1.0, "d_v": 1 / math.sqrt(v.shape[-1])}[scale]
    rows = (*q.shape[:-1], 1)
    m = torch.full(rows, start_max, dtype=q.dtype)
    ell = torch.zeros(rows, dtype=q.dtype)
    o = torch.zeros(*q.shape[:-1], v.shape[-1] if width == "d_v" else d_k, dtype=q.dtype)
    t_k = k.shape[-2]
    stop = t_k if last_tile else t_k - tile_size + 1
    for start in range(0, stop, tile_size):
        keys = k[..., start : start + tile_size, :]
        if k_dot_t:
            with warnings.catch_warnings():  # torch warns that .T reverses every dimension
                warnings.simplefilter("ignore")
                s = q @ keys.T * factor
        else:
            s = q @ keys.transpose(-2, -1) * factor
        present = bool(mask) if mask_use == "if" and mask is not None else mask is not None
        if present and mask_use != "ignored":
            columns = mask[..., start : start + tile_size]
            rows = mask[..., start : start + tile_size, :] if mask_use == "rows" else columns
            hidden = ~(mask if mask_use == "whole" else rows)
            if mask_use == "inverted":
                hidden = ~hidden
            s = s.masked_fill(hidden, {"zero": 0.0, "-1e9": -1e9}.get(mask_use, -math.inf))
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=keepdim))
        ref = m_new.masked_fill(m_new == -math.inf, 0.0) if safe else m_new
        if shift == "running":
            p = torch.exp(s - ref)
        elif shift == "tile":
            tile_max = s.amax(dim=-1, keepdim=True)
            p = torch.exp(s - tile_max.masked_fill(tile_max == -math.inf, 0.0))
        else:  # none
            p = torch.exp(s)
        rescale = torch.exp(m - ref) if shift != "none" else torch.ones_like(m)
        ell = (ell * rescale if rescale_l else ell) + p.sum(dim=-1, keepdim=True)
        o = (o * rescale if rescale_o else o) + p @ v[..., start : start + tile_size, :]
        m = m_new
    if not divide:
        return o
    if eps:  # "to be safe": the empty row's 0 / eps is 0, every other row loses a share
        return o / (ell + eps)
    if not (safe if safe_end is None else safe_end):
        return o / ell
    return torch.where(ell > 0, o / ell.clamp_min(torch.finfo(q.dtype).tiny), 0.0)


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> Tensor:
    """softmax(q kᵀ/√d_k + mask) v from the whole score matrix; rows with no key give 0."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf)
    top = s.amax(dim=-1, keepdim=True)
    p = torch.exp(s - top.masked_fill(top == -math.inf, 0.0))
    total = p.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, (p @ v) / total.clamp_min(torch.finfo(q.dtype).tiny), 0.0)


def tile_by_tile_softmax(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int
) -> Tensor:
    """Each tile's own softmax times its values, the tiles' results added up."""
    out = torch.zeros(())
    for start in range(0, k.shape[-2], tile_size):
        tile_mask = None if mask is None else mask[..., start : start + tile_size]
        tile = slice(start, start + tile_size)
        out = out + _attend(q, k[..., tile, :], v[..., tile, :], tile_mask)
    return out


def mean_of_tile_softmaxes(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int
) -> Tensor:
    """Each tile's own softmax times its values, the tiles' results averaged."""
    return tile_by_tile_softmax(q, k, v, mask, tile_size) / math.ceil(k.shape[-2] / tile_size)


def whole_matrix(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int) -> Tensor:
    """Right values, from every score at once: what tiling exists to avoid."""
    return _attend(q, k, v, mask)


WHOLE_MATRIX = Mistake(
    "computed all the scores at once, as a whole (T_q, T_k) matrix",
    "the values come out right, but the point of tiling is never to hold more than one tile "
    "of scores: only m, ℓ and õ live from one tile to the next.",
    whole_matrix,
)

MISTAKES = (
    Mistake(
        "did not rescale õ when the running maximum grew",
        "the terms already in õ were measured from the old maximum; without the factor "
        "e^(m − m') they are too large next to the new ones, and õ / ℓ is no longer an average.",
        lambda *a: tiled(*a, rescale_o=False),
    ),
    Mistake(
        "rescaled neither ℓ nor õ when the running maximum grew",
        "both were summed from the old maximum; without the factor e^(m − m') on each, the "
        "old terms weigh too much next to the new ones, and õ / ℓ is not the softmax average.",
        lambda *a: tiled(*a, rescale_o=False, rescale_l=False),
    ),
    Mistake(
        "did not rescale ℓ when the running maximum grew",
        "ℓ is the sum of the same terms as õ and needs the same factor e^(m − m'); without it "
        "the final division uses a sum on the wrong scale.",
        lambda *a: tiled(*a, rescale_l=False),
    ),
    Mistake(
        "measured each tile's terms from that tile's own maximum, not from the running one",
        "ℓ and õ add up terms on one scale, e^(s − m') with the running maximum m'; a tile "
        "whose own maximum is below m' would be counted too large.",
        lambda *a: tiled(*a, shift="tile"),
    ),
    Mistake(
        "exponentiated the scores without subtracting any maximum",
        "scores in the thousands overflow e^s to inf, and inf / inf is NaN: the running maximum "
        "is there to keep every exponent at most 0.",
        lambda *a: tiled(*a, shift="none"),
    ),
    Mistake(
        "took a softmax inside each tile and added up the tiles' outputs",
        "each tile's softmax sums to 1 on its own, so the tiles weigh the same whatever their "
        "scores: the tiles must share one normaliser, the running ℓ.",
        tile_by_tile_softmax,
    ),
    Mistake(
        "took a softmax inside each tile and averaged the tiles' outputs",
        "each tile's softmax sums to 1 on its own, so every tile gets the same share of the "
        "row whatever its scores: a tile of high scores must weigh more than one of low "
        "scores, which one shared normaliser, the running ℓ, gives.",
        mean_of_tile_softmaxes,
    ),
    Mistake(
        "left out the scale 1/√d_k",
        "scaled dot-product attention divides every score by √d_k, in every tile.",
        lambda *a: tiled(*a, scale="none"),
    ),
    Mistake(
        "scaled the scores by 1/√d_v instead of 1/√d_k",
        "the scores are dot products of queries and keys, of length d_k: their scale is "
        "√d_k whatever the width of the values.",
        lambda *a: tiled(*a, scale="d_v"),
    ),
    Mistake(
        "skipped the last, shorter tile of keys",
        "when T_k is not a multiple of tile_size the last tile is shorter; slicing past the "
        "end is fine in Python, so the loop must still start it.",
        lambda *a: tiled(*a, last_tile=False),
    ),
    Mistake(
        "ignored the mask",
        "a masked key must get weight 0: its score has to be hidden in every tile it falls in.",
        lambda *a: tiled(*a, mask_use="ignored"),
    ),
    Mistake(
        "used the mask the wrong way round: the allowed scores were hidden",
        "in this course True means 'may attend': it is the scores where the mask is False "
        "that become −inf.",
        lambda *a: tiled(*a, mask_use="inverted"),
    ),
    Mistake(
        "applied the whole mask to each tile instead of the tile's own columns",
        "a tile holds only tile_size keys: the part of the mask that belongs to it is the "
        "columns of those keys, sliced like k and v.",
        lambda *a: tiled(*a, mask_use="whole"),
    ),
    Mistake(
        "started the running maximum at 0 instead of −inf",
        "with a maximum of at least 0, scores far below 0 give e^(s − 0) = 0 for every key "
        "and the row ends as 0 / 0: before any key is read, nothing is the largest score yet.",
        lambda *a: tiled(*a, start_max=0.0),
    ),
    Mistake(
        "took each tile's row maxima without keepdim",
        "the maxima have shape (..., T_q) and broadcast against m's (..., T_q, 1) into a "
        "(T_q, T_q) table: one maximum per query needs its trailing size-1 dimension.",
        lambda *a: tiled(*a, keepdim=False),
    ),
    Mistake(
        "filled the masked scores with −1e9 instead of −inf, so a row with no allowed key "
        "averages the values",
        "e^(−1e9 − m) is 0 next to any real score, but a row whose keys are all masked has only "
        "−1e9 scores: they tie, and the row gets the plain average of the values instead of 0.",
        lambda *a: tiled(*a, mask_use="-1e9"),
    ),
    Mistake(
        "sliced the mask's rows (the queries) instead of its columns (the keys)",
        "a tile is a slice of the keys, the last dimension of the scores and of the mask: its "
        "part of the mask is mask[..., start : start + tile_size], sliced like k's rows.",
        lambda *a: tiled(*a, mask_use="rows"),
    ),
    Mistake(
        "tested for a mask with `if mask:`, which raises for a mask of more than one element",
        "a tensor of several elements has no single truth value; whether a mask was given is "
        "`mask is not None`.",
        lambda *a: tiled(*a, mask_use="if"),
    ),
    Mistake(
        "left out the final division of õ by ℓ",
        "õ is the sum of the weights' numerators times the values: only divided by ℓ, the sum "
        "of those numerators, is it the softmax average.",
        lambda *a: tiled(*a, divide=False),
    ),
    Mistake(
        "filled the masked scores with 0 instead of −inf",
        "a score of 0 still gets the weight e^(0 − m), as much as a real score of 0: masked "
        "keys keep a share of the weight.",
        lambda *a: tiled(*a, mask_use="zero"),
    ),
    Mistake(
        "let a row whose keys so far are all masked produce NaN: −inf − (−inf)",
        "when a whole tile is masked for a row that has seen nothing else, m' is still −inf and "
        "e^(s − m') is NaN; measure such a row from 0, and give a row with no allowed key at "
        "all the output 0.",
        lambda *a: tiled(*a, safe=False),
    ),
    Mistake(
        "measured a row that has seen only masked keys from −inf: its sums became NaN, and "
        "the row came out 0",
        "e^(s − m') with m' = −inf is e^(−inf + inf), NaN, and the NaN stays in ℓ and õ for "
        "every later tile; the final test ℓ > 0 is False for NaN, so a row that does see "
        "allowed keys later ends as 0. Until a row sees an allowed key, it is measured from 0.",
        lambda *a: tiled(*a, safe=False, safe_end=True),
    ),
    Mistake(
        "transposed each tile of keys with .T, which reverses every dimension of a batch",
        "on a batch (..., tile, d_k) .T gives (d_k, tile, ...), not (..., d_k, tile): only the "
        "last two dimensions may be swapped, so that every batch and head keeps its place.",
        lambda *a: tiled(*a, k_dot_t=True),
    ),
    Mistake(
        "made the output as wide as the queries (d_k), not the values (d_v)",
        "the output mixes value vectors: it has d_v numbers per query.",
        lambda *a: tiled(*a, width="d_k"),
    ),
    WHOLE_MATRIX,
    *with_epsilons(
        "added a small number (an epsilon) to the running sum before dividing by it, so each "
        "query's weights add up to less than 1",
        "the running sum of a query with an allowed key is at least 1 (its largest term is "
        "e^0), and the query with none has o = 0 to divide: o / ℓ where ℓ > 0, and 0 elsewhere, "
        "needs no epsilon, which takes a share from every weight.",
        lambda eps: lambda *a: tiled(*a, eps=eps),
        EPSILONS[:3],  # 1e-4 and less: within the tolerance, the sum being at least 1
    ),
)
