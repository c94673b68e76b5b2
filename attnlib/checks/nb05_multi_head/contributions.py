"""Notebook 05, Exercise 2: what each head adds to the output, Concat(heads) W^O split into one
term per head, (B, H, T, C).

The cases show each mistake: H·D = C and H·D ≠ C (W^O transposed, its columns taken for its
rows: numbers in one, an error in the other), H = 1 (where the whole W^O is right), D = 1, a
single token (where a view after a transpose happens to work), B, H, T all different (the
parts in the layout (B, T, H, C)), H = D (where blocks of H rows happen to be right) and T = H
(where one block of W^O per token happens to be right).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks.engine import Property, check_function
from attnlib.checks.nb05_multi_head.common import (
    merge,
    merge_with_view,
    merge_without_transpose,
)

Tensor = torch.Tensor

HEAD_CONTRIBUTIONS = register(
    Exercise(
        id="ex2_my_head_contributions",
        notebook="05",
        number=2,
        name="my_head_contributions",
        hints=(
            "A row of the concatenation times W^O is a sum over its entries, and the entries of "
            "head h sit in one block of D positions of that row. So the product splits into one "
            "term per head: head h's output times the part of W^O its D entries meet.",
            "Which D rows of W^O does head h's block of the concatenation multiply? Entries "
            "hD to (h+1)D − 1 of the concatenation are head h's. Each term is then (B, T, D) "
            "times (D, C): one (B, T, C) part per head.",
            "Cut W^O's rows into H blocks of D, one block per head, as a tensor (H, D, C); a "
            "batched matrix product of heads (B, H, T, D) with it gives (B, H, T, C) in one go, "
            "thanks to broadcasting (or loop over the heads and stack along dim=1). Check that "
            "the sum over dim 1 equals the concatenation times W^O.",
        ),
    )
)


def _blocks(w_o: Tensor, num_heads: int) -> Tensor:
    return w_o.reshape(num_heads, -1, w_o.shape[-1])  # (H, D, C)


def _right(heads: Tensor, w_o: Tensor) -> Tensor:
    return heads @ _blocks(w_o, heads.shape[1])  # (B, H, T, C)


def _through_merge(join: Callable[[Tensor], Tensor], keep_others: bool = False) -> Callable:
    def mistake(heads: Tensor, w_o: Tensor) -> Tensor:
        parts = []
        for h in range(heads.shape[1]):
            only = heads.clone()
            if not keep_others:
                only[:, [i for i in range(heads.shape[1]) if i != h]] = 0
            parts.append(join(only) @ w_o)  # (B, T, C)
        return torch.stack(parts, dim=1)

    return mistake


def _whole_w_o(heads: Tensor, w_o: Tensor) -> Tensor:
    return torch.stack([heads[:, h] @ w_o for h in range(heads.shape[1])], dim=1)


def _columns(heads: Tensor, w_o: Tensor) -> Tensor:
    d = heads.shape[-1]
    parts = [heads[:, h] @ w_o[:, h * d : (h + 1) * d].T for h in range(heads.shape[1])]
    return torch.stack(parts, dim=1)


def _every_h_th_row(heads: Tensor, w_o: Tensor) -> Tensor:
    h, d = heads.shape[1], heads.shape[-1]
    return heads @ w_o.reshape(d, h, -1).transpose(0, 1)


def _transposed(heads: Tensor, w_o: Tensor) -> Tensor:
    return heads @ w_o.T.reshape(heads.shape[1], heads.shape[-1], -1)


def _rows_from_h(heads: Tensor, w_o: Tensor) -> Tensor:
    d = heads.shape[-1]
    return torch.stack([heads[:, h] @ w_o[h : h + d] for h in range(heads.shape[1])], dim=1)


def _blocks_of_h_rows(heads: Tensor, w_o: Tensor) -> Tensor:
    h = heads.shape[1]  # the number of heads where the head size belongs
    return torch.stack([heads[:, i] @ w_o[i * h : (i + 1) * h] for i in range(h)], dim=1)


def _one_block_per_token(heads: Tensor, w_o: Tensor) -> Tensor:
    t = heads.shape[2]  # the heads' shape read as (B, T, H, D): T taken for H
    return heads @ w_o.reshape(t, -1, w_o.shape[-1])


def _equal_shares(heads: Tensor, w_o: Tensor) -> Tensor:
    b, h, t, _ = heads.shape
    share = merge(heads) @ w_o / h  # (B, T, C)
    return share.unsqueeze(1).expand(b, h, t, w_o.shape[-1])


def _zeroed_in_place(heads: Tensor, w_o: Tensor) -> Tensor:
    parts = []
    for h in range(heads.shape[1]):
        only = heads  # not a copy: the zeros stay for the next heads
        only[:, [i for i in range(heads.shape[1]) if i != h]] = 0
        parts.append(merge(only) @ w_o)
    return torch.stack(parts, dim=1)


MISTAKES = (
    Mistake(
        "multiplied each head's output by the whole of W^O instead of its own D rows",
        "a head's output is D wide and meets only the D rows of W^O that its block of the "
        "concatenation multiplies; the whole W^O is H·D rows tall.",
        _whole_w_o,
    ),
    Mistake(
        "took head h's columns of W^O (as if it were stored (out, in)) instead of its rows",
        "here W^O is used as concat @ w_o, (H·D, C): a row of W^O belongs to one entry of the "
        "concatenation, so head h's block is a block of rows.",
        _columns,
    ),
    Mistake(
        "gave head h every H-th row of W^O (rows h, h + H, …) instead of rows hD to (h+1)D − 1",
        "the concatenation puts head 0's D entries first, then head 1's: each head meets a "
        "contiguous block of D rows, cut as (H, D), not (D, H).",
        _every_h_th_row,
    ),
    Mistake(
        "took rows h to h + D − 1 of W^O for head h instead of rows hD to (h+1)D − 1",
        "head h's block of the concatenation starts at entry hD, after the D entries of each "
        "head before it: its rows of W^O start there too, so the blocks do not overlap.",
        _rows_from_h,
    ),
    Mistake(
        "cut W^O into blocks of H rows instead of D, mixing up the number of heads and the head "
        "size",
        "head h's entries of the concatenation are D wide, so it meets D rows of W^O, starting "
        "at row hD; blocks of H rows fit only when H happens to equal D.",
        _blocks_of_h_rows,
    ),
    Mistake(
        "cut W^O into one block per token instead of one per head (the heads' shape read as "
        "(B, T, H, D))",
        "heads is (B, H, T, D): its second dimension counts the heads, and W^O has one block of "
        "D rows per head; the number of tokens does not enter the cut.",
        _one_block_per_token,
    ),
    Mistake(
        "cut W^O transposed into the heads' blocks",
        "W^O is (H·D, C) and used as concat @ w_o: its rows, not the rows of its transpose, "
        "line up with the entries of the concatenation.",
        _transposed,
    ),
    Mistake(
        "returned the sum over the heads (the whole output) instead of each head's part",
        "the result keeps one (T, C) part per head, (B, H, T, C); only their sum is the "
        "multi-head output.",
        lambda heads, w_o: _right(heads, w_o).sum(dim=1),
    ),
    Mistake(
        "divided each head's part by the number of heads",
        "the heads are concatenated, not averaged: the parts add up to Concat(heads) W^O with "
        "no factor 1/H.",
        lambda heads, w_o: _right(heads, w_o) / heads.shape[1],
    ),
    Mistake(
        "gave every head an equal share of the output, the output divided by H",
        "the parts add up to the output, but each must be what its own head adds: heads with "
        "different outputs add different amounts.",
        _equal_shares,
    ),
    Mistake(
        "stacked the heads' parts in front of the batch: (H, B, T, C) instead of (B, H, T, C)",
        "the batch stays the first dimension; the heads dimension sits where it is in the "
        "heads' outputs, after the batch.",
        lambda heads, w_o: _right(heads, w_o).transpose(0, 1),
    ),
    Mistake(
        "returned the parts as (B, T, H, C) instead of (B, H, T, C)",
        "the heads dimension stays where it is in the heads' outputs, in front of the tokens.",
        lambda heads, w_o: _right(heads, w_o).transpose(1, 2),
    ),
    Mistake(
        "joined the heads by reading (B, H, T, D) straight as (B, T, H·D), without the transpose",
        "in memory, head 0's whole table comes first: read straight, one token's row gets "
        "numbers of several tokens. The heads must go behind the tokens before they are joined.",
        _through_merge(merge_without_transpose),
    ),
    Mistake(
        "joined the heads with view after a transpose",
        "after the transpose the tensor is no longer laid out row by row in memory, and view "
        "refuses it (except when a dimension of size 1 makes it harmless).",
        _through_merge(merge_with_view),
    ),
    Mistake(
        "zeroed the other heads in heads itself, not in a copy, so later heads were zeros too",
        "a name given to a tensor is not a copy: zeroing through it changes the heads' outputs "
        "themselves, and from the second head on the outputs are already zero.",
        _zeroed_in_place,
    ),
    Mistake(
        "multiplied every head by the first D rows of W^O, the rows of head 0",
        "the rows of W^O come in blocks of D, one block per head, in the order of the heads in "
        "the concatenation: head h meets only rows hD to (h+1)D − 1, each head its own block.",
        lambda heads, w_o: heads @ w_o[: heads.shape[-1]],
    ),
    Mistake(
        "gave every head the whole output instead of its own part",
        "each part must come from one head's output alone; with the other heads left in, every "
        "part is the full output and their sum is H times too large.",
        _through_merge(merge, keep_others=True),
    ),
)


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        # description, B, H, T, D, C
        ("B=2, 2 heads, T=3, D=4, W^O (8, 8)", 2, 2, 3, 4, 8),
        ("B=2, 3 heads, T=5, D=2, W^O (6, 4)", 2, 3, 5, 2, 4),
        ("one head: B=2, T=3, D=4, W^O (4, 5)", 2, 1, 3, 4, 5),
        ("head size 1: B=1, 4 heads, T=3, W^O (4, 4)", 1, 4, 3, 1, 4),
        ("one token: B=3, 2 heads, D=3, W^O (6, 6)", 3, 2, 1, 3, 6),
        ("B=2, 4 heads, T=2, D=3, W^O (12, 7)", 2, 4, 2, 3, 7),
        ("as many heads as dims per head: B=2, 3 heads of 3, T=2, W^O (9, 5)", 2, 3, 2, 3, 5),
        ("as many tokens as heads: B=1, 3 heads, T=3, D=2, W^O (6, 5)", 1, 3, 3, 2, 5),
    ]
    cases = []
    for description, b, h, t, d, c in specs:
        heads, w_o = randn64(b, h, t, d, generator=g), randn64(h * d, c, generator=g)
        cases.append(Case(description, (heads, w_o), _right(heads, w_o)))
    return cases


def _adds_up(got: object, case: Case) -> str | None:
    """Whether the parts add up to Concat(heads) W^O, and if so, that they are split wrongly."""
    heads, w_o = case.args
    if not isinstance(got, Tensor) or not bool(torch.isfinite(got).all()):
        return None
    total = got.detach().double().sum(dim=1)
    if not torch.allclose(total, merge(heads) @ w_o, atol=1e-5, rtol=1e-4):
        return "the parts do not add up to Concat(heads) W^O, the multi-head output"
    return (
        "the parts add up to Concat(heads) W^O, but they are not split by head: head h's part "
        "must come from head h's output alone"
    )


@checker_of(HEAD_CONTRIBUTIONS, MISTAKES)
def check_head_contributions(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``my_head_contributions(heads, w_o)``: (B, H, T, D), (H·D, C) → (B, H, T, C)."""
    return check_function(
        HEAD_CONTRIBUTIONS, fn, _cases(), MISTAKES, properties=(Property(_adds_up),)
    )
