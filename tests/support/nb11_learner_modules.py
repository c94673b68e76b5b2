"""A learner's capstone modules for notebook 11, right or with one mistake each, written
independently of the checkers' tables (einsum, ``torch.var``, ``torch.where``, permute, loops)
for the tests of :mod:`attnlib.checks.nb11_pretrained`.

``modules(mistake)`` returns the four classes, with ``mistake`` (a key of one of the ``*_MISTAKES``
dicts below, or ``None``) in whichever class it belongs to. Each dict maps the mistake to words
its report must contain.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch
from torch import nn

LAYER_NORM_MISTAKES = {
    "eps outside sqrt": "added epsilon outside the square root",
    "std plus eps": "divided by torch.std plus epsilon",
    "unbiased variance": "used the unbiased variance",
    "no affine": "did not apply the learned scale and shift",
    "eps 1e-5 hard-coded": "used a fixed epsilon",
    "no eps": "left epsilon out",
    "eps 1e-12 hard-coded": "left epsilon out",
    "divided by the variance": "divided by the variance instead of its square root",
    "whole tensor": "one mean and one variance over the whole tensor",
    "dim 1": "along dim 1",
    "no keepdim": "without keeping the reduced dimension",
    "shift before scale": "added the shift before scaling",
    "gamma and beta": "named the parameters gamma and beta",
    "weight at zeros": "did not start the weight at ones",
    "E[x²] − E[x]²": "which cancels when the mean is large",
    "dim 0": "along dim 0, the first dimension",
    "no bias": "left out the bias",
    "no keepdim, variance apart": "a deviation of shape (…,) instead of (…, 1)",
    "plain tensors": "plain tensors, not nn.Parameter",
}
ATTENTION_MISTAKES = {
    "no scale": "did not divide the scores by √d_k",
    "scaled by d_model": "by √d_model instead of √d_k",
    "scaled by d_k": "by d_k instead of its square root",
    "mask inverted": "blocked the real tokens' keys",
    "mask ignored": "did not block the padding keys",
    "mask with one axis": "one new axis",
    "softmax over heads": "over dim 1, the heads",
    "mask on the queries": "did not block the padding keys",
    "-1e9": "that float16 cannot hold",
    "float32 minimum": "that float16 cannot hold",
    "zeroed after softmax": "zeroed the padding weights after the softmax",
    "heads split wrong": "cut the heads with a view",
    "heads viewed, merged right": "viewed Q, K and V as (B, h, T, d_k)",
    "heads merged wrong": "merged the heads with a reshape",
    "softmax over queries": "took the softmax over the queries",
    "no w_o": "left out the output projection w_o",
    "one head": "one head of width d_model",
    "scores as weights": "returned the scores before the softmax",
    "weights averaged": "averaged the weights over the heads",
    "out only": "returned only out",
}
FEED_FORWARD_MISTAKES = {
    "tanh gelu": "tanh approximation",
    "sigmoid gelu": "sigmoid approximation",
    "relu": "used ReLU",
    "silu": "used SiLU",
    "no activation": "no activation between the two linear maps",
    "activation after linear2": "after the second linear map",
    "erf without sqrt 2": "erf(a) instead of erf(a / √2)",
    "erf over 2": "erf(a / 2) instead of erf(a / √2)",
    "no half": "left out the factor ½",
    "phi only": "applied Φ(a) instead of a·Φ(a)",
    "gelu twice": "applied GELU twice",
    "no biases": "without biases",
    "sqrt 2 outside erf": "with the √2 outside erf",
    "x @ W": "as they are (x @ W)",
    "sizes (out, in)": "with its sizes in (out, in) order",
    "erf times sqrt 2": "erf(a·√2) instead of erf(a / √2)",
    "density": "the normal density φ(a)",
}
LAYER_MISTAKES = {
    "pre-norm": "wired the layer pre-norm",
    "norm before residual": "before adding the residual",
    "no attention residual": "left out the residual around the self-attention",
    "no feed-forward residual": "left out the residual around the feed-forward network",
    "norms swapped": "swapped norm_1 and norm_2",
    "norm_1 twice": "used norm_1 for both sublayers",
    "feed-forward on x": "fed the feed-forward network x instead of h",
    "second residual x": "added the layer's input x, not h",
    "normalised twice": "normalised x before the attention as well as after",
    "y only": "returned only y",
    "default eps": "built the LayerNorms without the eps",
    "layer mask inverted": "passed the attention the mask inverted",
    "layer mask all True": "an all-True mask",
    "pair unpacked reversed": "the wrong way round, as (weights, out)",
    "no feed-forward": "left out the feed-forward sublayer",
}


def modules(mistake: str | None = None) -> SimpleNamespace:
    """The four classes (MyLayerNorm, MyMultiHeadAttention, MyFeedForward, MyEncoderLayer)."""
    known = {**LAYER_NORM_MISTAKES, **ATTENTION_MISTAKES, **FEED_FORWARD_MISTAKES, **LAYER_MISTAKES}
    assert mistake is None or mistake in known, mistake

    class MyLayerNorm(nn.Module):
        def __init__(self, d_model: int, eps: float) -> None:
            super().__init__()
            if mistake == "gamma and beta":
                self.gamma = nn.Parameter(torch.ones(d_model))
                self.beta = nn.Parameter(torch.zeros(d_model))
            elif mistake == "plain tensors":
                self.weight, self.bias = torch.ones(d_model), torch.zeros(d_model)
            else:
                start = torch.zeros if mistake == "weight at zeros" else torch.ones
                self.weight = nn.Parameter(start(d_model))
                self.bias = nn.Parameter(torch.zeros(d_model))
            self.eps = eps

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            dim = {"dim 1": 1, "dim 0": 0}.get(mistake, -1)
            if mistake == "whole tensor":
                mean, var = x.mean(), x.var(unbiased=False)
            elif mistake == "no keepdim":
                mean = x.mean(dim=-1)
                var = ((x - mean) ** 2).mean(dim=-1)
            elif mistake == "no keepdim, variance apart":
                mean, var = x.mean(-1), x.var(-1, unbiased=False)
            elif mistake == "E[x²] − E[x]²":
                mean = x.mean(dim, keepdim=True)
                var = (x**2).mean(dim, keepdim=True) - mean**2
            else:
                mean = x.mean(dim, keepdim=True)
                var = x.var(dim, keepdim=True, unbiased=mistake == "unbiased variance")
            eps = {"eps 1e-5 hard-coded": 1e-5, "eps 1e-12 hard-coded": 1e-12}.get(
                mistake, self.eps
            )
            if mistake == "eps outside sqrt":
                normed = (x - mean) / (var.sqrt() + eps)
            elif mistake == "std plus eps":
                normed = (x - mean) / (x.std(dim=-1, keepdim=True) + eps)
            elif mistake == "no eps":
                normed = (x - mean) / torch.sqrt(var)
            elif mistake == "divided by the variance":
                normed = (x - mean) / (var + eps)
            else:
                normed = (x - mean) * torch.rsqrt(var + eps)
            if mistake == "no affine":
                return normed
            if mistake == "gamma and beta":
                return normed * self.gamma + self.beta
            if mistake == "shift before scale":
                return (normed + self.bias) * self.weight
            if mistake == "no bias":
                return normed * self.weight
            return normed * self.weight + self.bias

    class MyMultiHeadAttention(nn.Module):
        def __init__(self, d_model: int, num_heads: int) -> None:
            super().__init__()
            self.heads = num_heads
            self.w_q = nn.Linear(d_model, d_model)
            self.w_k = nn.Linear(d_model, d_model)
            self.w_v = nn.Linear(d_model, d_model)
            self.w_o = nn.Linear(d_model, d_model)

        def forward(self, x: torch.Tensor, token_mask: torch.Tensor):
            b, t, c = x.shape
            h = 1 if mistake == "one head" else self.heads
            d = c // h

            def split(y: torch.Tensor) -> torch.Tensor:
                if mistake in ("heads split wrong", "heads viewed, merged right"):
                    return y.view(b, h, t, d)
                return y.reshape(b, t, h, d).permute(0, 2, 1, 3)

            q, k, v = split(self.w_q(x)), split(self.w_k(x)), split(self.w_v(x))
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
            if mistake == "scaled by d_model":
                scores = scores / math.sqrt(c)
            elif mistake == "scaled by d_k":
                scores = scores / d
            elif mistake != "no scale":
                scores = scores * d**-0.5
            real = token_mask[:, None, None, :]  # (B, 1, 1, T)
            if mistake == "mask inverted":
                real = ~real
            if mistake == "mask on the queries":
                real = token_mask[:, None, :, None]
            if mistake == "mask with one axis":
                real = token_mask.unsqueeze(1)
            fill = {"-1e9": -1e9, "float32 minimum": torch.finfo(torch.float32).min}.get(
                mistake, float("-inf")
            )
            if mistake not in ("mask ignored", "zeroed after softmax"):
                scores = scores.masked_fill(~real, fill)
            dim = {"softmax over queries": -2, "softmax over heads": 1}.get(mistake, -1)
            weights = torch.softmax(scores, dim=dim)
            if mistake == "zeroed after softmax":
                weights = weights * real
            mixed = torch.einsum("bhqk,bhkd->bhqd", weights, v)
            if mistake in ("heads split wrong", "heads merged wrong"):
                merged = mixed.reshape(b, t, c)
            else:
                merged = mixed.permute(0, 2, 1, 3).reshape(b, t, c)
            out = merged if mistake == "no w_o" else self.w_o(merged)
            if mistake == "out only":
                return out
            if mistake == "scores as weights":
                return out, scores
            return out, weights.mean(1) if mistake == "weights averaged" else weights

    class MyFeedForward(nn.Module):
        def __init__(self, d_model: int, d_ff: int) -> None:
            super().__init__()
            sizes = (d_ff, d_model) if mistake == "sizes (out, in)" else (d_model, d_ff)
            self.linear1 = nn.Linear(*sizes, bias=mistake != "no biases")
            self.linear2 = nn.Linear(*sizes[::-1], bias=mistake != "no biases")

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if mistake == "x @ W":
                a = torch.matmul(x, self.linear1.weight) + self.linear1.bias
                a = a * 0.5 * torch.erfc(-a / math.sqrt(2))
                return torch.matmul(a, self.linear2.weight) + self.linear2.bias
            a = self.linear1(x)
            if mistake == "tanh gelu":
                a = 0.5 * a * (1 + torch.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
            elif mistake == "sigmoid gelu":
                a = a / (1 + torch.exp(-1.702 * a))
            elif mistake == "relu":
                a = a.clamp_min(0)
            elif mistake == "silu":
                a = a / (1 + torch.exp(-a))
            elif mistake == "erf without sqrt 2":
                a = a * (1 + torch.erf(a)) / 2
            elif mistake == "erf over 2":
                a = a * (1 + torch.erf(a * 0.5)) / 2
            elif mistake == "no half":
                a = a + a * torch.erf(a / 2**0.5)
            elif mistake == "phi only":
                a = (1 + torch.erf(a / 2**0.5)) / 2
            elif mistake == "sqrt 2 outside erf":
                a = a * (1 + torch.erf(a)) / 2 / math.sqrt(2)
            elif mistake == "erf times sqrt 2":
                a = a * (1 + torch.erf(a * 2**0.5)) / 2
            elif mistake == "density":  # the bell curve of the standard normal
                a = a * torch.exp(-(a**2) / 2) / (2 * math.pi) ** 0.5
            elif mistake not in ("no activation", "activation after linear2"):
                a = a * 0.5 * torch.erfc(-a / math.sqrt(2))
            y = self.linear2(a)
            if mistake in ("activation after linear2", "gelu twice"):
                y = y * 0.5 * (1 + torch.erf(y / math.sqrt(2)))
            return y

    class MyEncoderLayer(nn.Module):
        def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
            super().__init__()
            eps = 1e-5 if mistake == "default eps" else eps
            self.self_attention = MyMultiHeadAttention(d_model, num_heads)
            self.norm_1 = MyLayerNorm(d_model, eps)
            self.feed_forward = MyFeedForward(d_model, d_ff)
            self.norm_2 = MyLayerNorm(d_model, eps)

        def forward(self, x: torch.Tensor, token_mask: torch.Tensor):
            inp = self.norm_1(x) if mistake in ("pre-norm", "normalised twice") else x
            mask = ~token_mask if mistake == "layer mask inverted" else token_mask
            mask = torch.ones_like(mask) if mistake == "layer mask all True" else mask
            attended, weights = self.self_attention(inp, mask)
            if mistake == "pair unpacked reversed":
                weights, attended = attended, weights
            if mistake == "pre-norm":
                h = x + attended
                return h + self.feed_forward(self.norm_2(h)), weights
            if mistake == "norm before residual":
                h = x + self.norm_1(attended)
                return h + self.norm_2(self.feed_forward(h)), weights
            first, second = (self.norm_2, self.norm_1) if mistake == "norms swapped" else (
                self.norm_1, self.norm_2
            )  # fmt: skip
            if mistake == "norm_1 twice":
                second = self.norm_1
            h = first(attended if mistake == "no attention residual" else x + attended)
            if mistake == "no feed-forward":
                return h, weights
            f = self.feed_forward(x if mistake == "feed-forward on x" else h)
            around = {"no feed-forward residual": 0, "second residual x": x}.get(mistake, h)
            y = second(around + f)
            return y if mistake == "y only" else (y, weights)

    return SimpleNamespace(
        MyLayerNorm=MyLayerNorm,
        MyMultiHeadAttention=MyMultiHeadAttention,
        MyFeedForward=MyFeedForward,
        MyEncoderLayer=MyEncoderLayer,
    )
