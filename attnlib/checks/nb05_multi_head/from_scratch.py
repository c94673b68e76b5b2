"""Notebook 05, Exercise 3: multi-head cross-attention from tensor operations, returning the
output and the per-head weights.

The cases show each mistake: T_y ≠ T_x (queries and keys swapped, a softmax over the queries),
C ≠ D (a scale by √C), H = 1 (where a view after a transpose and every split are right), D = 1,
a single query, H = T_x = D (where k with its heads and tokens swapped gives numbers rather
than an error), self-attention (y is x) and float32 scores far apart (a softmax written by hand
without its maximum). The ways of writing each step live in :mod:`.wirings`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks.engine import check_function
from attnlib.checks.nb05_multi_head.common import MULTI_HEAD_IMPLEMENTATIONS
from attnlib.checks.nb05_multi_head.wirings import (
    UNSHIFTED,
    Pair,
    merge_interleaved,
    merge_outer,
    merge_straight,
    merge_swapped_last,
    merge_view,
    split_interleaved,
    split_no_transpose,
    split_straight,
    wired,
)

Tensor = torch.Tensor

MULTI_HEAD = register(
    Exercise(
        id="ex3_my_multi_head_attention",
        notebook="05",
        number=3,
        name="my_multi_head_attention",
        hints=(
            "Multi-head attention is H scaled dot-product attentions side by side, each on its "
            "own D = C / H slice of the projected queries, keys and values, whose outputs are "
            "concatenated back to C and mixed by W^O. The queries come from y, the keys and "
            "values from x, which may have another length.",
            "Give the heads their own dimension in front of the tokens, so that one batched "
            "product computes every head's (T_y, T_x) scores; the scale is the width of one "
            "head; each query's row sums to 1 over the keys. To join the heads, undo the split "
            "exactly, in reverse order.",
            "Project (y @ w_q, x @ w_k, x @ w_v); split each into (B, H, T, D) as in section 3 "
            "(cut the width, then swap dims 1 and 2); scores over the last two dimensions "
            "divided by √D; softmax along the keys; weights times values; swap dims 1 and 2 "
            "back and reshape (not view) to (B, T_y, C); multiply by w_o. Return (out, weights).",
        ),
    )
)


MISTAKES = (
    Mistake(
        "split into heads by reading (B, T, C) straight as (B, H, T, D), without the transpose",
        "read in memory order, the first T·D numbers fill head 0: whole tokens instead of the "
        "first D dims of every token, so positions get mixed into heads (section 3's picture).",
        wired(split=split_straight),
    ),
    Mistake(
        "split and joined the heads by reading the shapes straight, without either transpose",
        "read in memory order, head 0 gets whole tokens instead of the first D dims of every "
        "token; reading back the same way does not undo it, since attention has mixed the "
        "wrong groups of numbers in between.",
        wired(split=split_straight, merge=merge_straight),
    ),
    Mistake(
        "left the heads after the tokens, (B, T, H, D), so attention ran across the heads",
        "attention acts on the last two dimensions: with (T, H, D) each token's heads attend to "
        "each other instead of each head's queries to the keys.",
        wired(split=split_no_transpose),
    ),
    Mistake(
        "gave head h the interleaved dims h, h + H, … instead of a block of D dims",
        "head h's slice of w_q's output is dims hD to (h+1)D − 1: the width is cut as (H, D).",
        wired(split=split_interleaved),
    ),
    Mistake(
        "gave head h the interleaved dims h, h + H, … instead of a block of D dims",
        "head h's slice of w_q's output is dims hD to (h+1)D − 1: the width is cut as (H, D). "
        "Putting the dims back where they came from when joining does not undo the wrong "
        "groups: each head attended with the wrong dims.",
        wired(split=split_interleaved, merge=merge_interleaved),
    ),
    Mistake(
        "joined the heads by reading (B, H, T, D) straight as (B, T, C), without the transpose",
        "in memory head 0's whole table comes first, so one token's row gets numbers of "
        "several tokens; the heads must go behind the tokens before they are joined.",
        wired(merge=merge_straight),
    ),
    Mistake(
        "joined the heads with view after the transpose",
        "after a transpose the tensor is no longer laid out row by row in memory: view refuses "
        "it, reshape copies it when it must.",
        wired(merge=merge_view),
    ),
    Mistake(
        "swapped the last two dimensions (T and D) instead of the heads and the tokens before "
        "joining the heads",
        "to undo the split, the head dimension must move back behind the tokens: (B, T, H, D), "
        "then H and D are joined into C.",
        wired(merge=merge_swapped_last),
    ),
    Mistake(
        "swapped the heads with the head size (dims 1 and 3) before joining the heads",
        "to undo the split, the head dimension must move back behind the tokens: (B, T, H, D) "
        "is dims 1 and 2 swapped.",
        wired(merge=merge_outer),
    ),
    Mistake(
        "divided the scores by √C, the model width, instead of √D, one head's width",
        "each head's scores are dot products of D-wide queries and keys: their spread grows like "
        "√D, not √C.",
        wired(divide_by=lambda c, d: math.sqrt(c)),
    ),
    Mistake(
        "did not scale the scores",
        "unscaled, the D-wide dot products spread like √D and the softmax saturates (notebook 02).",
        wired(divide_by=lambda c, d: 1.0),
    ),
    Mistake(
        "divided the scores by D instead of √D",
        "the spread of a D-wide dot product grows like √D; dividing by D flattens the weights.",
        wired(divide_by=lambda c, d: float(d)),
    ),
    Mistake(
        "swapped k's dims 1 and 2 (the heads and the tokens) instead of its last two",
        "the scores of each head are its (T_y, D) queries times the transpose of its (T_x, D) "
        "keys: only the last two dimensions swap, the heads stay where they are.",
        wired(flip_k=lambda k: k.transpose(1, 2)),
    ),
    Mistake(
        "took the softmax over the queries (dim=-2) instead of over the keys",
        "each query's row of weights over the keys of x sums to 1: the last dimension.",
        wired(dim=-2),
    ),
    Mistake(
        "took the softmax over the heads (dim=1)",
        "the heads do not compete with each other: each head gives each query its own row of "
        "weights over the keys.",
        wired(dim=1),
    ),
    Mistake(
        "wrote the softmax by hand without subtracting each row's largest score",
        "exp overflows to inf for float32 scores above about 88.7, and inf/inf is NaN.",
        wired(softmax=UNSHIFTED),
    ),
    Mistake(
        "forgot W^O: returned the concatenated heads",
        "the heads' outputs sit side by side, each in its own slice; W^O mixes them into one "
        "vector per token. Without it no head's output reaches the others' dims.",
        wired(w_o="none"),
    ),
    Mistake(
        "split W^O among the heads: each head through its own diagonal block of W^O only",
        "W^O is not split like W^Q: every head's output meets all C columns of W^O, which is "
        "what mixes the heads.",
        wired(w_o="diagonal"),
    ),
    Mistake(
        "used each weight as nn.Linear stores it, x @ w.T, instead of x @ w",
        "here the four matrices are stored as in the formulas and multiply from the right as "
        "they are.",
        wired(stored_out_in=True),
    ),
    Mistake(
        "used each weight as nn.Linear stores it, x @ w.T, instead of x @ w",
        "here the four matrices, W^O too, are stored as in the formulas and multiply from the "
        "right as they are.",
        wired(stored_out_in=True, w_o_stored_out_in=True),
    ),
    Mistake(
        "took the queries from x and the keys and values from y",
        "y asks and x answers: the queries come from y, the keys and values from x, and the "
        "weights have one row per token of y.",
        wired(queries_from="x", keys_values_from="y"),
    ),
    Mistake(
        "took the keys and values from y as well: self-attention, not cross-attention",
        "the keys and values come from x, the sequence that is read; the weights are "
        "(B, H, T_y, T_x).",
        wired(keys_values_from="y"),
    ),
    Mistake(
        "ignored num_heads: one head as wide as the model",
        "with H heads each query gets H rows of weights, one per head, each on its own D-wide "
        "slice; one C-wide head gives one row, scaled by √C.",
        wired(one_head=True),
    ),
    Mistake(
        "cut x's keys and values into heads with y's length, T_y",
        "the keys and values have one row per token of x: their split uses x's own length "
        "T_x, which differs from T_y in cross-attention.",
        wired(kv_length_of_y=True),
    ),
    Mistake(
        "returned the weights averaged over the heads, (B, T_y, T_x)",
        "each head has its own weights: they stay (B, H, T_y, T_x), as attnlib returns them "
        "(torch.nn.MultiheadAttention averages them only by default).",
        wired(average_weights=True),
    ),
    Mistake(
        "returned only out, not the pair (out, weights)",
        "the function returns the per-head weights too, as attnlib.MultiHeadAttention does.",
        wired(only_out=True),
    ),
    Mistake(
        "returned (weights, out) instead of (out, weights)",
        "the pair comes back in attnlib's order: the output first, then the weights.",
        wired(pair_swapped=True),
    ),
)


def _expected(
    y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, w_o: Tensor, h: int
) -> Pair:
    y, x, w_q, w_k, w_v, w_o = (t.double() for t in (y, x, w_q, w_k, w_v, w_o))
    q = attnlib.split_heads(y @ w_q, h)  # (B, H, T_y, D)
    k, v = attnlib.split_heads(x @ w_k, h), attnlib.split_heads(x @ w_v, h)  # (B, H, T_x, D)
    heads, weights = attnlib.scaled_dot_product_attention(q, k, v)
    return attnlib.merge_heads(heads) @ w_o, weights


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        # description, B, T_y, T_x, C, H
        ("B=2, y of 3 tokens reads x of 5, C=8, 2 heads", 2, 3, 5, 8, 2),
        ("B=2, y of 4 tokens reads x of 3, C=12, 3 heads", 2, 4, 3, 12, 3),
        ("one head: B=1, y of 2 tokens reads x of 4, C=6", 1, 2, 4, 6, 1),
        ("head size 1: B=2, y of 3 tokens reads x of 2, C=4, 4 heads", 2, 3, 2, 4, 4),
        ("one query: B=3, y of 1 token reads x of 4, C=6, 2 heads", 3, 1, 4, 6, 2),
        (
            "as many heads as keys and as dims: B=2, y of 3 reads x of 2, C=4, 2 heads",
            2,
            3,
            2,
            4,
            2,
        ),
    ]
    cases = []
    for description, b, t_y, t_x, c, h in specs:
        y, x = randn64(b, t_y, c, generator=g), randn64(b, t_x, c, generator=g)
        ws = [randn64(c, c, generator=g) / math.sqrt(c) for _ in range(4)]
        args = (y, x, *ws, h)
        cases.append(Case(description, args, _expected(*args)))
    x = randn64(2, 4, 8, generator=g)
    ws = [randn64(8, 8, generator=g) / math.sqrt(8) for _ in range(4)]
    cases.append(
        Case(
            "self-attention: y is x, B=2, 4 tokens, C=8, 4 heads",
            (x, x, *ws, 4),
            _expected(x, x, *ws, 4),
        )
    )
    y32, x32 = (randn64(2, t, 8, generator=g).float() * 4 for t in (3, 5))
    ws32 = [randn64(8, 8, generator=g).float() * 2 for _ in range(3)]
    w_o32 = randn64(8, 8, generator=g).float() / math.sqrt(8)
    args32 = (y32, x32, *ws32, w_o32, 2)
    far = "float32 scores far apart (in the hundreds): B=2, y of 3 reads x of 5, C=8, 2 heads"
    cases.append(Case(far, args32, _expected(*args32), atol=1e-3, rtol=1e-3))
    return cases


@checker_of(MULTI_HEAD, MISTAKES)
def check_multi_head_from_scratch(fn: Callable[..., Pair]) -> CheckResult:
    """Check ``my_multi_head_attention(y, x, w_q, w_k, w_v, w_o, num_heads) -> (out, weights)``."""
    return check_function(
        MULTI_HEAD,
        fn,
        _cases(),
        MISTAKES,
        forbidden=MULTI_HEAD_IMPLEMENTATIONS,
        properties=(rows_sum_to_one(),),
    )
