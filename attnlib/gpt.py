"""A decoder-only Transformer (GPT): causal self-attention, trained to predict the next token.

Notebook 10.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from attnlib.feed_forward import FeedForward
from attnlib.kv_cache import KVCache
from attnlib.masks import causal_mask
from attnlib.multi_head import MultiHeadAttention
from attnlib.residual import Residual
from attnlib.sampling import sample_next_token


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of a :class:`GPT`. ``block_size`` is the longest context it can attend to."""

    vocab_size: int = 128
    block_size: int = 128
    d_model: int = 128
    num_heads: int = 4
    num_layers: int = 4
    dropout: float = 0.1

    def __post_init__(self) -> None:
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})"
            )
        for name in ("vocab_size", "block_size", "d_model", "num_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


class GPTBlock(nn.Module):
    r"""A pre-norm decoder block without cross-attention.

    .. math::

        h = x + \operatorname{CausalSelfAttention}(\operatorname{LN}(x)), \qquad
        y = h + \operatorname{FFN}(\operatorname{LN}(h))

    Shapes:
        x: ``(B, T, d_model)``; mask broadcastable to ``(B, H, T, T_cached + T)``;
        returns ``(B, T, d_model)`` and weights ``(B, H, T, T_cached + T)``.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        c = config
        self.attention = MultiHeadAttention(c.d_model, c.num_heads, dropout=c.dropout)
        self.feed_forward = FeedForward(c.d_model, 4 * c.d_model, c.dropout, activation="gelu")
        self.attention_block = Residual(c.d_model, c.dropout, norm_first=True)
        self.feed_forward_block = Residual(c.d_model, c.dropout, norm_first=True)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None,
        cache: KVCache | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Causal self-attention (over the cache too, if given), then the FFN."""
        weights: list[torch.Tensor | None] = []

        def attend(h: torch.Tensor) -> torch.Tensor:
            out, w = self.attention(h, mask=mask, cache=cache, need_weights=need_weights)
            weights.append(w)
            return out

        x = self.attention_block(x, attend)  # (B, T, C)
        return self.feed_forward_block(x, self.feed_forward), weights[0]


class GPT(nn.Module):
    r"""Decoder-only language model: token + learned position embeddings, causal blocks, a head.

    .. math::

        p(x_{t+1} \mid x_{\le t}) = \operatorname{softmax}(h_t W_E^\top)

    The output head shares the token embedding matrix :math:`W_E` (weight tying, as
    in GPT-2). ``forward`` returns the logits of the next token at every position.

    Shapes:
        idx: ``(B, T)`` token ids with ``T ≤ block_size``; returns ``(B, T, vocab_size)``.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.position_embedding = nn.Embedding(config.block_size, config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(GPTBlock(config) for _ in range(config.num_layers))
        self.final_norm = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.head.weight = self.token_embedding.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # Small normal weights (std 0.02, as in GPT-2) keep the initial logits near uniform.
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def _run(
        self,
        idx: torch.Tensor,
        caches: list[KVCache] | None = None,
        need_weights: bool = False,
        check_ids: bool = True,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        if idx.dim() != 2 or idx.is_floating_point():
            raise ValueError(f"idx must be token ids of shape (B, T), got {tuple(idx.shape)}")
        start = len(caches[0]) if caches else 0
        length = idx.shape[1]
        if start + length > self.config.block_size:
            raise ValueError(
                f"{start + length} positions exceed block_size={self.config.block_size}; "
                "crop the context first (generate does)"
            )
        # generate checks its prompt once; the tokens it appends are the model's own.
        if check_ids and idx.numel() and (idx.min() < 0 or idx.max() >= self.config.vocab_size):
            raise ValueError(f"idx has ids outside [0, {self.config.vocab_size})")
        positions = torch.arange(start, start + length, device=idx.device)  # (T,)
        x = self.dropout(
            self.token_embedding(idx) + self.position_embedding(positions)
        )  # (B, T, C)
        # One new token may attend to every cached position and itself: no mask needed.
        mask = None if length == 1 else causal_mask(length, start + length).to(idx.device)
        all_weights = []
        for i, block in enumerate(self.blocks):
            x, weights = block(x, mask, caches[i] if caches else None, need_weights)
            all_weights.append(weights)
        return self.head(self.final_norm(x)), all_weights  # (B, T, V)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Next-token logits at every position, ``(B, T, vocab_size)``."""
        logits, _ = self._run(idx)
        return logits

    @torch.no_grad()
    def attention_weights(self, idx: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's attention weights, ``(B, H, T, T)`` each, for plotting."""
        _, weights = self._run(idx, need_weights=True)
        return weights

    def loss(self, idx: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of predicting ``idx[:, 1:]`` from ``idx[:, :-1]``."""
        logits = self(idx[:, :-1])  # (B, T-1, V)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))

    @torch.no_grad()
    def generate(
        self,
        idx: torch.Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        use_cache: bool = True,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""Append ``max_new_tokens`` tokens, each sampled from the model's next-token distribution.

        The logits are divided by ``temperature`` (``0`` = greedy: always the most likely
        token) and, with ``top_k``, all but the ``k`` most likely tokens are removed
        before sampling. With ``use_cache`` each layer keeps the keys and values of the
        context (a KV cache), so each step processes only the newest token: the same
        tokens as recomputing everything, much faster. A context longer than
        ``block_size`` is cropped to its last ``block_size`` tokens (then the positions
        shift every step and the cache cannot be reused).

        Shapes:
            idx: ``(B, T)``; returns ``(B, T + max_new_tokens)``.
        """
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be a positive int or None, got {top_k}")
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int):
            raise TypeError(f"max_new_tokens must be an int, got {type(max_new_tokens).__name__}")
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
        if not isinstance(idx, torch.Tensor) or idx.dim() != 2:
            got = tuple(idx.shape) if isinstance(idx, torch.Tensor) else type(idx).__name__
            raise ValueError(f"idx must be token ids of shape (B, T), got {got}")
        if idx.shape[1] < 1:
            raise ValueError("idx must hold at least one token to continue from")
        was_training = self.training
        self.eval()
        block = self.config.block_size
        caches = [KVCache() for _ in self.blocks] if use_cache else None
        logits, _ = self._run(idx[:, -block:], caches)
        for step in range(max_new_tokens):
            next_token = sample_next_token(logits[:, -1], temperature, top_k, generator)  # (B, 1)
            idx = torch.cat([idx, next_token], dim=1)
            if step == max_new_tokens - 1:
                break
            if caches is not None and len(caches[0]) < block:
                logits, _ = self._run(next_token, caches, check_ids=False)  # the new token only
            else:
                caches = None  # the window slides from here on: recompute it every step
                logits, _ = self._run(idx[:, -block:], check_ids=False)
        self.train(was_training)
        return idx
