"""Temperature and top-k on a next-token distribution: the sliders of notebook 10.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate_tensors import require_float_tensor
from attnlib.course.plots import (
    plot_distribution,
)
from attnlib.sampling import next_token_probs


def sampling_distribution(
    logits: torch.Tensor, temperature: float, top_k: int | None = None
) -> torch.Tensor:
    """:func:`attnlib.sampling.next_token_probs` for one logit vector, with checked arguments.

    Shapes:
        logits: ``(V,)``; returns ``(V,)`` summing to 1.
    """
    require_float_tensor("logits", logits)
    if logits.dim() != 1:
        raise ValueError(f"logits must have shape (V,), got {tuple(logits.shape)}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and not 1 <= top_k <= logits.shape[0]:
        raise ValueError(f"top_k must be in [1, {logits.shape[0]}] or None, got {top_k}")
    return next_token_probs(logits, temperature, top_k)


def show_sampling_distribution(
    logits: torch.Tensor, labels: Sequence[str], temperature: float, top_k: int | None = None
) -> Figure:
    """Bar chart of :func:`sampling_distribution`, with its entropy in the title."""
    probs = sampling_distribution(logits, temperature, top_k)
    if len(labels) != probs.shape[0]:
        raise ValueError(f"labels has {len(labels)} entries, logits has {probs.shape[0]}")
    nonzero = probs[probs > 0]
    entropy = max(0.0, float(-(nonzero * nonzero.log()).sum()))  # no "-0.00" for one token
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(labels) + 2), 3.6))
    plot_distribution(
        probs,
        list(labels),
        title=f"next token at T = {temperature:g}, top-k = {top_k}: entropy {entropy:.2f} nats",
        xlabel="next token",
        ax=ax,
    )
    return fig
