"""Notebook 10, Exercise 6: top-p (nucleus) filtering of probabilities, renormalised.

The cases show each mistake: the notebook's worked example, in a shuffled vocabulary order
(an answer left in sorted order, or mapped back with the inverse permutation, differs); a
top_p below the largest probability (only the likeliest token stays, which a running total
compared with top_p drops); a top_p close to 1 (every token stays); a square batch and rows of
other shapes (sums and running totals along the wrong dimension, without ``keepdim`` or over
the whole batch). Every running total stays at least 0.01 from its top_p, where rounding could
decide, except in one case whose probabilities are halves, quarters and sixteenths: there the
total reaches top_p exactly, with no rounding at all, and the token after it must go.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, vec
from attnlib.checks.engine import check_function
from attnlib.checks.nb10_gpt.distributions import rows_are_distributions
from attnlib.checks.nb10_gpt.top_p_mistakes import BY_SHAPE, MISTAKES

Tensor = torch.Tensor

TOP_P = register(
    Exercise(
        id="ex6_my_top_p_probs",
        notebook="10",
        number=6,
        name="my_top_p_probs",
        hints=(
            "The nucleus is built from the likeliest token down: a token belongs to it when the "
            "tokens ranked above it do not yet hold top_p between them. So the likeliest token "
            "always belongs, and so does the one whose probability carries the total past top_p.",
            "Rank each row's probabilities from the largest, remembering which token each came "
            "from. A running total along the ranked row, minus each token's own probability, is "
            "what the tokens above it hold. Decide keep or drop in rank order, then bring that "
            "decision back to each token's place in the vocabulary before you renormalise.",
            "Sort each row in descending order (sort also gives the indices); compute cumsum "
            "minus the sorted probabilities and compare it with top_p (strictly less: keep); "
            "scatter the kept marks back with the indices sort returned (scatter, not gather); "
            "zero the dropped probabilities and divide each row by its own sum (keepdim).",
        ),
    )
)

# An answer may not hand the work to attnlib's nucleus, nor to transformers' top-p filter.
TOP_P_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.next_token_probs: "attnlib.next_token_probs",
        attnlib.sampling.nucleus: "attnlib.sampling.nucleus",
    },
    paths={
        "attnlib.sampling:_next_token_probs": "attnlib.next_token_probs",
        "attnlib.sampling:_nucleus": "attnlib.sampling.nucleus",
        "transformers.generation.logits_process:TopPLogitsWarper": (
            "transformers' TopPLogitsWarper"
        ),
    },
)


def reference(probs: Tensor, top_p: float) -> Tensor:
    return attnlib.sampling.nucleus(probs.double(), top_p)


def _cases() -> list[Case]:
    g = fixed_generator()
    example = vec(0.10, 0.40, 0.05, 0.25, 0.20)  # the notebook's example, shuffled
    pair = torch.stack([example, vec(0.05, 0.15, 0.45, 0.30, 0.05)])
    square = torch.tensor(
        [
            [0.10, 0.55, 0.20, 0.15],
            [0.30, 0.05, 0.25, 0.40],
            [0.62, 0.08, 0.12, 0.18],
            [0.22, 0.33, 0.06, 0.39],
        ],
        dtype=torch.float64,
    )
    exact = vec(0.1875, 0.5, 0.0625, 0.25)  # sorted: 1/2, 1/4, 3/16, 1/16, exact in binary
    cube = torch.softmax(torch.randn(2, 2, 6, generator=g, dtype=torch.float64) * 1.5, dim=-1)
    specs: list[tuple[str, Tensor, float]] = [
        ("the worked example, top_p = 0.8", example, 0.8),
        ("2 rows, top_p = 0.5", pair, 0.5),
        ("2 rows, top_p = 0.3: only the likeliest token stays", pair, 0.3),
        ("2 rows, top_p = 0.97: every token stays", pair, 0.97),
        ("a square (4, 4) batch, top_p = 0.6", square, 0.6),
        ("a (2, 2, 6) tensor, top_p = 0.75", cube, 0.75),
        ("[0.1875, 0.5, 0.0625, 0.25]: 0.5 + 0.25 reaches top_p = 0.75 exactly", exact, 0.75),
    ]
    return [Case(name, (p, top_p), reference(p, top_p)) for name, p, top_p in specs]


@checker_of(TOP_P, MISTAKES)
def check_my_top_p_probs(fn: Callable[[Tensor, float], Tensor]) -> CheckResult:
    """Check ``my_top_p_probs(probs, top_p)``: the smallest set of likeliest tokens whose
    probabilities reach top_p, renormalised; 0 elsewhere.

    Shapes:
        probs: ``(..., V)``, each row summing to 1, ``0 < top_p ≤ 1``; returns ``(..., V)``.
    """
    return check_function(
        TOP_P,
        fn,
        _cases(),
        MISTAKES,
        forbidden=TOP_P_IMPLEMENTATIONS,
        properties=(rows_are_distributions(),),
        atol=1e-7,
        rtol=1e-6,
        several=BY_SHAPE,
    )
