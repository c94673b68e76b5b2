"""A residual connection with LayerNorm, in the paper's post-norm or the common pre-norm order.

Notebook 08.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from attnlib._validate import require_positive, require_positive_int, require_probability
from attnlib._validate_tensors import require_width


class Residual(nn.Module):
    r"""Wraps a sublayer ``f`` (attention or FFN) with a skip connection and LayerNorm.

    .. math::

        \text{post-norm (paper):}\quad y = \operatorname{LN}(x + \operatorname{Dropout}(f(x)))

        \text{pre-norm:}\quad y = x + \operatorname{Dropout}(f(\operatorname{LN}(x)))

    The skip path lets gradients reach early layers unchanged, which is what makes
    deep stacks trainable. Pre-norm keeps that path free of any normalisation and
    trains more easily without warm-up; post-norm normalises the sum.

    ``norm_eps`` is LayerNorm's ε (PyTorch's default 1e-5; BERT uses 1e-12).

    Shapes:
        x: ``(..., d_model)``; ``f`` maps ``(..., d_model)`` to ``(..., d_model)``.
    """

    def __init__(
        self, d_model: int, dropout: float = 0.0, norm_first: bool = True, norm_eps: float = 1e-5
    ) -> None:
        super().__init__()
        require_positive_int("d_model", d_model)
        require_probability("dropout", dropout)
        # ε = 0 divides by zero on a constant vector; a negative ε can take a negative root.
        require_positive("norm_eps", norm_eps)
        self.norm = nn.LayerNorm(d_model, eps=norm_eps)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self, x: torch.Tensor, sublayer: Callable[[torch.Tensor], torch.Tensor]
    ) -> torch.Tensor:
        """``x`` plus the sublayer's output, normalised before (pre-norm) or after (post-norm)."""
        require_width("x", x, self.norm.normalized_shape[0], width_name="d_model")
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))
