"""The mistakes learners make on notebook 07's Exercise 3 (masked attention), and what it may
not call.

Each mistake is masked attention with one thing done otherwise: the fill value of the blocked
scores (−inf, −1e9, 0, nothing, the mask added as numbers), the polarity, the zeroing of the
blocked weights after the softmax, the scale, the transpose of k, the softmax's dimension, the
order of the results.
Notebook 07.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Mistake
from attnlib.checks._implementations import ATTENTION, ATTENTION_MODULES
from attnlib.checks._slips import EPSILONS, with_epsilons

Tensor = torch.Tensor
Pair = tuple[Tensor, Tensor]

# Masked attention itself, or a layer that contains it, does the whole exercise.
ATTENTION_IMPLEMENTATIONS = ATTENTION | ATTENTION_MODULES


def _smallest(scores: Tensor) -> float:
    return torch.finfo(scores.dtype).min


def _minus_1e9_in_dtype(scores: Tensor) -> float:
    """−1e9 as the scores' dtype holds it: −inf in float16 (as torch.where makes it)."""
    return float(torch.tensor(-1e9, dtype=scores.dtype))


def _last_two_swapped(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def _reversed_dims(t: Tensor) -> Tensor:
    """What ``t.T`` gives (every dimension reversed), without its deprecation warning."""
    return t.permute(*range(t.dim() - 1, -1, -1))


def _weights_times_float_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(q.dtype).min), dim=-1)
    weights = weights * mask.float()  # float32 from here on, whatever q's dtype
    return weights @ v, weights


def _attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor,
    *,
    fill: Callable[[Tensor], float] | None = _smallest,
    zero_after: bool = True,
    inverted: bool = False,
    divide_by: Callable[[Tensor, Tensor, Tensor], float] = lambda q, k, v: math.sqrt(q.shape[-1]),
    flip: Callable[[Tensor], Tensor] = _last_two_swapped,
    dim: int = -1,
) -> Pair:
    """Masked attention with one knob turned."""
    blocked = mask if inverted else ~mask
    scores = q @ flip(k) / divide_by(q, k, v)
    if fill is not None:
        scores = scores.masked_fill(blocked, fill(scores))
    weights = torch.softmax(scores, dim=dim)
    if zero_after:
        weights = weights.masked_fill(blocked, 0.0)
    return weights @ v, weights


def _mask_lifted_twice(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
    return _attend(q, k, v, mask.unsqueeze(0).unsqueeze(0))  # as if it were (T_q, T_k)


def _zeroed_only_in_the_weights_returned(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, _smallest(scores)), dim=-1)
    return weights @ v, weights.masked_fill(~mask, 0.0)


def _added_the_mask(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + mask, dim=-1)
    return weights @ v, weights


def _added_minus_1e9(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + (~mask) * -1e9
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights  # float16 scores became float32: raises


def _total_plus(eps: float):
    def answer(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        powers = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
        weights = powers / (powers.sum(dim=-1, keepdim=True) + eps)
        return weights @ v, weights

    return answer


MISTAKES = (
    Mistake(
        "added an epsilon to each row's total that float16 rounds to 0, so a row that may "
        "attend to nothing is still 0 / 0 there",
        "float16's smallest number above 0 is about 6e-8: an epsilon of 1e-8 or less becomes 0 "
        "in a float16 sum, and the empty row divides 0 by 0 after all. The row with no allowed "
        "key needs its 0 set where it is empty, not a number added to every total.",
        _total_plus(1e-9),
    ),
    *with_epsilons(
        "added a small number (an epsilon) to each row's total, so its weights add up to less "
        "than 1",
        "a row with an allowed key has a total of at least 1 once its largest score is "
        "subtracted, and needs no guard: an epsilon there takes a share from every weight. Only "
        "a row that may attend to nothing needs its 0 set.",
        _total_plus,
        EPSILONS[:5],  # 1e-6 and less: within the tolerance
    ),
    Mistake(
        "blocked the pairs where the mask is True (True = blocked)",
        "in this course, as in F.scaled_dot_product_attention, True means 'may attend': the "
        "scores to hide are those where the mask is False.",
        lambda q, k, v, mask: _attend(q, k, v, mask, inverted=True),
    ),
    Mistake(
        "let a row that may attend to nothing divide 0 by 0 (a −inf fill, or dividing by the "
        "row's sum after zeroing)",
        "a row whose scores are all −inf has the maximum −inf, and −inf − (−inf) is NaN; a row "
        "whose weights were all zeroed sums to 0. Either way the row is NaN, and NaN spreads to "
        "the loss and to every gradient.",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=lambda s: -math.inf, zero_after=False),
    ),
    Mistake(
        "filled the blocked scores but never set the blocked weights to 0",
        "a row whose scores are all blocked holds equal scores, and softmax makes them uniform: "
        "the output is the average of values the row may not see, not 0.",
        lambda q, k, v, mask: _attend(q, k, v, mask, zero_after=False),
    ),
    Mistake(
        "filled the blocked scores with −1e9 and never set the blocked weights to 0",
        "a row with every key blocked comes out uniform, an average of values it may not see; "
        "and float16 cannot hold −1e9 at all (it ends at −65504).",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=lambda s: -1e9, zero_after=False),
    ),
    Mistake(
        "filled the blocked scores with −1e9 (−inf in float16) and never set the blocked weights "
        "to 0",
        "in float16 −1e9 becomes −inf, so a row with every key blocked is NaN there, and in "
        "float32 it is uniform, an average of values the row may not see.",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=_minus_1e9_in_dtype, zero_after=False),
    ),
    Mistake(
        "broke float16: a fill it cannot hold (−1e9, float32's smallest value) or float32 mixed "
        "into its scores",
        "float16 ends at −65504, so such a fill overflows and masked_fill refuses it; and float32 "
        "mixed into float16 scores (a float32 fill or mask.float()) makes float32 weights, which "
        "no longer match v. The dtype's own smallest value, and the bool mask itself, fit every "
        "dtype.",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=lambda s: -1e9),
        variants=(_weights_times_float_mask,),  # float32 mixed in: another float16 error
    ),
    Mistake(
        "added −1e9 to the blocked scores and never set the blocked weights to 0",
        "adding the same number to every score of a fully blocked row changes nothing after the "
        "softmax, so that row reads the values it may not see; and in float16 the float32 −1e9 "
        "turns the scores into float32, which v no longer matches.",
        _added_minus_1e9,
    ),
    Mistake(
        "only set the blocked weights to 0 after the softmax, without masking the scores first",
        "the softmax has then shared the weight among all the keys, blocked ones included: once "
        "their share is removed, the row no longer sums to 1.",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=None),
    ),
    Mistake(
        "added the bool mask to the scores, as 1 where allowed and 0 where blocked",
        "adding a number only moves a score: 1 more for an allowed key is a nudge, and a blocked "
        "key keeps a real weight. A blocked score must become so negative that its weight is "
        "exactly 0.",
        _added_the_mask,
    ),
    Mistake(
        "set the blocked scores to 0 (or multiplied the scores by the mask)",
        "a score of 0 is an ordinary score: e^0 = 1 gives a blocked key a real weight. A blocked "
        "score must become so negative that its weight is exactly 0.",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=lambda s: 0.0),
    ),
    Mistake(
        "set the blocked scores to 0 (or multiplied the scores by the mask)",
        "a score of 0 is an ordinary score: e^0 = 1 gives a blocked key a real weight, and a row "
        "with every key blocked averages values it may not see. A blocked score must become so "
        "negative that its weight is exactly 0.",
        lambda q, k, v, mask: _attend(q, k, v, mask, fill=lambda s: 0.0, zero_after=False),
    ),
    Mistake(
        "gave the mask two new leading dimensions, as if it were always (T_q, T_k)",
        "the mask may already be (B, 1, 1, T_k) or (B, 1, T_q, T_k), and it broadcasts against "
        "the scores as it is: two more dimensions make the scores and the weights 6-D.",
        _mask_lifted_twice,
    ),
    Mistake(
        "zeroed the blocked weights only in the weights returned, after computing the output",
        "the output must be made from the weights that are returned: a row with nothing to "
        "attend to still reads the average of the values.",
        _zeroed_only_in_the_weights_returned,
    ),
    Mistake(
        "divided the scores by √d_v, the width of v, instead of √d_k",
        "the scores are dot products of queries and keys, whose variance grows with d_k, "
        "their width; v's width plays no part in them.",
        lambda q, k, v, mask: _attend(
            q, k, v, mask, divide_by=lambda q, k, v: math.sqrt(v.shape[-1])
        ),
    ),
    Mistake(
        "did not scale the scores",
        "scaled dot-product attention divides the scores by √d_k (notebook 02), before the mask "
        "and the softmax.",
        lambda q, k, v, mask: _attend(q, k, v, mask, divide_by=lambda q, k, v: 1.0),
    ),
    Mistake(
        "divided the scores by d_k instead of √d_k",
        "the dot products' standard deviation is √d_k: dividing by d_k shrinks them far more and "
        "flattens the weights.",
        lambda q, k, v, mask: _attend(q, k, v, mask, divide_by=lambda q, k, v: q.shape[-1]),
    ),
    Mistake(
        "transposed k with .T, which reverses every dimension of a batched tensor",
        "for (B, H, T, d) keys only the last two dimensions swap: .T also swaps the batch with "
        "the width and the heads with the positions.",
        lambda q, k, v, mask: _attend(q, k, v, mask, flip=_reversed_dims),
    ),
    Mistake(
        "swapped k's first two dimensions, which is its transpose only when k is 2-D",
        "for batched (B, H, T, d) keys that swaps the batch with the heads; the dimensions to swap "
        "are the last two, whatever comes before them.",
        lambda q, k, v, mask: _attend(q, k, v, mask, flip=lambda t: t.transpose(0, 1)),
    ),
    Mistake(
        "swapped k's dimensions 2 and 3, which exist only when k is 4-D",
        "a 2-D k has no dimension 2 or 3: counting from the end, -2 and -1, names the last two "
        "dimensions whatever the number of dimensions.",
        lambda q, k, v, mask: _attend(q, k, v, mask, flip=lambda t: t.transpose(2, 3)),
    ),
    Mistake(
        "took the softmax along dim 1, which is the keys' dimension only for 2-D scores",
        "batched scores are (B, H, T_q, T_k): dim 1 runs over the heads. Each query's weights "
        "run along the last dimension, whatever the number of dimensions.",
        lambda q, k, v, mask: _attend(q, k, v, mask, dim=1),
    ),
    Mistake(
        "took the softmax over the queries (dim −2) instead of over the keys",
        "each query shares one unit of weight among the keys: its row, the last dimension, "
        "sums to 1.",
        lambda q, k, v, mask: _attend(q, k, v, mask, dim=-2),
    ),
    Mistake(
        "returned (weights, out) instead of (out, weights)",
        "every attention function of the course returns the output first and the weights second.",
        lambda q, k, v, mask: _attend(q, k, v, mask)[::-1],
    ),
    Mistake(
        "returned only out, not the pair (out, weights)",
        "every attention function of the course returns the output and the weights, so that "
        "the weights can be looked at and checked.",
        lambda q, k, v, mask: _attend(q, k, v, mask)[0],
    ),
)
