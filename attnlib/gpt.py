"""A decoder-only Transformer (GPT): causal self-attention, trained to predict the next token.

Notebook 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from attnlib._validate import (
    inputs_checked,
    require_int,
    require_positive_int,
    require_probability,
    require_sampling_settings,
)
from attnlib._validate_tensors import require_generator, require_length, require_token_ids
from attnlib.feed_forward import FeedForward
from attnlib.kv_cache import KVCache
from attnlib.masks import causal_mask
from attnlib.multi_head import MultiHeadAttention
from attnlib.residual import residual_connection
from attnlib.sampling import sample_next_token


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of a :class:`GPT`. ``max_len`` is the longest context it can attend to."""

    vocab_size: int = 128
    max_len: int = 128
    d_model: int = 128
    num_heads: int = 4
    num_layers: int = 4
    dropout: float = 0.1

    def __post_init__(self) -> None:
        for name in ("vocab_size", "max_len", "d_model", "num_heads", "num_layers"):
            require_positive_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})"
            )
        require_probability("dropout", self.dropout)


class GPTBlock(nn.Module):
    r"""A pre-norm decoder block without cross-attention.

    .. math::

        h = x + \operatorname{CausalSelfAttention}(\operatorname{LN}_1(x)), \qquad
        y = h + \operatorname{FFN}(\operatorname{LN}_2(h))

    Shapes:
        x: ``(B, T, d_model)``; mask broadcastable to ``(B, H, T, T_cached + T)``;
        returns ``(B, T, d_model)`` and weights ``(B, H, T, T_cached + T)``.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        c = config
        # The order of registration is the order of parameters(), which gradient clipping
        # sums over: the sublayers first, as in every model trained so far.
        self.attention = MultiHeadAttention(c.d_model, c.num_heads, dropout=c.dropout)
        self.feed_forward = FeedForward(c.d_model, 4 * c.d_model, c.dropout, activation="gelu")
        self.norm_1 = nn.LayerNorm(c.d_model)
        self.norm_2 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None,
        cache: KVCache | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Causal self-attention (over the cache too, if given), then the FFN, each in a
        pre-norm residual block. The block checks nothing itself (see :class:`GPT`)."""
        attend = partial(self.attention, mask=mask, cache=cache, need_weights=need_weights)
        x, weights = residual_connection(x, attend, self.norm_1, self.dropout)  # (B, T, C)
        x = residual_connection(x, self.feed_forward, self.norm_2, self.dropout)  # (B, T, C)
        return x, weights


class GPT(nn.Module):
    r"""Decoder-only language model: token + learned position embeddings, causal blocks, a head.

    .. math::

        p(x_{t+1} \mid x_{\le t}) = \operatorname{softmax}(h_t W_E^\top)

    The output head shares the token embedding matrix :math:`W_E` (weight tying, as
    in GPT-2). ``forward`` returns the logits of the next token at every position.

    Its public methods (``forward``, :meth:`loss`, :meth:`attention_weights`,
    :meth:`generate`) check their arguments once and run the blocks under
    :func:`attnlib._validate.inputs_checked`: the blocks, their attention and feed-forward
    networks, the KV caches and the sampler trust them. A block called on its own (notebook
    10's cached loop) has its attention and feed-forward network check what reaches them.

    Shapes:
        idx: ``(B, T)`` token ids with ``T ≤ max_len``; returns ``(B, T, vocab_size)``.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.position_embedding = nn.Embedding(config.max_len, config.d_model)
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

    def _require_idx(self, idx: object, max_len: int, min_len: int = 1) -> torch.Tensor:
        idx = require_token_ids("idx", idx, self.config.vocab_size)
        return require_length("idx", idx, max_len, min_len)

    def _run(
        self, idx: torch.Tensor, caches: list[KVCache] | None = None, need_weights: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """Logits for ``idx`` placed after the cached positions. Checks nothing: callers do."""
        start = len(caches[0]) if caches else 0
        length = idx.shape[1]
        positions = torch.arange(start, start + length, device=idx.device)  # (T,)
        x = self.dropout(self.token_embedding(idx) + self.position_embedding(positions))
        # One new token may attend to every cached position and itself: no mask needed.
        mask = None if length == 1 else causal_mask(length, start + length).to(idx.device)
        all_weights = []
        for i, block in enumerate(self.blocks):
            x, weights = block(x, mask, caches[i] if caches else None, need_weights)  # (B, T, C)
            all_weights.append(weights)
        return self.head(self.final_norm(x)), all_weights  # (B, T, V)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Next-token logits at every position, ``(B, T, vocab_size)``."""
        idx = self._require_idx(idx, self.config.max_len)
        with inputs_checked():
            logits, _ = self._run(idx)
        return logits

    @torch.no_grad()
    def attention_weights(self, idx: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's attention weights, ``(B, H, T, T)`` each, for plotting."""
        idx = self._require_idx(idx, self.config.max_len)
        with inputs_checked():
            _, weights = self._run(idx, need_weights=True)
        return weights

    def loss(self, idx: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of predicting ``idx[:, 1:]`` from ``idx[:, :-1]``.

        Shapes:
            idx: ``(B, T + 1)`` token ids with ``1 ≤ T ≤ max_len``; returns a scalar.
        """
        idx = self._require_idx(idx, self.config.max_len + 1, min_len=2)
        with inputs_checked():
            logits, _ = self._run(idx[:, :-1])  # (B, T, V)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), idx[:, 1:].reshape(-1))

    def generate(
        self,
        idx: torch.Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        use_cache: bool = True,
        generator: torch.Generator | None = None,
        top_p: float | None = None,
    ) -> torch.Tensor:
        r"""Append ``max_new_tokens`` tokens, each sampled from the model's next-token distribution.

        The logits are divided by ``temperature`` (``0`` = greedy: always the most likely
        token); with ``top_k`` all but the ``k`` most likely tokens are removed, and with
        ``top_p`` all but the smallest set of likeliest tokens holding ``top_p`` of the
        probability (see :func:`attnlib.sampling.next_token_probs`). The model sees at
        most the last ``max_len`` tokens.

        With ``use_cache`` each layer keeps the keys and values of the context (a KV
        cache), so each step processes only the newest token: the same tokens as
        recomputing everything, much faster. That lasts while the context fits in
        ``max_len``. Once it is longer, the window of the last ``max_len`` tokens slides
        by one every step, every token in it moves to another learned position, and the
        cached keys and values (computed at the old positions) are stale: from then on
        the cache is dropped and each step recomputes the whole window, as
        ``use_cache=False`` does all along.

        Its arguments are checked once, here; the layers, the caches and
        :func:`~attnlib.sampling.sample_next_token` trust them at every step. The logits are
        the model's own, read at every step by :mod:`attnlib.sampling`'s one rule: NaN, +inf
        or no finite logit (a model whose weights went NaN) raises a ``ValueError``.

        Shapes:
            idx: ``(B, T)`` with ``T ≥ 1`` (a longer ``T`` than ``max_len`` is fine: the
            model reads its last ``max_len`` tokens); returns ``(B, T + max_new_tokens)``.
        """
        idx = require_token_ids("idx", idx, self.config.vocab_size)
        if idx.shape[1] < 1:
            raise ValueError(
                f"idx must hold at least one token to continue, got {tuple(idx.shape)}"
            )
        require_int("max_new_tokens", max_new_tokens, minimum=0)
        require_sampling_settings(temperature, top_k, top_p)
        require_generator("generator", generator)
        was_training = self.training
        self.eval()
        window = self.config.max_len
        caches = [KVCache() for _ in self.blocks] if use_cache else None
        context = idx[:, -window:]  # what the model reads next
        try:
            # Inference mode skips autograd's bookkeeping on every small op of every step;
            # its tensors cannot enter autograd later, so the caller gets a copy.
            with torch.inference_mode(), inputs_checked():
                for _ in range(max_new_tokens):
                    logits, _ = self._run(context, caches)  # (B, T_context, V)
                    next_token = sample_next_token(
                        logits[:, -1], temperature, top_k, top_p, generator
                    )
                    idx = torch.cat([idx, next_token], dim=1)  # (B, T + 1)
                    if caches is not None and len(caches[0]) < window:
                        context = next_token  # the cache holds everything before it
                    else:
                        caches = None  # the window slides from here on: the cache is stale
                        context = idx[:, -window:]
        finally:
            self.train(was_training)
        return idx.clone()
