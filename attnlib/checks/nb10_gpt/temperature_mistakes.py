"""Notebook 10, Exercise 4: the usual mistakes in sampling probabilities at a temperature,
each written as a learner would write it (:mod:`.temperature` checks the answer).

Three are named by how an answer behaves on the cases' shapes (:data:`BY_SHAPE`, see
:mod:`.several`): rows that mix in a batch, code for a 2-D batch only, and the caller's logits
divided in place.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Mistake
from attnlib.checks.engine import ByShape

Tensor = torch.Tensor


def _at_zero(z: Tensor) -> Tensor:
    top = (z == z.amax(dim=-1, keepdim=True)).to(z.dtype)
    return top / top.sum(dim=-1, keepdim=True)


def _unshifted(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t)
    return e / e.sum(dim=-1, keepdim=True)


def _shifted_by(shift: Callable[[Tensor], Tensor]) -> Callable[[Tensor, float], Tensor]:
    def probs(z: Tensor, t: float) -> Tensor:
        if t == 0:
            return _at_zero(z)
        s = z / t
        e = torch.exp(s - shift(s))
        return e / e.sum(dim=-1, keepdim=True)

    return probs


def _divided_first(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    s = z / t  # float16 [70, 0] at T = 0.001: [inf, 0]
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _stable(z: Tensor, dim: int = -1) -> Tensor:
    e = torch.exp(z - z.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def _no_keepdim_sum(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t - (z / t).amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1)


def _along_dim_1(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t - (z / t).amax(dim=1, keepdim=True))
    return e / e.sum(dim=1, keepdim=True)


def _global_total(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t - (z / t).amax(dim=-1, keepdim=True))
    return e / e.sum()


def _ties_get_one_each(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return (z == z.amax(dim=-1, keepdim=True)).to(z.dtype)
    return _stable(z / t)


def _divides_by_zero(z: Tensor, t: float) -> Tensor:
    s = z / t  # at t = 0: inf, -inf or NaN, no exception
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _tiny_added(z: Tensor, t: float) -> Tensor:
    s = z / (t + 1e-8)  # never divides by zero
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _no_keepdim_at_all(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t - (z / t).amax(dim=-1))
    return e / e.sum(dim=-1)


def _largest_exp_divided(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t)
    e = e / e.amax(dim=-1, keepdim=True)  # the largest is now 1
    return e / e.sum(dim=-1, keepdim=True)


def _probabilities_powered(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    p = _stable(z)  # the model's own distribution, T = 1
    p = p ** (1 / t)  # sharpened (or flattened) afterwards
    return p / p.sum(dim=-1, keepdim=True)


def _summed_down_the_batch(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    e = torch.exp(z / t - (z / t).amax(dim=-1, keepdim=True))
    return e / e.sum(dim=0, keepdim=True)


def _row_by_row(z: Tensor, t: float) -> Tensor:
    out = torch.zeros_like(z)
    for i in range(z.shape[0]):  # one row of the (B, V) batch at a time
        out[i] = _at_zero(z[i]) if t == 0 else _stable(z[i] / t)
    return out


def _divided_in_place(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return _at_zero(z)
    z -= z.amax(dim=-1, keepdim=True)  # shifted before dividing, as it should be, but in place
    z /= t
    return _stable(z)


# Also named by the check for an answer that gives inf or NaN on the float16 case at
# T = 0.001 alone, whatever its exact numbers there (:mod:`.temperature`).
DIVIDED_FIRST = Mistake(
    "divided by T before subtracting each row's maximum, which overflows float16 at a small T",
    "z / T is computed before the shift can help: float16 holds nothing above 65,504, so logits "
    "[70, 0] at T = 0.001 become [inf, 0], and inf − inf is NaN. Subtracting the maximum first "
    "changes no probability and leaves every (z − max) / T at or below 0, at any temperature.",
    _divided_first,
)
ROWS_MIXED = Mistake(
    "took a total or a maximum across the rows of the batch where each row needs its own",
    "each row is one next-token distribution: alone it comes out right, but in a batch its "
    "probabilities depend on the other rows, and the rows no longer sum to 1 each.",
    _summed_down_the_batch,
)
TWO_D_ONLY = Mistake(
    "assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    "the logits may have any shape (..., V), a single row (V,) or a (B, T, V) tensor: only the "
    "last dimension is the vocabulary, whatever comes before it.",
    _row_by_row,
)
IN_PLACE = Mistake(
    "divided the caller's logits by the temperature in place (logits /= T)",
    "the logits are not yours to change: the caller still holds them (to show the model's own "
    "distribution, or to sample again at another temperature) and finds them divided.",
    _divided_in_place,
)
BY_SHAPE = ByShape(rows_mixed=ROWS_MIXED, two_d_only=TWO_D_ONLY, in_place=IN_PLACE)

MISTAKES = (
    Mistake(
        "exponentiated z / T without first subtracting each row's largest value",
        "exp overflows to inf once an exponent passes about 88.7 in float32 (709 in float64, "
        "11.1 in float16): logits in the thousands, or ordinary logits divided by a small "
        "temperature, give inf / inf = NaN. Shifting a row changes none of its probabilities.",
        _unshifted,
    ),
    Mistake(
        "divided the exponentials by their largest instead of subtracting the largest value "
        "before exponentiating",
        "by then exp has already overflowed to inf (or underflowed to 0), and inf / inf is NaN: "
        "the shift works only in the exponent, before exp.",
        _largest_exp_divided,
    ),
    DIVIDED_FIRST,
    Mistake(
        "raised the probabilities at T = 1 to the power 1/T instead of dividing the logits by T",
        "the two are equal on paper, but the probabilities come first: at a small temperature "
        "p^(1/T) underflows to 0 for every token, the likeliest included (0.8^1000 is about "
        "1e-97, far below what float32 holds), and 0 / 0 is NaN. In the exponent, shifted, the "
        "largest term stays e^0 = 1.",
        _probabilities_powered,
    ),
    Mistake(
        "shifted every row by the largest value of the whole batch",
        "a row far below the batch's largest value then has exponents of −1000 and more: they "
        "underflow to 0 and its total is 0. Each row needs its own shift.",
        _shifted_by(lambda s: s.amax()),
    ),
    Mistake(
        "shifted each row by its smallest value instead of its largest",
        "after that shift every exponent is at least 0 and the largest is as large as the "
        "row's spread, so rows whose logits lie far apart still overflow.",
        _shifted_by(lambda s: s.amin(dim=-1, keepdim=True)),
    ),
    Mistake(
        "took each row's largest value and its sum, both without keeping their dimension",
        "the maxima and the totals have one dimension fewer than the logits and broadcast along "
        "the wrong dimension: a square batch is computed column by column, any other fails.",
        _no_keepdim_at_all,
    ),
    Mistake(
        "took each row's largest value without keeping its dimension",
        "the maxima have one dimension fewer than the logits and broadcast along the wrong "
        "dimension: a square batch is shifted column by column, any other batch fails.",
        _shifted_by(lambda s: s.amax(dim=-1)),
    ),
    Mistake(
        "summed each row without keeping its dimension",
        "the totals have shape (B,) instead of (B, 1) and broadcast along the columns: a "
        "square batch divides column j by row j's total, any other batch fails.",
        _no_keepdim_sum,
    ),
    Mistake(
        "divided by the total of the whole tensor, not by each row's own total",
        "with a batch, every row is divided by the sum over all rows, so no row sums to 1.",
        _global_total,
    ),
    Mistake(
        "normalised along dim 0, down the batch, instead of along each row",
        "a row is one position's logits over the vocabulary, the last dimension: the shift and "
        "the total are taken along it.",
        lambda z, t: _at_zero(z) if t == 0 else _stable(z / t, dim=0),
    ),
    Mistake(
        "worked along dim 1, which is the vocabulary only for a 2-D input",
        "the distribution runs along the last dimension, whatever the number of dimensions: "
        "dim 1 is wrong for a (B, T, V) input and does not exist for a single row.",
        _along_dim_1,
    ),
    Mistake(
        "multiplied the logits by the temperature instead of dividing them",
        "z · T sharpens the distribution when T > 1 and flattens it when T < 1: the opposite "
        "of what a temperature does.",
        lambda z, t: _at_zero(z) if t == 0 else _stable(z * t),
    ),
    Mistake(
        "divided the probabilities by the temperature instead of the logits",
        "softmax(z) / T is not a distribution: its rows sum to 1 / T. The temperature acts "
        "inside the exponential.",
        lambda z, t: _at_zero(z) if t == 0 else _stable(z) / t,
    ),
    Mistake(
        "divided by the temperature at T = 0 too",
        "z / 0 is inf, −inf or NaN: the probabilities come out NaN. T = 0 is the limit of "
        "softmax(z / T) as T shrinks, which needs no division.",
        _divides_by_zero,
    ),
    Mistake(
        "divided by T plus a tiny number (such as 1e-8) instead of taking the limit at T = 0",
        "at T = 0 that multiplies the logits by 10^8: float16 holds nothing above 65504, so they "
        "overflow to inf, and inf − inf is NaN. The limit at T = 0 needs no division at all.",
        _tiny_added,
    ),
    Mistake(
        "treated T = 0 as T = 1",
        "T = 0 is the coldest temperature, the limit as T shrinks: all the mass on the largest "
        "logits. T = 1 is the model's own distribution.",
        lambda z, t: _stable(z / (t or 1.0)),
    ),
    Mistake(
        "at T = 0, put all the mass on the first of the tied largest logits",
        "as T → 0 the logits that tie for the largest stay equal to one another, so the limit "
        "of softmax(z / T) shares the mass equally among them (greedy decoding then picks "
        "one, but that is a choice, not the limit).",
        lambda z, t: F.one_hot(z.argmax(-1), z.shape[-1]).to(z.dtype) if t == 0 else _stable(z / t),
    ),
    Mistake(
        "at T = 0, gave each of the tied largest logits a probability of 1",
        "the probabilities of a row add up to 1 at every temperature: the logits that tie for "
        "the largest share the mass, 1/m each for m of them.",
        _ties_get_one_each,
    ),
    Mistake(
        "returned the index of the largest logit at T = 0, not probabilities",
        "the function returns a distribution over the vocabulary at every temperature, shape "
        "(..., V); at T = 0 it is the limit of softmax(z / T).",
        lambda z, t: z.argmax(dim=-1) if t == 0 else _stable(z / t),
    ),
    ROWS_MIXED,
    TWO_D_ONLY,
    IN_PLACE,
)
