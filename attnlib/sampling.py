"""Sampling the next token from a language model's logits: temperature, top-k, greedy.

:meth:`attnlib.gpt.GPT.generate` calls :func:`sample_next_token` once per new token;
:func:`next_token_probs` is the distribution it draws from, for plotting and checking.

Notebook 10.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def next_token_probs(
    logits: torch.Tensor, temperature: float, top_k: int | None = None
) -> torch.Tensor:
    r"""The distribution a sampler draws the next token from.

    .. math::

        p_i \propto \exp(z_i / T) \text{ for the } k \text{ largest } z_i, \quad 0 \text{ otherwise}

    ``temperature = 0`` puts all the mass on the largest logit (greedy).

    Shapes:
        logits: ``(..., V)``; returns ``(..., V)``, summing to 1 over the last dim.
    """
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    scaled = logits / temperature
    if top_k is not None:
        kth = torch.topk(scaled, min(top_k, scaled.shape[-1]), dim=-1).values[..., -1:]  # (..., 1)
        scaled = scaled.masked_fill(scaled < kth, -torch.inf)
    return torch.softmax(scaled, dim=-1)


def sample_next_token(
    logits: torch.Tensor, temperature: float, top_k: int | None, generator: torch.Generator | None
) -> torch.Tensor:
    """One token per row: the argmax at temperature 0, else a draw from :func:`next_token_probs`.

    Shapes:
        logits: ``(B, V)``; returns ``(B, 1)`` token ids.
    """
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = next_token_probs(logits, temperature, top_k)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator)  # (B, 1)
