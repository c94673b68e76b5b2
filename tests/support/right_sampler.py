"""Notebook 10, Exercise 5's sampler written right, as a learner would (attnlib's own is
refused by the check): `tests/checks/test_checks_nb10_gpt_sampler.py` and
`python -m benchmarks.sampler_checker` hold the statistical check to it. Written apart from
the table of mistakes (`attnlib.checks.nb10_gpt.sampler_mistakes`), not from its `weights`.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def right_sampler(
    logits: Tensor,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    generator: torch.Generator | None,
) -> Tensor:
    """The exercise's sampler, as the notebook's worked solution writes it: (B, V) -> (B, 1)."""
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        z = z.masked_fill(z < z.topk(top_k, dim=-1).values[..., -1:], -torch.inf)
    probs = torch.softmax(z, dim=-1)
    if top_p is not None:
        ranked, order = probs.sort(dim=-1, descending=True)
        keep_sorted = ranked.cumsum(dim=-1) - ranked < top_p
        kept = probs * torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
        probs = kept / kept.sum(dim=-1, keepdim=True)
    return torch.multinomial(probs, 1, generator=generator)
