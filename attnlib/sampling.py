"""A decoder-only Transformer (GPT): causal self-attention, trained to predict the next token.

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
    """One token per row from ``logits (B, V)``: argmax at temperature 0, else a draw."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = next_token_probs(logits, temperature, top_k)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator)  # (B, 1)
