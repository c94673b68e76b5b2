"""Notebook 04, Exercise 1: scaled dot-product attention for any number of leading dimensions.

The cases show each mistake: T_q ≠ T_k and d_k ≠ d_v (a scale by √d_v or √T_k, keys on the rows,
a mix of the keys), inputs with 2, 3 and 4 dimensions (``k.T``, ``transpose(0, 1)``, a softmax
along ``dim=1``, d_k read from ``q.shape[1]``), a single key and a single query, T_q = T_k (so
that keys on the rows give numbers, not an error), T_k = d_k in a batch (where a loop written
for 2-D inputs gives numbers, not an error, and is not taken for ``k.T``) and float32 scores far
apart (a softmax written without subtracting the maximum).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks.engine import check_function
from attnlib.checks.nb04_queries_keys_values.attention_mistakes import MISTAKES
from attnlib.checks.nb04_queries_keys_values.common import (
    ATTENTION_IMPLEMENTATIONS,
    Pair,
    reference,
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
        (
            "a batch with as many keys as their width: q (2, 3, 4), k (2, 4, 4), v (2, 4, 2)",
            (2, 3, 4),
            (2, 4, 4),
            (2, 4, 2),
        ),
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
