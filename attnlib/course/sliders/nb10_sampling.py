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
    logits: torch.Tensor,
    labels: Sequence[str],
    temperature: float,
    top_k: int | None = None,
    *,
    shown: str = "the next token",
) -> Figure:
    """Bar chart of :func:`sampling_distribution`, with its entropy in the title.

    ``shown`` says what the bars are, for the title: the caller that passes only some of a
    model's logits (its 20 likeliest characters, say) says so there, so that "top-k off" is
    not read as the whole vocabulary.
    """
    probs = sampling_distribution(logits, temperature, top_k)
    if len(labels) != probs.shape[0]:
        raise ValueError(f"labels has {len(labels)} entries, logits has {probs.shape[0]}")
    nonzero = probs[probs > 0]
    entropy = max(0.0, float(-(nonzero * nonzero.log()).sum()))  # no "-0.00" for one token
    cut = "off" if top_k is None else f"= {top_k}"
    fig, ax = plt.subplots(figsize=(max(6.0, 0.4 * len(labels) + 2), 4.0))
    plot_distribution(
        probs,
        list(labels),
        title=f"{shown}\nT = {temperature:g}, top-k {cut}: entropy {entropy:.2f} nats",
        xlabel="next token",
        ax=ax,
        ylim=(0.0, 1.25),
    )
    for value in ax.texts:  # the bars' values, upright: side by side they run together
        value.set_rotation(90)
    fig.tight_layout()
    return fig
