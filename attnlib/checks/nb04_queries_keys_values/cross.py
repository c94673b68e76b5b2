"""Notebook 04, Exercise 2: cross-attention between two sequences of different widths, with
projection weights as ``nn.Linear`` stores them, ``(out, in)``.

The cases show each mistake: widths d_y ≠ d_x ≠ d_k ≠ d_v (a weight used untransposed, a
projection applied to the wrong sequence, a scale by √d_v, √d_y or √d_x), lengths T_y ≠ T_x (a
softmax over the queries, a scale by √T_x), a batch (``.T``), a case where every width and
length is 4 (so that a wrong wiring gives numbers rather than an error) and a single query.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks.engine import check_function
from attnlib.checks.nb04_queries_keys_values.common import (
    HEAD_IMPLEMENTATIONS,
    Pair,
    attend,
    reference,
    reversed_dims,
)

Tensor = torch.Tensor

CROSS_ATTENTION = register(
    Exercise(
        id="ex2_my_cross_attention",
        notebook="04",
        number=2,
        name="my_cross_attention",
        hints=(
            "The tokens of y ask, the tokens of x answer: queries come from one sequence, keys "
            "and values from the other. Only queries and keys are dotted together, so only they "
            "must end up with the same width; each projection matrix fits exactly one of the two "
            "sequences, and its shape tells you which.",
            "A weight stored as nn.Linear stores it, (out, in), maps an in-wide vector to an "
            "out-wide one: it multiplies from the right only after a transpose (section 5). The "
            "scale is the width the queries and keys share, d_k, which is neither y's width nor "
            "x's, nor d_v.",
            "Project y with w_q, and x with w_k and with w_v, each weight transposed; then scaled "
            "dot-product attention (Exercise 1's, or attnlib's) on the three. Check the shapes: "
            "for y (2, 6) and x (5, 4) with d_k = 3 and d_v = 2, the weights are (2, 5) and out "
            "is (2, 2).",
        ),
    )
)


def _linear(t: Tensor, w: Tensor) -> Tensor:
    return t @ w.transpose(-2, -1)


def _wired(
    y: Tensor,
    x: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    *,
    q_from: str = "y",
    k_from: str = "x",
    v_from: str = "x",
    q_weight: str = "w_q",
    k_weight: str = "w_k",
    v_weight: str = "w_v",
    project: Callable[[Tensor, Tensor], Tensor] = _linear,
) -> tuple[Tensor, Tensor, Tensor]:
    seqs = {"y": y, "x": x}
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v}
    q = project(seqs[q_from], weights[q_weight])
    k = project(seqs[k_from], weights[k_weight])
    v = project(seqs[v_from], weights[v_weight])
    return q, k, v


def _scaled_by(width: Callable[..., int]) -> Callable[..., Pair]:
    def mistake(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor) -> Pair:
        q, k, v = _wired(y, x, w_q, w_k, w_v)
        divide_by = width(y=y, x=x, w_q=w_q, w_k=w_k, w_v=w_v)
        return attend(q, k, v, divide_by=lambda *_: divide_by)

    return mistake


def _attend_wired(**wiring: object) -> Callable[..., Pair]:
    def mistake(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor) -> Pair:
        return attend(*_wired(y, x, w_q, w_k, w_v, **wiring))  # type: ignore[arg-type]

    return mistake


def _right(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, **knobs: object) -> Pair:
    return attend(*_wired(y, x, w_q, w_k, w_v), **knobs)  # type: ignore[arg-type]


def _no_w_v(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor) -> Pair:
    q, k, _ = _wired(y, x, w_q, w_k, w_v)
    return attend(q, k, x)


def _swapped(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor) -> Pair:
    out, weights = _right(y, x, w_q, w_k, w_v)
    return weights, out


def _weights_transposed(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor) -> Pair:
    out, weights = _right(y, x, w_q, w_k, w_v)
    return out, weights.transpose(-2, -1)


def _only_out(y: Tensor, x: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor) -> Tensor:
    return _right(y, x, w_q, w_k, w_v)[0]


MISTAKES = (
    Mistake(
        "multiplied by the stored (out, in) weights as they are, without transposing them",
        "nn.Linear keeps W transposed, (out, in): the matrix of the formulas, (in, out), is the "
        "stored weight's transpose. Untransposed, the widths do not fit (or, when they happen "
        "to, the projection is the wrong one).",
        _attend_wired(project=lambda t, w: t @ w),
    ),
    Mistake(
        "took the queries from x and the keys and values from y",
        "the sequence that asks gives the queries: here y, whose every token gets one row of "
        "weights over the tokens of x.",
        _attend_wired(q_from="x", k_from="y", v_from="y"),
    ),
    Mistake(
        "took the keys from y instead of x",
        "keys and values come from the same sequence, x: the key of a token decides its weight, "
        "its value what it hands over.",
        _attend_wired(k_from="y"),
    ),
    Mistake(
        "took the values from y instead of x",
        "each weight belongs to one token of x, so what it mixes must be that token's value: "
        "the values come from x, like the keys.",
        _attend_wired(v_from="y"),
    ),
    Mistake(
        "projected the keys with W^Q (the same matrix as the queries)",
        "W^Q fits the tokens of y; the keys of x need their own matrix W^K. Section 6 used one "
        "matrix for both only because its two sentences had the same width and meaning.",
        _attend_wired(k_weight="w_q"),
    ),
    Mistake(
        "swapped W^Q and W^K: projected the queries with W^K and the keys with W^Q",
        "each projection fits one sequence: W^Q (d_k, d_y) takes the tokens of y to queries, "
        "W^K (d_k, d_x) the tokens of x to keys. Swapped, the widths do not fit (or, when they "
        "happen to, the questions and labels are the wrong ones).",
        _attend_wired(q_weight="w_k", k_weight="w_q"),
    ),
    Mistake(
        "projected the values with W^K instead of W^V",
        "the values have their own projection and their own width d_v: what a token hands over "
        "is not the label it is matched by.",
        _attend_wired(v_weight="w_k"),
    ),
    Mistake(
        "mixed the tokens of x themselves, without projecting them with W^V",
        "the output is a mix of the values x W^V, d_v wide, not of the raw source tokens.",
        _no_w_v,
    ),
    Mistake(
        "divided the scores by √d_v, the width of the values",
        "the scale corrects the spread of q·k, a sum of d_k products: it is √d_k.",
        _scaled_by(lambda w_v, **_: math.sqrt(w_v.shape[0])),
    ),
    Mistake(
        "divided the scores by the square root of y's width (the query tokens' d_model)",
        "the scores are dot products of the projected queries and keys, d_k wide; the width of "
        "the tokens before the projection does not enter them.",
        _scaled_by(lambda y, **_: math.sqrt(y.shape[-1])),
    ),
    Mistake(
        "divided the scores by the square root of x's width (the source tokens' d_model)",
        "the scores are dot products of the projected queries and keys, d_k wide; the width of "
        "the source tokens does not enter them.",
        _scaled_by(lambda x, **_: math.sqrt(x.shape[-1])),
    ),
    Mistake(
        "divided the scores by √T_x, the square root of the number of source tokens",
        "the scale depends on the width queries and keys share, d_k, not on how many keys there "
        "are.",
        _scaled_by(lambda x, **_: math.sqrt(x.shape[-2])),
    ),
    Mistake(
        "did not scale the scores by 1/√d_k",
        "without the scale, wide queries and keys give scores far apart and a saturated softmax "
        "(notebook 02).",
        _scaled_by(lambda **_: 1.0),
    ),
    Mistake(
        "took the softmax over the queries (dim=-2) instead of over the keys",
        "each token of y gets one row of weights over the tokens of x, summing to 1: the softmax "
        "runs along the last dimension.",
        lambda y, x, w_q, w_k, w_v: _right(y, x, w_q, w_k, w_v, dim=-2),
    ),
    Mistake(
        "transposed in a way that is right only for 2-D tensors (.T or transpose(0, 1))",
        "for a batch (B, T_x, d_k), .T gives (d_k, T_x, B) and transpose(0, 1) gives "
        "(T_x, B, d_k): only the last two dimensions may swap.",
        lambda y, x, w_q, w_k, w_v: _right(y, x, w_q, w_k, w_v, flip=reversed_dims),
    ),
    Mistake(
        "returned the weights transposed, one row per token of x instead of one per token of y",
        "the weights have one row per query, (T_y, T_x): row i says how token i of y shares "
        "its attention over the tokens of x, and sums to 1.",
        _weights_transposed,
    ),
    Mistake(
        "returned only out, not the pair (out, weights)",
        "the function returns both, as attnlib.scaled_dot_product_attention does.",
        _only_out,
    ),
    Mistake(
        "returned (weights, out) instead of (out, weights)",
        "the pair comes back in attnlib's order: the output first, then the weights.",
        _swapped,
    ),
)


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        # description, batch, T_y, T_x, d_y, d_x, d_k, d_v
        ("y (2, 6) reads x (5, 4); d_k = 3, d_v = 2", (), 2, 5, 6, 4, 3, 2),
        ("a batch of 3: y (3, 4, 5) reads x (3, 2, 7); d_k = 6, d_v = 3", (3,), 4, 2, 5, 7, 6, 3),
        ("every width and length 4: y (4, 4), x (4, 4); d_k = d_v = 4", (), 4, 4, 4, 4, 4, 4),
        ("one query: y (2, 1, 3) reads x (2, 6, 5); d_k = 2, d_v = 4", (2,), 1, 6, 3, 5, 2, 4),
    ]
    cases = []
    for description, batch, t_y, t_x, d_y, d_x, d_k, d_v in specs:
        y, x = randn64(*batch, t_y, d_y, generator=g), randn64(*batch, t_x, d_x, generator=g)
        w_q, w_k = randn64(d_k, d_y, generator=g), randn64(d_k, d_x, generator=g)
        w_v = randn64(d_v, d_x, generator=g)
        expected = reference(y @ w_q.T, x @ w_k.T, x @ w_v.T)
        cases.append(Case(description, (y, x, w_q, w_k, w_v), expected))
    return cases


# The answer may project with F.linear and attend with attnlib's function, not run a module.
FORBIDDEN: Forbidden = HEAD_IMPLEMENTATIONS


@checker_of(CROSS_ATTENTION, MISTAKES)
def check_cross_attention_widths(fn: Callable[..., Pair]) -> CheckResult:
    """Check ``my_cross_attention(y, x, w_q, w_k, w_v) -> (out, weights)``, weights (out, in)."""
    return check_function(
        CROSS_ATTENTION,
        fn,
        _cases(),
        MISTAKES,
        forbidden=FORBIDDEN,
        properties=(rows_sum_to_one(),),
    )
