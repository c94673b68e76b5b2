"""Naive self-attention's weights as the inputs grow: the slider of notebook 03.

Notebook 03.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate import require_positive
from attnlib._validate_tensors import require_float_tensor
from attnlib.course.plots import (
    plot_attention,
)
from attnlib.softmax import softmax


def naive_weights_at_scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    r"""Naive self-attention weights :math:`\operatorname{softmax}((sX)(sX)^\top)`.

    Scaling every vector by ``s`` multiplies every score by :math:`s^2`; since a
    vector's score with itself, :math:`\lVert x_t \rVert^2`, is usually the
    largest in its row, the weights collapse onto the diagonal as ``s`` grows.

    Shapes:
        x: ``(T, C)``; returns ``(T, T)``.
    """
    require_float_tensor("x", x)
    if x.dim() != 2:
        raise ValueError(f"x must have shape (T, C), got shape {tuple(x.shape)}")
    scale = require_positive("scale", scale)
    scaled = scale * x
    return softmax(scaled @ scaled.T)  # (T, T)


def show_naive_weights_at_scale(x: torch.Tensor, tokens: Sequence[str], scale: float) -> Figure:
    """Heatmap of :func:`naive_weights_at_scale`, with the mean diagonal weight in the title."""
    weights = naive_weights_at_scale(x, scale)
    if len(tokens) != x.shape[0]:
        raise ValueError(f"tokens has {len(tokens)} entries, x has {x.shape[0]} rows")
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 + 0.8 * len(tokens)), 0.9 + 0.7 * len(tokens)))
    self_weight = float(weights.diagonal().mean())
    plot_attention(
        weights,
        list(tokens),
        title=f"softmax((sX)(sX)ᵀ), s = {scale:.2f}: mean self-weight {self_weight:.2f}",
        ax=ax,
    )
    fig.tight_layout()
    return fig
