"""Attention weights under each kind of mask: the selector of notebook 07.

Notebook 07.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib.attention import scaled_dot_product_attention
from attnlib.course.plots import (
    plot_attention,
)
from attnlib.masks import causal_mask, padding_mask

MASK_KINDS: tuple[str, ...] = ("none", "causal", "padding", "causal + padding")


MASK_DEMO_WORDS: tuple[str, ...] = ("the", "cat", "sat", "down", "on", "it")


@dataclass(frozen=True, eq=False)
class MaskedWeights:
    """Attention weights of one short padded sentence under one kind of mask."""

    kind: str
    mask: torch.Tensor
    weights: torch.Tensor


def masked_weights(kind: str, real_length: int = 4, seed: int = 0) -> MaskedWeights:
    r"""Self-attention weights of the 6-token demo sentence under mask ``kind``.

    ``kind`` is one of :data:`MASK_KINDS`. Queries and keys are seeded random
    vectors; the last ``6 - real_length`` tokens are padding. Polarity: ``True`` =
    may attend; blocked weights are exactly 0.

    Shapes:
        mask: ``(6, 6)`` bool; weights: ``(6, 6)``.
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}, got {kind!r}")
    length = len(MASK_DEMO_WORDS)
    if not 1 <= real_length <= length:
        raise ValueError(f"real_length must be in [1, {length}], got {real_length}")
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(length, 8, generator=generator, dtype=torch.float64)
    k = torch.randn(length, 8, generator=generator, dtype=torch.float64)
    v = torch.randn(length, 8, generator=generator, dtype=torch.float64)
    mask = torch.ones(length, length, dtype=torch.bool)
    if "causal" in kind:
        mask &= causal_mask(length)
    if "padding" in kind:
        mask &= padding_mask([real_length], length)[0, 0]  # (1, T) broadcasts over queries
    _, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    return MaskedWeights(kind=kind, mask=mask, weights=weights)


def show_masked_weights(kind: str, real_length: int = 4, seed: int = 0) -> Figure:
    """Heatmap of :func:`masked_weights`; blocked cells are hatched."""
    demo = masked_weights(kind, real_length, seed)
    tokens = [w if i < real_length else "<pad>" for i, w in enumerate(MASK_DEMO_WORDS)]
    fig, ax = plt.subplots(figsize=(6.5, 5))
    plot_attention(demo.weights, tokens, title=f"mask: {kind} (True = may attend)", ax=ax)
    for query, key in torch.nonzero(~demo.mask).tolist():
        ax.add_patch(
            plt.Rectangle(
                (key - 0.5, query - 0.5),
                1,
                1,
                fill=False,
                hatch="//",
                edgecolor="grey",
                linewidth=0,
            )
        )
    fig.tight_layout()
    return fig
