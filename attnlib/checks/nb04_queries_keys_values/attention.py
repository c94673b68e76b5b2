"""Notebook 04, Exercise 1: scaled dot-product attention for any number of leading dimensions.

The cases show each mistake: T_q ≠ T_k and d_k ≠ d_v (a scale by √d_v or √T_k, keys on the rows,
a mix of the keys), inputs with 2, 3 and 4 dimensions (``k.T``, ``transpose(0, 1)``, a softmax
along ``dim=1``, d_k read from ``q.shape[1]``), a single key and a single query, T_q = T_k (so
that keys on the rows give numbers, not an error) and float32 scores far apart (a softmax
written without subtracting the maximum).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks._run import check_function
from attnlib.checks.nb04_queries_keys_values.common import (
    ATTENTION_IMPLEMENTATIONS,
    Pair,
    attend,
    by_hand_softmax_unshifted,
    reference,
    reversed_dims,
)

Tensor = torch.Tensor

ATTENTION = register(
    Exercise(
        id="ex1_my_attention",
        notebook="04",
        number=1,
        name="my_attention",
        hints=(
            "Each query gets one row of weights over the keys: its scores with every key, scaled "
            "so that their spread does not grow with the width the queries and keys share, then "
            "made into a distribution. The output mixes the values with those weights. Leading "
            "dimensions (a batch, heads) just come along: every matrix operation must act on the "
            "last two dimensions only.",
            "The scores have shape (..., T_q, T_k): one row per query. Which transpose of k gives "
            "that for a 2-D k and for a 4-D k alike? The scale uses d_k, the width q and k share "
            "(not d_v, not T_k), and the softmax runs along the keys, the last dimension.",
            "Three steps: scores from q and k with only k's last two dimensions swapped, divided "
            "by the square root of q's last size; softmax along dim=-1 (torch.softmax is fine: it "
            "subtracts the maximum for you); out = weights times v. Return (out, weights). Check "
            "the shapes on q (2, 3, 4, 5), k (2, 3, 6, 5), v (2, 3, 6, 2): out (2, 3, 4, 2).",
        ),
    )
)


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


def _mixes_keys(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    _, weights = attend(q, k, v)
    return weights @ k, weights


def _only_out(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    return attend(q, k, v)[0]


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
    ),
    Mistake(
        "put the keys on the rows of the scores (k qᵀ instead of q kᵀ)",
        "the weights must have one row per query, (T_q, T_k), so that each query's row mixes "
        "the T_k values.",
        _keys_on_rows,
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
)


def _cases() -> list[Case]:
    g = fixed_generator()
    shapes = [
        ("2 queries, 5 keys, d_k = 3, d_v = 2", (2, 3), (5, 3), (5, 2)),
        ("a batch: q (2, 4, 6), k (2, 7, 6), v (2, 7, 3)", (2, 4, 6), (2, 7, 6), (2, 7, 3)),
        (
            "heads: q (2, 3, 4, 5), k (2, 3, 6, 5), v (2, 3, 6, 2)",
            (2, 3, 4, 5),
            (2, 3, 6, 5),
            (2, 3, 6, 2),
        ),
        (
            "as many queries as keys: q (3, 4, 2), k (3, 4, 2), v (3, 4, 5)",
            (3, 4, 2),
            (3, 4, 2),
            (3, 4, 5),
        ),
        ("one key: q (3, 4), k (1, 4), v (1, 2)", (3, 4), (1, 4), (1, 2)),
        ("one query: q (2, 1, 8), k (2, 5, 8), v (2, 5, 8)", (2, 1, 8), (2, 5, 8), (2, 5, 8)),
    ]
    cases = []
    for description, q_shape, k_shape, v_shape in shapes:
        q, k, v = (randn64(*s, generator=g) for s in (q_shape, k_shape, v_shape))
        cases.append(Case(description, (q, k, v), reference(q, k, v)))
    far = randn64(2, 3, 4, generator=g) * 12  # scores up to several hundred
    keys, values = randn64(2, 5, 4, generator=g) * 12, randn64(2, 5, 3, generator=g)
    q32, k32, v32 = far.float(), keys.float(), values.float()
    cases.append(
        Case(
            "float32 scores far apart (q·k in the hundreds)",
            (q32, k32, v32),
            reference(q32, k32, v32),
        )
    )
    return cases


@checker_of(ATTENTION, MISTAKES)
def check_attention_any_shape(fn: Callable[[Tensor, Tensor, Tensor], Pair]) -> CheckResult:
    """Check ``my_attention(q, k, v) -> (out, weights)`` for inputs with any leading dimensions."""
    return check_function(
        ATTENTION,
        fn,
        _cases(),
        MISTAKES,
        forbidden=ATTENTION_IMPLEMENTATIONS,
        properties=(rows_sum_to_one(),),
    )
