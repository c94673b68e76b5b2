"""Notebook 00, Exercise 1: each column of a (..., T, N) tensor divided by its own total.

Section 3 normalises rows, along the last dimension; here the distributions run down the
columns, along dimension -2. The cases show each mistake: a single matrix and batches (dim 0 and
dim 1 are right for one and wrong for the other), a batch with as many sequences as rows (a
total without ``keepdim`` then divides the wrong entries instead of failing), a square matrix
(a result left transposed keeps its shape) and a single row (every share is 1).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._outcomes import call
from attnlib.checks._slips import EPSILONS, transposed_batch, with_epsilons
from attnlib.checks.engine import Property, check_function

Tensor = torch.Tensor

NORMALISE_COLUMNS = register(
    Exercise(
        id="ex1_normalise_columns",
        notebook="00",
        number=1,
        name="normalise_columns",
        hints=(
            "A column of a (T, N) matrix runs down the rows: its entries share the last index "
            "and differ in the one before it. Each column needs its own total, and every entry "
            "of the column must be divided by that total.",
            "Count dimensions from the end, so that one line of code works for (T, N) and for a "
            "batch (B, T, N) alike: the columns run along the second-to-last dimension. The "
            "totals must keep that dimension, as size 1, so that they broadcast back down each "
            "column.",
            "Sum along dimension -2 and keep it: the totals of a (B, T, N) batch then have "
            "shape (B, 1, N). Divide x by them. Check a (3, 3, 4) batch: the result's sums "
            "down dimension -2 should all be 1.",
        ),
    )
)

# F.normalize(x, p=1, dim=-2) is this exercise in one call (so are torch.masked's and, for a
# (T, N) matrix, scikit-learn's normalize).
NORMALISERS = Forbidden(
    python={
        F.normalize: "torch.nn.functional.normalize",
        torch.masked.normalize: "torch.masked.normalize",
    },
    paths={"sklearn.preprocessing:normalize": "sklearn.preprocessing.normalize"},
)


def _rows_of_transposed(x: Tensor) -> Tensor:
    moved = x.transpose(-2, -1)  # (..., N, T)
    return moved / moved.sum(dim=-1, keepdim=True)


def _reshaped(x: Tensor) -> Tensor:
    *lead, t, n = x.shape
    wrong = x.reshape(*lead, n, t)  # the numbers in their old order, not the columns
    return (wrong / wrong.sum(dim=-1, keepdim=True)).reshape(x.shape)


def _loop_over_matrix_columns(x: Tensor) -> Tensor:
    out = torch.empty_like(x)
    for j in range(x.shape[1]):  # the columns of one (T, N) matrix
        out[:, j] = x[:, j] / x[:, j].sum()
    return out


def _loop_over_last_size(x: Tensor) -> Tensor:
    out = x.clone()
    for j in range(x.shape[-1]):  # N columns, picked out as x[:, j]
        out[:, j] = x[:, j] / x[:, j].sum()
    return out


def _in_place(x: Tensor) -> Tensor:
    x /= x.sum(dim=-2, keepdim=True)
    return x


LOOP_OVER_X_J = "looped over x[:, j] as the columns, which they are only for a single (T, N) matrix"
LOOP_OVER_X_J_WHY = (
    "for a batch (B, T, N), x[:, j] is row j of every matrix, and its total adds up entries of "
    "different matrices: the columns are picked out along dimension -2, whatever the number of "
    "dimensions in front."
)

MISTAKES = (
    Mistake(
        "normalised each row (the last dimension), not each column",
        "a row runs along the last dimension; a column runs down the rows, along dimension -2, "
        "and it is the columns that must add up to 1.",
        lambda x: x / x.sum(dim=-1, keepdim=True),
    ),
    Mistake(
        "summed along dim 0, which is the columns of one matrix but the batch of a (B, T, N) "
        "tensor",
        "for a batch, dim 0 adds up the same entry of every sequence; counted from the end, "
        "the columns are dimension -2 whatever the number of dimensions.",
        lambda x: x / x.sum(dim=0, keepdim=True),
    ),
    Mistake(
        "summed along dim 1, which is the columns of a (B, T, N) batch but the rows of one matrix",
        "dim 1 names a different dimension for each number of dimensions; dimension -2 is "
        "always the one the columns run along.",
        lambda x: x / x.sum(dim=1, keepdim=True),
    ),
    Mistake(
        "took the column totals without keeping their dimension",
        "the totals of a (B, T, N) batch then have shape (B, N), and broadcasting lines them up "
        "with (T, N): they divide the wrong entries when B = T and fail otherwise. For one "
        "matrix the shapes happen to line up, which hides the mistake.",
        lambda x: x / x.sum(dim=-2),
    ),
    Mistake(
        "gave the column totals their size-1 dimension in the wrong place, last",
        "the totals of (…, T, N) are (…, N); the size-1 dimension must stand where the summed "
        "dimension was, (…, 1, N), so that each total meets its own column. Put last, (…, N, 1), "
        "it meets the rows.",
        lambda x: x / x.sum(dim=-2).unsqueeze(-1),
    ),
    Mistake(
        "divided by the total of the whole tensor",
        "with no dimension, the sum adds up every entry into one number: each column needs its "
        "own total.",
        lambda x: x / x.sum(),
    ),
    Mistake(
        "divided by the total of each whole matrix, not of each column",
        "then each matrix adds up to 1, not each of its columns.",
        lambda x: x / x.sum(dim=(-2, -1), keepdim=True),
    ),
    Mistake(
        "divided by each column's mean, not its total",
        "the mean is the total divided by T, so every column adds up to T instead of 1.",
        lambda x: x / x.mean(dim=-2, keepdim=True),
    ),
    Mistake(
        "divided by each column's largest entry, not its total",
        "the largest entry becomes 1 and the column adds up to more than 1.",
        lambda x: x / x.amax(dim=-2, keepdim=True),
    ),
    Mistake(
        "normalised the rows of the transposed matrix and returned it still transposed",
        "the values are right but stand in an (N, T) layout: each column of x should come back "
        "as a column, in the shape of x.",
        _rows_of_transposed,
    ),
    Mistake(
        "reshaped the matrix to (N, T) instead of transposing it",
        "reshape reads the numbers in their stored order, row after row, so the new rows are "
        "not the old columns: the entries of different columns get mixed.",
        _reshaped,
    ),
    Mistake(
        "divided by each column's length (the square root of its sum of squares)",
        "that makes each column a unit vector, whose squares add up to 1; the shares themselves "
        "must add up to 1, so the total is a plain sum.",
        lambda x: x / x.norm(dim=-2, keepdim=True),
    ),
    Mistake(
        "divided each column's total by its entries (the division the wrong way round)",
        "a share is the entry divided by its column's total, never above 1: the other way round "
        "every result is at least 1.",
        lambda x: x.sum(dim=-2, keepdim=True) / x,
    ),
    Mistake(
        "divided by the number of rows T, not by each column's total",
        "only a column whose entries add up to T would then add up to 1: each column needs its "
        "own total, whatever its entries are.",
        lambda x: x / x.shape[-2],
    ),
    Mistake(
        "exponentiated the entries before normalising (a softmax)",
        "a share is the entry itself divided by its column's total; e^x changes the proportions.",
        lambda x: torch.exp(x) / torch.exp(x).sum(dim=-2, keepdim=True),
    ),
    Mistake(LOOP_OVER_X_J, LOOP_OVER_X_J_WHY, _loop_over_matrix_columns),
    # the same loop run over the N columns: on a batch, x[:, j] runs out of rows and raises
    Mistake(LOOP_OVER_X_J, LOOP_OVER_X_J_WHY, _loop_over_last_size),
    Mistake(
        "divided with //, which rounds every share down to a whole number",
        "// is floor division: each share lies between 0 and 1, so it rounds down to 0 (or to "
        "1 for a column with a single entry). A share is a true division.",
        lambda x: x // x.sum(dim=-2, keepdim=True),
    ),
    transposed_batch(
        lambda x: (x.T / x.T.sum(dim=-1, keepdim=True)).T,
        "on one matrix, x.T's rows are x's columns; on a (B, T, N) batch, .T turns all three "
        "dimensions round, (N, T, B), so its rows run across the batch and the shares are "
        "taken over the sequences. Only the last two dimensions should swap.",
    ),
    Mistake(
        "swapped dimensions 0 and 1, which are the two dimensions of one matrix but not of a batch",
        "on a (B, T, N) batch dimensions 0 and 1 are the batch and the rows: the columns are "
        "dimension -2 (counted from the end) whatever the number of dimensions.",
        lambda x: (x.transpose(0, 1) / x.transpose(0, 1).sum(dim=-1, keepdim=True)).transpose(0, 1),
    ),
    *with_epsilons(
        "added a small number (an epsilon) to each column's total",
        "the entries are positive, so no total is 0 and nothing needs guarding: with the "
        "epsilon added, every column adds up to a little less than 1.",
        lambda eps: lambda x: x / (x.sum(dim=-2, keepdim=True) + eps),
        EPSILONS[:-1],  # 1e-7 changes no column beyond the tolerance
    ),
    Mistake(
        "divided x in place, changing the tensor the caller passed in",
        "an in-place division overwrites the caller's x with the shares: whoever still needs "
        "the numbers they passed finds them gone, and nothing warns them. The shares belong in "
        "a new tensor.",
        _in_place,
    ),
)
IN_PLACE = MISTAKES[-1]


def _columns_sum_to_one(got: object, case: Case) -> str | None:
    if not isinstance(got, Tensor) or got.dim() < 2 or not bool(torch.isfinite(got).all()):
        return None
    sums = got.detach().double().sum(dim=-2)  # (..., N)
    off = (sums - 1).abs() > 1e-6
    if not bool(off.any()):
        return None
    *where, column = (int(i) for i in torch.nonzero(off)[0])
    inside = f" of matrix {tuple(where)}" if where else ""
    return (
        f"column {column}{inside} adds up to {sums[(*where, column)].item():.4g}; every column "
        "(along dimension -2) should add up to 1"
    )


def reference(x: Tensor) -> Tensor:
    """The answer, one column at a time in float64."""
    columns = x.double().transpose(-2, -1).reshape(-1, x.shape[-2])
    shares = torch.stack([column / column.sum() for column in columns])
    return shares.reshape(*x.shape[:-2], x.shape[-1], x.shape[-2]).transpose(-2, -1)


def _cases() -> list[Case]:
    g = fixed_generator()

    def positive(*shape: int) -> Tensor:
        return torch.rand(*shape, generator=g, dtype=torch.float64) + 0.25

    specs = [
        ("a (3, 4) matrix", positive(3, 4)),
        ("a square (3, 3) matrix", positive(3, 3)),
        ("a batch of shape (2, 3, 4)", positive(2, 3, 4)),
        ("a batch with as many sequences as rows, (3, 3, 4)", positive(3, 3, 4)),
        ("a (2, 2, 3, 4) tensor", positive(2, 2, 3, 4)),
        ("a single row (1, 4): each column has one entry", positive(1, 4)),
    ]
    return [Case(description, (x,), reference(x)) for description, x in specs]


def _in_numpy(x: Tensor) -> np.ndarray:
    a = np.asarray(x)  # numpy's way, as a learner who knows numpy writes it
    return a / a.sum(axis=-2, keepdims=True)


# Named after the run (a numpy result is never a tensor, so it matches no other mistake).
IN_NUMPY = Mistake(
    "worked in numpy and returned a numpy array, not a tensor",
    "the function is one step of PyTorch code: what it returns goes on to tensor operations, "
    "autograd and the GPU, and a numpy array has none of them. numpy's sums and divisions have "
    "the same meaning in torch, on the tensor itself.",
    _in_numpy,
)


@checker_of(NORMALISE_COLUMNS, (*MISTAKES, IN_NUMPY))
def check_normalise_columns(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``normalise_columns(x)``: every column (along dim -2) of ``(..., T, N)`` sums to 1,
    in a new tensor: the ``x`` it is given comes back as it was."""
    result = check_function(
        NORMALISE_COLUMNS,
        fn,
        _cases(),
        MISTAKES,
        forbidden=NORMALISERS,
        properties=(Property(_columns_sum_to_one),),
        atol=1e-7,
        rtol=1e-6,
        dtypes=(),
    )
    unnamed = not result.passed and result.done and "The mistake:" not in result.message
    if unnamed and isinstance(call(fn, _cases()[0]).value, np.ndarray):
        where, problem = result.message.splitlines()[0].split(", ", 1)[1].split("': ", 1)
        return failed(NORMALISE_COLUMNS, fn, where + "'", problem, IN_NUMPY)
    return result
