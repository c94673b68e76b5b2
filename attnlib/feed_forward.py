"""The position-wise feed-forward network: the Transformer block's non-linearity.

Notebook 08.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from attnlib._validate import (
    at_the_door,
    require_choice,
    require_positive_int,
    require_probability,
)
from attnlib._validate_tensors import require_dtype_of, require_width

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    r"""Two linear maps with a non-linearity between them, applied to every position alone.

    .. math::

        \operatorname{FFN}(x) = \phi(x W_1 + b_1)\, W_2 + b_2, \qquad
        \phi \in \{\operatorname{ReLU}, \operatorname{GELU}\}

    Attention only mixes vectors (every output is a weighted average of values);
    this is where each position's vector is transformed on its own. The paper uses
    ReLU and ``d_ff = 4 · d_model``.

    Shapes:
        x: ``(..., d_model)``; returns ``(..., d_model)``.
    """

    def __init__(
        self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"
    ) -> None:
        super().__init__()
        require_positive_int("d_model", d_model)
        require_positive_int("d_ff", d_ff)
        require_probability("dropout", dropout)
        self.activation = require_choice("activation", activation, sorted(ACTIVATIONS))
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the FFN to each position (checking ``x`` only when called on its own)."""
        if at_the_door():
            require_width("x", x, self.linear1.in_features, width_name="d_model")
            require_dtype_of("x", x, self.linear1.weight)
        hidden = ACTIVATIONS[self.activation](self.linear1(x))  # (..., d_ff)
        return self.linear2(self.dropout(hidden))  # (..., d_model)
