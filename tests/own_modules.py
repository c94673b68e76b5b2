"""A learner's capstone modules (notebook 11), written independently of the checkers, right or
with one mistake, for the tests of :mod:`attnlib.checks.own_encoder`.

``modules(mistake)`` returns the four classes and ``MyBert`` built from them, with
``mistake`` (one of :data:`MISTAKES`, or ``None``) in whichever module it belongs to.
Each mistake is written the way a learner would write it, not recomputed the way the
checker recomputes it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch
from torch import nn

from attnlib import BertConfig

MISTAKES = (
    "eps outside sqrt",
    "unbiased variance",
    "no affine",
    "tanh gelu",
    "relu",
    "no scale",
    "scaled by d_model",
    "mask inverted",
    "mask ignored",
    "heads split wrong",
    "heads merged wrong",
    "softmax over queries",
    "pre-norm",
    "norm before residual",
    "no attention residual",
    "norms swapped",
)


def modules(mistake: str | None = None) -> SimpleNamespace:
    """The four module classes and ``MyBert``, as a namespace."""
    assert mistake is None or mistake in MISTAKES, mistake

    class MyLayerNorm(nn.Module):
        def __init__(self, d_model: int, eps: float) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d_model))
            self.bias = nn.Parameter(torch.zeros(d_model))
            self.eps = eps

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            mean = x.mean(dim=-1, keepdim=True)
            if mistake == "unbiased variance":
                var = x.var(dim=-1, keepdim=True)
            else:
                var = x.var(dim=-1, keepdim=True, unbiased=False)
            if mistake == "eps outside sqrt":
                normed = (x - mean) / (torch.sqrt(var) + self.eps)
            else:
                normed = (x - mean) / torch.sqrt(var + self.eps)
            return normed if mistake == "no affine" else normed * self.weight + self.bias

    class MyMultiHeadAttention(nn.Module):
        def __init__(self, d_model: int, num_heads: int) -> None:
            super().__init__()
            self.num_heads = num_heads
            self.w_q = nn.Linear(d_model, d_model)
            self.w_k = nn.Linear(d_model, d_model)
            self.w_v = nn.Linear(d_model, d_model)
            self.w_o = nn.Linear(d_model, d_model)

        def forward(
            self, x: torch.Tensor, token_mask: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            b, t, c = x.shape
            h = self.num_heads
            d = c // h

            def split(y: torch.Tensor) -> torch.Tensor:
                if mistake == "heads split wrong":
                    return y.reshape(b, h, t, d)
                return y.reshape(b, t, h, d).permute(0, 2, 1, 3)

            q, k, v = split(self.w_q(x)), split(self.w_k(x)), split(self.w_v(x))
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
            if mistake == "scaled by d_model":
                scores = scores / math.sqrt(c)
            elif mistake != "no scale":
                scores = scores / math.sqrt(d)
            keys = token_mask.bool()[:, None, None, :]
            if mistake == "mask inverted":
                keys = ~keys
            if mistake != "mask ignored":
                scores = torch.where(keys, scores, torch.finfo(scores.dtype).min)
            weights = torch.softmax(scores, dim=-2 if mistake == "softmax over queries" else -1)
            mixed = torch.einsum("bhqk,bhkd->bhqd", weights, v)
            if mistake in ("heads split wrong", "heads merged wrong"):
                merged = mixed.reshape(b, t, c)
            else:
                merged = mixed.permute(0, 2, 1, 3).reshape(b, t, c)
            return self.w_o(merged), weights

    class MyFeedForward(nn.Module):
        def __init__(self, d_model: int, d_ff: int) -> None:
            super().__init__()
            self.linear1 = nn.Linear(d_model, d_ff)
            self.linear2 = nn.Linear(d_ff, d_model)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            a = self.linear1(x)
            if mistake == "tanh gelu":
                a = 0.5 * a * (1 + torch.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
            elif mistake == "relu":
                a = a.clamp_min(0)
            else:
                a = a * 0.5 * (1.0 + torch.erf(a / math.sqrt(2.0)))
            return self.linear2(a)

    class MyEncoderLayer(nn.Module):
        def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
            super().__init__()
            self.self_attention = MyMultiHeadAttention(d_model, num_heads)
            self.norm_1 = MyLayerNorm(d_model, eps)
            self.feed_forward = MyFeedForward(d_model, d_ff)
            self.norm_2 = MyLayerNorm(d_model, eps)

        def forward(
            self, x: torch.Tensor, token_mask: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            def attend(y: torch.Tensor) -> torch.Tensor:
                out, self.weights = self.self_attention(y, token_mask)
                return out

            if mistake == "pre-norm":
                h = x + attend(self.norm_1(x))
                return h + self.feed_forward(self.norm_2(h)), self.weights
            if mistake == "norm before residual":
                h = x + self.norm_1(attend(x))
                return h + self.norm_2(self.feed_forward(h)), self.weights
            if mistake == "no attention residual":
                h = self.norm_1(attend(x))
            elif mistake == "norms swapped":
                h = self.norm_2(x + attend(x))
                return self.norm_1(h + self.feed_forward(h)), self.weights
            else:
                h = self.norm_1(x + attend(x))
            return self.norm_2(h + self.feed_forward(h)), self.weights

    class MyBert(nn.Module):
        def __init__(self, config: BertConfig) -> None:
            super().__init__()
            self.config = config
            self.token = nn.Embedding(config.vocab_size, config.d_model)
            self.position = nn.Embedding(config.max_len, config.d_model)
            self.segment = nn.Embedding(config.type_vocab_size, config.d_model)
            self.embedding_norm = MyLayerNorm(config.d_model, config.norm_eps)
            self.layers = nn.ModuleList(
                MyEncoderLayer(config.d_model, config.num_heads, config.d_ff, config.norm_eps)
                for _ in range(config.num_layers)
            )

        def forward(self, input_ids: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
            positions = torch.arange(input_ids.shape[1], device=input_ids.device)
            x = self.token(input_ids) + self.position(positions)
            x = self.embedding_norm(x + self.segment(torch.zeros_like(input_ids)))
            states = [x]
            for layer in self.layers:
                x, _ = layer(x, token_mask)
                states.append(x)
            return torch.stack(states)

    return SimpleNamespace(
        MyLayerNorm=MyLayerNorm,
        MyMultiHeadAttention=MyMultiHeadAttention,
        MyFeedForward=MyFeedForward,
        MyEncoderLayer=MyEncoderLayer,
        MyBert=MyBert,
    )
