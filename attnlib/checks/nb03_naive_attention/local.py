"""Notebook 03, Exercise 3: causal self-attention that looks back over a window of positions.

``local_self_attention(x, window)``: naive (unscaled) self-attention in which position t may
attend only to positions t − window + 1 … t (itself and the window − 1 before it, fewer at the
start); every other weight is exactly 0 and each row still sums to 1. The cases show each
mistake: windows of 1, 2 and 3 and one longer than the sequence (off-by-one windows, the whole
past, the future, both sides), T ≠ C and a batch whose size differs from T (the length taken
from the wrong dimension), a (B, H, T, C) batch, a single vector, a long vector after short
ones (a softmax over the whole row rounds the visible weights to 0) and float16 (−1e9 does not
fit in it). Vectors are short, so that a hidden score left at 0 still gets a visible weight.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._implementations import ATTENTION, ATTENTION_MODULES
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks.engine import check_function
from attnlib.checks.nb03_naive_attention._common import named_by_overflow, zero_outside
from attnlib.checks.nb03_naive_attention.local_mistakes import (
    MISTAKES,
    masked_attention,
    window_mask,
)

Tensor = torch.Tensor

LOCAL = register(
    Exercise(
        id="ex3_local_self_attention",
        notebook="03",
        number=3,
        name="local_self_attention",
        hints=(
            "A weight is exactly 0 only if its score never reached the softmax as a finite "
            "number: what score has e^score = 0? Decide, for every pair (query t, key j), "
            "whether j is inside t's window, and hide the rest before the softmax normalises.",
            "Key j is in query t's window when it is not in the future (j ≤ t) and not too far "
            "back (t − j < window). Compare a column of query positions with a row of key "
            "positions (torch.arange) and you get the whole (T, T) table of allowed pairs at "
            "once, for any batch.",
            "Build the allowed table from two comparisons of position indices combined with &, "
            "T being x.shape[-2]. Fill the scores x xᵀ where a pair is not allowed with -inf "
            "(a value every float type can hold), then take the row softmax and mix x. Position "
            "t always sees itself, so no row is left empty.",
        ),
    )
)

# Attention functions and modules that take a mask already do what this exercise asks.
MASKED_ATTENTION = ATTENTION | ATTENTION_MODULES


def _reference(x: Tensor, window: int) -> tuple[Tensor, Tensor]:
    return masked_attention(x.double(), window_mask(x, window))


def _cases() -> list[Case]:
    g = fixed_generator()

    def short(*shape: int) -> Tensor:
        return 0.6 * torch.randn(*shape, generator=g)

    half = short(5, 3).half()
    # The last vector is long: every earlier position scores far higher with it than with
    # anything it may see.
    long_last = torch.tensor([[1.0, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [150, 50, 0]])
    specs = [
        ("5 vectors of width 3, window 2", short(5, 3), 2),
        ("window 1: each position sees only itself, (4, 3)", short(4, 3), 1),
        ("a window longer than the sequence: (4, 3), window 6", short(4, 3), 6),
        ("6 vectors of width 4, window 3", short(6, 4), 3),
        ("a single vector, (1, 3), window 3", short(1, 3), 3),
        ("a batch of 2 sequences, (2, 6, 3), window 3", short(2, 6, 3), 3),
        ("a (B, H, T, C) = (2, 2, 5, 4) batch, window 2", short(2, 2, 5, 4), 2),
        ("a long vector last, (4, 3), window 2", long_last, 2),
    ]
    cases = [Case(name, (x, w), _reference(x, w)) for name, x, w in specs]
    cases.append(Case("float16, (5, 3), window 2", (half, 2), _reference(half, 2), 3e-3, 3e-3))
    return cases


def _allowed(case: Case) -> Tensor:
    x, window = case.args
    return window_mask(x, window)


MINUS_1E9 = next(m for m in MISTAKES if "-1e9" in m.name)


@checker_of(LOCAL, MISTAKES)
def check_local_self_attention(
    fn: Callable[[Tensor, int], tuple[Tensor, Tensor]],
) -> CheckResult:
    """Check ``local_self_attention(x, window) -> (out, weights)`` for ``x`` ``(..., T, C)``."""
    cases = _cases()
    result = check_function(
        LOCAL,
        fn,
        cases,
        MISTAKES,
        forbidden=MASKED_ATTENTION,
        properties=(zero_outside(_allowed, "outside the query's window"), rows_sum_to_one()),
        dtypes=(torch.float64,),
    )
    # -1e9 with another mistake: name the one float16 shows beyond doubt, one fix at a time.
    return named_by_overflow(result, LOCAL, fn, cases[-1], MINUS_1E9)
