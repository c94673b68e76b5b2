"""Notebook 10, Exercise 4: top-p (nucleus) filtering of probabilities, renormalised.

The cases show each mistake: the notebook's worked example, in a shuffled vocabulary order
(an answer left in sorted order, or mapped back with the inverse permutation, differs); a
top_p below the largest probability (only the likeliest token stays, which a running total
compared with top_p drops); a top_p close to 1 (every token stays); a square batch and rows of
other shapes (sums and running totals along the wrong dimension, without ``keepdim`` or over
the whole batch). Every running total stays at least 0.01 from its top_p, where rounding could
decide.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, vec
from attnlib.checks.nb10_gpt.distributions import rows_are_distributions
from attnlib.checks.nb10_gpt.several import ByShape, check_naming_several

Tensor = torch.Tensor

TOP_P = register(
    Exercise(
        id="ex4_my_top_p_probs",
        notebook="10",
        number=4,
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

# An answer may not hand the work to attnlib's nucleus.
TOP_P_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.next_token_probs: "attnlib.next_token_probs",
        attnlib.sampling.nucleus: "attnlib.sampling.nucleus",
    }
)


def reference(probs: Tensor, top_p: float) -> Tensor:
    return attnlib.sampling.nucleus(probs.double(), top_p)


def _ranked(probs: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The sorted probabilities, their order and the running total of each rank."""
    ranked, order = probs.sort(dim=-1, descending=True)
    return ranked, order, ranked.cumsum(dim=-1)


def _keep_in_place(probs: Tensor, order: Tensor, keep_sorted: Tensor) -> Tensor:
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return probs * keep


def _renormalised(kept: Tensor) -> Tensor:
    return kept / kept.sum(dim=-1, keepdim=True)


def _right_mask(probs: Tensor, top_p: float) -> Tensor:
    ranked, order, total = _ranked(probs)
    return _keep_in_place(probs, order, total - ranked < top_p)


def _drops_crossing(probs: Tensor, top_p: float) -> Tensor:
    _, order, total = _ranked(probs)
    return _renormalised(_keep_in_place(probs, order, total <= top_p))


def _sorted_order(probs: Tensor, top_p: float) -> Tensor:
    ranked, _, total = _ranked(probs)
    return _renormalised(ranked * (total - ranked < top_p))


def _gathered(probs: Tensor, top_p: float) -> Tensor:
    ranked, order, total = _ranked(probs)
    return _renormalised(probs * (total - ranked < top_p).gather(-1, order))


def _unsorted(probs: Tensor, top_p: float) -> Tensor:
    total = probs.cumsum(dim=-1)
    return _renormalised(probs * (total - probs < top_p))


def _ascending(probs: Tensor, top_p: float) -> Tensor:
    ranked, order = probs.sort(dim=-1)
    total = ranked.cumsum(dim=-1)
    return _renormalised(_keep_in_place(probs, order, total - ranked < top_p))


def _one_past(probs: Tensor, top_p: float) -> Tensor:
    ranked, order, total = _ranked(probs)
    n_keep = (total < top_p).sum(dim=-1, keepdim=True) + 1  # how many the nucleus holds
    ranks = torch.arange(probs.shape[-1]).expand_as(ranked)
    return _renormalised(_keep_in_place(probs, order, ranks <= n_keep))


def _one_nucleus(probs: Tensor, top_p: float) -> Tensor:
    ranked, order = probs.flatten().sort(descending=True)  # every row's tokens together
    keep_ranked = ranked.cumsum(0) - ranked < top_p
    keep = torch.zeros_like(keep_ranked).scatter(0, order, keep_ranked)
    return _renormalised(probs * keep.reshape(probs.shape))


def _row_by_row(probs: Tensor, top_p: float) -> Tensor:
    out = torch.zeros_like(probs)
    for i in range(probs.shape[0]):  # one row of the (B, V) batch at a time
        ranked, order = probs[i].sort(descending=True)
        total = 0.0
        for p, j in zip(ranked.tolist(), order.tolist(), strict=True):
            out[i, j] = p
            total += p
            if total >= top_p:
                break
        out[i] = out[i] / out[i].sum()
    return out


def _in_place(probs: Tensor, top_p: float) -> Tensor:
    ranked, order, total = _ranked(probs)
    probs[torch.zeros_like(order, dtype=torch.bool).scatter(-1, order, total - ranked >= top_p)] = 0
    probs /= probs.sum(dim=-1, keepdim=True)
    return probs


ONE_NUCLEUS = Mistake(
    "built one nucleus for the whole batch instead of one per row",
    "each row is its own next-token distribution with its own nucleus: ranked together, the "
    "rows of a sure model take all the places and a row of an unsure one may keep nothing.",
    _one_nucleus,
)
TWO_D_ONLY = Mistake(
    "assumed a 2-D batch (B, V): dimensions or indices fixed for two dimensions",
    "the probabilities may have any shape (..., V), a single row (V,) or a (B, T, V) tensor: "
    "only the last dimension is the vocabulary, whatever comes before it.",
    _row_by_row,
)
IN_PLACE = Mistake(
    "zeroed and renormalised the caller's probabilities in place",
    "the probabilities are not yours to change: the caller still holds them (to show the "
    "whole distribution, or to cut again with another top_p) and finds them cut.",
    _in_place,
)

MISTAKES = (
    Mistake(
        "kept the tokens whose running total stays within top_p, which drops the token that "
        "carries the total past top_p",
        "the nucleus is the smallest set whose total reaches top_p: the token that makes the "
        "total cross top_p belongs to it (and when the likeliest token alone holds more than "
        "top_p, nothing would be left at all).",
        _drops_crossing,
    ),
    Mistake(
        "kept one token more than the nucleus: the one after the token that carries the total "
        "past top_p",
        "the nucleus ends with the token whose probability carries the total past top_p: the "
        "tokens after it are the tail the filter is there to cut.",
        _one_past,
    ),
    Mistake(
        "left the kept probabilities in sorted order instead of at their tokens",
        "the result is indexed by the vocabulary, as the input is: each kept probability must "
        "go back to the token it came from.",
        _sorted_order,
    ),
    Mistake(
        "brought the keep/drop marks back with gather instead of scatter",
        "sort's indices say where each ranked entry came from: gather with them applies the "
        "inverse permutation, so the marks land on the wrong tokens.",
        _gathered,
    ),
    Mistake(
        "took the running total in vocabulary order, without ranking the tokens first",
        "the nucleus is made of the likeliest tokens: the total must run from the largest "
        "probability down, whatever the tokens' order in the vocabulary.",
        _unsorted,
    ),
    Mistake(
        "ranked the tokens from the least likely (sort's default, ascending)",
        "the nucleus starts at the likeliest token; from the least likely, the set that "
        "reaches top_p is made of the tokens a sampler should drop.",
        _ascending,
    ),
    Mistake(
        "did not renormalise the kept probabilities",
        "after dropping tokens the row sums to less than 1: divide it by its own total so "
        "that it is a distribution again.",
        _right_mask,
    ),
    Mistake(
        "renormalised by the total of the whole batch instead of each row's",
        "each row is its own distribution and must sum to 1 on its own.",
        lambda p, top_p: (kept := _right_mask(p, top_p)) / kept.sum(),
    ),
    Mistake(
        "summed each row without keeping its dimension",
        "the totals have shape (B,) instead of (B, 1) and broadcast along the columns: a "
        "square batch divides column j by row j's total, any other batch fails.",
        lambda p, top_p: (kept := _right_mask(p, top_p)) / kept.sum(dim=-1),
    ),
    Mistake(
        "kept the tokens whose own probability is at least top_p",
        "top_p bounds the total of the kept tokens, not each one's probability: with top_p = "
        "0.8 the worked example keeps three tokens none of which has 0.8 alone.",
        lambda p, top_p: _renormalised(p * (p >= top_p)),
    ),
    ONE_NUCLEUS,
    TWO_D_ONLY,
    IN_PLACE,
)
BY_SHAPE = ByShape(rows_mixed=ONE_NUCLEUS, two_d_only=TWO_D_ONLY, in_place=IN_PLACE)


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
    cube = torch.softmax(torch.randn(2, 2, 6, generator=g, dtype=torch.float64) * 1.5, dim=-1)
    specs: list[tuple[str, Tensor, float]] = [
        ("the worked example, top_p = 0.8", example, 0.8),
        ("2 rows, top_p = 0.5", pair, 0.5),
        ("2 rows, top_p = 0.3: only the likeliest token stays", pair, 0.3),
        ("2 rows, top_p = 0.97: every token stays", pair, 0.97),
        ("a square (4, 4) batch, top_p = 0.6", square, 0.6),
        ("a (2, 2, 6) tensor, top_p = 0.75", cube, 0.75),
    ]
    return [Case(name, (p, top_p), reference(p, top_p)) for name, p, top_p in specs]


@checker_of(TOP_P, MISTAKES)
def check_my_top_p_probs(fn: Callable[[Tensor, float], Tensor]) -> CheckResult:
    """Check ``my_top_p_probs(probs, top_p)``: the smallest set of likeliest tokens whose
    probabilities reach top_p, renormalised; 0 elsewhere.

    Shapes:
        probs: ``(..., V)``, each row summing to 1, ``0 < top_p ≤ 1``; returns ``(..., V)``.
    """
    return check_naming_several(
        TOP_P,
        fn,
        _cases(),
        MISTAKES,
        forbidden=TOP_P_IMPLEMENTATIONS,
        properties=(rows_are_distributions(),),
        atol=1e-7,
        rtol=1e-6,
        by_shape=BY_SHAPE,
    )
