"""Notebook 01, Exercise 3: for every vector of a (..., T, C) stack, the position of the most
similar other vector, by cosine similarity.

It takes the score table of section 10, made of cosines, with the word itself left out. The
cases show each mistake: a stack with one very long vector (the plain dot product picks it for
every row), vectors that all point apart (every cosine is negative, so a 0 put on the diagonal
beats them all), a square stack (the table of the columns has the right shape), batches (dim 0
and ``.T`` are wrong there; in a (3, 3, 3) batch ``.T`` runs, a mask sized by the first
dimension fits and code for one stack takes stacks for vectors), two vectors (only the word
itself is wrong there) and a vector listed twice (the second-best cosine can then be the vector
itself). An answer right on every single stack and wrong on every batch, in a way no entry of the
table matches, is told that it handles one stack only.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, compare_outputs, fixed_generator, randn64
from attnlib.checks._outcomes import call
from attnlib.checks.engine import Property, check_function
from attnlib.checks.nb01_dot_products.cosine import COSINES

Tensor = torch.Tensor

MOST_SIMILAR_OTHER = register(
    Exercise(
        id="ex3_most_similar_other",
        notebook="01",
        number=3,
        name="most_similar_other",
        hints=(
            "Build the score table of section 10 from cosines instead of dot products: entry "
            "[i, j] is cos(x_i, x_j). Row i then ranks every vector for x_i, and x_i itself is "
            "always at the top of it (cosine 1), so it has to be taken out of the running.",
            "Cosines of every pair at once are the dot products of unit vectors: divide every "
            "vector (every row, along the last dimension) by its own length, then one matrix "
            "product, transposing only the last two dimensions. Take each vector itself out with "
            "a score that every real cosine beats, not with 0: cosines can be negative.",
            "Put −∞ (or anything below −1) on the diagonal of the (…, T, T) table, for instance "
            "with masked_fill and a (T, T) bool mask that is True on the diagonal, then take the "
            "argmax along the last dimension. The result holds positions: int64, shape (…, T).",
        ),
    )
)


def _unit(x: Tensor) -> Tensor:
    return x / x.norm(dim=-1, keepdim=True)


def _cosines(x: Tensor) -> Tensor:
    unit = _unit(x)
    return unit @ unit.transpose(-2, -1)  # (..., T, T)


def _diagonal(t: int) -> Tensor:
    return torch.eye(t, dtype=torch.bool)


def _best_other(table: Tensor) -> Tensor:
    return table.masked_fill(_diagonal(table.shape[-1]), -math.inf).argmax(dim=-1)


def _fill_diagonal(table: Tensor) -> Tensor:
    return table.clone().fill_diagonal_(-math.inf).argmax(dim=-1)


def _reversed_transpose(unit: Tensor) -> Tensor:
    return unit @ unit.permute(*reversed(range(unit.dim())))  # what .T does to a batch


def _unshifted(x: Tensor) -> Tensor:
    table = _cosines(x)
    out = torch.zeros(x.shape[:-1], dtype=torch.long)
    for i in range(x.shape[-2]):
        others = torch.cat([table[..., i, :i], table[..., i, i + 1 :]], dim=-1)  # row i without i
        out[..., i] = others.argmax(dim=-1)
    return out


def _eye_of_first_size(x: Tensor) -> Tensor:
    table = _cosines(x)
    itself = torch.eye(x.shape[0], dtype=torch.bool)  # T for one stack, B for a batch
    return table.masked_fill(itself, -math.inf).argmax(dim=-1)


def _rows_of_one_stack(x: Tensor) -> Tensor:
    t = x.shape[0]
    best = []
    for i in range(t):
        top, where = -2.0, -1
        for j in range(t):
            if j != i:
                c = (x[i] @ x[j] / (x[i].norm() * x[j].norm())).item()
                if c > top:
                    top, where = c, j
        best.append(where)
    return torch.tensor(best)


# Named also for any answer right on every single stack and wrong on every batch.
ONE_STACK_ONLY = Mistake(
    "wrote it for one (T, C) stack only, so a batch of stacks comes out wrong",
    "X may be a batch (B, T, C): code that loops over the rows of X, or counts dimensions from "
    "the front, takes a whole stack of a batch for one vector. Counted from the end, the last "
    "dimension holds a vector's entries and the one before it the vectors, whatever the shape.",
    _rows_of_one_stack,
)

MISTAKES = (
    Mistake(
        "returned each vector itself (row i gives i)",
        "a vector's cosine with itself is 1, the largest a cosine can be, so it wins its own "
        "row unless it is taken out first (and if the smallest score is taken instead, the "
        "stand-in that took it out wins).",
        lambda x: _cosines(x).argmax(dim=-1),
    ),
    Mistake(
        "ranked by a score that still grows with the other vector's length (the dot product)",
        "the dot product rewards length, as cat·dog > cat·cat showed: a long vector wins rows it "
        "barely points along. The cosine divides both lengths out.",
        lambda x: _best_other(x @ x.transpose(-2, -1)),
    ),
    Mistake(
        "took the vector itself out by putting 0 on the diagonal",
        "cosines run from −1 to 1: where every other vector points away (all cosines negative), "
        "the 0 on the diagonal is the largest and the vector picks itself.",
        lambda x: _cosines(x).masked_fill(_diagonal(x.shape[-2]), 0.0).argmax(dim=-1),
    ),
    Mistake(
        "divided by the lengths of the columns (dimension -2), not of each vector",
        "a vector is a row, its entries along the last dimension: each row is divided by its "
        "own length.",
        lambda x: _best_other((u := x / x.norm(dim=-2, keepdim=True)) @ u.transpose(-2, -1)),
    ),
    Mistake(
        "took the least similar vector (the smallest cosine)",
        "the most similar vector has the largest cosine: the argmax of its row.",
        lambda x: _cosines(x).masked_fill(_diagonal(x.shape[-2]), math.inf).argmin(dim=-1),
    ),
    Mistake(
        "returned the best cosine, not the position of the vector that has it",
        "the task asks where the most similar vector is, a position (an int64 index), not how "
        "similar it is.",
        lambda x: _cosines(x).masked_fill(_diagonal(x.shape[-2]), -math.inf).amax(dim=-1),
    ),
    Mistake(
        "built the table with the transpose on the left, XᵀX",
        "XᵀX pairs the C dimensions with each other; the table pairs the T vectors, the rows: "
        "(T, C) times (C, T).",
        lambda x: _best_other(_unit(x).transpose(-2, -1) @ _unit(x)),
    ),
    Mistake(
        "took the largest along dim 0, which is the batch of a (B, T, C) input",
        "for one stack the table is symmetric and dim 0 happens to work; for a batch dim 0 "
        "runs across the batch. Each row's best is along the last dimension.",
        lambda x: _cosines(x).masked_fill(_diagonal(x.shape[-2]), -math.inf).argmax(dim=0),
    ),
    Mistake(
        "took the vector itself out with fill_diagonal_, which takes one square matrix only",
        "a batch of tables (B, T, T) is not one square matrix: fill_diagonal_ wants every "
        "dimension of the same size and refuses, or fills only the entries [i, i, i]. Each "
        "table of the batch needs its own diagonal.",
        lambda x: _fill_diagonal(_cosines(x)),
    ),
    Mistake(
        "used .T, which reverses every dimension of a batch",
        "for a (B, T, C) batch, .T gives (C, T, B), which mixes the batch into the product; "
        "only the last two dimensions are to be swapped.",
        lambda x: _best_other(_reversed_transpose(_unit(x))),
    ),
    Mistake(
        "ranked by the distance between the vectors",
        "the distance depends on the lengths as well as the directions: a short vector is near "
        "every other short one. The cosine compares directions only.",
        lambda x: torch.cdist(x, x).masked_fill(_diagonal(x.shape[-2]), math.inf).argmin(dim=-1),
    ),
    Mistake(
        "took the second-largest cosine, counting on the largest to be the vector itself",
        "a vector that appears twice (or two that point the same way) has a cosine of 1 with "
        "its twin too: the tie can put the twin first and the vector itself second. Only "
        "taking the vector itself out makes it never the answer.",
        lambda x: _cosines(x).topk(2, dim=-1).indices[..., 1],
    ),
    Mistake(
        "took out every cosine of 1 (or nearly 1), not the vector itself",
        "a cosine of 1 means the same direction, not the same position: a vector listed twice, "
        "or two that point the same way, lose each other too. It is the entry of each vector "
        "with itself, the diagonal, that must be taken out.",
        lambda x: (c := _cosines(x)).masked_fill(c > 0.9999, -2.0).argmax(dim=-1),
    ),
    Mistake(
        "made the diagonal mask with the size of the first dimension, which is T only for one "
        "stack",
        "for a batch (B, T, C) the first dimension counts the stacks, not the vectors: the mask "
        "must be (T, T), the size of the second-to-last dimension, to take out each vector "
        "itself.",
        _eye_of_first_size,
    ),
    ONE_STACK_ONLY,
    Mistake(
        "left the vector itself out of its row but did not shift the positions after it",
        "removing entry i from row i moves every later entry one place to the left: a best "
        "found after i is at position j - 1 of the shortened row, one less than its place in X.",
        _unshifted,
    ),
)


def _indices(got: object, case: Case) -> str | None:
    if isinstance(got, Tensor) and got.is_floating_point():
        return (
            f"the result holds numbers of dtype {got.dtype}; it should hold positions, the "
            "indices of the most similar vectors (int64)"
        )
    return None


def _pointing_apart() -> Tensor:
    """Three 2-D vectors at 0°, 100° and 215°, of lengths 1, 2 and 0.5: every cosine < 0."""
    angles = torch.tensor([0.0, 100.0, 215.0], dtype=torch.float64).deg2rad()
    lengths = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    return torch.stack([angles.cos(), angles.sin()], dim=-1) * lengths[:, None]  # (3, 2)


def _scaled(x: Tensor, g: torch.Generator) -> Tensor:
    """x with every vector given its own length, from 0.2 to 3 times."""
    return x * (0.2 + 2.8 * torch.rand(*x.shape[:-1], 1, generator=g, dtype=torch.float64))


def _cases() -> list[Case]:
    g = fixed_generator()
    one_long = randn64(5, 4, generator=g)
    one_long[2] *= 6
    twice = randn64(4, 3, generator=g)
    twice[3] = twice[1]
    specs = [
        ("5 vectors of 4 numbers, vector 2 six times longer", one_long),
        ("3 vectors pointing apart (every cosine is negative)", _pointing_apart()),
        ("a square stack of 4 vectors of 4 numbers", _scaled(randn64(4, 4, generator=g), g)),
        ("a batch of 2 stacks of 4 vectors, (2, 4, 3)", _scaled(randn64(2, 4, 3, generator=g), g)),
        ("a batch of 3 stacks of 5 vectors, (3, 5, 2)", _scaled(randn64(3, 5, 2, generator=g), g)),
        (
            "a batch of 3 stacks of 3 vectors of 3 numbers, (3, 3, 3)",
            _scaled(randn64(3, 3, 3, generator=g), g),
        ),
        ("two vectors", _scaled(randn64(2, 3, generator=g), g)),
        ("4 vectors, vector 3 the same as vector 1 (a word listed twice)", twice),
    ]
    return [Case(d, (x,), _best_other(_cosines(x))) for d, x in specs]


def _one_stack_only(fn: Callable[[Tensor], Tensor], cases: list[Case]) -> bool:
    """Whether ``fn`` is right on every single stack (T, C) and wrong on every batch."""
    for case in cases:
        outcome = call(fn, case)
        right = (
            outcome.error is None
            and compare_outputs(outcome.value, case.expected, "", 1e-5, 1e-4) is None
        )
        if right != (case.args[0].dim() == 2):
            return False
    return True


@checker_of(MOST_SIMILAR_OTHER, MISTAKES)
def check_most_similar_other(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``most_similar_other(X)``: for each row of ``(..., T, C)``, the index of the other
    row with the largest cosine similarity, ``(..., T)``."""
    cases = _cases()
    result = check_function(
        MOST_SIMILAR_OTHER, fn, cases, MISTAKES, forbidden=COSINES, properties=(Property(_indices),)
    )
    unnamed = "not one of the usual mistakes" in result.message
    if not unnamed or not _one_stack_only(fn, cases):
        return result
    where, problem = result.message.splitlines()[0].split(", ", 1)[1].split("': ", 1)
    return failed(MOST_SIMILAR_OTHER, fn, where + "'", problem, ONE_STACK_ONLY)
