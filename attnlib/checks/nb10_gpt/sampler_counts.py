"""Notebook 10, Exercise 7: how the sampler's counts are judged against a distribution.

A Bernstein bound on each token's count (:func:`allowed_deviation`), the first token whose
count lies outside it (:func:`first_misfit`), and greedy decoding's one freedom: on tied
largest logits it may take any of them, as long as it takes the same one every time
(:func:`greedy_tie_broken`). Notebook 10.
"""

from __future__ import annotations

import math

import torch

DRAWS = 20_000  # draws per case


def allowed_deviation(p: float, draws: int, delta: float) -> float:
    r"""How far a Binomial(draws, p) count strays from draws·p with probability below delta.

    Bernstein's inequality for a sum of independent terms bounded by 1:
    :math:`P(|X - Np| \ge t) \le 2\exp\!\big(-\tfrac{t^2/2}{Np(1-p) + t/3}\big)`; setting the
    right side to ``delta`` and solving for :math:`t` gives
    :math:`t = L/3 + \sqrt{L^2/9 + 2L\,Np(1-p)}` with :math:`L = \ln(2/\delta)`.
    """
    if p <= 0.0:
        return 0.0  # a token of probability 0 never comes
    log_term = math.log(2 / delta)
    return log_term / 3 + math.sqrt(log_term**2 / 9 + 2 * log_term * draws * p * (1 - p))


def first_misfit(counts: torch.Tensor, probs: torch.Tensor | None, delta: float) -> str | None:
    """None when every count is within its bound of ``probs``, else which token is not."""
    if probs is None:
        return "there is no distribution to draw from"
    for token, (count, p) in enumerate(zip(counts.tolist(), probs.tolist(), strict=True)):
        expected = DRAWS * p
        if abs(count - expected) > allowed_deviation(p, DRAWS, delta):
            if p == 0.0:
                return f"token {token} came {count} times, but its probability is 0"
            bound = allowed_deviation(p, DRAWS, delta)
            return (
                f"token {token} came {count} times; about {expected:.0f} expected (± {bound:.0f})"
            )
    return None


def greedy_tie_broken(logits: torch.Tensor, temperature: float, counts: torch.Tensor) -> bool:
    """Whether, at temperature 0, every draw gave one and the same token among the tied
    largest logits (attnlib's argmax takes the first; any of them is the likeliest)."""
    if temperature != 0:
        return False
    drawn = torch.nonzero(counts).flatten()
    return len(drawn) == 1 and bool(logits[drawn[0]] == logits.max())
