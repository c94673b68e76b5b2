"""The mistakes of notebook 01's Exercise 2 (cosine similarity), checked by :mod:`.cosine`:
first those of the formula, then those of zero vectors."""

from __future__ import annotations

import torch

from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import EPSILONS, with_epsilons

Tensor = torch.Tensor


def _dot(a: Tensor, b: Tensor) -> Tensor:
    return (a * b).sum(dim=-1)


def _lengths(a: Tensor, b: Tensor) -> Tensor:
    return a.norm(dim=-1) * b.norm(dim=-1)


EPSILON = "added a small number (an epsilon) to the lengths, which changes every cosine a little"
EPSILON_WHY = (
    "the task asks for 0 where a vector is zero and for the cosine itself everywhere else: an "
    "epsilon added to the lengths (to their product, to each, or under the square root) "
    "shrinks every cosine, the short vectors' most. Only an exact 0 may be replaced, or the "
    "product kept from falling below a floor far under any real length."
)


def _with_epsilon(eps: float, where: str):
    def answer(a: Tensor, b: Tensor) -> Tensor:
        if where == "product":
            return _dot(a, b) / (_lengths(a, b) + eps)
        if where == "each":
            return _dot(a, b) / ((a.norm(dim=-1) + eps) * (b.norm(dim=-1) + eps))
        root = torch.sqrt(_dot(a, a) + eps) * torch.sqrt(_dot(b, b) + eps)
        return _dot(a, b) / root

    return answer


EPSILONS_ADDED = tuple(
    mistake
    for where in ("product", "each", "root")
    for mistake in with_epsilons(
        EPSILON,
        EPSILON_WHY,
        lambda eps, w=where: _with_epsilon(eps, w),
        EPSILONS[:-1],  # 1e-7 changes no cosine beyond the tolerance
    )
)


# Mistakes of the formula, shown by vectors that are not zero.
FORMULA_MISTAKES = (
    Mistake(
        "divided by the length of a only",
        "the cosine divides out both lengths: making b longer would still change the result.",
        lambda a, b: _dot(a, b) / a.norm(dim=-1),
    ),
    Mistake(
        "divided by the squared lengths, (a·a)(b·b), without the square root",
        "a length is the square root of a vector's dot product with itself: divided by the "
        "squares, the result still shrinks as the vectors grow.",
        lambda a, b: _dot(a, b) / (_dot(a, a) * _dot(b, b)),
    ),
    Mistake(
        "divided by the sum of the lengths, not their product",
        "a·b = ‖a‖‖b‖cos θ: the lengths multiply, so it is their product that divides out.",
        lambda a, b: _dot(a, b) / (a.norm(dim=-1) + b.norm(dim=-1)),
    ),
    Mistake(
        "took the length of each whole tensor, not of each vector",
        "with no dimension, norm() measures the whole stack as one long vector; every vector "
        "of a stack has its own length.",
        lambda a, b: _dot(a, b) / (a.norm() * b.norm()),
    ),
    Mistake(
        "took the lengths along dim 0, across the vectors of a stack",
        "for a stack (N, n), dim 0 runs across the vectors; one vector's entries run along the "
        "last dimension.",
        lambda a, b: _dot(a, b) / (a.norm(dim=0) * b.norm(dim=0)),
    ),
    Mistake(
        "added up the products of the whole tensors, with no dimension",
        "for stacks that gives one dot product for all the pairs together; each pair needs its "
        "own, along the last dimension.",
        lambda a, b: (a * b).sum() / _lengths(a, b),
    ),
    Mistake(
        "kept the lengths' last dimension (keepdim), so the division broadcasts into a table",
        "the lengths of a stack (N, n) then have shape (N, 1) and the dot products (N,): "
        "broadcasting makes an (N, N) table of every dot product over every length.",
        lambda a, b: _dot(a, b) / (a.norm(dim=-1, keepdim=True) * b.norm(dim=-1, keepdim=True)),
    ),
    Mistake(
        "took the absolute value of the dot product",
        "vectors that point apart have a negative cosine, down to −1 for opposite directions; "
        "the sign is the point.",
        lambda a, b: _dot(a, b).abs() / _lengths(a, b),
    ),
    Mistake(
        "averaged the products instead of adding them up",
        "the mean divides the dot product by the number of entries n.",
        lambda a, b: (a * b).mean(dim=-1) / _lengths(a, b),
    ),
    Mistake(
        "returned the cosine distance, 1 − cos, not the cosine",
        "the similarity is the cosine itself: 1 for the same direction, −1 for opposite ones; "
        "1 − cos is a distance, 0 for the same direction.",
        lambda a, b: 1 - _dot(a, b) / _lengths(a, b),
    ),
    Mistake(
        "returned the dot product without dividing by the lengths",
        "the dot product grows with the lengths; the cosine divides them out and lies between "
        "−1 and 1.",
        _dot,
    ),
    Mistake(
        "divided by the squared length of a, a·a, as a projection divides by b·b",
        "a projection's coefficient divides by one vector's squared length; the cosine divides "
        "by the product of both lengths, ‖a‖‖b‖, so that neither length counts.",
        lambda a, b: _dot(a, b) / _dot(a, a),
    ),
    Mistake(
        "divided by the squared length of b, b·b, as the projection onto b does",
        "(a·b)/(b·b) is how many b's the shadow of a is long; the cosine divides by the product "
        "of both lengths, ‖a‖‖b‖, so that neither length counts.",
        lambda a, b: _dot(a, b) / _dot(b, b),
    ),
    Mistake(
        "divided the vectors by their lengths without keeping the lengths' last dimension",
        "the lengths of a stack (N, n) then have shape (N,), and broadcasting lines them up "
        "with the n entries of each vector, not with the N vectors: it fails, or for a square "
        "stack divides the wrong entries.",
        lambda a, b: _dot(a / a.norm(dim=-1), b / b.norm(dim=-1)),
    ),
    *EPSILONS_ADDED,
)


def _if_zero(a: Tensor, b: Tensor) -> Tensor:
    lengths = _lengths(a, b)
    if lengths == 0:  # one number only for single vectors: a stack raises
        return torch.zeros(())
    return _dot(a, b) / lengths


def _any_zero(a: Tensor, b: Tensor) -> Tensor:
    lengths = _lengths(a, b)
    if bool((lengths == 0).any()):
        return torch.zeros_like(lengths)
    return _dot(a, b) / lengths


def _whole_tensor_zero(a: Tensor, b: Tensor) -> Tensor:
    if a.norm() == 0 or b.norm() == 0:  # the whole tensor, not each vector
        return torch.zeros(())
    return _dot(a, b) / _lengths(a, b)


def _floor_at_one(a: Tensor, b: Tensor) -> Tensor:
    return _dot(a, b) / _lengths(a, b).clamp_min(1.0)


def _each_length_floored_at_one(a: Tensor, b: Tensor) -> Tensor:
    return _dot(a, b) / (a.norm(dim=-1).clamp(min=1.0) * b.norm(dim=-1).clamp(min=1.0))


def _zero_a_only(a: Tensor, b: Tensor) -> Tensor:
    lengths = _lengths(a, b)
    return torch.where(a.norm(dim=-1) == 0, torch.zeros_like(lengths), _dot(a, b) / lengths)


def _zero_b_only(a: Tensor, b: Tensor) -> Tensor:
    lengths = _lengths(a, b)
    return torch.where(b.norm(dim=-1) == 0, torch.zeros_like(lengths), _dot(a, b) / lengths)


ONE_SIDE_ONLY = "handled a zero vector in one of the two tensors only, not in the other"
ONE_SIDE_ONLY_WHY = (
    "either vector of a pair can be zero, and either makes the product of the lengths 0: "
    "checked in a alone (or b alone), a zero vector on the other side still gives 0 / 0, NaN."
)


# Mistakes with zero vectors, shown once the formula is right.
ZERO_MISTAKES = (
    Mistake(
        "did not handle a zero vector: 0 / 0 is NaN",
        "a zero vector has length 0, so the division is 0 / 0, which is NaN; a vector with no "
        "direction is similar to nothing, so the cosine there is 0.",
        lambda a, b: _dot(a, b) / _lengths(a, b),
    ),
    Mistake(
        "handled a zero vector with Python's if (or max), which looks at a whole tensor at once",
        "for a stack, the comparison has one answer per pair and Python's if or max cannot take "
        "several: it raises. Each pair must be handled on its own, entry by entry.",
        _if_zero,
    ),
    Mistake(
        "kept the product of the lengths from falling below 1, not only from reaching 0",
        "short vectors have lengths whose product is below 1, and their cosine must not change: "
        "only an exact 0 (or a floor far below any real length) may be replaced.",
        _floor_at_one,
    ),
    Mistake(
        "kept each length from falling below 1, not only from reaching 0",
        "a vector shorter than 1 still has its own direction, and its cosine must not change: "
        "a floor of 1 on each length divides short vectors by too much. Only an exact 0 (or a "
        "floor far below any real length) may be replaced.",
        _each_length_floored_at_one,
    ),
    Mistake(ONE_SIDE_ONLY, ONE_SIDE_ONLY_WHY, _zero_a_only),
    Mistake(ONE_SIDE_ONLY, ONE_SIDE_ONLY_WHY, _zero_b_only),
    Mistake(
        "gave a pair with a zero vector a cosine of 1 instead of 0",
        "a cosine of 1 says the two vectors point the same way, but a zero vector has no "
        "direction at all: it is similar to nothing, so the cosine there is 0.",
        lambda a, b: torch.where(
            _lengths(a, b) == 0, torch.ones_like(_lengths(a, b)), _dot(a, b) / _lengths(a, b)
        ),
    ),
    Mistake(
        "returned all zeros when any pair of the stack had a zero vector",
        "only the pairs with a zero vector have no cosine; every other pair of the stack keeps "
        "its own.",
        _any_zero,
    ),
    Mistake(
        "checked for a zero vector by the length of the whole tensor, which misses one in a stack",
        "a stack with one zero vector among others has a length above 0 as a whole, so the "
        "check lets 0 / 0 through for that pair: each pair must be handled on its own, entry "
        "by entry.",
        _whole_tensor_zero,
    ),
)
MISTAKES = FORMULA_MISTAKES + ZERO_MISTAKES
