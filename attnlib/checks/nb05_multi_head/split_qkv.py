"""Notebook 05, Exercise 1: split a fused projection (B, T, 3C) into the queries, keys and values
of every head, each (B, H, T, D).

The cases show each mistake: B, T, H and D all different (a transpose of the wrong dimensions,
no transpose at all, a view straight to (B, H, T, D)), H = 1 and D = 1, a single token (where a
view straight to (B, H, T, D) happens to be right), T = 6, a multiple of 3 (where a split
along the tokens gives numbers rather than an error) and C = 3 (where torch.split into pieces of
3 happens to give three parts).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, passed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks.engine import check_function
from attnlib.checks.nb05_multi_head.common import (
    SPLIT_IMPLEMENTATIONS,
    split,
    split_interleaved,
    split_without_transpose,
)

Tensor = torch.Tensor
Triple = tuple[Tensor, Tensor, Tensor]

SPLIT_QKV = register(
    Exercise(
        id="ex1_my_split_qkv",
        notebook="05",
        number=1,
        name="my_split_qkv",
        hints=(
            "Two cuts, in the order the fused projection was built: first the width 3C into the "
            "queries, the keys and the values (C each, side by side), then each of them into H "
            "heads of D = C / H as in section 3, with the heads in front of the tokens.",
            "The three parts are the first, second and third C columns of the last dimension. "
            "For each part, a head is a slice of every token's width: the tokens must stay whole "
            "rows, which decides when the head dimension may move in front of T.",
            "Cut the last dimension into three parts of C (chunk or slicing); then for each part "
            "do section 3's split: view or reshape to (B, T, H, D), then swap dimensions 1 and 2. "
            "A slice of the last dimension is not contiguous, so view straight to (B, H, T, D) "
            "is refused, and reshape to it is silently wrong. Return the tuple (q, k, v).",
        ),
    )
)


def _parts(qkv: Tensor) -> tuple[Tensor, ...]:
    return qkv.chunk(3, dim=-1)


def _each(how: Callable[[Tensor, int], Tensor]) -> Callable[[Tensor, int], Triple]:
    def mistake(qkv: Tensor, num_heads: int) -> Triple:
        q, k, v = (how(part, num_heads) for part in _parts(qkv))
        return q, k, v

    return mistake


def _heads_first(qkv: Tensor, num_heads: int) -> Triple:
    b, t, c3 = qkv.shape
    grouped = qkv.view(b, t, num_heads, c3 // num_heads)  # (B, T, H, 3D): [q_h | k_h | v_h]
    q, k, v = (part.transpose(1, 2) for part in grouped.chunk(3, dim=-1))
    return q, k, v


def _view_straight(part: Tensor, num_heads: int) -> Tensor:
    b, t, c = part.shape
    return part.view(b, num_heads, t, c // num_heads)  # refused unless T = 1


def _no_transpose(part: Tensor, num_heads: int) -> Tensor:
    b, t, c = part.shape
    return part.reshape(b, t, num_heads, c // num_heads)


def _head_size_of_fused(qkv: Tensor, num_heads: int) -> Triple:
    b, t, c3 = qkv.shape
    q, k, v = (p.reshape(b, t, num_heads, c3 // num_heads).transpose(1, 2) for p in _parts(qkv))
    return q, k, v


def _along_tokens(qkv: Tensor, num_heads: int) -> Triple:
    b, t, c3 = qkv.shape
    q, k, v = (
        p.reshape(b, t, num_heads, c3 // 3 // num_heads).transpose(1, 2)
        for p in qkv.chunk(3, dim=1)
    )
    return q, k, v


def _along_tokens_any_width(qkv: Tensor, num_heads: int) -> Triple:
    b, t, _ = qkv.shape
    parts = qkv.chunk(3, dim=1)  # as many parts as the tokens allow, of ceil(T / 3) tokens
    return tuple(p.reshape(b, t, num_heads, -1).transpose(1, 2) for p in parts)  # type: ignore[return-value]


def _along_tokens_any_length(qkv: Tensor, num_heads: int) -> Triple:
    b, _, c3 = qkv.shape
    q, k, v = (  # chunk gives three parts only when the tokens allow it
        p.reshape(b, -1, num_heads, c3 // 3 // num_heads).transpose(1, 2)
        for p in qkv.chunk(3, dim=1)
    )
    return q, k, v


def _sizes_with_slash(qkv: Tensor, num_heads: int) -> Triple:
    b, t, c3 = qkv.shape
    d = c3 / 3 / num_heads  # a float: view refuses it
    q, k, v = qkv.view(b, t, 3, num_heads, d).permute(2, 0, 3, 1, 4)  # type: ignore[arg-type]
    return q, k, v


def _split_into_pieces_of_three(qkv: Tensor, num_heads: int) -> Triple:
    q, k, v = torch.split(qkv, 3, dim=-1)  # pieces of width 3: three of them only when C = 3
    return q, k, v  # type: ignore[return-value]


def _queries_keys_swapped(qkv: Tensor, num_heads: int) -> Triple:
    q, k, v = _expected(qkv, num_heads)
    return k, q, v


def _alternating(qkv: Tensor, num_heads: int) -> Triple:
    b, t, c3 = qkv.shape
    q, k, v = (split(p, num_heads) for p in qkv.reshape(b, t, c3 // 3, 3).unbind(-1))
    return q, k, v


def _three_in_front(qkv: Tensor, num_heads: int) -> Triple:
    b, t, c3 = qkv.shape
    q, k, v = (split(p, num_heads) for p in qkv.reshape(b, 3, t, c3 // 3).unbind(1))
    return q, k, v


MISTAKES = (
    Mistake(
        "cut the fused width into heads before separating the queries, keys and values",
        "the fused projection puts all C queries first, then all keys, then all values; cut into "
        "heads first, each head's 3D numbers mix queries, keys and values of different heads.",
        _heads_first,
    ),
    Mistake(
        "cut each part straight to (B, H, T, D), without the transpose",
        "read in memory order, the first T·D numbers fill head 0: whole tokens, not the first D "
        "dims of every token. Positions end up mixed into heads (the picture of section 3).",
        _each(split_without_transpose),
    ),
    Mistake(
        "cut each part straight to (B, H, T, D), without the transpose",
        "view refuses a slice of the fused tensor because it is not contiguous; and reading the "
        "numbers straight as (B, H, T, D) would fill head 0 with whole tokens, not with the "
        "first D dims of every token.",
        _each(_view_straight),
    ),
    Mistake(
        "left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)",
        "attention runs on the last two dimensions, so each head needs its own (T, D) table: "
        "the head dimension must come before the tokens.",
        _each(_no_transpose),
    ),
    Mistake(
        "moved the tokens to the last dimension: (B, H, D, T) instead of (B, H, T, D)",
        "each head's table must have one row per token and D columns, (T, D); swapping the "
        "last two dimensions is for the keys inside the scores, not for the split.",
        _each(lambda p, h: split(p, h).transpose(-2, -1)),
    ),
    Mistake(
        "put the heads in front of the batch: (H, B, T, D) instead of (B, H, T, D)",
        "the batch stays the first dimension everywhere in attnlib; only the heads move, to "
        "just before the tokens.",
        _each(lambda p, h: split(p, h).transpose(0, 1)),
    ),
    Mistake(
        "gave head h the interleaved dims h, h + H, h + 2H, … instead of a block of D",
        "head h's queries are dims hD to (h+1)D − 1 of every token, the columns of its own W^Q_i "
        "inside w_q: the width is cut as (H, D), not (D, H).",
        _each(split_interleaved),
    ),
    Mistake(
        "took num_heads for the head size: D heads of H dims each, instead of H heads of D",
        "num_heads counts the heads; each head's width is D = C / num_heads. Cut the other way, "
        "the shapes come out (B, D, T, H) and each head holds the wrong dims.",
        _each(lambda p, h: split(p, p.shape[-1] // h)),
    ),
    Mistake(
        "took the head size from the fused width, 3C / H, instead of C / H",
        "each of the three parts is C wide; only after separating them is the head size C / H.",
        _head_size_of_fused,
    ),
    Mistake(
        "separated the queries, keys and values along the tokens instead of along the width",
        "the fused projection lays the three side by side in the last dimension, each C wide; "
        "the tokens stay whole.",
        _along_tokens,
        variants=(_along_tokens_any_width, _along_tokens_any_length),
    ),
    Mistake(
        "computed a size with /, which gives a float, where a shape needs a whole number",
        "in Python 3, / always gives a float (12 / 3 is 4.0), and view and reshape accept only "
        "whole numbers: sizes are computed with integer division.",
        _sizes_with_slash,
    ),
    Mistake(
        "gave torch.split the number of parts, 3, where it takes the size of each part",
        "torch.split(t, 3, dim) cuts pieces 3 wide, 3C / 3 = C of them, not three pieces of "
        "width C: the fused width is cut into more parts than q, k and v.",
        _split_into_pieces_of_three,
    ),
    Mistake(
        "read the fused (B, T, 3C) straight as (B, 3, T, C), without moving the 3",
        "reshape keeps the order in memory, where each token's 3C numbers sit together: read as "
        "(B, 3, T, C), the first 'part' holds whole fused rows of the first tokens, not the "
        "queries of every token.",
        _three_in_front,
    ),
    Mistake(
        "returned the keys as q and the queries as k",
        "the fused projection holds the queries first, then the keys, then the values: the "
        "first C columns are the queries.",
        _queries_keys_swapped,
    ),
    Mistake(
        "took the queries, keys and values as alternating entries of the width",
        "the fused projection puts the three in blocks of C, one after the other, not "
        "interleaved entry by entry.",
        _alternating,
    ),
)


def _expected(qkv: Tensor, num_heads: int) -> Triple:
    q, k, v = (split(part, num_heads) for part in _parts(qkv))
    return q, k, v


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        ("B=2, T=5, C=12 into 3 heads of 4: qkv (2, 5, 36)", 2, 5, 12, 3),
        ("B=1, T=3, C=8 into 2 heads of 4: qkv (1, 3, 24)", 1, 3, 8, 2),
        ("one head: B=3, T=4, C=6, H=1", 3, 4, 6, 1),
        ("head size 1: B=2, T=3, C=4 into 4 heads of 1", 2, 3, 4, 4),
        ("one token: B=2, T=1, C=6 into 2 heads of 3", 2, 1, 6, 2),
        ("T=6 tokens: B=2, C=10 into 5 heads of 2", 2, 6, 10, 5),
        ("C=3 into 3 heads of 1: B=2, T=4, qkv (2, 4, 9)", 2, 4, 3, 3),
    ]
    cases = []
    for description, b, t, c, h in specs:
        qkv = randn64(b, t, 3 * c, generator=g)
        cases.append(Case(description, (qkv, h), _expected(qkv, h)))
    return cases


def _as_triple(fn: Callable[[Tensor, int], object]) -> Callable[[Tensor, int], object]:
    """The answer, with a (3, B, H, T, D) tensor read as the triple it unpacks into."""

    @functools.wraps(fn)
    def answer(qkv: Tensor, num_heads: int) -> object:
        got = fn(qkv, num_heads)
        if isinstance(got, Tensor) and got.dim() == 5 and got.shape[0] == 3:
            return tuple(got.unbind(0))
        return got

    return answer


@checker_of(SPLIT_QKV, MISTAKES)
def check_split_qkv(fn: Callable[[Tensor, int], Triple]) -> CheckResult:
    """Check ``my_split_qkv(qkv, num_heads) -> (q, k, v)``: (B, T, 3C) → three (B, H, T, D)."""
    if not callable(fn):
        return check_function(SPLIT_QKV, fn, _cases())
    cases = _cases()
    result = check_function(
        SPLIT_QKV,
        _as_triple(fn),
        cases,
        MISTAKES,
        forbidden=SPLIT_IMPLEMENTATIONS,
        output_names=("q", "k", "v"),
    )
    # The report is the same; what later cells may use is the learner's own function.
    return passed(SPLIT_QKV, fn, f"all {len(cases)} cases") if result.passed else result
