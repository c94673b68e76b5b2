"""Notebook 00, Exercise 2: every query against every key, head by head, from a (B, T, H, D)
layout.

Section 1 multiplies queries ``(B, T, D)`` by keys ``(B, S, D)``. Here each position holds H
heads side by side, ``(B, T, H, D)``, and the scores of each head are wanted in a
``(B, H, T, S)`` tensor. The cases use different sizes for every letter, so that a result in the
wrong layout has the wrong shape, and then make two letters equal at a time (T = S, S = D,
H = D) so that a product of the wrong dimensions runs instead of failing.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, compare_outputs, fixed_generator, randn64
from attnlib.checks._outcomes import call
from attnlib.checks.engine import check_function

Tensor = torch.Tensor

HEAD_SCORES = register(
    Exercise(
        id="ex2_head_scores",
        notebook="00",
        number=2,
        name="head_scores",
        hints=(
            "`@` multiplies the last two dimensions and treats every dimension before them as a "
            "batch (section 1). Decide which dimensions must be the batch here, and which two "
            "must meet in each product.",
            "For every pair (b, h) you need one (T, D) matrix of queries times one (D, S) matrix "
            "of keys. So B and H must stand in front, in that order, before the product. Swapping "
            "dimensions moves the numbers with them; reshaping only re-reads them in stored "
            "order.",
            "Swap dimensions 1 and 2 of q to get (B, H, T, D). Bring k to (B, H, D, S): its head "
            "dimension moves to position 1 and D must come before S. Then one matrix product. "
            "Check the shape with B = 2, T = 3, S = 5, H = 4, D = 6: it should be (2, 4, 3, 5).",
        ),
    )
)


def _heads_first(x: Tensor) -> Tensor:
    return x.transpose(1, 2)  # (B, T, H, D) -> (B, H, T, D)


def _both_reshaped(q: Tensor, k: Tensor) -> Tensor:
    b, t, h, d = q.shape
    return q.reshape(b, h, t, d) @ k.reshape(b, h, d, k.shape[1])


def _all_heads_at_once(q: Tensor, k: Tensor) -> Tensor:
    b, t, h, d = q.shape
    s = k.shape[1]
    scores = q.reshape(b, t, h * d) @ k.reshape(b, s, h * d).transpose(1, 2)  # (B, T, S)
    return scores.unsqueeze(1).expand(b, h, t, s)


def _in_half_precision(q: Tensor, k: Tensor) -> Tensor:
    return (_heads_first(q.half()) @ k.half().permute(0, 2, 3, 1)).to(q.dtype)


MISTAKES = (
    Mistake(
        "multiplied q by the transposed keys in the (B, T, H, D) layout, without moving the heads",
        "there the last two dimensions are (H, D): the product pairs the heads of one position "
        "with the heads of another, not the T queries with the S keys.",
        lambda q, k: q @ k.transpose(-2, -1),
    ),
    Mistake(
        "reshaped to (B, H, T, D) instead of swapping dimensions 1 and 2",
        "reshape re-reads the numbers in their stored order (all heads of position 0, then of "
        "position 1, …), so the new 'heads' mix positions and heads: only a transpose moves "
        "each head's numbers together.",
        lambda q, k: (
            q.reshape(q.shape[0], q.shape[2], q.shape[1], q.shape[3])
            @ k.reshape(k.shape[0], k.shape[2], k.shape[1], k.shape[3]).transpose(-2, -1)
        ),
    ),
    Mistake(
        "reshaped the keys straight to (B, H, D, S)",
        "reshape re-reads the numbers in their stored order, so the new 'columns' are not keys: "
        "it mixes positions, heads and dimensions. Moving dimensions takes a transpose or a "
        "permute.",
        lambda q, k: _heads_first(q) @ k.reshape(k.shape[0], k.shape[2], k.shape[3], k.shape[1]),
    ),
    Mistake(
        "swapped only the last two dimensions of the keys, which leaves S where the heads go",
        "(B, S, H, D) becomes (B, S, D, H): the heads must also move forward, next to the batch, "
        "so that each head's queries meet that head's keys.",
        lambda q, k: _heads_first(q) @ k.transpose(-2, -1),
    ),
    Mistake(
        "moved the heads forward but did not transpose the keys",
        "(B, H, T, D) @ (B, H, S, D) pairs D with S: the keys must stand as columns, (B, H, D, S).",
        lambda q, k: _heads_first(q) @ _heads_first(k),
    ),
    Mistake(
        "moved the keys' heads forward but not the queries'",
        "q must be (B, H, T, D) too: left as (B, T, H, D), its dimension T lines up with the "
        "keys' heads as a batch dimension, and its heads meet the keys' dimensions D.",
        lambda q, k: q @ k.permute(0, 2, 3, 1),
    ),
    Mistake(
        "put the keys first: the result is (B, H, S, T)",
        "entry [b, h, t, s] is query t against key s: the queries make the rows.",
        lambda q, k: _heads_first(k) @ _heads_first(q).transpose(-2, -1),
    ),
    Mistake(
        "left the heads after the queries: the result is (B, T, H, S)",
        "the heads must come right after the batch, (B, H, T, S), so that each head's (T, S) "
        "table is one block, as attention uses it.",
        lambda q, k: torch.einsum("bthd,bshd->bths", q, k),
    ),
    Mistake(
        "swapped dimensions 1 and 3 of the keys",
        "that swap gives (B, D, H, S), with D where the heads should be: the heads "
        "and the dimensions of the keys get mixed up.",
        lambda q, k: _heads_first(q) @ k.transpose(1, 3),
    ),
    Mistake(
        "divided the scores by √D",
        "the exercise asks for the plain dot products; the scaling belongs to attention "
        "(notebook 04).",
        lambda q, k: _heads_first(q) @ _heads_first(k).transpose(-2, -1) / math.sqrt(q.shape[-1]),
    ),
    Mistake(
        "turned the scores into weights with a softmax",
        "the exercise asks for the raw dot products, the scores; the softmax that turns them into "
        "attention weights comes later (notebook 02).",
        lambda q, k: torch.softmax(_heads_first(q) @ _heads_first(k).transpose(-2, -1), dim=-1),
    ),
    Mistake(
        "paired query t with key t only",
        "an elementwise product and a sum give one score per position; the table needs every "
        "query against every key, all T × S pairs.",
        lambda q, k: (q * k).sum(dim=-1).transpose(1, 2),
    ),
    Mistake(
        "added up the scores of all heads",
        "each head keeps its own (T, S) table: the heads are a dimension of the result, not "
        "summed away.",
        lambda q, k: torch.einsum("bthd,bshd->bts", q, k),
    ),
    Mistake(
        "took one dot product over all heads together and copied it to every head",
        "flattening (H, D) into one vector of H·D numbers adds up the scores of all heads: "
        "each head must keep its own (T, S) table, from its own D numbers.",
        _all_heads_at_once,
    ),
    Mistake(
        "reshaped q to (B, H, T, D) and the keys straight to (B, H, D, S)",
        "reshape (and view) re-read the numbers in their stored order, so neither the new "
        "'heads' nor the new 'columns' are what they claim: positions, heads and dimensions get "
        "mixed. Moving dimensions takes a transpose or a permute.",
        _both_reshaped,
    ),
    Mistake(
        "put the heads last: the result is (B, T, S, H)",
        "the heads must come right after the batch, (B, H, T, S), so that each head's (T, S) "
        "table is one block, as attention uses it.",
        lambda q, k: torch.einsum("bthd,bshd->btsh", q, k),
    ),
    Mistake(
        "computed the scores in 16-bit floats (float16 or bfloat16)",
        "a 16-bit float keeps only about 3 significant digits (bfloat16 about 2): every score "
        "comes out rounded, and converting back to float64 afterwards cannot bring the lost "
        "digits back.",
        _in_half_precision,
    ),
)
HALF_PRECISION = MISTAKES[-1]


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [  # (description, B, T, S, H, D)
        ("B=2, T=3, S=5, H=4, D=6", 2, 3, 5, 4, 6),
        ("self-attention sizes T = S = 4 (B=2, H=3, D=5)", 2, 4, 4, 3, 5),
        ("S = D = 4 (B=1, T=3, H=2)", 1, 3, 4, 2, 4),
        ("H = D = 3 (B=2, T=2, S=5)", 2, 2, 5, 3, 3),
        ("one query, T = 1 (B=2, S=3, H=2, D=4)", 2, 1, 3, 2, 4),
        ("one head, H = 1 (B=3, T=2, S=4, D=5)", 3, 2, 4, 1, 5),
    ]
    cases = []
    for description, b, t, s, h, d in specs:
        q, k = randn64(b, t, h, d, generator=g), randn64(b, s, h, d, generator=g)
        cases.append(Case(description, (q, k), torch.einsum("bthd,bshd->bhts", q, k)))
    return cases


@checker_of(HEAD_SCORES, MISTAKES)
def check_head_scores(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``head_scores(q, k)``: ``(B, T, H, D)`` and ``(B, S, H, D)`` -> ``(B, H, T, S)``."""
    cases = _cases()
    result = check_function(HEAD_SCORES, fn, cases, MISTAKES, atol=1e-7, rtol=1e-6)
    unnamed = not result.passed and result.done and "The mistake:" not in result.message
    rounded = _only_rounded(fn, cases) if unnamed else None
    if rounded is not None:
        return failed(HEAD_SCORES, fn, *rounded, HALF_PRECISION)
    return result


def _only_rounded(
    fn: Callable[[Tensor, Tensor], Tensor], cases: list[Case]
) -> tuple[str, str] | None:
    """Where and how ``fn`` is off, when it is off on some case by more than float32 rounding
    but within 3 % of the largest score on every case, as a 16-bit float's rounding is."""
    first = None
    for case in cases:
        outcome = call(fn, case)
        if outcome.error is not None or not isinstance(outcome.value, Tensor):
            return None
        scale = float(case.expected.abs().max())
        if compare_outputs(outcome.value, case.expected, "", 3e-2 * scale, 0.0) is not None:
            return None
        problem = compare_outputs(outcome.value, case.expected, "the result", 1e-4 * scale, 0.0)
        if first is None and problem is not None:
            first = (f"case '{case.description}'", problem)
    return first
