"""Softmax saturation and the 1/√d_k scaling: the sliders of notebook 02.

Notebook 02.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate import require_int, require_positive, require_positive_int
from attnlib.course.plots import (
    plot_distribution,
)
from attnlib.softmax import softmax, softmax_jacobian

SATURATION_SCORES: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)


@dataclass(frozen=True, eq=False)
class SoftmaxAtScale:
    """Softmax of ``scale * scores`` and how large its gradient still is."""

    scores: torch.Tensor
    probs: torch.Tensor
    max_prob: float
    jacobian_norm: float


def softmax_at_scale(
    scale: float, scores: Sequence[float] | torch.Tensor = SATURATION_SCORES
) -> SoftmaxAtScale:
    r"""Softmax of ``scale · scores`` and the Frobenius norm of its Jacobian.

    Multiplying scores by ``scale`` is the same as a temperature of ``1/scale``.
    As ``scale`` grows the largest weight goes to 1 and :math:`\lVert J \rVert_F`
    to 0: the saturated softmax passes almost no gradient back.

    Shapes:
        scores: ``(n,)``; ``probs``: ``(n,)``.
    """
    scale = require_positive("scale", scale)
    scores_t = torch.as_tensor(scores, dtype=torch.float64)
    if scores_t.dim() != 1:
        raise ValueError(f"scores must have shape (n,), got shape {tuple(scores_t.shape)}")
    probs = softmax(scale * scores_t)
    jacobian = softmax_jacobian(probs)
    return SoftmaxAtScale(
        scores=scale * scores_t,
        probs=probs,
        max_prob=float(probs.max()),
        jacobian_norm=float(torch.linalg.matrix_norm(jacobian)),
    )


def show_softmax_at_scale(
    scale: float, scores: Sequence[float] | torch.Tensor = SATURATION_SCORES
) -> Figure:
    """Bar chart of ``softmax(scale · scores)`` with the gradient size in the title."""
    demo = softmax_at_scale(scale, scores)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = [f"{s:.1f}" for s in demo.scores.tolist()]
    plot_distribution(
        demo.probs,
        labels,
        title=(
            f"softmax({scale:g} × scores): max weight {demo.max_prob:.4f}, "
            f"‖Jacobian‖ = {demo.jacobian_norm:.4f}"
        ),
        xlabel="scaled score",
        ax=ax,
    )
    return fig


@dataclass(frozen=True, eq=False)
class ScoresAtWidth:
    """One query against ``n_keys`` random keys of width ``d_k``, with and without 1/√d_k."""

    d_k: int
    raw_scores: torch.Tensor
    scaled_scores: torch.Tensor
    raw_probs: torch.Tensor
    scaled_probs: torch.Tensor
    raw_jacobian_norm: float
    scaled_jacobian_norm: float


def scores_at_width(d_k: int, n_keys: int = 8, seed: int = 0) -> ScoresAtWidth:
    r"""Random ``q`` and keys with independent N(0, 1) entries, scored at width ``d_k``.

    :math:`\operatorname{Var}(q \cdot k) = d_k`, so raw scores spread like
    :math:`\sqrt{d_k}` and softmax saturates as ``d_k`` grows; dividing by
    :math:`\sqrt{d_k}` brings the spread back to 1 whatever ``d_k`` is.

    Shapes:
        raw_scores, scaled_scores, raw_probs, scaled_probs: ``(n_keys,)``.
    """
    require_positive_int("d_k", d_k)
    require_int("n_keys", n_keys, minimum=2)
    require_int("seed", seed)
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(d_k, generator=generator, dtype=torch.float64)
    keys = torch.randn(n_keys, d_k, generator=generator, dtype=torch.float64)
    raw = keys @ q  # (n_keys,)
    scaled = raw / math.sqrt(d_k)
    raw_probs, scaled_probs = softmax(raw), softmax(scaled)
    return ScoresAtWidth(
        d_k=d_k,
        raw_scores=raw,
        scaled_scores=scaled,
        raw_probs=raw_probs,
        scaled_probs=scaled_probs,
        raw_jacobian_norm=float(torch.linalg.matrix_norm(softmax_jacobian(raw_probs))),
        scaled_jacobian_norm=float(torch.linalg.matrix_norm(softmax_jacobian(scaled_probs))),
    )


def show_scores_at_width(d_k: int, n_keys: int = 8, seed: int = 0) -> Figure:
    """Two bar charts side by side: softmax of raw q·k and of q·k/√d_k."""
    demo = scores_at_width(d_k, n_keys, seed)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5), sharey=True)
    labels = [f"k{i}" for i in range(n_keys)]
    plot_distribution(
        demo.raw_probs,
        labels,
        title=f"softmax(q·k), d_k = {d_k}: ‖J‖ = {demo.raw_jacobian_norm:.3f}",
        xlabel="key",
        ax=left,
        color="tab:red",
    )
    plot_distribution(
        demo.scaled_probs,
        labels,
        title=f"softmax(q·k / √{d_k}): ‖J‖ = {demo.scaled_jacobian_norm:.3f}",
        xlabel="key",
        ax=right,
        color="tab:green",
    )
    fig.tight_layout()
    return fig
