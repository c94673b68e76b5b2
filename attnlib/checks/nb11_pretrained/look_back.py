"""Notebook 11, Exercise 2 (optional): how much a head looks one token back.

The share of a head is the mean weight that queries 2 … T put on the token just before them.
The cases show each mistake: an exact previous-token head (the share is 1, not (T − 1)/T), a
next-token head (the share is 0), uniform weights, a batch of layers and heads (the diagonal
must be taken over the last two dimensions) and T = 2. An answer right on every single
(T, T) matrix and wrong on a batch of them is told that it indexed the leading dimensions.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.engine import check_function
from attnlib.checks.nb11_pretrained._after import named_again, only_two_d_right
from attnlib.course import inspection

Tensor = torch.Tensor

PREVIOUS_TOKEN = register(
    Exercise(
        id="ex2_my_previous_token_share",
        notebook="11",
        number=2,
        name="my_previous_token_share",
        hints=(
            "Row i of the weights is query i; the weight it puts on the token just before it "
            "is in column i − 1. Collect that one number for every query that has a token "
            "before it, then average them, separately for every layer and head.",
            "Those entries, A[1, 0], A[2, 1], …, A[T−1, T−2] (0-based), lie on one diagonal of "
            "each T × T matrix: the one just below the main diagonal. There are T − 1 of them, "
            "since query 0 has no previous token.",
            "Take the diagonal with offset −1 over the last two dimensions (Tensor.diagonal "
            "takes the offset and the two dimensions; its default dimensions are the first "
            "two), which gives shape (..., T − 1), then average its last dimension.",
        ),
        optional=True,
    )
)

FORBIDDEN = Forbidden(
    python={inspection.previous_token_share: "attnlib.course.inspection.previous_token_share"}
)


def reference_share(weights: Tensor) -> Tensor:
    """The reference, in float64."""
    return weights.double().diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def _below(w: Tensor) -> Tensor:
    return w.diagonal(offset=-1, dim1=-2, dim2=-1)  # (..., T - 1)


def _rows(w: Tensor) -> Tensor:
    return torch.arange(w.shape[-1])


def _stops_early(w: Tensor) -> Tensor:
    total = torch.zeros(w.shape[:-2], dtype=w.dtype)  # T = 2: no query is reached
    for i in range(1, w.shape[-1] - 1):  # the last query is never reached
        total = total + w[..., i, i - 1]
    return total / (w.shape[-1] - 1)


def _argmax_is_previous(w: Tensor) -> Tensor:
    picks = w.argmax(dim=-1)[..., 1:]  # (..., T - 1): each query's favourite key
    return (picks == torch.arange(w.shape[-1] - 1)).float().mean(dim=-1)


ONE_MATRIX = Mistake(
    "used the leading dimensions as queries and keys, as if the weights were one (T, T) matrix",
    "for weights of shape (L, H, T, T) the first two dimensions are layers and heads: the "
    "queries and keys are always the last two, whatever comes before them.",
    lambda w: w[1:, :-1].diagonal(dim1=-2, dim2=-1).mean(dim=-1),
)

MISTAKES = (
    Mistake(
        "averaged over all T queries, counting the first one, which has no previous token",
        "query 1 has nothing before it: the mean runs over the T − 1 queries 2 … T, so a "
        "perfect previous-token head scores exactly 1, not (T − 1)/T.",
        lambda w: _below(w).sum(dim=-1) / w.shape[-1],
    ),
    Mistake(
        "took the weight each query puts on itself (the main diagonal)",
        "the previous token of query i is key i − 1: the diagonal just below the main one.",
        lambda w: w.diagonal(dim1=-2, dim2=-1)[..., 1:].mean(dim=-1),
    ),
    Mistake(
        "took the main diagonal over all T queries (each token's weight on itself)",
        "the previous token of query i is key i − 1: the diagonal just below the main one, "
        "which has T − 1 entries, since the first query has no token before it.",
        lambda w: w.diagonal(dim1=-2, dim2=-1).mean(dim=-1),
    ),
    Mistake(
        "took the weight on the next token (the diagonal above the main one)",
        "rows are queries and columns keys: A[i, i + 1] is what query i puts on the token "
        "after it. Looking back is A[i, i − 1], below the main diagonal.",
        lambda w: w.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1),
    ),
    Mistake(
        "took the diagonal over the first two dimensions, not the last two",
        "Tensor.diagonal works on dims 0 and 1 unless told otherwise: right for one (T, T) "
        "matrix, wrong for weights of shape (L, H, T, T), whose matrices are the last two dims.",
        lambda w: w.diagonal(-1).mean(dim=-1),
    ),
    Mistake(
        "wrapped around: query 1 was counted with its weight on the last token",
        "index i − 1 is −1 for the first query, and −1 means the last key: the first query "
        "has no previous token and must be left out.",
        lambda w: w[..., _rows(w), _rows(w) - 1].mean(dim=-1),
    ),
    Mistake(
        "looped over queries 0 … T − 2 instead of 1 … T − 1 (counting from 0: an off-by-one)",
        "the first query (index 0) has no previous token, so its A[0, −1] is the weight on "
        "the last key, and the last query is missed.",
        lambda w: torch.stack([w[..., i, i - 1] for i in range(w.shape[-1] - 1)], -1).mean(-1),
    ),
    Mistake(
        "added up every weight below the diagonal (all earlier tokens, not only the previous one)",
        "the share counts only the token just before each query, the diagonal right below the "
        "main one; tokens further back belong to other heads' patterns.",
        lambda w: w.tril(diagonal=-1).sum(dim=(-2, -1)) / (w.shape[-1] - 1),
    ),
    Mistake(
        "left out the last query: the loop stops one query early (range(1, T − 1))",
        "range stops before its end: the queries with a token before them are 1 … T − 1 "
        "(counting from 0), and range(1, T) reaches them all.",
        _stops_early,
    ),
    Mistake(
        "counted the first query too, with its weight on its own token",
        "query 1 has no previous token, so it has no share to count: the mean runs over the "
        "T − 1 queries 2 … T and their weights on the token before them.",
        lambda w: (_below(w).sum(dim=-1) + w[..., 0, 0]) / w.shape[-1],
    ),
    Mistake(
        "counted the queries whose largest weight is on the previous token, instead of "
        "averaging the weights",
        "the share is the mean weight on the previous token: a query that gives it 0.4 "
        "counts 0.4, whether or not 0.4 is its largest weight.",
        _argmax_is_previous,
    ),
    ONE_MATRIX,
    Mistake(
        "summed the weights on the previous token instead of averaging them",
        "the share is a mean over the T − 1 queries: 1 for a perfect head, whatever T is.",
        lambda w: _below(w).sum(dim=-1),
    ),
    Mistake(
        "averaged over every layer and head too, giving one number",
        "each head gets its own share: the result keeps the leading dimensions, (L, H) for "
        "weights of shape (L, H, T, T).",
        lambda w: _below(w).mean(),
    ),
    Mistake(
        "averaged every weight of the matrix, not only those on the previous token",
        "each row sums to 1, so the mean of a whole T × T matrix is 1/T for every head.",
        lambda w: w.mean(dim=(-2, -1)),
    ),
)


def _cases() -> list[Case]:
    g = fixed_generator()
    previous = torch.eye(5, dtype=torch.float64).roll(-1, dims=1)  # A[i, i-1] = 1
    previous[0] = torch.eye(5, dtype=torch.float64)[0]  # query 0 looks at itself
    following = previous.flip(-1, -2)  # A[i, i+1] = 1: a next-token head
    batch = torch.randn(2, 3, 6, 6, generator=g, dtype=torch.float64).softmax(dim=-1)
    pairs = torch.randn(3, 2, 2, generator=g, dtype=torch.float64).softmax(dim=-1)
    one = torch.randn(5, 5, generator=g, dtype=torch.float64).softmax(dim=-1)
    specs = [
        ("an exact previous-token head, T = 5", previous),
        ("a next-token head, T = 5", following),
        ("uniform weights, T = 4", torch.full((4, 4), 0.25, dtype=torch.float64)),
        ("one head of random weights, T = 5", one),
        ("a batch of layers and heads, shape (2, 3, 6, 6)", batch),
        ("three heads of T = 2, shape (3, 2, 2)", pairs),
    ]
    return [Case(d, (w,), reference_share(w), atol=1e-12, rtol=1e-9) for d, w in specs]


@checker_of(PREVIOUS_TOKEN, MISTAKES)
def check_previous_token_weight(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``my_previous_token_share(weights (..., T, T)) -> (...)``."""
    cases = _cases()
    result = check_function(PREVIOUS_TOKEN, fn, cases, MISTAKES, forbidden=FORBIDDEN)
    # A mistake computed in float32 (a share of queries, .float()) differs from the same one
    # in float64 by more than the cases' tolerance: it is named at float32's.
    result = named_again(PREVIOUS_TOKEN, fn, cases, MISTAKES, result, (1e-6, 1e-5), loose=True)
    if result.passed or not result.done or "The mistake:" in result.message:
        return result
    first = result.message.split("\n", 1)[0].removeprefix(f"✗ {PREVIOUS_TOKEN.name}, ")
    if not first.startswith("case '") or not only_two_d_right(fn, cases, lambda c: (1e-12, 1e-9)):
        return result
    where, problem = first.split("': ", 1)
    return failed(PREVIOUS_TOKEN, fn, where + "'", problem, ONE_MATRIX)
