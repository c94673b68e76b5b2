"""Checkers for the exercises of notebook 11: pooling, head patterns and semantic search."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from attnlib.checks import CheckResult
from attnlib.checks._framework import Case, fixed_generator, randn64, run_cases
from attnlib.course.inspection import previous_token_share
from attnlib.sentence_encoder import mean_pool, semantic_search


def check_mean_pool(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``pool(hidden (B, T, C), token_mask (B, T) bool) -> (B, C)``: mean over real tokens."""
    g = fixed_generator()
    hidden = randn64(3, 5, 4, generator=g)
    no_padding = torch.ones(3, 5, dtype=torch.bool)
    padded = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    cases = [
        Case("no padding", (hidden, no_padding), mean_pool(hidden, no_padding)),
        Case("padded rows", (hidden, padded), mean_pool(hidden, padded)),
    ]
    hints = {
        "default": "weights = token_mask.unsqueeze(-1).to(hidden.dtype); return (hidden * weights)"
        ".sum(1) / weights.sum(1): padding must neither add to the sum nor to the count.",
        "padded rows": "divide by the number of real tokens in each row, not by T: "
        "token_mask.sum(dim=1, keepdim=True).",
    }
    return run_cases("mean_pool", fn, cases, hints, atol=1e-10)


def check_previous_token_share(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``share(weights (..., T, T)) -> (...)``: mean of A[i, i-1] over queries 2…T."""
    g = fixed_generator()
    shifted = torch.zeros(5, 5, dtype=torch.float64)
    shifted[0, 0] = 1.0
    shifted[torch.arange(1, 5), torch.arange(0, 4)] = 1.0  # an exact previous-token head
    random_weights = randn64(2, 3, 6, 6, generator=g).softmax(dim=-1)
    cases = [
        Case("an exact previous-token head", (shifted,), previous_token_share(shifted)),
        Case(
            "uniform weights",
            (torch.full((4, 4), 0.25, dtype=torch.float64),),
            torch.tensor(0.25, dtype=torch.float64),
        ),
        Case(
            "a batch of heads (2, 3, 6, 6)", (random_weights,), previous_token_share(random_weights)
        ),
    ]
    hints = {
        "default": "the previous token of query i is key i-1: the diagonal just below the main "
        "one, weights.diagonal(offset=-1, dim1=-2, dim2=-1), averaged over its T-1 entries.",
        "an exact previous-token head": "the first query has no previous token: average over "
        "queries 2…T only (T-1 values), so this head scores exactly 1.",
        "a batch of heads (2, 3, 6, 6)": "work on the last two dims only, so leading dims "
        "(layers, heads) are kept: the result here has shape (2, 3).",
    }
    return run_cases("previous_token_share", fn, cases, hints, atol=1e-10)


def check_semantic_search(
    fn: Callable[[torch.Tensor, torch.Tensor, int], torch.Tensor],
) -> CheckResult:
    """Check ``search(query (C,), corpus (N, C), k) -> indices (k,)``: best cosine first."""
    g = fixed_generator()
    corpus = nn.functional.normalize(
        randn64(8, 5, generator=g), dim=-1
    )  # unit rows, as encode gives
    query = nn.functional.normalize(randn64(5, generator=g), dim=0)
    # The worse a row's cosine, the longer it is: a raw dot product ranks them wrongly.
    worst_first = (corpus @ query).argsort()
    lengths = torch.empty(8, dtype=torch.float64)
    lengths[worst_first] = torch.linspace(8.0, 1.0, 8, dtype=torch.float64)
    scaled = corpus * lengths.unsqueeze(1)

    def expected(q: torch.Tensor, c: torch.Tensor, k: int) -> torch.Tensor:
        return semantic_search(q.unsqueeze(0), c, k)[1][0]

    cases = [
        Case("top 3", (query, corpus, 3), expected(query, corpus, 3)),
        Case("top 1", (query, corpus, 1), expected(query, corpus, 1)),
        Case("rows of different lengths", (query, scaled, 4), expected(query, scaled, 4)),
    ]
    hints = {
        "default": "scores = cosine of the query with every row; return scores.topk(k).indices "
        "(best first).",
        "rows of different lengths": "rank by cosine, not by the raw dot product: normalise the "
        "rows (and the query) first, or a long vector wins just for being long.",
    }
    return run_cases("semantic_search", fn, cases, hints, atol=0.0, rtol=0.0)
