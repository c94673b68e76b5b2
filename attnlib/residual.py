"""A residual connection with LayerNorm, in the paper's post-norm or the common pre-norm order.

Notebook 08.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attnlib._validate import require_positive, require_positive_int, require_probability
from attnlib._validate_tensors import require_width


def residual_connection(
    x: torch.Tensor,
    sublayer: Callable[[torch.Tensor], Any],
    norm: Callable[[torch.Tensor], torch.Tensor],
    dropout: Callable[[torch.Tensor], torch.Tensor],
    norm_first: bool = True,
) -> Any:
    r"""One residual block around ``sublayer``: the wiring of every layer in attnlib.

    .. math::

        \text{post-norm (paper):}\quad y = \operatorname{norm}(x + \operatorname{dropout}(f(x)))

        \text{pre-norm:}\quad y = x + \operatorname{dropout}(f(\operatorname{norm}(x)))

    :class:`Residual` is this block with its own LayerNorm and dropout; the encoder, decoder
    and GPT layers call it with theirs. A sublayer may return ``(out, extra)``, as attention
    returns its output and its weights: the block then returns ``(y, extra)``. It checks
    nothing; its callers check at their door.

    Shapes:
        x: ``(..., d_model)``; ``sublayer``, ``norm`` and ``dropout`` keep that shape.
    """
    out = sublayer(norm(x) if norm_first else x)
    pair = isinstance(out, tuple)  # attention's (output, weights)
    y = x + dropout(out[0] if pair else out)
    if not norm_first:
        y = norm(y)
    return (y, *out[1:]) if pair else y


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
        return residual_connection(x, sublayer, self.norm, self.dropout, self.norm_first)
