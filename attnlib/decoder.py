"""The Transformer decoder: masked self-attention, cross-attention to the encoder, and an FFN.

Notebook 08.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib._validate import require_positive_int
from attnlib._validate_tensors import require_dtype_of, require_width
from attnlib.feed_forward import FeedForward
from attnlib.multi_head import MultiHeadAttention


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
    Dropout hits each sublayer's output before the addition. The layer checks nothing
    itself: :class:`Decoder` checks its inputs once, and so do the models built on it.

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
        """Masked self-attention, cross-attention to ``memory``, then the FFN."""
        if self.norm_first:
            h, self_weights = self.self_attention(
                self.norm_1(y), mask=self_mask, need_weights=need_weights
            )
            y = y + self.dropout(h)  # (B, T, C)
            h, cross_weights = self.cross_attention(
                self.norm_2(y), memory, mask=memory_mask, need_weights=need_weights
            )
            y = y + self.dropout(h)
            y = y + self.dropout(self.feed_forward(self.norm_3(y)))
        else:
            h, self_weights = self.self_attention(y, mask=self_mask, need_weights=need_weights)
            y = self.norm_1(y + self.dropout(h))  # (B, T, C)
            h, cross_weights = self.cross_attention(
                y, memory, mask=memory_mask, need_weights=need_weights
            )
            y = self.norm_2(y + self.dropout(h))
            y = self.norm_3(y + self.dropout(self.feed_forward(y)))
        return y, self_weights, cross_weights


class Decoder(nn.Module):
    """A stack of :class:`DecoderLayer`; with pre-norm, a final LayerNorm.

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
        super().__init__()
        require_positive_int("num_layers", num_layers)
        self.d_model = d_model
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation, norm_eps)
            for _ in range(num_layers)
        )
        self.final_norm = nn.LayerNorm(d_model, eps=norm_eps) if norm_first else nn.Identity()

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None], list[torch.Tensor | None]]:
        """Run every layer in turn (``need_weights=False``: fused attention, weights ``None``)."""
        # Before a LayerNorm can fail on them, in torch's words.
        weight = next(self.parameters())
        for name, x in (("y", y), ("memory", memory)):
            require_dtype_of(name, require_width(name, x, self.d_model, ndim=3), weight)
        if memory.shape[0] != y.shape[0]:
            raise ValueError(
                f"y (B, T, C) and memory (B, S, C) must share the batch size, got "
                f"{tuple(y.shape)} and {tuple(memory.shape)}"
            )
        self_weights, cross_weights = [], []
        for layer in self.layers:
            y, w_self, w_cross = layer(y, memory, self_mask, memory_mask, need_weights)
            self_weights.append(w_self)
            cross_weights.append(w_cross)
        return self.final_norm(y), self_weights, cross_weights
