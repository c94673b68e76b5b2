"""Notebook 01, Exercise 2: cosine similarity along the last dimension, 0 (not NaN) for a zero
vector.

The cases show each mistake: vectors of the same direction and different lengths (a division
by one length, or by the squared lengths, is not 1), opposite vectors (an absolute value is not
−1), short vectors (a floor at 1 on the lengths changes their cosine), stacks and a square stack
(lengths or sums over the wrong dimension), a stack against one vector and a batch. Zero vectors
come in cases of their own, checked once the formula is right: a mistake of the formula is then
named whether the answer handles zero vectors or not.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._exercise import Exercise, checker_of, passed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64, vec
from attnlib.checks._implementations import COSINE_SIMILARITY
from attnlib.checks.engine import check_function
from attnlib.checks.nb01_dot_products.cosine_mistakes import (
    FORMULA_MISTAKES,
    MISTAKES,
    ZERO_MISTAKES,
)

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

# Cosine similarity is what this exercise writes: attnlib's, torch's and scipy's (and the
# other libraries') are refused.
COSINES = COSINE_SIMILARITY


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
    # An `if` fails on any stack, a floor at 1 on short vectors: both show before zeros do.
    shown_by_stacks = (*FORMULA_MISTAKES, *ZERO_MISTAKES[1:4])
    formula, zeros = _formula_cases(), _zero_cases()
    for cases, mistakes in ((formula, shown_by_stacks), (zeros, ZERO_MISTAKES)):
        result = check_function(
            COSINE, fn, cases, mistakes, forbidden=COSINES, atol=1e-6, rtol=1e-5, dtypes=()
        )
        if not result.passed:
            return result
    return passed(COSINE, fn, f"all {len(formula) + len(zeros)} cases")
