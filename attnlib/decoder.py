"""The Transformer decoder: masked self-attention, cross-attention to the encoder, and an FFN.

Notebook 08.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.feed_forward import FeedForward
from attnlib.multi_head import MultiHeadAttention
from attnlib.residual import Residual


class DecoderLayer(nn.Module):
    r"""One decoder layer.

    .. math::

        h_1 = \operatorname{Residual}(y, \operatorname{MaskedSelfAttention}), \quad
        h_2 = \operatorname{Residual}(h_1, \operatorname{CrossAttention}(\cdot, \text{memory})),
        \quad z = \operatorname{Residual}(h_2, \operatorname{FFN})

    Cross-attention takes its queries from the decoder and its keys and values from
    the encoder's output (``memory``): it is where the target reads the source.

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
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, activation=activation)
        self.self_attention_block = Residual(d_model, dropout, norm_first, norm_eps)
        self.cross_attention_block = Residual(d_model, dropout, norm_first, norm_eps)
        self.feed_forward_block = Residual(d_model, dropout, norm_first, norm_eps)

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Masked self-attention, cross-attention to ``memory``, then the FFN."""
        self.self_attention._require_input("y", y)  # before LayerNorm can fail on them
        self.cross_attention._require_input("memory", memory)
        if memory.shape[0] != y.shape[0]:
            raise ValueError(
                f"y (B, T, C) and memory (B, S, C) must share the batch size, got "
                f"{tuple(y.shape)} and {tuple(memory.shape)}"
            )
        weights: dict[str, torch.Tensor | None] = {}

        def attend_self(h: torch.Tensor) -> torch.Tensor:
            out, weights["self"] = self.self_attention(h, mask=self_mask, need_weights=need_weights)
            return out

        def attend_memory(h: torch.Tensor) -> torch.Tensor:
            out, weights["cross"] = self.cross_attention(
                h, memory, mask=memory_mask, need_weights=need_weights
            )
            return out

        y = self.self_attention_block(y, attend_self)  # (B, T, C)
        y = self.cross_attention_block(y, attend_memory)  # (B, T, C)
        y = self.feed_forward_block(y, self.feed_forward)  # (B, T, C)
        return y, weights["self"], weights["cross"]


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
        self_weights, cross_weights = [], []
        for layer in self.layers:
            y, w_self, w_cross = layer(y, memory, self_mask, memory_mask, need_weights)
            self_weights.append(w_self)
            cross_weights.append(w_cross)
        return self.final_norm(y), self_weights, cross_weights
