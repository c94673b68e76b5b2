"""Notebook 10, Exercise 6: the usual mistakes in top-p (nucleus) filtering, each written as a
learner would write it (:mod:`.top_p` checks the answer).

Three are named by how an answer behaves on the cases' shapes (:data:`BY_SHAPE`, see
:mod:`.several`): one nucleus for the whole batch, code for a 2-D batch only, and the caller's
probabilities cut in place.
"""

from __future__ import annotations

import torch

from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import EPSILONS, with_epsilons
from attnlib.checks.engine import ByShape

Tensor = torch.Tensor


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


def _likeliest_then_within(probs: Tensor, top_p: float) -> Tensor:
    _, order, total = _ranked(probs)
    keep_sorted = total <= top_p
    keep_sorted[..., 0] = True  # the likeliest token always stays
    return _renormalised(_keep_in_place(probs, order, keep_sorted))


def _marks_unmapped(probs: Tensor, top_p: float) -> Tensor:
    ranked, _, total = _ranked(probs)
    return _renormalised(probs * (total - ranked < top_p))  # mark i put on token i


def _keeps_at_top_p(probs: Tensor, top_p: float) -> Tensor:
    ranked, order, total = _ranked(probs)
    return _renormalised(_keep_in_place(probs, order, total - ranked <= top_p))


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
        "kept the likeliest token, then only the tokens whose running total stays within "
        "top_p, which drops the token that carries the total past top_p",
        "the nucleus is the smallest set whose total reaches top_p: the token that makes the "
        "total cross top_p belongs to it. Keeping the likeliest token always helps only when "
        "it alone holds more than top_p.",
        _likeliest_then_within,
    ),
    Mistake(
        "kept one token more than the nucleus: the one after the token that carries the total "
        "past top_p",
        "the nucleus ends with the token whose probability carries the total past top_p: the "
        "tokens after it are the tail the filter is there to cut.",
        _one_past,
    ),
    Mistake(
        "kept a token while the tokens ranked above it hold at most top_p (<=), so a total "
        "that reaches top_p exactly still lets the next token in",
        "the nucleus is the smallest set whose total reaches top_p: once the tokens above hold "
        "exactly top_p the set is complete, and the next token belongs to the tail. Only a "
        "total strictly below top_p lets another token in.",
        _keeps_at_top_p,
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
        "put the keep/drop marks of the ranked row on the tokens in vocabulary order, without "
        "mapping them back",
        "the marks are computed in rank order: the i-th mark belongs to the i-th likeliest "
        "token, not to token i. The indices sort returns say which token each mark belongs to.",
        _marks_unmapped,
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
        "divided the kept probabilities by top_p instead of by their own total",
        "the kept tokens hold at least top_p between them, usually more (0.85 in the worked "
        "example, for top_p = 0.8): divided by top_p they sum to more than 1. Each row is "
        "divided by what it kept.",
        lambda p, top_p: _right_mask(p, top_p) / top_p,
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
    *with_epsilons(
        "added a small number (an epsilon) to the nucleus's total before dividing by it",
        "the nucleus holds at least top_p > 0, so its total is never 0 and needs no guard: "
        "with the epsilon added, every row sums to a little less than 1.",
        lambda eps: (
            lambda p, top_p: (
                (kept := _right_mask(p, top_p)) / (kept.sum(dim=-1, keepdim=True) + eps)
            )
        ),
        EPSILONS[:-1],  # 1e-7 changes no probability beyond the tolerance
    ),
    ONE_NUCLEUS,
    TWO_D_ONLY,
    IN_PLACE,
)
BY_SHAPE = ByShape(rows_mixed=ONE_NUCLEUS, two_d_only=TWO_D_ONLY, in_place=IN_PLACE)
