"""Notebook 04, Exercise 1's table of mistakes: scaled dot-product attention written with one
thing wrong, as learners write it (a scale, a transpose, a softmax dimension, a return value).

Notebook 04.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import softmax_epsilons
from attnlib.checks.nb04_queries_keys_values.common import (
    Pair,
    attend,
    by_hand_softmax_unshifted,
    reversed_dims,
)

Tensor = torch.Tensor


def _no_scale(q: Tensor, k: Tensor, v: Tensor) -> float:
    return 1.0


def _keys_on_rows(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    weights = torch.softmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def _whole_matrix(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.flatten(-2), dim=-1).reshape(scores.shape)
    return weights @ v, weights


def _bmm(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    weights = torch.softmax(torch.bmm(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1]), dim=-1)
    return torch.bmm(weights, v), weights


def _bmm_transposed_1_2(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    """torch.bmm with the keys transposed as a 3-D batch is (dims 1 and 2)."""
    weights = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1]), dim=-1)
    return torch.bmm(weights, v), weights


def _attend_with(softmax: Callable[..., Tensor], q: Tensor, k: Tensor, v: Tensor) -> Pair:
    """Scaled dot-product attention through the given ``softmax(scores, dim)``."""
    weights = softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v, weights


def _values_first(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    _, weights = attend(q, k, v)
    return v @ weights, weights


def _swapped(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    out, weights = attend(q, k, v)
    return weights, out


def _no_softmax(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores @ v, scores


def _scaled_after(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def _unshifted(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    weights = by_hand_softmax_unshifted(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    return weights @ v, weights


def _sum_without_keepdim(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    exps = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    weights = exps / exps.sum(dim=-1)  # (..., T_q, T_k) / (..., T_q): lines up with the keys
    return weights @ v, weights


def _keys_on_rows_of_weights(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    weights = torch.softmax(k @ q.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights.transpose(-2, -1) @ v, weights  # (..., T_k, T_q): a row per key


def _mixes_keys(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    _, weights = attend(q, k, v)
    return weights @ k, weights


def _only_out(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    return attend(q, k, v)[0]


def _matrices_only(q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """Attention written for 2-D q, k and v: .t() and torch.mm refuse a batch."""
    weights = torch.softmax(torch.mm(q, k.t()) / math.sqrt(q.shape[-1]), dim=-1)
    return torch.mm(weights, v), weights


def _einsum_for_3d(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("bqk,bkd->bqd", weights, v), weights


def _sum_of_everything(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    exps = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))
    weights = exps / exps.sum()  # one total for every query of every batch element
    return weights @ v, weights


MISTAKES = (
    Mistake(
        "did not scale the scores by 1/√d_k",
        "the dot product of two d_k-wide vectors has a spread that grows like √d_k: unscaled, "
        "wide queries and keys give scores so far apart that softmax saturates (notebook 02).",
        lambda q, k, v: attend(q, k, v, divide_by=_no_scale),
    ),
    Mistake(
        "divided the scores by √d_v, the width of the values",
        "the scale corrects the spread of q·k, a sum of d_k products; the values' width has "
        "nothing to do with the scores.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: math.sqrt(v.shape[-1])),
    ),
    Mistake(
        "divided the scores by √T_k, the square root of the number of keys",
        "the scale depends on the width the queries and keys share, d_k, not on how many keys "
        "there are.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: math.sqrt(k.shape[-2])),
    ),
    Mistake(
        "divided the scores by d_k instead of √d_k",
        "the spread (standard deviation) of q·k grows like √d_k, so dividing by d_k shrinks "
        "the scores too much and flattens the weights.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: q.shape[-1]),
    ),
    Mistake(
        "wrote √d_k as d_k ** 1/2, which Python reads as (d_k ** 1) / 2",
        "** binds tighter than /, so the scores are divided by d_k and then by 2: far more "
        "than √d_k, which flattens the weights. A square root is the power one half, as a "
        "whole.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: q.shape[-1] * 2),
    ),
    Mistake(
        "multiplied the scores by √d_k instead of dividing by it",
        "the scale must bring the spread of the scores back to about 1; multiplying makes it "
        "d_k times larger and saturates the softmax.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: 1 / math.sqrt(q.shape[-1])),
    ),
    Mistake(
        "read d_k from q.shape[1], which is the width only when q has 2 dimensions",
        "with a batch in front, q.shape[1] is the number of queries; the width is always the "
        "last dimension.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: math.sqrt(q.shape[1])),
    ),
    Mistake(
        "took the softmax over the queries (dim=-2) instead of over the keys",
        "each query's row of weights must sum to 1: the softmax runs along the keys, the last "
        "dimension of the scores.",
        lambda q, k, v: attend(q, k, v, dim=-2),
    ),
    Mistake(
        "took the softmax along dim=1, the keys only when the input has 2 dimensions",
        "with leading dimensions, dim=1 is the queries or the heads; the keys are always the "
        "last dimension.",
        lambda q, k, v: attend(q, k, v, dim=1),
    ),
    Mistake(
        "took one softmax over the whole score matrix instead of one per query",
        "each query competes for its own budget of 1: every row of weights sums to 1, not the "
        "whole (T_q, T_k) table.",
        _whole_matrix,
    ),
    Mistake(
        "transposed k in a way that is right only for a 2-D k (.T or transpose(0, 1))",
        "for a batched k of shape (B, T_k, d_k), .T gives (d_k, T_k, B) and transpose(0, 1) "
        "gives (T_k, B, d_k): only the last two dimensions may swap, so that each batch element "
        "is multiplied with its own keys.",
        lambda q, k, v: attend(q, k, v, flip=reversed_dims),
        variants=(_matrices_only,),  # .t() and torch.mm: their own errors on a batch
    ),
    Mistake(
        "swapped dims 1 and 2 of k, which are the last two only for a 3-D k",
        "a 2-D k has no dim 2 and a 4-D k (B, H, T_k, d_k) would swap its heads with its keys: "
        "only the last two dimensions, whatever their number, may swap.",
        lambda q, k, v: attend(q, k, v, flip=lambda t: t.transpose(1, 2)),
    ),
    Mistake(
        "used torch.bmm, which takes 3-D tensors only",
        "the inputs may have no leading dimension or two of them (a batch of heads); the @ "
        "operator (torch.matmul) multiplies the last two dimensions of any number of them.",
        _bmm,
        variants=(_bmm_transposed_1_2,),  # its keys transposed as a 3-D batch's are
    ),
    Mistake(
        "wrote the einsum subscripts for 3-D inputs only (one letter for a batch in front)",
        "einsum wants one letter per dimension of each operand, so a fixed equation takes one "
        "number of dimensions; here there may be no leading dimension, one or two, and the "
        "equation must let any number of them through.",
        _einsum_for_3d,
    ),
    Mistake(
        "divided the exponentials by their sum over the whole tensor (a sum with no dim)",
        "each query's row of weights must sum to 1 on its own; a total over every entry makes "
        "all the queries of all the batch elements share one budget of 1.",
        _sum_of_everything,
    ),
    Mistake(
        "put the keys on the rows of the scores (k qᵀ instead of q kᵀ)",
        "the weights must have one row per query, (T_q, T_k), so that each query's row mixes "
        "the T_k values.",
        _keys_on_rows,
    ),
    Mistake(
        "put the keys on the rows of the weights, (T_k, T_q), each key's row summing to 1",
        "the weights have one row per query, (T_q, T_k): each query shares out its own budget "
        "of 1 over the keys, not each key over the queries.",
        _keys_on_rows_of_weights,
    ),
    Mistake(
        "took the softmax along dim=2, the keys only when the input has 3 dimensions",
        "with no leading dimension there is no dim 2, and with two of them dim 2 is the "
        "queries; the keys are always the last dimension.",
        lambda q, k, v: attend(q, k, v, dim=2),
    ),
    Mistake(
        "divided the scores by √T_q, the square root of the number of queries",
        "the scale depends on the width the queries and keys share, d_k, not on how many "
        "queries there are.",
        lambda q, k, v: attend(q, k, v, divide_by=lambda q, k, v: math.sqrt(q.shape[-2])),
    ),
    Mistake(
        "used the scaled scores as weights, without a softmax",
        "raw scores can be negative and do not sum to 1: softmax turns each row into a "
        "distribution.",
        _no_softmax,
    ),
    Mistake(
        "scaled the weights after the softmax instead of the scores before it",
        "the scale must act inside the softmax, where it changes how peaked the weights are; "
        "dividing afterwards only makes each row sum to 1/√d_k.",
        _scaled_after,
    ),
    Mistake(
        "wrote the softmax by hand without subtracting each row's largest score",
        "exp overflows to inf for float32 scores above about 88.7, and inf/inf is NaN: the "
        "stable softmax of notebook 02 (or torch.softmax) avoids it.",
        _unshifted,
    ),
    Mistake(
        "summed the exponentials without keepdim in a softmax written by hand",
        "without keepdim the row sums have shape (..., T_q), and broadcasting lines them up "
        "with the last dimension, the keys: each weight is divided by another row's sum (or "
        "the shapes do not fit).",
        _sum_without_keepdim,
    ),
    Mistake(
        "mixed the keys with the weights instead of the values",
        "the keys only decide the weights; what each query receives is a mix of the values, "
        "(T_q, d_v).",
        _mixes_keys,
    ),
    Mistake(
        "multiplied the values by the weights in the wrong order (v times the weights)",
        "each query's output is its row of weights times the values, weights (T_q, T_k) times "
        "v (T_k, d_v): the weights come first.",
        _values_first,
    ),
    Mistake(
        "returned only out, not the pair (out, weights)",
        "the function returns both, as attnlib.scaled_dot_product_attention does: the weights "
        "are what the notebooks plot.",
        _only_out,
    ),
    Mistake(
        "returned (weights, out) instead of (out, weights)",
        "the pair comes back in the order attnlib.scaled_dot_product_attention uses: the output "
        "first, then the weights.",
        _swapped,
    ),
    *softmax_epsilons(lambda softmax: lambda q, k, v: _attend_with(softmax, q, k, v)),
)
