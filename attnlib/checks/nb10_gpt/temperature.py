"""Notebook 10, Exercise 2: sampling probabilities at any temperature T ≥ 0, softmax(z / T).

For T > 0 the softmax is written by hand, so the cases show what a missing shift costs:
scores in the thousands, ordinary logits at T = 0.001 (exponents in the thousands), rows of
very different sizes (one shift for the whole batch), float16 (exp overflows above 11.1).
T = 0 is the limit as T → 0: the mass is shared equally by the logits that tie for the
largest, which the cases with ties show. A square batch shows a missing ``keepdim``, a 1-D and
a 3-D input a fixed ``dim``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.nb10_gpt.distributions import rows_are_distributions
from attnlib.checks.nb10_gpt.several import check_naming_several

Tensor = torch.Tensor

TEMPERATURE = register(
    Exercise(
        id="ex2_my_temperature_probs",
        notebook="10",
        number=2,
        name="my_temperature_probs",
        hints=(
            "Two ideas meet here. A softmax of z / T by hand overflows unless each row is first "
            "shifted so that its largest exponent is 0, which does not change its softmax "
            "(notebook 02). And T = 0 cannot be divided by: ask where softmax(z / T) goes as T "
            "shrinks towards 0.",
            "As T → 0, every logit below its row's largest falls infinitely far behind it, so "
            "its weight goes to 0; the logits equal to the largest keep all the mass between "
            "them, equally. For T > 0 the shift is each row's own largest value of z / T, taken "
            "along the last dimension and kept so that it lines up with its row.",
            "For T = 0: mark in each row the entries equal to the row's largest logit, turn the "
            "marks into numbers and divide each row by how many it has ([3, 1, 3, 2] gives "
            "[0.5, 0, 0.5, 0]). For T > 0: divide by T, subtract each row's maximum (keepdim), "
            "exponentiate and divide by each row's sum (keepdim).",
        ),
    )
)

# An answer may not hand the work to an existing softmax.
SOFTMAX_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.softmax: "attnlib.softmax",
        attnlib.naive_softmax: "attnlib.naive_softmax",
        attnlib.next_token_probs: "attnlib.next_token_probs",
    },
    torch={
        "softmax": "torch's softmax",
        "_softmax": "torch's softmax",
        "log_softmax": "torch's log_softmax",
        "logsumexp": "torch.logsumexp",
    },
)


def reference(z: Tensor, temperature: float) -> Tensor:
    """softmax(z / T) in float64, and its limit (ties share equally) at T = 0."""
    z = z.double()
    if temperature == 0:
        top = (z == z.amax(dim=-1, keepdim=True)).double()
        return top / top.sum(dim=-1, keepdim=True)
    e = torch.exp(z / temperature - (z / temperature).amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


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


MISTAKES = (
    Mistake(
        "exponentiated z / T without first subtracting each row's largest value",
        "exp overflows to inf once an exponent passes about 88.7 in float32 (709 in float64, "
        "11.1 in float16): logits in the thousands, or ordinary logits divided by a small "
        "temperature, give inf / inf = NaN. Shifting a row changes none of its probabilities.",
        _unshifted,
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
)


def _f32(*rows: object) -> Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def _cases() -> list[Case]:
    g = fixed_generator()
    batch, square = torch.randn(2, 5, generator=g) * 3, torch.randn(4, 4, generator=g) * 3
    cube = torch.randn(2, 3, 6, generator=g) * 3
    mixed = _f32([1000, 1001, 1002], [0, 1, 2], [-1000, -998, -999])
    ties = _f32([3, 1, 3, 2], [0, 5, 1, 5], [7, 7, 7, -1])
    tied_cube = torch.tensor([[[1, 4, 4], [2, 0, 1]], [[0, 0, 0], [9, 3, 9]]], dtype=torch.float32)
    half = torch.tensor([10.0, 11.0, 12.0], dtype=torch.float16)
    specs: list[tuple[str, Tensor, float]] = [
        ("one row [1, 2, 3, 0] at T = 1", _f32(1, 2, 3, 0), 1.0),
        ("a (2, 5) batch at T = 0.5", batch, 0.5),
        ("a (2, 5) batch at T = 2", batch, 2.0),
        ("a square (4, 4) batch at T = 0.7", square, 0.7),
        ("a (2, 3, 6) tensor at T = 1.5", cube, 1.5),
        ("logits [1000, 1001, 1002] at T = 1", _f32(1000, 1001, 1002), 1.0),
        ("ordinary logits [2, 5, 3.5] at T = 0.001", _f32(2, 5, 3.5), 0.001),
        ("3 rows of very different sizes at T = 1", mixed, 1.0),
        ("one row [1, 3, 2, 0] at T = 0", _f32(1, 3, 2, 0), 0.0),
        ("3 rows with tied largest logits at T = 0", ties, 0.0),
        ("a (2, 2, 3) tensor with ties at T = 0", tied_cube, 0.0),
    ]
    checked = [Case(name, (z, t), reference(z, t)) for name, z, t in specs]
    float16 = Case("float16 logits [10, 11, 12] at T = 1", (half, 1.0), reference(half, 1.0))
    return [*checked, Case(float16.description, float16.args, float16.expected, 2e-3, 2e-3)]


@checker_of(TEMPERATURE, MISTAKES)
def check_my_temperature_probs(fn: Callable[[Tensor, float], Tensor]) -> CheckResult:
    """Check ``my_temperature_probs(logits, temperature)``: softmax(logits / T) along the last
    dimension for T > 0, its limit (the largest logits share the mass) at T = 0.

    Shapes:
        logits: ``(..., V)``; returns ``(..., V)``.
    """
    return check_naming_several(
        TEMPERATURE,
        fn,
        _cases(),
        MISTAKES,
        forbidden=SOFTMAX_IMPLEMENTATIONS,
        properties=(rows_are_distributions(),),
    )
