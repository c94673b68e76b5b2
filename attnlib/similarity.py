"""Dot products and cosine similarity: the score that attention is built on.

Notebook 01.
"""

from __future__ import annotations

import torch

from attnlib._validate import require_number
from attnlib._validate_tensors import require_same_width


def dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    r"""Dot product along the last dimension, :math:`a \cdot b = \sum_i a_i b_i`.

    Geometrically :math:`a \cdot b = \lVert a \rVert \lVert b \rVert \cos\theta`:
    large when the vectors point the same way, 0 when they are orthogonal and
    negative when they point apart.

    Shapes:
        a: ``(..., n)``, b: ``(..., n)`` (broadcastable); returns ``(...)``.
    """
    require_same_width("a", a, "b", b)
    return (a * b).sum(dim=-1)


def cosine_similarity(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    r"""Cosine of the angle between two vectors.

    .. math::

        \cos\theta = \frac{a \cdot b}{\lVert a \rVert \lVert b \rVert}

    The dot product with the lengths divided out: 1 for the same direction,
    0 for orthogonal, -1 for opposite. A zero vector has no direction; ``eps``
    keeps the result 0 instead of NaN.

    Shapes:
        a: ``(..., n)``, b: ``(..., n)`` (broadcastable); returns ``(...)``.
    """
    require_same_width("a", a, "b", b)
    if require_number("eps", eps) < 0:
        raise ValueError(f"eps must be >= 0, got {eps}")
    norms = a.norm(dim=-1) * b.norm(dim=-1)
    return dot(a, b) / norms.clamp_min(eps)


def projection(a: torch.Tensor, onto: torch.Tensor) -> torch.Tensor:
    r"""Vector projection of ``a`` onto the direction of ``onto``.

    .. math::

        \operatorname{proj}_b(a) = \frac{a \cdot b}{b \cdot b}\, b

    Its signed length is :math:`a \cdot \hat b`: the dot product with a unit
    vector measures how far ``a`` reaches along it.

    Shapes:
        a: ``(..., n)``, onto: ``(..., n)``; returns ``(..., n)``.
    """
    require_same_width("a", a, "onto", onto)
    squared_length = dot(onto, onto)
    if bool((squared_length == 0).any()):
        raise ValueError("onto must not be the zero vector: it has no direction to project onto")
    coefficient = dot(a, onto) / squared_length  # (...)
    return coefficient.unsqueeze(-1) * onto  # (..., n)
