"""The Transformer encoder: self-attention and a feed-forward network, each with a residual.

Notebook 08.
"""

from __future__ import annotations

from functools import partial

import torch
from torch import nn

from attnlib._validate import at_the_door, inputs_checked, require_positive_int
from attnlib.feed_forward import FeedForward
from attnlib.layer_stack import LayerStack
from attnlib.multi_head import MultiHeadAttention
from attnlib.residual import residual_connection


class EncoderLayer(nn.Module):
    r"""One encoder layer: self-attention, then the FFN, each added back to its input.

    .. math::

        \text{pre-norm:}\quad h = x + \operatorname{SelfAttention}(\operatorname{LN}_1(x)),
        \quad y = h + \operatorname{FFN}(\operatorname{LN}_2(h))

        \text{post-norm (the paper):}\quad h = \operatorname{LN}_1(x +
        \operatorname{SelfAttention}(x)), \quad y = \operatorname{LN}_2(h + \operatorname{FFN}(h))

    Each sublayer sits in a residual block (:func:`~attnlib.residual.residual_connection`,
    the wiring of :class:`~attnlib.residual.Residual`), whose dropout hits the sublayer's
    output before the addition. The layer checks nothing itself. Its attention and
    feed-forward network check what reaches them when the layer is called on its own; inside
    :class:`Encoder` (and the models built on it), which checked its inputs once, they do not.

    Shapes:
        x: ``(B, S, d_model)``; mask: bool, ``True`` = may attend, broadcastable to
        ``(B, H, S, S)`` (usually the source padding mask ``(B, 1, 1, S)``);
        returns ``y (B, S, d_model)`` and the attention weights ``(B, H, S, S)``
        (``None`` with ``need_weights=False``, which lets attention use a fused kernel).
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = True,
        activation: str = "relu",
        norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.norm_first = norm_first
        # Registered sublayers first: parameters() keeps this order, and gradient clipping
        # sums over it, so a trained model's numbers depend on it.
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, activation=activation)
        self.norm_1 = nn.LayerNorm(d_model, eps=norm_eps)
        self.norm_2 = nn.LayerNorm(d_model, eps=norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Self-attention over the source, then the FFN, each in a residual block."""
        attend = partial(self.self_attention, mask=mask, need_weights=need_weights)
        x, weights = residual_connection(x, attend, self.norm_1, self.dropout, self.norm_first)
        x = residual_connection(x, self.feed_forward, self.norm_2, self.dropout, self.norm_first)
        return x, weights  # (B, S, C), (B, H, S, S)


class Encoder(LayerStack):
    """A :class:`~attnlib.layer_stack.LayerStack` of :class:`EncoderLayer` (with pre-norm, a
    final LayerNorm: the stack's output is otherwise never normalised).

    Shapes:
        x: ``(B, S, d_model)``; returns ``(B, S, d_model)`` and one ``(B, H, S, S)``
        weight tensor per layer.
    """

    def __init__(
        self,
        num_layers: int,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        norm_first: bool = True,
        activation: str = "relu",
        norm_eps: float = 1e-5,
    ) -> None:
        require_positive_int("num_layers", num_layers)
        layers = (
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation, norm_eps)
            for _ in range(num_layers)
        )
        super().__init__(layers, d_model, num_heads, norm_first, norm_eps)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """Run every layer in turn (``need_weights=False``: fused attention, weights ``None``).

        ``x`` and ``mask`` are checked once, here (unless a model that called it has), not
        in every layer.
        """
        if at_the_door():
            self.require_input("x", x)
            self.require_mask("mask", mask, x, x)
        with inputs_checked():
            run = self.run(x, mask, need_weights=need_weights)
        return run.output, run.weights[0]
