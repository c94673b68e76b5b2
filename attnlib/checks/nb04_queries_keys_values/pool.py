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
from attnlib.checks._run import check_function
from attnlib.checks.nb04_queries_keys_values.common import (
    HEAD_IMPLEMENTATIONS,
    Pair,
    by_hand_softmax_unshifted,
)

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


def _scores(x: Tensor, query: Tensor, key_proj: Linear, scale: float | None = None) -> Tensor:
    keys = key_proj(x)  # (B, T, d_k)
    return keys @ query / (math.sqrt(query.shape[-1]) if scale is None else scale)  # (B, T)


def _pool(weights: Tensor, x: Tensor, value_proj: Linear) -> Pair:
    out = (weights.unsqueeze(-1) * value_proj(x)).sum(dim=-2)  # (B, d_v)
    return out, weights


def _softmax_over(dim: int) -> Callable[..., Pair]:
    def mistake(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
        return _pool(torch.softmax(_scores(x, query, key_proj), dim=dim), x, value_proj)

    return mistake


def _scaled_by(width: Callable[[Tensor, Tensor, Linear, Linear], float]) -> Callable[..., Pair]:
    def mistake(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
        scale = width(x, query, key_proj, value_proj)
        weights = torch.softmax(_scores(x, query, key_proj, scale), dim=-1)
        return _pool(weights, x, value_proj)

    return mistake


def _right(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    return _softmax_over(-1)(x, query, key_proj, value_proj)


def _whole_batch(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    scores = _scores(x, query, key_proj)
    return _pool(torch.softmax(scores.flatten(), dim=0).view_as(scores), x, value_proj)


def _no_value_proj(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.softmax(_scores(x, query, key_proj), dim=-1)
    return (weights.unsqueeze(-1) * x).sum(dim=-2), weights


def _no_key_proj(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.softmax(x @ query / math.sqrt(query.shape[-1]), dim=-1)
    return _pool(weights, x, value_proj)


def _query_projected(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    return _right(x, key_proj(query), key_proj, value_proj)


def _mean(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.full(x.shape[:-1], 1 / x.shape[-2], dtype=x.dtype)
    return _pool(weights, x, value_proj)


def _kept_length_one(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    out, weights = _right(x, query, key_proj, value_proj)
    return out.unsqueeze(-2), weights.unsqueeze(-2)


def _unshifted(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    return _pool(by_hand_softmax_unshifted(_scores(x, query, key_proj)), x, value_proj)


def _matmul_across(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.softmax(_scores(x, query, key_proj), dim=-1)  # (B, T)
    return weights @ value_proj(x), weights  # (B, T) @ (B, T, d_v) → (B, B, d_v)


def _squeezed_all(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    out, weights = _kept_length_one(x, query, key_proj, value_proj)
    return out.squeeze(), weights.squeeze()


def _only_out(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Tensor:
    return _right(x, query, key_proj, value_proj)[0]


def _swapped(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    out, weights = _right(x, query, key_proj, value_proj)
    return weights, out


MISTAKES = (
    Mistake(
        "took the softmax over the batch (dim=0) instead of over the positions",
        "each sequence shares out its own budget of 1 among its own T tokens; a softmax along "
        "the batch makes the sequences compete with each other.",
        _softmax_over(0),
    ),
    Mistake(
        "took one softmax over the scores of the whole batch at once",
        "each sequence's weights must sum to 1 on their own: one softmax per sequence, along "
        "its positions.",
        _whole_batch,
    ),
    Mistake(
        "did not scale the scores by 1/√d_k",
        "the query and the keys are d_k wide, and their dot products spread like √d_k: "
        "unscaled, the softmax saturates (notebook 02).",
        _scaled_by(lambda x, q, kp, vp: 1.0),
    ),
    Mistake(
        "divided the scores by √d_v, the width of the values",
        "the scale corrects the spread of q·k, a sum of d_k products: it is √d_k.",
        _scaled_by(lambda x, q, kp, vp: math.sqrt(vp.out_features)),
    ),
    Mistake(
        "divided the scores by √d_model, the width of the tokens",
        "the scores are dot products of the d_k-wide query and keys; the tokens' width before "
        "the projection does not enter them.",
        _scaled_by(lambda x, q, kp, vp: math.sqrt(x.shape[-1])),
    ),
    Mistake(
        "divided the scores by √T, the square root of the number of tokens",
        "the scale depends on the width the query and keys share, d_k, not on the length.",
        _scaled_by(lambda x, q, kp, vp: math.sqrt(x.shape[-2])),
    ),
    Mistake(
        "mixed the tokens themselves instead of their values (no value projection)",
        "what each sequence hands over is a mix of its values, value_proj(x), d_v wide.",
        _no_value_proj,
    ),
    Mistake(
        "scored the query against the tokens themselves instead of their keys",
        "the query lives in the keys' space, d_k wide: it is matched against key_proj(x), not "
        "against the raw tokens.",
        _no_key_proj,
    ),
    Mistake(
        "passed the query through the key projection as well",
        "the query is a learned vector that is already d_k wide, in the space of the keys: it "
        "is not a token, and no layer projects it.",
        _query_projected,
    ),
    Mistake(
        "averaged the values evenly, ignoring the query",
        "the point of the query is to choose: each token's weight comes from its key's score "
        "with the query, through a softmax.",
        _mean,
    ),
    Mistake(
        "kept the query's length-1 dimension in the results",
        "there is one query, so one output vector per sequence: out is (B, d_v) and the weights "
        "(B, T), without the size-1 dimension of a sequence of one query.",
        _kept_length_one,
    ),
    Mistake(
        "squeezed every size-1 dimension, not only the query's",
        "squeeze() without a dimension also drops the batch when B = 1 and the tokens when "
        "T = 1: out must stay (B, d_v) and the weights (B, T) for every B and T.",
        _squeezed_all,
    ),
    Mistake(
        "multiplied the (B, T) weights by the (B, T, d_v) values with @",
        "@ reads the (B, T) weights as one matrix and multiplies it with every sequence's "
        "values, (B, B, d_v): each sequence must mix its own values with its own weights.",
        _matmul_across,
    ),
    Mistake(
        "wrote the softmax by hand without subtracting each row's largest score",
        "exp overflows to inf for float32 scores above about 88.7, and inf/inf is NaN: the "
        "stable softmax of notebook 02 (or torch.softmax) avoids it.",
        _unshifted,
    ),
    Mistake(
        "returned only out, not the pair (out, weights)",
        "the function returns both: the weights show which tokens each sequence's query chose.",
        _only_out,
    ),
    Mistake(
        "returned (weights, out) instead of (out, weights)",
        "the pair comes back in attnlib's order: the output first, then the weights.",
        _swapped,
    ),
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
