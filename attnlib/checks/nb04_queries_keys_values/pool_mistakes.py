"""Notebook 04, Exercise 3's table of mistakes: attention pooling written with one thing wrong,
as learners write it (a softmax dimension, a scale, a projection, a reduction, a shape).

Notebook 04.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import softmax_epsilons
from attnlib.checks.nb04_queries_keys_values.common import Pair, by_hand_softmax_unshifted

Tensor = torch.Tensor
Linear = nn.Linear


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


def _weights_unused(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    _, weights = _right(x, query, key_proj, value_proj)
    return value_proj(x).mean(dim=-2), weights


def _layers_swapped(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    return _right(x, query, value_proj, key_proj)


def _summed_over_batch(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.softmax(_scores(x, query, key_proj), dim=-1)
    return (weights.unsqueeze(-1) * value_proj(x)).sum(dim=0), weights  # (T, d_v)


def _averaged_weighted(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.softmax(_scores(x, query, key_proj), dim=-1)
    return (weights.unsqueeze(-1) * value_proj(x)).mean(dim=-2), weights


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


def _keys_mixed(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    keys = key_proj(x)  # (B, T, d_k)
    weights = torch.softmax(keys @ query / math.sqrt(query.shape[-1]), dim=-1)
    return (weights.unsqueeze(-1) * keys).sum(dim=-2), weights


def _scaled_after(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    weights = torch.softmax(key_proj(x) @ query, dim=-1) / math.sqrt(query.shape[-1])
    return _pool(weights, x, value_proj)


def _first_skipped(x: Tensor, query: Tensor, key_proj: Linear, value_proj: Linear) -> Pair:
    outs, all_weights = [], []
    for b in range(1, x.shape[0]):  # from 1: the first sequence is left out
        out, weights = _right(x[b : b + 1], query, key_proj, value_proj)
        outs.append(out[0])
        all_weights.append(weights[0])
    return torch.stack(outs), torch.stack(all_weights)


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
        "mixed the keys with the weights instead of the values",
        "the keys only decide the weights; what each sequence hands over is a mix of its values, "
        "value_proj(x), d_v wide.",
        _keys_mixed,
    ),
    Mistake(
        "divided the weights by √d_k after the softmax instead of the scores before it",
        "the scale belongs to the scores, where it sets how sharp the softmax is; dividing the "
        "weights afterwards leaves every sequence's weights summing to 1/√d_k instead of 1.",
        _scaled_after,
    ),
    Mistake(
        "left out the first sequence of the batch (a loop over the batch that starts at 1)",
        "range(1, B) starts at the second sequence: the results have B − 1 rows, and a batch of "
        "one sequence gives none at all.",
        _first_skipped,
    ),
    Mistake(
        "averaged the values evenly, ignoring the query",
        "the point of the query is to choose: each token's weight comes from its key's score "
        "with the query, through a softmax.",
        _mean,
    ),
    Mistake(
        "computed the weights but returned the plain mean of the values as out",
        "the weights are what the query chose: out must mix each sequence's values with its "
        "own weights, so that tokens the query matches count more.",
        _weights_unused,
    ),
    Mistake(
        "swapped the two layers: scored the query against value_proj(x), mixed key_proj(x)",
        "key_proj gives the d_k-wide keys that the query is matched with; value_proj gives the "
        "d_v-wide values that are handed over. Swapped, the widths do not fit (or, when they "
        "happen to, the wrong vectors are matched and mixed).",
        _layers_swapped,
    ),
    Mistake(
        "summed the weighted values over the batch (dim=0) instead of over the positions",
        "each sequence's output is the sum of its own T weighted values, along the positions; "
        "summing along the batch adds the sequences together and gives (T, d_v).",
        _summed_over_batch,
    ),
    Mistake(
        "averaged the weighted values (a mean) instead of summing them",
        "the weights already add up to 1, so their weighted sum is the average that attention "
        "takes; a mean divides it once more by T.",
        _averaged_weighted,
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
    *softmax_epsilons(
        lambda softmax: (
            lambda x, query, key_proj, value_proj: _pool(
                softmax(_scores(x, query, key_proj), dim=-1), x, value_proj
            )
        )
    ),
)
