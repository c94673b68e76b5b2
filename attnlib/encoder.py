"""The Transformer encoder: self-attention and a feed-forward network, each in a residual block.

Notebook 08.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.feed_forward import FeedForward
from attnlib.multi_head import MultiHeadAttention
from attnlib.residual import Residual


class EncoderLayer(nn.Module):
    r"""One encoder layer.

    .. math::

        h = \operatorname{Residual}(x, \operatorname{SelfAttention}), \qquad
        y = \operatorname{Residual}(h, \operatorname{FFN})

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
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout=dropout, activation=activation)
        self.attention_block = Residual(d_model, dropout, norm_first, norm_eps)
        self.feed_forward_block = Residual(d_model, dropout, norm_first, norm_eps)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Self-attention over the source, then the FFN."""
        self.self_attention._require_input("x", x)  # before LayerNorm can fail on it
        weights: list[torch.Tensor | None] = []

        def attend(h: torch.Tensor) -> torch.Tensor:
            out, w = self.self_attention(h, mask=mask, need_weights=need_weights)
            weights.append(w)
            return out

        x = self.attention_block(x, attend)  # (B, S, C)
        x = self.feed_forward_block(x, self.feed_forward)  # (B, S, C)
        return x, weights[0]


class Encoder(nn.Module):
    """A stack of :class:`EncoderLayer`; with pre-norm, a final LayerNorm (the stack's
    output is otherwise never normalised).

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
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, activation, norm_eps)
            for _ in range(num_layers)
        )
        self.final_norm = nn.LayerNorm(d_model, eps=norm_eps) if norm_first else nn.Identity()

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """Run every layer in turn (``need_weights=False``: fused attention, weights ``None``)."""
        all_weights = []
        for layer in self.layers:
            x, weights = layer(x, mask, need_weights)
            all_weights.append(weights)
        return self.final_norm(x), all_weights
