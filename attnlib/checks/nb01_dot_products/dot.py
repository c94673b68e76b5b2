"""Notebook 01, Exercise 1: the dot product along the last dimension, for single vectors, stacks
of them and shapes that broadcast.

The cases show each mistake: a pair of single vectors (a sum without a dimension, a matrix
product and ``dim=0`` are all right there), stacks of pairs (they are not), a square stack (a
sum along dim 0 keeps the right shape), a stack against one vector (a matrix product is right
there) and a 3-D batch (``dim=1`` is not the last dimension). An answer that passes them must
also leave the tensors it is given as they were.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64, vec
from attnlib.checks._implementations import DOT_PRODUCT as DOT_PRODUCTS  # what it may not call
from attnlib.checks.engine import check_function

Tensor = torch.Tensor

DOT_PRODUCT = register(
    Exercise(
        id="ex1_dot_product",
        notebook="01",
        number=1,
        name="dot_product",
        hints=(
            "A dot product multiplies matching entries and adds the products up (section 1). "
            "With a stack of vectors, each pair must be added up on its own: one number per "
            "pair, not one number for the whole stack.",
            "Multiply the two tensors entry by entry (broadcasting lines a single vector up "
            "with every vector of a stack), then add up along the dimension the entries of one "
            "vector run along, and only that one. Count it from the end, so that the same code "
            "works for (n,), (N, n) and (B, N, n).",
            "The entries of a vector run along the last dimension, dim=-1. A sum along it turns "
            "(..., n) into (...): (3, 5) stacks give 3 numbers, two single vectors give a 0-D "
            "tensor. A matrix product is a dot product only for two single vectors.",
        ),
    )
)


def _table(a: Tensor, b: Tensor) -> Tensor:
    return a @ (b.transpose(-2, -1) if b.dim() > 1 else b)


def _loop_over_len(a: Tensor, b: Tensor) -> Tensor:
    total = 0
    for i in range(len(a)):  # the entries of one vector; the vectors of a stack
        total = total + a[i] * b[i]
    return total


def _loop_over_zip(a: Tensor, b: Tensor) -> Tensor:
    pairs = zip(a, b, strict=False)  # pairs along dim 0: the vectors of a stack only
    return torch.stack([(u * v).sum() for u, v in pairs])


def _diagonal_of_a_times_b_t(a: Tensor, b: Tensor) -> Tensor:
    with warnings.catch_warnings():  # torch warns that .T of a batch is deprecated
        warnings.simplefilter("ignore", UserWarning)
        return (a @ b.T).diagonal()


MISTAKES = (
    Mistake(
        "added up every product of the whole tensors, with no dimension",
        "for stacks of vectors that gives one number for all the pairs together; each pair "
        "needs its own sum, so the sum runs along one dimension only.",
        lambda a, b: (a * b).sum(),
    ),
    Mistake(
        "added up along dim 0 instead of the last dimension",
        "for a stack (N, n), dim 0 runs across the vectors, adding the same entry of every "
        "vector; the entries of one vector run along the last dimension.",
        lambda a, b: (a * b).sum(dim=0),
    ),
    Mistake(
        "added up along dim 1, which is the last dimension only for a stack (N, n)",
        "a single vector has no dim 1 and a (B, N, n) batch has its vectors' entries along dim "
        "2: counted from the end, the last dimension is -1 whatever the shape.",
        lambda a, b: (a * b).sum(dim=1),
    ),
    Mistake(
        "used a matrix product, which is a dot product only for two single vectors",
        "a matrix product multiplies the rows of a by the columns of b: two (N, n) stacks do "
        "not fit together, and a square stack gives an (N, N) table.",
        lambda a, b: a @ b,
    ),
    Mistake(
        "multiplied every vector of a by every vector of b (a table) instead of pairing them",
        "the product of a with b transposed holds every vector of a against every vector of b; "
        "the dot products of the pairs are only its diagonal.",
        _table,
    ),
    Mistake(
        "took the diagonal of the table with torch.diag, which takes one matrix only",
        "for two stacks (N, n) the diagonal of the table holds the pairs' dot products, but "
        "builds N² of them to keep N; for single vectors or a batch (B, N, n) there is no one "
        "matrix to take the diagonal of.",
        lambda a, b: torch.diag(_table(a, b)),
    ),
    Mistake(
        "took the diagonal of a times b transposed, which holds the pairs' dot products only "
        "for two stacks (N, n)",
        "the product of a with b transposed is a table of every vector of a against every "
        "vector of b; its diagonal is the pairs only when both are stacks of N vectors. Two "
        "single vectors give one number with no diagonal, and for a batch the diagonal runs "
        "across the wrong dimensions.",
        _diagonal_of_a_times_b_t,
    ),
    Mistake(
        "kept the summed dimension, so every dot product comes in a list of one",
        "the result has one number per pair of vectors, shape (...): the summed dimension goes "
        "away rather than staying as size 1.",
        lambda a, b: (a * b).sum(dim=-1, keepdim=True),
    ),
    Mistake(
        "turned the result into a Python number",
        "a stack of pairs has one dot product per pair, more numbers than one Python number can "
        "hold: the answer stays a tensor of shape (...).",
        lambda a, b: (a * b).sum(dim=-1).item(),
    ),
    Mistake(
        "wrote an einsum for two stacks (N, n) only",
        "'ij,ij->i' names exactly two dimensions, so single vectors and batches (B, N, n) do not "
        "fit it: an ellipsis stands for any number of leading dimensions.",
        lambda a, b: torch.einsum("ij,ij->i", a, b),
    ),
    Mistake(
        "averaged the products instead of adding them up",
        "the mean divides the dot product by the number of entries n.",
        lambda a, b: (a * b).mean(dim=-1),
    ),
    Mistake(
        "returned the products without adding them up",
        "multiplying entry by entry gives n products per pair: a dot product is one number "
        "per pair of vectors, the sum of those products.",
        lambda a, b: a * b,
    ),
    Mistake(
        "added the entries instead of multiplying them",
        "the dot product multiplies matching entries, a_i·b_i, and adds up the products.",
        lambda a, b: (a + b).sum(dim=-1),
    ),
    Mistake(
        "added up each vector first and multiplied the two sums",
        "(Σ a_i)(Σ b_i) also contains every cross product a_i·b_j; the dot product pairs each "
        "entry only with its match.",
        lambda a, b: a.sum(dim=-1) * b.sum(dim=-1),
    ),
    Mistake(
        "multiplied the lengths of the two vectors",
        "‖a‖‖b‖ is the dot product only when the vectors point the same way: the cosine of the "
        "angle is missing.",
        lambda a, b: a.norm(dim=-1) * b.norm(dim=-1),
    ),
    Mistake(
        "wrote an einsum for two single vectors only",
        "'i,i->' names exactly one dimension, so stacks and batches do not fit it: an ellipsis "
        "stands for any number of leading dimensions.",
        lambda a, b: torch.einsum("i,i->", a, b),
    ),
    Mistake(
        "looped over range(len(a)), which runs along dim 0: the entries only of a single vector",
        "len(a) and a[i] count along the first dimension: for a stack (N, n) that is the N "
        "vectors, so the loop adds up the vectors, not the entries of each one.",
        _loop_over_len,
    ),
    Mistake(
        "looped over zip(a, b), which pairs the vectors only of two stacks (N, n)",
        "zip walks along the first dimension of both tensors: for two single vectors it pairs "
        "their entries, so each result is one product, not a sum; for a stack against one "
        "vector or a batch it pairs the wrong things. The entries of one vector run along the "
        "last dimension.",
        _loop_over_zip,
    ),
    Mistake(
        "multiplied a in place, changing the tensor the caller passed in",
        "an in-place product (mul_, *=) overwrites the caller's a with the products: whoever "
        "still needs a finds it changed, and nothing warns them. The products belong in a new "
        "tensor.",
        lambda a, b: a.mul_(b).sum(dim=-1),
    ),
)
IN_PLACE = MISTAKES[-1]


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        ("[1, 2, 3]·[4, 5, 6]", vec(1, 2, 3), vec(4, 5, 6)),
        ("opposite vectors [1, -2]·[-2, 4]", vec(1, -2), vec(-2, 4)),
        (
            "a stack of 3 pairs, (3, 5) and (3, 5)",
            randn64(3, 5, generator=g),
            randn64(3, 5, generator=g),
        ),
        (
            "a square stack of 3 pairs, (3, 3) and (3, 3)",
            randn64(3, 3, generator=g),
            randn64(3, 3, generator=g),
        ),
        (
            "4 vectors against one, (4, 3) and (3,)",
            randn64(4, 3, generator=g),
            randn64(3, generator=g),
        ),
        (
            "a (2, 3, 4) batch against a (3, 4) stack",
            randn64(2, 3, 4, generator=g),
            randn64(3, 4, generator=g),
        ),
    ]
    return [Case(d, (a, b), (a * b).sum(dim=-1)) for d, a, b in specs]


@checker_of(DOT_PRODUCT, MISTAKES)
def check_dot_product(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``dot_product(a, b)``: Σ a_i b_i along the last dimension of ``(..., n)`` tensors
    that broadcast; returns ``(...)``."""
    result = check_function(
        DOT_PRODUCT,
        fn,
        _cases(),
        MISTAKES,
        forbidden=DOT_PRODUCTS,
        atol=1e-7,
        rtol=1e-6,
        dtypes=(),
    )
    return result
