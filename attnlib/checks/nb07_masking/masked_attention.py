"""Notebook 07, Exercise 3: masked attention on batched scores, with empty rows and in float16.

The cases: a 2-D cached causal mask (d_v ≠ d_k), batched (B, H, T, d) scores with a (T, T) mask,
a (B, 1, 1, T) padding mask, a (B, 1, T, T) causal-and-left-padding mask whose first rows may
attend to nothing, an all-padding sentence with T_q ≠ T_k, and the empty rows again in float16,
where −1e9 does not fit. The mistakes are in :mod:`.attention_mistakes`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch

import attnlib
from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.engine import Property, check_function
from attnlib.checks.nb07_masking.attention_mistakes import (
    ATTENTION_IMPLEMENTATIONS,
    MISTAKES,
)

Tensor = torch.Tensor
Pair = tuple[Tensor, Tensor]

MASKED_ATTENTION = register(
    Exercise(
        id="ex3_masked_attention",
        notebook="07",
        number=3,
        name="my_masked_attention",
        hints=(
            "The mask acts on the scores, before the softmax: a blocked pair must end with weight "
            "exactly 0 while each row that may attend to something still sums to 1. A row that "
            "may attend to nothing ends with weights 0 and output 0, never NaN, in every dtype, "
            "float16 included.",
            "Give the blocked scores a value that the softmax turns into exactly 0 and that "
            "exists in the scores' own dtype (float16 ends at −65504). A row whose scores are all "
            "blocked still comes out uniform (or NaN): deal with it after the softmax, with the "
            "mask again. The mask broadcasts against the scores whatever its shape.",
            "Scores: q times k with its last two dimensions swapped, divided by √d_k, the width "
            "of q and k. Replace the blocked scores by the smallest finite number of their "
            "dtype, take the softmax along the last dimension, set the weights of the blocked "
            "pairs to 0, then multiply by v. (T_q, T_k), (B, 1, 1, T_k) and (B, 1, T_q, T_k) "
            "masks all work unchanged.",
        ),
    )
)


def reference(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Pair:
    """attnlib's masked attention in float64: empty rows give weights 0 and output 0."""
    return attnlib.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)


def _parts(got: object, case: Case) -> tuple[Tensor, Tensor, Tensor] | None:
    """(out, weights, mask broadcast to the weights) when the shapes are right, else None."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return None
    out, weights = got
    expected_out, expected_weights = case.expected
    if not (isinstance(out, Tensor) and isinstance(weights, Tensor)):
        return None
    if out.shape != expected_out.shape or weights.shape != expected_weights.shape:
        return None
    mask = case.args[3].expand(weights.shape)
    return out.detach().double(), weights.detach().double(), mask


def _index(where: Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.nonzero(where)[0])


def _empty_rows_give_zero() -> Property:
    def problem(got: object, case: Case) -> str | None:
        parts = _parts(got, case)
        if parts is None:
            return None
        out, weights, mask = parts
        empty = ~mask.any(dim=-1)  # (..., T_q): rows that may attend to nothing
        bad = empty & ~((weights == 0).all(dim=-1) & (out == 0).all(dim=-1))
        if not bool(bad.any()):
            return None
        row = _index(bad)
        if bool(torch.isnan(weights[row]).any() or torch.isnan(out[row]).any()):
            found = "NaN"
        else:
            found = f"weights summing to {weights[row].sum().item():.3g} and a non-zero output"
        return (
            f"row {row} of the weights may attend to no key: its weights and its output should "
            f"be 0, got {found}"
        )

    return Property(problem)


def _blocked_pairs_get_nothing() -> Property:
    def problem(got: object, case: Case) -> str | None:
        parts = _parts(got, case)
        if parts is None:
            return None
        _, weights, mask = parts
        leak = ~mask & ~(weights.abs() <= 1e-6)  # NaN leaks too
        if not bool(leak.any()):
            return None
        where = _index(leak)
        return (
            f"the weight at index {where} is {weights[where].item():.4g}, but the mask blocks "
            "that pair: a blocked key gets weight exactly 0"
        )

    return Property(problem)


def _allowed_rows_sum_to_one() -> Property:
    def problem(got: object, case: Case) -> str | None:
        parts = _parts(got, case)
        if parts is None:
            return None
        _, weights, mask = parts
        sums = weights.sum(dim=-1)
        off = mask.any(dim=-1) & ~((sums - 1).abs() <= 2e-3)
        if not bool(off.any()):
            return None
        row = _index(off)
        return (
            f"row {row} may attend to some keys, but its weights sum to {sums[row].item():.4g}: "
            "the weights of a row with an allowed key sum to 1"
        )

    return Property(problem)


def _randn(generator: torch.Generator, *shape: int) -> Tensor:
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


@cache
def _cases() -> tuple[Case, ...]:
    """The cases, made once: the checker calls the answer on copies of their arguments."""
    g = fixed_generator()
    left = torch.tensor([[False, False, True, True, True], [True] * 5])  # (B, T): real tokens
    causal_left = attnlib.causal_mask(5) & left[:, None, None, :]  # (B, 1, T, T)
    q4, k4, v4 = _randn(g, 2, 2, 5, 4), _randn(g, 2, 2, 5, 4), _randn(g, 2, 2, 5, 3)
    specs = [
        (
            "2-D: 3 new queries after 2 cached keys, a (3, 5) mask, d_k = 4, d_v = 2",
            [(3, 4), (5, 4), (5, 2)],
            attnlib.causal_mask(3, 5),
        ),
        (
            "batched (B, H, T, d) = (2, 3, 4, 6), d_v = 3, one (4, 4) causal mask for all",
            [(2, 3, 4, 6), (2, 3, 4, 6), (2, 3, 4, 3)],
            attnlib.causal_mask(4),
        ),
        (
            "a (B, 1, 1, T) padding mask, lengths [3, 5], scores (2, 2, 5, 5)",
            [(2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 2)],
            attnlib.padding_mask([3, 5], 5),
        ),
        (
            "an all-padding sentence (lengths [0, 4]), 3 queries and 4 keys",
            [(2, 2, 3, 4), (2, 2, 4, 4), (2, 2, 4, 2)],
            attnlib.padding_mask([0, 4], 4),
        ),
    ]
    cases = []
    for name, shapes, mask in specs:
        args = (*(_randn(g, *shape) for shape in shapes), mask)
        cases.append(Case(name, args, reference(*args)))
    empty_rows = (q4, k4, v4, causal_left)
    name = "causal and left padding, (B, 1, T, T): rows 0 and 1 of sentence 0 may attend to nothing"
    cases.insert(3, Case(name, empty_rows, reference(*empty_rows)))
    half = (q4.half(), k4.half(), v4.half(), causal_left)
    name = "float16: causal and left padding, rows that may attend to nothing"
    cases.append(Case(name, half, reference(*half), atol=5e-3, rtol=5e-3))
    return tuple(cases)


@checker_of(MASKED_ATTENTION, MISTAKES)
def check_my_masked_attention(
    fn: Callable[[Tensor, Tensor, Tensor, Tensor], Pair],
) -> CheckResult:
    """Check ``my_masked_attention(q, k, v, mask) -> (out, weights)``, True = may attend."""
    return check_function(
        MASKED_ATTENTION,
        fn,
        _cases(),
        MISTAKES,
        forbidden=ATTENTION_IMPLEMENTATIONS,
        properties=(
            _empty_rows_give_zero(),
            _blocked_pairs_get_nothing(),
            _allowed_rows_sum_to_one(),
        ),
        output_names=("out", "weights"),
        dtypes=(),
    )
