"""Notebook 10, Exercise 5: top-k filtering, the k largest logits of every row kept, −inf elsewhere.

The cases show each mistake: k = 1 (a threshold one rank off keeps 0 or 2), k = V (an index
past the end), rows shifted far apart (one threshold for the whole batch), a square batch (a
threshold without ``keepdim``), a single row and a (B, T, V) tensor (indexing that assumes a
2-D batch), a tie among the kept logits, and float16 (a large negative fill instead of −inf
does not even fit). No case has a tie at the k-th largest logit, where answers may differ.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.engine import ByShape, check_function

Tensor = torch.Tensor
INF = float("inf")

TOP_K = register(
    Exercise(
        id="ex5_my_top_k_logits",
        notebook="10",
        number=5,
        name="my_top_k_logits",
        hints=(
            "Each row keeps its own k largest logits: what decides whether a logit stays is how "
            "it compares with its row's k-th largest. A removed logit must get probability "
            "exactly 0 from any softmax that follows.",
            "Find each row's k-th largest logit along the last dimension, kept in a shape that "
            "lines up with its row (one number per row, a size-1 last dimension). A logit stays "
            "when it is at least that large; every other entry becomes -inf, and the result "
            "keeps the shape of the input.",
            "torch.topk along the last dimension gives each row's k largest values, largest "
            "first: the last of them is the threshold; index it with ... and a slice so that it "
            "stays (..., 1). Then replace the logits strictly below it with float('-inf'), "
            "without changing the others.",
        ),
    )
)

# An answer may not hand the work to attnlib's sampler, which does top-k itself, nor to
# transformers' top-k filter.
TOP_K_IMPLEMENTATIONS = Forbidden(
    python={attnlib.next_token_probs: "attnlib.next_token_probs"},
    paths={
        "attnlib.sampling:_next_token_probs": "attnlib.next_token_probs",
        "transformers.generation.logits_process:TopKLogitsWarper": (
            "transformers' TopKLogitsWarper"
        ),
    },
)


def reference(z: Tensor, k: int) -> Tensor:
    kth = z.topk(k, dim=-1).values[..., -1:]  # (..., 1)
    return z.masked_fill(z < kth, -INF)


def _kth(z: Tensor, k: int) -> Tensor:
    return z.topk(k, dim=-1).values[..., -1:]


def _smallest_k(z: Tensor, k: int) -> Tensor:
    kth_smallest = z.topk(k, dim=-1, largest=False).values[..., -1:]
    return z.masked_fill(z > kth_smallest, -INF)


def _ascending(z: Tensor, k: int) -> Tensor:
    kth = z.sort(dim=-1).values[..., k - 1 : k]  # ascending: the k-th smallest
    return z.masked_fill(z < kth, -INF)


def _one_past(z: Tensor, k: int) -> Tensor:
    kth = z.sort(dim=-1, descending=True).values[..., k : k + 1]  # index k: the (k+1)-th
    return z.masked_fill(z < kth, -INF)


def _two_d(z: Tensor, k: int) -> Tensor:
    values, indices = z.topk(k, dim=1)  # (B, k): the columns are the vocabulary
    return torch.full_like(z, -INF).scatter(1, indices, values)


def _in_place(z: Tensor, k: int) -> Tensor:
    z[z < _kth(z, k)] = -INF
    return z


ONE_THRESHOLD = Mistake(
    "used one threshold for the whole batch instead of one per row",
    "each row is its own next-token distribution: a row of large logits keeps more than "
    "k and a row of small ones fewer when they share a threshold.",
    lambda z, k: z.masked_fill(z < _kth(z, k).min(), -INF),
)
TWO_D_ONLY = Mistake(
    "assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    "the logits may have any shape (..., V), a single row (V,) or a (B, T, V) tensor: only the "
    "last dimension is the vocabulary, whatever comes before it.",
    _two_d,
)
IN_PLACE = Mistake(
    "wrote -inf into the caller's logits in place",
    "the logits are not yours to change: the caller still holds them (to show the whole "
    "distribution, or to filter again with another k) and finds them cut.",
    _in_place,
)

MISTAKES = (
    Mistake(
        "removed the logits at or below the k-th largest, which drops the k-th largest itself",
        "the k-th largest logit is one of the k to keep: only the logits strictly below it go, "
        "so `<=` keeps k − 1 of them.",
        lambda z, k: z.masked_fill(z <= _kth(z, k), -INF),
    ),
    Mistake(
        "took the threshold at index k of the sorted row, the (k + 1)-th largest",
        "counting from 0, the k-th largest of a row sorted from the largest sits at index "
        "k − 1: a threshold at index k keeps k + 1 logits, and for k = V there is nothing there.",
        _one_past,
    ),
    Mistake(
        "took the k-th largest at index k of topk's values, which run from index 0 to k − 1",
        "topk returns exactly k values per row, the largest first: the k-th largest is the "
        "last of them, and index k is past the end.",
        lambda z, k: z.masked_fill(z < z.topk(k, dim=-1).values[..., k].unsqueeze(-1), -INF),
    ),
    Mistake(
        "set the removed logits to 0 instead of -inf",
        "e^0 = 1, so a softmax still gives every removed token a share; only -inf, whose "
        "exponential is exactly 0, removes it.",
        lambda z, k: z.masked_fill(z < _kth(z, k), 0.0),
    ),
    Mistake(
        "set the removed logits to a large negative number such as -1e9 instead of -inf",
        "a finite number is not removed: divided by a temperature or compared with logits "
        "below it, it still counts, and in float16 -1e9 does not fit at all. -inf stays -inf.",
        lambda z, k: z.masked_fill(z < _kth(z, k), -1e9),
    ),
    Mistake(
        "kept the k smallest logits instead of the k largest",
        "torch.topk takes the largest unless told otherwise; the smallest logits are the "
        "tokens a sampler should never draw.",
        _smallest_k,
    ),
    Mistake(
        "sorted the row in ascending order (sort's default) and took its k-th entry",
        "in ascending order the k-th entry is the k-th smallest, so V − k + 1 logits stay "
        "instead of k.",
        _ascending,
    ),
    ONE_THRESHOLD,
    Mistake(
        "took each row's k-th largest without keeping its dimension",
        "the thresholds have shape (B,) instead of (B, 1) and broadcast along the columns: a "
        "square batch compares row i with row j's threshold, any other shape fails.",
        lambda z, k: z.masked_fill(z < z.topk(k, dim=-1).values[..., -1], -INF),
    ),
    Mistake(
        "indexed the thresholds with [:, -1:], which is right only for a 2-D batch",
        "a single row has no second dimension, and for a (B, T, V) input [:, -1:] takes the "
        "last position's values instead of each row's k-th largest.",
        lambda z, k: z.masked_fill(z < z.topk(k, dim=-1).values[:, -1:], -INF),
    ),
    Mistake(
        "took the top k along dim 0, down the batch, instead of along each row",
        "a row is one position's scores over the vocabulary, the last dimension: top-k "
        "compares a token's logit with the other tokens', not with other rows'.",
        lambda z, k: z.masked_fill(z < z.topk(k, dim=0).values[-1:], -INF),
    ),
    Mistake(
        "removed the k largest logits and kept the others (the mask the wrong way round)",
        "masked_fill fills where its mask is True: the mask must mark the logits to remove, "
        "those below the k-th largest, not those to keep.",
        lambda z, k: z.masked_fill(z >= _kth(z, k), -INF),
    ),
    Mistake(
        "returned the k largest values themselves instead of the whole row",
        "the result keeps the vocabulary: shape (..., V), the kept logits in their places "
        "and -inf in the others, so that a softmax after it still knows which token is which.",
        lambda z, k: z.topk(k, dim=-1).values,
    ),
    TWO_D_ONLY,
    IN_PLACE,
)
BY_SHAPE = ByShape(rows_mixed=ONE_THRESHOLD, two_d_only=TWO_D_ONLY, in_place=IN_PLACE)


def _cases() -> list[Case]:
    g = fixed_generator()
    rows = torch.randn(3, 8, generator=g) + torch.tensor([[0.0], [10.0], [-10.0]])
    square, cube = torch.randn(4, 4, generator=g), torch.randn(2, 3, 6, generator=g)
    half = torch.tensor([[1.5, -0.5, 3.0, 0.25, 2.0], [0.0, 4.0, -2.0, 1.0, 3.5]]).half()
    tie = torch.tensor([[5.0, 1.0, 5.0, 0.5, -1.0, 2.0]])
    specs: list[tuple[str, Tensor, int]] = [
        ("one row of 8, k = 3", torch.randn(8, generator=g), 3),
        ("3 rows of 8 far apart, k = 1", rows, 1),
        ("3 rows of 8 far apart, k = 3", rows, 3),
        ("3 rows of 8, k = 8 (the whole row)", rows, 8),
        ("a square (4, 4) batch, k = 2", square, 2),
        ("a (2, 3, 6) tensor, k = 2", cube, 2),
        ("a tie for the largest, k = 3", tie, 3),
        ("float16 logits (2, 5), k = 2", half, 2),
    ]
    return [Case(name, (z, k), reference(z, k)) for name, z, k in specs]


@checker_of(TOP_K, MISTAKES)
def check_my_top_k_logits(fn: Callable[[Tensor, int], Tensor]) -> CheckResult:
    """Check ``my_top_k_logits(logits, k)``: each row's k largest logits kept, -inf elsewhere.

    Shapes:
        logits: ``(..., V)`` with ``1 ≤ k ≤ V``; returns ``(..., V)``.
    """
    return check_function(
        TOP_K, fn, _cases(), MISTAKES, forbidden=TOP_K_IMPLEMENTATIONS, several=BY_SHAPE
    )
