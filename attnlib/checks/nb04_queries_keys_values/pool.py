"""Notebook 04, Exercise 3: attention pooling, one learned query that every sequence of a batch
answers with one vector.

The cases show each mistake: B ≠ T (a softmax over the batch, or over the whole batch at once),
d_model ≠ d_k ≠ d_v (a scale by √d_v or √d_model, a missing projection, the query projected
too), a single sequence, a single token, a case where every size is 3 (so that a missing
projection gives numbers rather than an error) and a float32 query that matches one key far
better than the others (a softmax written without subtracting the maximum).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

import attnlib
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks.engine import check_function
from attnlib.checks.nb04_queries_keys_values.common import HEAD_IMPLEMENTATIONS, Pair
from attnlib.checks.nb04_queries_keys_values.pool_mistakes import MISTAKES as TABLE

Tensor = torch.Tensor
Linear = nn.Linear

ATTENTION_POOL = register(
    Exercise(
        id="ex3_my_attention_pool",
        notebook="04",
        number=3,
        name="my_attention_pool",
        hints=(
            "A query need not come from a token: here one learned query asks the same question "
            "of every sequence, and each sequence answers with one mix of its own values, like "
            "the question token of section 7 but without the token. Per sequence that is one row "
            "of weights over its T positions.",
            "Keys and values come from the tokens through the two layers; the query is already "
            "d_k wide, in the keys' space. The scores are (B, T): each sequence's T scores "
            "compete among themselves, not with the other sequences', and the scale is the "
            "width the query and keys share.",
            "Give the query a length-1 dimension so that Exercise 1's attention (or attnlib's) "
            "can treat it as a sequence of one query, or compute the (B, T) scores with a "
            "matrix-vector product; softmax along the positions; mix the values; then drop the "
            "length-1 dimension so that out is (B, d_v) and the weights (B, T).",
        ),
    )
)


def _layer(d_in: int, d_out: int, generator: torch.Generator) -> Linear:
    layer = nn.Linear(d_in, d_out, bias=False, dtype=torch.float64)
    with torch.no_grad():
        layer.weight.copy_(randn64(d_out, d_in, generator=generator) / math.sqrt(d_in))
    return layer.requires_grad_(False)


def _expected(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    x64 = x.double()
    keys, values = x64 @ key_proj.weight.double().T, x64 @ value_proj.weight.double().T
    out, weights = attnlib.scaled_dot_product_attention(query.double()[None], keys, values)
    # (B, 1, d_v), (B, 1, T)
    return out[..., 0, :], weights[..., 0, :]


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        # description, B, T, d_model, d_k, d_v, query size
        ("2 sequences of 5 tokens; d_model = 6, d_k = 4, d_v = 3", 2, 5, 6, 4, 3, 2.0),
        ("4 sequences of 2 tokens; d_model = 3, d_k = 5, d_v = 2", 4, 2, 3, 5, 2, 2.0),
        ("one sequence (B = 1) of 6 tokens; d_model = 4, d_k = 2, d_v = 5", 1, 6, 4, 2, 5, 2.0),
        ("one token per sequence (T = 1): all its weight on it", 3, 1, 5, 4, 2, 2.0),
        ("every size 3: B = T = d_model = d_k = d_v = 3", 3, 3, 3, 3, 3, 2.0),
    ]
    cases = []
    for description, b, t, d_model, d_k, d_v, size in specs:
        x, query = randn64(b, t, d_model, generator=g), randn64(d_k, generator=g) * size
        key_proj, value_proj = _layer(d_model, d_k, g), _layer(d_model, d_v, g)
        args = (x, query, key_proj, value_proj)
        cases.append(Case(description, args, _expected(*args)))
    x = randn64(2, 4, 6, generator=g).float() * 10
    query = randn64(3, generator=g).float() * 60
    key_proj, value_proj = _layer(6, 3, g).float(), _layer(6, 2, g).float()
    args32 = (x, query, key_proj, value_proj)
    far = "float32: a query that matches one key far better than the rest (scores in the hundreds)"
    cases.append(Case(far, args32, _expected(*args32), atol=1e-4, rtol=1e-3))
    return cases


def _best_token_only(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    scores = key_proj(x) @ query / math.sqrt(query.shape[-1])  # (B, T)
    weights = torch.zeros_like(scores).scatter(-1, scores.argmax(-1, keepdim=True), 1.0)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=-2), weights


MISTAKES = (
    *TABLE,
    Mistake(
        "gave all the weight to the best-scoring token (an argmax) instead of a softmax",
        "attention mixes: every token gets a share that grows with its score, and the shares "
        "sum to 1; an argmax hands one token everything, ignores how close the others came, "
        "and gives training no gradient to learn the query from.",
        _best_token_only,
    ),
)


@checker_of(ATTENTION_POOL, MISTAKES)
def check_attention_pool(fn: Callable[..., Pair]) -> CheckResult:
    """Check ``my_attention_pool(x, query, key_proj, value_proj) -> (out, weights)``."""
    return check_function(
        ATTENTION_POOL,
        fn,
        _cases(),
        MISTAKES,
        forbidden=HEAD_IMPLEMENTATIONS,
        properties=(rows_sum_to_one(),),
    )
