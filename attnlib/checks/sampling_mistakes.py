"""The usual mistakes of a sampler, each written as the distribution it really samples from.

:func:`attnlib.checks.check_sampler`, :func:`attnlib.checks.check_top_p_probs` and
:func:`attnlib.checks.check_top_k_logits` compare a failing learner's results with these to
name the mistake, and the tests prove that each one fails its checker.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.sampling import next_token_probs, nucleus

# distribution(logits (V,), temperature, top_k, top_p) -> probabilities (V,)
Distribution = Callable[..., torch.Tensor]


def keep_ranks(probs: torch.Tensor, keep: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Keep the tokens whose rank ``keep`` selects (given the sorted probabilities)."""
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    kept_sorted = keep(sorted_probs)
    kept = torch.zeros_like(kept_sorted).scatter(-1, order, kept_sorted)
    out = probs.masked_fill(~kept, 0.0)
    return out / out.sum(dim=-1, keepdim=True)


def drops_crossing_token(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    # cumsum <= top_p without the shift: the token that carries the total past top_p goes.
    def keep(sorted_probs: torch.Tensor) -> torch.Tensor:
        kept = sorted_probs.cumsum(dim=-1) <= top_p
        kept[..., 0] = True
        return kept

    return keep_ranks(probs, keep)


def keeps_one_more(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    def keep(sorted_probs: torch.Tensor) -> torch.Tensor:
        kept = sorted_probs.cumsum(dim=-1) - sorted_probs < top_p
        return torch.cat([kept[..., :1], kept[..., :-1]], dim=-1) | kept  # one rank further

    return keep_ranks(probs, keep)


def unsorted_nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    # The kept sorted probabilities written back at positions 0, 1, 2, … instead of their tokens.
    sorted_probs, _ = probs.sort(dim=-1, descending=True)
    return nucleus(sorted_probs, top_p)


def with_nucleus(nucleus_fn: Callable[[torch.Tensor, float], torch.Tensor]) -> Distribution:
    def distribution(
        logits: torch.Tensor, temperature: float, top_k: int | None, top_p: float | None
    ) -> torch.Tensor:
        probs = next_token_probs(logits, temperature, top_k)
        return probs if top_p is None else nucleus_fn(probs, top_p)

    return distribution


def nucleus_before_temperature(
    logits: torch.Tensor, temperature: float, top_k: int | None, top_p: float | None
) -> torch.Tensor:
    if top_p is None or temperature == 0:
        return next_token_probs(logits, temperature, top_k)
    kept = next_token_probs(logits, 1.0, top_k, top_p) > 0
    return next_token_probs(logits.masked_fill(~kept, -torch.inf), temperature)


def nucleus_before_top_k(
    logits: torch.Tensor, temperature: float, top_k: int | None, top_p: float | None
) -> torch.Tensor:
    if top_p is None or top_k is None or temperature == 0:
        return next_token_probs(logits, temperature, top_k, top_p)
    kept = next_token_probs(logits, temperature, None, top_p) > 0
    return next_token_probs(logits.masked_fill(~kept, -torch.inf), temperature, top_k)


# Each usual mistake as the distribution it samples from: named when a failed check's counts
# fit one of them.
MISTAKES: dict[str, Distribution] = {
    "the temperature has no effect: it was applied after the softmax (or not at all)": (
        lambda z, t, k, p: next_token_probs(z, 1.0 if t else 0.0, k, p)
    ),
    "the logits were multiplied by the temperature instead of divided": (
        lambda z, t, k, p: next_token_probs(z, 1 / t if t else 0.0, k, p)
    ),
    "top-k kept k + 1 tokens (off by one at the boundary)": (
        lambda z, t, k, p: next_token_probs(z, t, None if k is None else k + 1, p)
    ),
    "top-k kept k − 1 tokens (off by one at the boundary)": (
        lambda z, t, k, p: next_token_probs(z, t, None if k is None else max(k - 1, 1), p)
    ),
    "top-p dropped the token whose probability carries the total past top_p (keep it: the "
    "set is the smallest whose total is at least top_p)": with_nucleus(drops_crossing_token),
    "top-p kept one token more than the smallest set that reaches top_p": with_nucleus(
        keeps_one_more
    ),
    "top-p's kept probabilities were left in sorted order: map them back to their tokens "
    "with the indices that sort returned": with_nucleus(unsorted_nucleus),
    "top-p was applied before the temperature (divide the logits by T first)": (
        nucleus_before_temperature
    ),
    "top-p was applied before top-k (top-k first, then the softmax, then top-p)": (
        nucleus_before_top_k
    ),
}


def not_renormalised(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    return probs.masked_fill(nucleus(probs, top_p) == 0, 0.0)


NUCLEUS_MISTAKES = {
    "dropped the token that carries the total past top_p": drops_crossing_token,
    "kept one token more than the smallest set that reaches top_p": keeps_one_more,
    "left the kept probabilities in sorted order, not at their tokens": unsorted_nucleus,
    "did not renormalise the kept probabilities to sum to 1": not_renormalised,
}


def _kth_largest(logits: torch.Tensor, k: int) -> torch.Tensor:
    return logits.topk(k, dim=-1).values[..., -1:]  # (B, 1)


def _keeps_k_plus_one(logits: torch.Tensor, k: int) -> torch.Tensor:
    ranked = logits.sort(dim=-1, descending=True).values  # (B, V)
    rank = min(k, logits.shape[-1] - 1)  # index k is the (k + 1)-th largest
    return logits.masked_fill(logits < ranked[..., rank : rank + 1], -torch.inf)


# top_k(logits (B, V), k) -> logits (B, V), each as a learner might write it wrongly.
TOP_K_MISTAKES: dict[str, Callable[[torch.Tensor, int], torch.Tensor]] = {
    "kept k − 1 logits: `<=` removed the k-th largest itself": (
        lambda z, k: z.masked_fill(z <= _kth_largest(z, k), -torch.inf)
    ),
    "kept k + 1 logits: the threshold is the (k + 1)-th largest, an index one too far": (
        _keeps_k_plus_one
    ),
    "the removed logits were set to 0, not -inf": (
        lambda z, k: z.masked_fill(z < _kth_largest(z, k), 0.0)
    ),
    "kept the k smallest logits, not the k largest": (
        lambda z, k: z.masked_fill(z > (-z).topk(k, dim=-1).values[..., -1:].neg(), -torch.inf)
    ),
    "one threshold for all rows (the smallest of their k-th largest logits), not one per row": (
        lambda z, k: z.masked_fill(z < _kth_largest(z, k).min(), -torch.inf)
    ),
}
