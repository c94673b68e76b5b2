"""Notebook 01, Exercise 2: cosine similarity along the last dimension, 0 (not NaN) for a zero
vector.

The cases show each mistake: vectors of the same direction and different lengths (a division
by one length, or by the squared lengths, is not 1), opposite vectors (an absolute value is not
−1), stacks and a square stack (lengths or sums over the wrong dimension), a stack against one
vector and a batch. Zero vectors come in cases of their own, checked once the formula is right:
a mistake of the formula is then named whether the answer handles zero vectors or not.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, passed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64, vec
from attnlib.checks.nb00_pytorch._errors import check_by_message

Tensor = torch.Tensor

COSINE = register(
    Exercise(
        id="ex2_cosine",
        notebook="01",
        number=2,
        name="cosine",
        hints=(
            "The cosine is the dot product with both lengths divided out (section 5): making "
            "either vector longer must not change it. Every vector of a stack has its own "
            "length. A zero vector has no direction at all: decide what to return for it "
            "before you divide.",
            "Per pair of vectors you need three numbers: the dot product and the two lengths, "
            "each a sum or a norm along the last dimension only. Where the product of the two "
            "lengths is 0 the division gives 0 / 0, NaN: the result there must be 0.",
            "The length of each vector is the square root of its dot product with itself (a norm "
            "along dim=-1). Divide the dot products by the product of the lengths, and keep that "
            "product away from 0: replace it where it is 0, clamp it to a tiny minimum, or pick "
            "0 with torch.where where it is 0.",
        ),
    )
)

# Cosine similarity is what this exercise writes: attnlib's and torch's are refused.
COSINES = Forbidden(
    python={
        attnlib.cosine_similarity: "attnlib.cosine_similarity",
        nn.CosineSimilarity: "nn.CosineSimilarity",
    },
    torch={"cosine_similarity": "torch's cosine_similarity"},
)


def _dot(a: Tensor, b: Tensor) -> Tensor:
    return (a * b).sum(dim=-1)


def _lengths(a: Tensor, b: Tensor) -> Tensor:
    return a.norm(dim=-1) * b.norm(dim=-1)


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


def reference(a: Tensor, b: Tensor) -> Tensor:
    """attnlib's cosine similarity in float64 (0 for a zero vector)."""
    return attnlib.cosine_similarity(a.double(), b.double())


def _formula_cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        ("same direction, different lengths: [1, 2, 2] and [2, 4, 4]", vec(1, 2, 2), vec(2, 4, 4)),
        ("opposite directions: [3, 0] and [-1, 0]", vec(3, 0), vec(-1, 0)),
        ("orthogonal: [1, 1] and [1, -1]", vec(1, 1), vec(1, -1)),
        ("short vectors: [0.1, 0] and [0.3, 0.4]", vec(0.1, 0), vec(0.3, 0.4)),
        ("a stack of 4 pairs, (4, 6)", randn64(4, 6, generator=g), randn64(4, 6, generator=g)),
        (
            "a square stack of 3 pairs, (3, 3)",
            randn64(3, 3, generator=g),
            randn64(3, 3, generator=g),
        ),
        (
            "3 vectors against one, (3, 5) and (5,)",
            randn64(3, 5, generator=g) * 3,
            randn64(5, generator=g),
        ),
        (
            "a (2, 3, 4) batch against a (3, 4) stack",
            randn64(2, 3, 4, generator=g),
            randn64(3, 4, generator=g),
        ),
    ]
    return [Case(d, (a, b), reference(a, b)) for d, a, b in specs]


def _zero_cases() -> list[Case]:
    g = fixed_generator()
    with_zero_row = randn64(3, 4, generator=g)
    with_zero_row[1] = 0
    specs = [
        ("a zero vector: [0, 0, 0] and [1, 2, 3]", vec(0, 0, 0), vec(1, 2, 3)),
        ("[1, 2] and a zero vector [0, 0]", vec(1, 2), vec(0, 0)),
        ("a stack whose row 1 is zero, (3, 4)", with_zero_row, randn64(3, 4, generator=g)),
    ]
    return [Case(d, (a, b), reference(a, b)) for d, a, b in specs]


@checker_of(COSINE, MISTAKES)
def check_cosine(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``cosine(a, b)``: a·b / (‖a‖‖b‖) along the last dimension, 0 for a zero vector."""
    # The formula first, on vectors that are not zero, so that a wrong formula is named whether
    # or not the answer also handles zero vectors; then the zero vectors.
    # An `if` fails on any stack, a floor at 1 on any short vectors: both show before zeros do.
    shown_by_stacks = (*FORMULA_MISTAKES, ZERO_MISTAKES[1], ZERO_MISTAKES[2])
    formula, zeros = _formula_cases(), _zero_cases()
    for cases, mistakes in ((formula, shown_by_stacks), (zeros, ZERO_MISTAKES)):
        result = check_by_message(
            COSINE, fn, cases, mistakes, forbidden=COSINES, atol=1e-6, rtol=1e-5
        )
        if not result.passed:
            return result
    return passed(COSINE, fn, f"all {len(formula) + len(zeros)} cases")
