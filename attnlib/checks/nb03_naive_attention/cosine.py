"""Notebook 03, Exercise 2: self-attention scored by cosines, so that length no longer decides.

``cosine_self_attention(x, tau)``: weights = softmax over each row of cos(x_i, x_j) / τ, and
out = weights @ x, the original vectors. The cases show each mistake: vectors of very
different lengths (dot products, the mix of the normalised vectors), T ≠ C (a length taken
without ``keepdim`` or along the wrong dimension fails instead of running), a square input
(where it runs and is wrong), batches of 3 and 4 dimensions (``x.T``), two temperatures (τ
left out or multiplied), a single vector and short vectors (an epsilon added to the lengths).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks._slips import with_epsilons
from attnlib.checks.engine import check_function
from attnlib.checks.nb03_naive_attention._common import out_is_weights_applied_to_x

Tensor = torch.Tensor

COSINE = register(
    Exercise(
        id="ex2_cosine_self_attention",
        notebook="03",
        number=2,
        name="cosine_self_attention",
        hints=(
            "Section 4: a vector's score with itself is its squared length, and that is what "
            "saturates the softmax. The cosine of notebook 01 compares directions only: scale "
            "each vector to length 1 before the scores, and mix the vectors as they were.",
            "Each vector (a row of x, along the last dimension) gets its own length, one number "
            "per vector, kept in a shape that lines up with its row. The table of cosines is "
            "then the score table of section 2 for the unit vectors; divide it by τ before the "
            "softmax, row by row.",
            "Divide x by its lengths along dim -1 with the size-1 dimension kept, (..., T, 1). "
            "Multiply those unit vectors by their own transpose of the last two dimensions, "
            "divide by tau, take the softmax along the last dimension, and apply the weights "
            "to the original x, not to the unit vectors.",
        ),
    )
)


def _attend(scores: Tensor, values: Tensor, dim: int = -1) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(scores, dim=dim)
    return weights @ values, weights


def _unit(x: Tensor) -> Tensor:
    return x / x.norm(dim=-1, keepdim=True)


def _t(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _cosines_with_epsilon(x: Tensor, eps: float, where: str) -> Tensor:
    norms = x.norm(dim=-1, keepdim=True)  # (..., T, 1)
    if where == "each":
        unit = x / (norms + eps)
        return unit @ _t(unit)
    if where == "root":
        unit = x / torch.sqrt((x * x).sum(dim=-1, keepdim=True) + eps)
        return unit @ _t(unit)
    return (x @ _t(x)) / (norms * _t(norms) + eps)


EPSILONS_ADDED = tuple(
    mistake
    for where in ("each", "product", "root")
    for mistake in with_epsilons(
        "added a small number (an epsilon) to the lengths, which changes every cosine",
        "the task promises no zero vectors, so nothing needs guarding: an epsilon shrinks "
        "every cosine, a short vector's most (one of length 0.001 loses a thousandth of it to "
        "an epsilon of 1e-6), and the weights move with the scores.",
        lambda eps, w=where: lambda x, tau: _attend(_cosines_with_epsilon(x, eps, w) / tau, x),
    )
)


def _reversed_t(x: Tensor) -> Tensor:
    return x.permute(*range(x.dim() - 1, -1, -1))  # what x.T does, without its warning


MISTAKES = (
    Mistake(
        "mixed the vectors scaled to length 1 instead of the original vectors",
        "the cosines only decide the weights; what gets mixed are the vectors of x as they "
        "are, so out keeps their lengths.",
        lambda x, tau: _attend(_unit(x) @ _t(_unit(x)) / tau, _unit(x)),
    ),
    Mistake(
        "scaled each coordinate across the vectors (along dim -2) instead of each vector",
        "a vector is a row of x, along the last dimension: its length is taken over its own "
        "C coordinates, not over the T values of one coordinate.",
        lambda x, tau: (lambda u: _attend(u @ _t(u) / tau, x))(x / x.norm(dim=-2, keepdim=True)),
    ),
    Mistake(
        "scaled along dim 0, which for a batch runs across the sequences",
        "a vector is a row of x, along the last dimension: dim 0 is the first dimension, the "
        "batch when there is one, and the coordinates' dimension only by chance.",
        lambda x, tau: (lambda u: _attend(u @ _t(u) / tau, x))(x / x.norm(dim=0, keepdim=True)),
    ),
    Mistake(
        "scaled along dim 1, which is each vector's own dimension only for a 2-D input",
        "for a batch (B, T, C) dim 1 runs along T, and in a (B, H, T, C) batch along H: a "
        "vector's coordinates are always the last dimension.",
        lambda x, tau: (lambda u: _attend(u @ _t(u) / tau, x))(x / x.norm(dim=1, keepdim=True)),
    ),
    Mistake(
        "took each vector's length without keeping its dimension",
        "the lengths have shape (..., T) instead of (..., T, 1) and broadcast along the "
        "coordinates: a square input divides coordinate j by vector j's length, any other "
        "shape fails.",
        lambda x, tau: (lambda u: _attend(u @ _t(u) / tau, x))(x / x.norm(dim=-1)),
    ),
    Mistake(
        "divided x by the length of the whole tensor, not by each vector's own length",
        "one number for everything keeps the differences in length between vectors, which "
        "is what the cosine should remove.",
        lambda x, tau: (lambda u: _attend(u @ _t(u) / tau, x))(x / x.norm()),
    ),
    Mistake(
        "multiplied the cosines by τ instead of dividing by it",
        "τ is a temperature: a small τ should sharpen the weights, so the scores are divided "
        "by it.",
        lambda x, tau: _attend(_unit(x) @ _t(_unit(x)) * tau, x),
    ),
    Mistake(
        "divided the weights by τ after the softmax instead of the cosines before it",
        "τ shapes the distribution: it divides the scores that go into the softmax; dividing "
        "the weights afterwards leaves rows that no longer sum to 1.",
        lambda x, tau: (lambda o, w: (o / tau, w / tau))(*_attend(_unit(x) @ _t(_unit(x)), x)),
    ),
    Mistake(
        "left out the temperature τ",
        "cosines lie between -1 and 1, too close together for a peaked softmax: τ sets how "
        "sharp the weights are.",
        lambda x, tau: _attend(_unit(x) @ _t(_unit(x)), x),
    ),
    Mistake(
        "scored with plain dot products divided by τ, without scaling the vectors to length 1",
        "a dot product still grows with the lengths, so the longest vectors still win: the "
        "cosine divides each dot product by both lengths.",
        lambda x, tau: _attend(x @ _t(x) / tau, x),
    ),
    Mistake(
        "scaled only one side of the product to length 1",
        "cos(x_i, x_j) divides x_i·x_j by both lengths; dividing by one leaves the other "
        "vector's length in every score.",
        lambda x, tau: _attend(_unit(x) @ _t(x) / tau, x),
    ),
    Mistake(
        "divided row i of the dot products by ‖x_i‖² instead of by ‖x_i‖·‖x_j‖",
        "cos(x_i, x_j) divides x_i·x_j by the lengths of both vectors; the product of a "
        "column of lengths with itself is still one number per row, the square of x_i's "
        "length, and x_j's length stays in every score.",
        lambda x, tau: (lambda n: _attend(x @ _t(x) / (n * n) / tau, x))(
            x.norm(dim=-1, keepdim=True)
        ),
    ),
    Mistake(
        "divided each vector by its squared length",
        "the squared length over-corrects: the scores become x_i·x_j / (|x_i|²|x_j|²), which "
        "favours the shortest vectors instead of ignoring length.",
        lambda x, tau: (lambda u: _attend(u @ _t(u) / tau, x))(
            x / (x.norm(dim=-1, keepdim=True) ** 2)
        ),
    ),
    Mistake(
        "took the softmax along the columns (dim -2), not along each row",
        "row i holds the scores of output i, and its weights must sum to 1: the softmax runs "
        "along the last dimension.",
        lambda x, tau: _attend(_unit(x) @ _t(_unit(x)) / tau, x, dim=-2),
    ),
    Mistake(
        "divided by √C as well as by τ",
        "the cosine is already between -1 and 1 whatever the width: τ alone sets the scale here.",
        lambda x, tau: _attend(_unit(x) @ _t(_unit(x)) / tau / math.sqrt(x.shape[-1]), x),
    ),
    Mistake(
        "returned the pair the wrong way round, (weights, out)",
        "the task asks for (out, weights): the output first, shape (..., T, C), then the "
        "weights, shape (..., T, T).",
        lambda x, tau: _attend(_unit(x) @ _t(_unit(x)) / tau, x)[::-1],
    ),
    *EPSILONS_ADDED,
    Mistake(
        "transposed with x.T, which reverses every dimension of a batch (B, T, C)",
        "for a batch only the last two dimensions swap: x.T turns (B, T, C) into (C, T, B).",
        lambda x, tau: _attend(_unit(x) @ _reversed_t(_unit(x)) / tau, x),
    ),
)


def _reference(x: Tensor, tau: float) -> tuple[Tensor, Tensor]:
    x = x.double()
    unit = x / x.norm(dim=-1, keepdim=True)
    weights = torch.softmax(unit @ unit.transpose(-2, -1) / tau, dim=-1)
    return weights @ x, weights


def _cases() -> list[Case]:
    g = fixed_generator()
    example = torch.tensor([[1.0, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]])  # section 2's X
    lengths = torch.randn(3, 5, generator=g) * torch.tensor([[0.2], [1.0], [8.0]])
    same_direction = torch.tensor([[1.0, 2, 2], [3, 6, 6], [0, 1, -1], [2, 0, 1]])
    specs = [
        ("the 3×4 example of section 2, τ = 1", example, 1.0),
        ("3 vectors of width 5 and lengths about 0.4, 2 and 18, τ = 0.1", lengths, 0.1),
        ("two vectors with the same direction, (4, 3), τ = 0.5", same_direction, 0.5),
        ("a square (4, 4) input, τ = 0.5", torch.randn(4, 4, generator=g), 0.5),
        ("a batch of 2 sequences, (2, 4, 3), τ = 0.2", torch.randn(2, 4, 3, generator=g), 0.2),
        ("a (2, 3, 5, 6) batch, τ = 0.3", torch.randn(2, 3, 5, 6, generator=g), 0.3),
        ("a single vector, (1, 4), τ = 0.5", torch.randn(1, 4, generator=g), 0.5),
        (
            "4 short vectors, lengths about 0.002, (4, 3), τ = 0.05",
            torch.randn(4, 3, generator=g, dtype=torch.float64) * 1e-3,
            0.05,
        ),
    ]
    return [Case(name, (x, tau), _reference(x, tau)) for name, x, tau in specs]


@checker_of(COSINE, MISTAKES)
def check_cosine_self_attention(
    fn: Callable[[Tensor, float], tuple[Tensor, Tensor]],
) -> CheckResult:
    """Check ``cosine_self_attention(x, tau) -> (out, weights)`` for ``x`` ``(..., T, C)``."""
    return check_function(
        COSINE,
        fn,
        _cases(),
        MISTAKES,
        properties=(rows_sum_to_one(), out_is_weights_applied_to_x()),
    )
