"""The Transformer decoder: masked self-attention, cross-attention to the encoder, and an FFN.

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


class DecoderLayer(nn.Module):
    r"""One decoder layer: masked self-attention, cross-attention, the FFN, each with a residual.

    .. math::

        \text{pre-norm:}\quad h_1 = y + \operatorname{SelfAttention}(\operatorname{LN}_1(y)),
        \quad h_2 = h_1 + \operatorname{CrossAttention}(\operatorname{LN}_2(h_1),
        \text{memory}), \quad z = h_2 + \operatorname{FFN}(\operatorname{LN}_3(h_2))

    and post-norm (the paper) normalises each sum instead:
    :math:`h_1 = \operatorname{LN}_1(y + \operatorname{SelfAttention}(y))`, and so on.

    Cross-attention takes its queries from the decoder and its keys and values from
    the encoder's output (``memory``): it is where the target reads the source.
    Each sublayer sits in a residual block (:func:`~attnlib.residual.residual_connection`),
    whose dropout hits the sublayer's output before the addition. The layer checks nothing
    itself. Its attentions and feed-forward network check what reaches them when the layer is
    called on its own; inside :class:`Decoder` (and the models built on it), which checked its
    inputs once, they do not.

    Shapes:
        y: ``(B, T, d_model)``; memory: ``(B, S, d_model)``; self_mask: broadcastable to
        ``(B, H, T, T)`` (causal, and target padding); memory_mask: broadcastable to
        ``(B, H, T, S)`` (source padding); masks are bool with ``True`` = may attend.
        Returns ``z (B, T, d_model)``, self-attention weights ``(B, H, T, T)`` and
        cross-attention weights ``(B, H, T, S)`` (both ``None`` with ``need_weights=False``,
        which lets attention use a fused kernel).
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
        # Sublayers first, as in :class:`~attnlib.encoder.EncoderLayer` (parameters() order).
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, activation=activation)
        self.norm_1 = nn.LayerNorm(d_model, eps=norm_eps)
        self.norm_2 = nn.LayerNorm(d_model, eps=norm_eps)
        self.norm_3 = nn.LayerNorm(d_model, eps=norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Masked self-attention, cross-attention to ``memory``, then the FFN, each in a
        residual block."""
        attend = partial(self.self_attention, mask=self_mask, need_weights=need_weights)
        y, self_weights = residual_connection(y, attend, self.norm_1, self.dropout, self.norm_first)
        read = partial(
            self.cross_attention, key=memory, mask=memory_mask, need_weights=need_weights
        )  # queries from the target; keys and values from the source
        y, cross_weights = residual_connection(y, read, self.norm_2, self.dropout, self.norm_first)
        y = residual_connection(y, self.feed_forward, self.norm_3, self.dropout, self.norm_first)
        return y, self_weights, cross_weights  # (B, T, C), (B, H, T, T), (B, H, T, S)


class Decoder(LayerStack):
    """A :class:`~attnlib.layer_stack.LayerStack` of :class:`DecoderLayer` (with pre-norm, a
    final LayerNorm).

    Shapes:
        y: ``(B, T, d_model)``, memory: ``(B, S, d_model)``; returns ``(B, T, d_model)``
        and per layer the self- ``(B, H, T, T)`` and cross-attention ``(B, H, T, S)`` weights.
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
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation, norm_eps)
            for _ in range(num_layers)
        )
        super().__init__(layers, d_model, num_heads, norm_first, norm_eps)

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None], list[torch.Tensor | None]]:
        """Run every layer in turn (``need_weights=False``: fused attention, weights ``None``).

        The inputs are checked once, here (unless a model that called it has), not in every
        layer.
        """
        if at_the_door():
            self._require_inputs(y, memory, self_mask, memory_mask)
        with inputs_checked():
            run = self.run(y, memory, self_mask, memory_mask, need_weights=need_weights)
        return run.output, run.weights[0], run.weights[1]

    def _require_inputs(
        self, y: object, memory: object, self_mask: object, memory_mask: object
    ) -> None:
        self.require_input("y", y)
        self.require_input("memory", memory)
        if memory.shape[0] != y.shape[0]:
            raise ValueError(
                f"y (B, T, C) and memory (B, S, C) must share the batch size, got "
                f"{tuple(y.shape)} and {tuple(memory.shape)}"
            )
        self.require_mask("self_mask", self_mask, y, y)
        self.require_mask("memory_mask", memory_mask, y, memory)
