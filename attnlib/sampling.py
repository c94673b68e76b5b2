"""Sampling the next token from a language model's logits: temperature, top-k, top-p, greedy.

:meth:`attnlib.gpt.GPT.generate` calls :func:`sample_next_token` once per new token;
:func:`next_token_probs` is the distribution it draws from, for plotting and checking.

Notebook 10.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def next_token_probs(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
) -> torch.Tensor:
    r"""The distribution a sampler draws the next token from.

    .. math::

        p_i \propto \exp(z_i / T) \text{ for } i \in S, \quad 0 \text{ otherwise}

    In order: the logits are divided by the temperature :math:`T`; ``top_k`` keeps the
    :math:`k` largest; the softmax is taken over what is left; ``top_p`` (nucleus sampling,
    Holtzman et al. 2020) then keeps the smallest set :math:`S` of the most likely tokens
    whose probabilities sum to at least ``top_p``, and renormalises. ``temperature = 0``
    puts all the mass on the largest logit (greedy); ``top_p = 1`` keeps every token.

    Shapes:
        logits: ``(..., V)``; returns ``(..., V)``, summing to 1 over the last dim.
    """
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None:
        kth = torch.topk(scaled, min(top_k, scaled.shape[-1]), dim=-1).values[..., -1:]  # (..., 1)
        scaled = scaled.masked_fill(scaled < kth, -torch.inf)
    probs = torch.softmax(scaled, dim=-1)
    if top_p is None or top_p >= 1:
        return probs
    return nucleus(probs, top_p)


def nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    r"""Keep the smallest set of the most likely tokens whose total is at least ``top_p``.

    A token stays when the tokens ranked above it hold less than ``top_p`` together:
    :math:`\sum_{j \text{ above } i} p_j < \text{top\_p}`. So the token whose probability
    carries the running total across ``top_p`` stays, and the most likely token always
    does. The kept probabilities are renormalised to sum to 1.

    Shapes:
        probs: ``(..., V)``, each row summing to 1; returns ``(..., V)``.
    """
    sorted_probs, order = probs.sort(dim=-1, descending=True)  # (..., V) each
    mass_above = sorted_probs.cumsum(dim=-1) - sorted_probs  # (..., V): what ranks above
    drop_sorted = mass_above >= top_p  # (..., V), in rank order
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # back to vocab order
    kept = probs.masked_fill(drop, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)


def sample_next_token(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row: the argmax at temperature 0, else a draw from :func:`next_token_probs`.

    The arguments come in the order of notebook 10's sampler exercise, which
    :func:`attnlib.checks.check_sampler` checks.

    Shapes:
        logits: ``(B, V)``; returns ``(B, 1)`` token ids.
    """
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = next_token_probs(logits, temperature, top_k, top_p)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator)  # (B, 1)
