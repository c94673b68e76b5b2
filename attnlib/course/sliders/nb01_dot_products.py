"""The dot product as an angle: the slider of notebook 01.

Notebook 01.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate import require_positive
from attnlib.course.plots import (
    plot_vectors_2d,
)
from attnlib.similarity import cosine_similarity, dot, projection


@dataclass(frozen=True, eq=False)
class DotProductAtAngle:
    """Two 2-D vectors ``angle_degrees`` apart and what the dot product says about them."""

    a: torch.Tensor
    b: torch.Tensor
    dot: float
    cosine: float
    projection: torch.Tensor


def dot_product_at_angle(
    angle_degrees: float, length_a: float = 2.0, length_b: float = 1.5
) -> DotProductAtAngle:
    r"""``b`` lies along the x-axis, ``a`` is rotated ``angle_degrees`` from it.

    Then :math:`a \cdot b = \lVert a \rVert \lVert b \rVert \cos\theta`, and the
    projection of ``a`` onto ``b`` has signed length :math:`\lVert a \rVert\cos\theta`.
    """
    length_a = require_positive("length_a", length_a)
    length_b = require_positive("length_b", length_b)
    theta = math.radians(angle_degrees)
    a = torch.tensor([length_a * math.cos(theta), length_a * math.sin(theta)], dtype=torch.float64)
    b = torch.tensor([length_b, 0.0], dtype=torch.float64)
    return DotProductAtAngle(
        a=a,
        b=b,
        dot=float(dot(a, b)),
        cosine=float(cosine_similarity(a, b)),
        projection=projection(a, b),
    )


def show_dot_product_at_angle(
    angle_degrees: float, length_a: float = 2.0, length_b: float = 1.5
) -> Figure:
    """Draw ``a``, ``b`` and the projection of ``a`` onto ``b`` for a given angle."""
    demo = dot_product_at_angle(angle_degrees, length_a, length_b)
    fig, ax = plt.subplots(figsize=(5, 5))
    plot_vectors_2d(
        {"a": demo.a, "b": demo.b},
        title=f"θ = {angle_degrees:.0f}°:  a·b = {demo.dot:.2f},  cos θ = {demo.cosine:.2f}",
        ax=ax,
    )
    px, py = demo.projection.tolist()
    ax.plot([demo.a[0].item(), px], [demo.a[1].item(), py], "k:", lw=1)
    ax.plot([0, px], [0, py], color="tab:green", lw=5, alpha=0.5, label="projection of a on b")
    ax.legend(loc="lower left")
    return fig
