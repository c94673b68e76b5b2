"""Notebook 03, Exercise 3's table of mistakes: local self-attention with one thing wrong,
as learners write it (the window's ends, the fill, where the mask goes, float16).

Notebook 03.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import softmax_epsilons

Tensor = torch.Tensor


def band(t: int, low: int, high: int) -> Tensor:
    """(t, t): key j allowed for query i when low ≤ i − j ≤ high."""
    offset = torch.arange(t)[:, None] - torch.arange(t)[None, :]  # i − j
    return (offset >= low) & (offset <= high)


def window_mask(x: Tensor, window: int) -> Tensor:
    return band(x.shape[-2], 0, window - 1)


def masked_attention(
    x: Tensor,
    allowed: Tensor,
    fill: float = -math.inf,
    scale: float = 1.0,
    softmax: Callable[..., Tensor] = torch.softmax,
) -> tuple[Tensor, Tensor]:
    scores = (x @ x.transpose(-2, -1)) * scale
    weights = softmax(scores.masked_fill(~allowed, fill), dim=-1)
    return weights @ x, weights


def _renormalised_after(x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    return weights @ x, weights


def _float32_bias(x: Tensor, window: int) -> tuple[Tensor, Tensor]:
    t = x.shape[-2]
    bias = torch.zeros(t, t).masked_fill(~band(t, 0, window - 1), -math.inf)  # float32
    weights = torch.softmax(x @ x.transpose(-2, -1) + bias, dim=-1)
    return weights @ x, weights


def _renormalised(x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ x, weights


def _exp_unshifted(x: Tensor, window: int, *, hide_first: bool) -> tuple[Tensor, Tensor]:
    allowed, scores = window_mask(x, window), x @ x.transpose(-2, -1)
    if hide_first:  # e^-inf is 0
        powers = torch.exp(scores.masked_fill(~allowed, -math.inf))
    else:  # the hidden ones multiplied by 0 afterwards
        powers = torch.exp(scores) * allowed
    weights = powers / powers.sum(dim=-1, keepdim=True)
    return weights @ x, weights


UNSHIFTED = "exponentiated the scores by hand without subtracting each row's largest first"
UNSHIFTED_ZEROED = (
    "exponentiated the scores by hand without subtracting each row's largest, then zeroed the "
    "hidden ones"
)
UNSHIFTED_WHY = (
    "e to an unscaled score overflows as soon as a vector is long (above about 88 in float32, "
    "11 in float16), and inf / inf is NaN; softmax does not change when a row's largest "
    "visible score is subtracted from every score of that row, which keeps each exponential "
    "at most 1."
)

MISTAKES = (
    Mistake(
        "left out the mask: every position sees every position",
        "without hiding anything, position t mixes the whole sequence, the future included.",
        lambda x, window: masked_attention(
            x, torch.ones(x.shape[-2], x.shape[-2], dtype=torch.bool)
        ),
    ),
    Mistake(
        "kept the whole past: a causal mask without the window",
        "position t may see only its last `window` positions, itself included: keys further "
        "back than t − window + 1 must get weight 0 too.",
        lambda x, window: masked_attention(x, band(x.shape[-2], 0, x.shape[-2])),
    ),
    Mistake(
        "let each position see window + 1 positions, t − window … t",
        "the window holds `window` positions counting t itself: with window = 1 a position "
        "sees only itself.",
        lambda x, window: masked_attention(x, band(x.shape[-2], 0, window)),
    ),
    Mistake(
        "let each position see only window − 1 positions: the window stops one short",
        "the window holds `window` positions counting t itself: t − window + 1 is still in it.",
        lambda x, window: masked_attention(x, band(x.shape[-2], 0, window - 2)),
    ),
    Mistake(
        "hid each position from itself: the window ends at t − 1",
        "position t belongs to its own window; without it position 0 sees nothing at all and "
        "its row of the softmax is 0 / 0.",
        lambda x, window: masked_attention(x, band(x.shape[-2], 1, window)),
    ),
    Mistake(
        "hid each position from itself, so attnlib.softmax refused position 0's empty row",
        "position t belongs to its own window; without it position 0 may see nothing, its "
        "scores are all -inf, and attnlib.softmax refuses a row with no finite score (torch's "
        "gives NaN there).",
        lambda x, window: masked_attention(
            x, band(x.shape[-2], 1, window), softmax=attnlib.softmax
        ),
    ),
    Mistake(
        "hid each position from itself, filling with the smallest number of the dtype",
        "position t belongs to its own window; without it position 0's scores are all equal "
        "and it spreads its weight over positions it may not see.",
        lambda x, window: masked_attention(
            x, band(x.shape[-2], 1, window), torch.finfo(x.dtype).min
        ),
    ),
    Mistake(
        "hid the past instead of the future: each position saw itself and every later one",
        "a causal window looks back from t: the keys after t are the ones to hide, and those "
        "before it, up to window − 1 of them, stay.",
        lambda x, window: masked_attention(x, band(x.shape[-2], -x.shape[-2], 0)),
    ),
    Mistake(
        "turned the window towards the future: positions t … t + window − 1",
        "the window looks back: the keys after t are the future a causal model may not see.",
        lambda x, window: masked_attention(x, band(x.shape[-2], -(window - 1), 0)),
    ),
    Mistake(
        "let each position see window − 1 positions on both sides, past and future",
        "the window is causal: it reaches back from t, never forward.",
        lambda x, window: masked_attention(x, band(x.shape[-2], -(window - 1), window - 1)),
    ),
    Mistake(
        "cut the window off at t − window + 1 but not at t: each position also saw the future",
        "a causal window has two ends: keys further back than t − window + 1 are hidden, and "
        "so is every key after t.",
        lambda x, window: masked_attention(x, band(x.shape[-2], -x.shape[-2], window - 1)),
    ),
    Mistake(
        "mixed a float32 tensor into the float16 scores, so the weights could not mix x",
        "float16 together with float32 gives float32: the weights no longer have x's dtype, "
        "and a matrix product needs both in one dtype. Whatever is added to or written into "
        "the scores and weights should be made in x's dtype.",
        _float32_bias,
    ),
    Mistake(
        "used the mask the wrong way round: the allowed scores were the ones hidden",
        "in this course True means 'may attend': fill the scores where the table is False. "
        "The other way round each position sees exactly what it should not.",
        lambda x, window: masked_attention(x, ~window_mask(x, window)),
    ),
    Mistake(
        "set the hidden weights to 0 after the softmax, without renormalising",
        "the softmax had already shared each row's weight among all positions; zeroing some "
        "afterwards leaves rows that sum to less than 1. Hide the scores before the softmax.",
        lambda x, window: _renormalised_after(x, window_mask(x, window)),
    ),
    Mistake(
        "filled the hidden scores with 0 instead of -inf",
        "a score of 0 still gets the weight e^0 = 1 before normalising, as much as a real "
        "score of 0: hidden positions keep a share of the weight.",
        lambda x, window: masked_attention(x, window_mask(x, window), fill=0.0),
    ),
    Mistake(
        "filled the hidden scores with -1e9, which float16 cannot hold",
        "float16 stops at about -65504, so masked_fill refuses -1e9 there; -inf (or the "
        "dtype's own smallest number) works in every float type.",
        lambda x, window: masked_attention(x, window_mask(x, window), fill=-1e9),
    ),
    Mistake(
        "filled the hidden scores with float32's smallest number, which float16 cannot hold",
        "float16 stops at about -65504, so masked_fill refuses float32's smallest number "
        "(about -3.4e38) there; -inf, or the smallest number of the scores' own dtype, works "
        "in every float type.",
        lambda x, window: masked_attention(
            x, window_mask(x, window), fill=torch.finfo(torch.float32).min
        ),
        written=r"finfo\(\s*(torch\.)?float32\s*\)|finfo\(\s*\)",
    ),
    Mistake(
        "took T from x.shape[0], which for a batch is the number of sequences",
        "x is (..., T, C): the length of a sequence is the size of its second-to-last dimension, "
        "whatever the batch dimensions in front.",
        lambda x, window: masked_attention(x, band(x.shape[0], 0, window - 1)),
    ),
    Mistake(
        "took T from x.shape[1], which is the length only for a (B, T, C) batch",
        "for one sequence (T, C) dim 1 is the width C, and in a (B, H, T, C) batch it is H: "
        "the length of a sequence is always the size of the second-to-last dimension.",
        lambda x, window: masked_attention(x, band(x.shape[1], 0, window - 1)),
    ),
    Mistake(
        "returned the pair the wrong way round, (weights, out)",
        "the task asks for (out, weights): the output first, shape (..., T, C), then the "
        "weights, shape (..., T, T).",
        lambda x, window: masked_attention(x, window_mask(x, window))[::-1],
    ),
    Mistake(
        "divided the scores by √C: this exercise is naive, unscaled attention",
        "the task asks for the scores x xᵀ of section 2; the scaling of section 4 changes "
        "every weight.",
        lambda x, window: masked_attention(
            x, window_mask(x, window), scale=1 / math.sqrt(x.shape[-1])
        ),
    ),
    Mistake(UNSHIFTED, UNSHIFTED_WHY, lambda x, w: _exp_unshifted(x, w, hide_first=True)),
    Mistake(UNSHIFTED_ZEROED, UNSHIFTED_WHY, lambda x, w: _exp_unshifted(x, w, hide_first=False)),
    Mistake(
        "took the softmax of the whole row, then zeroed the hidden weights and renormalised",
        "it is the same in exact arithmetic, but the softmax shifts by the largest score of the "
        "row, a hidden one too: when a hidden score is far above the visible ones (a long vector "
        "later in the sequence), every visible weight rounds to 0 and the renormalisation "
        "divides 0 by 0. Hide the scores before the softmax.",
        lambda x, window: _renormalised(x, window_mask(x, window)),
    ),
    *softmax_epsilons(
        lambda softmax: (
            lambda x, window: masked_attention(x, window_mask(x, window), softmax=softmax)
        )
    ),
)
