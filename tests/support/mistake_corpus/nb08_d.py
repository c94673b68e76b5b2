"""Learner answers to notebook 08's exercises (the Transformer block), corpus d, written blind:
epsilons placed elsewhere than the formula puts them, `.T` on a batch, float masks and other
crashes inside the learner's layer."""

from __future__ import annotations

import math

import torch
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_gated_feed_forward", "ex2_layer_norm", "ex3_residual_block"
E4, E5 = "ex4_my_encoder_layer", "ex5_my_decoder_layer"

# ------------------------------------------ Exercise 1: gated_feed_forward


def _gelu(a):
    return a * 0.5 * (1 + torch.erf(a / math.sqrt(2)))


def ex1_wrong_dot_t_batch(x, w_gate, w_up, w_down):
    h = _gelu(w_gate @ x.T) * (w_up @ x.T)  # (d_ff, ...)
    return (w_down @ h).T


def ex1_wrong_not_transposed(x, w_gate, w_up, w_down):
    return (_gelu(x @ w_gate) * (x @ w_up)) @ w_down


def ex1_wrong_gelu_on_product(x, w_gate, w_up, w_down):
    return _gelu((x @ w_gate.T) * (x @ w_up.T)) @ w_down.T


def ex1_right_linear(x, w_gate, w_up, w_down):
    F = torch.nn.functional
    return F.linear(F.gelu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)


def ex1_right_mt_norm_cdf(x, w_gate, w_up, w_down):
    g = x @ w_gate.mT
    phi = 0.5 * torch.erfc(-g / math.sqrt(2.0))
    return ((g * phi) * (x @ w_up.mT)) @ w_down.mT


# ------------------------------------------ Exercise 2: layer_norm


def _dims(gamma):
    return tuple(range(-gamma.dim(), 0))


def ex2_wrong_eps_outside_sqrt(x, gamma, beta, eps=1e-5):
    dims = _dims(gamma)
    mu = x.mean(dim=dims, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mu) / (var.sqrt() + eps) + beta


def ex2_wrong_eps_precedence(x, gamma, beta, eps=1e-5):
    dims = _dims(gamma)
    mu = x.mean(dim=dims, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mu) / torch.sqrt(var) + eps + beta


def ex2_wrong_eps_on_std_squared(x, gamma, beta, eps=1e-5):
    dims = _dims(gamma)
    mu = x.mean(dim=dims, keepdim=True)
    std = (x - mu).pow(2).mean(dim=dims, keepdim=True).sqrt()
    return gamma * (x - mu) / (std + eps) ** 0.5 + beta


def ex2_wrong_last_dim_only(x, gamma, beta, eps=1e-5):
    mu = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, unbiased=False, keepdim=True)
    return gamma * (x - mu) / torch.sqrt(var + eps) + beta


def ex2_right_rsqrt(x, gamma, beta, eps=1e-5):
    dims = _dims(gamma)
    centred = x - x.mean(dim=dims, keepdim=True)
    var = centred.square().mean(dim=dims, keepdim=True)
    return centred * torch.rsqrt(var + eps) * gamma + beta


def ex2_right_var_correction(x, gamma, beta, eps=1e-5):
    dims = _dims(gamma)
    var, mu = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
    return (x - mu) / (var + eps) ** 0.5 * gamma + beta


# ------------------------------------------ Exercise 3: residual_block


def ex3_wrong_dropout_after_add(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return dropout(x + sublayer(norm(x)))
    return norm(dropout(x + sublayer(x)))


def ex3_wrong_pre_norm_adds_normed(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        h = norm(x)
        return h + dropout(sublayer(h))
    return norm(x + dropout(sublayer(x)))


def ex3_right_one_line_each(x, sublayer, norm, dropout, norm_first):
    return x + dropout(sublayer(norm(x))) if norm_first else norm(x + dropout(sublayer(x)))


def ex3_right_names(x, sublayer, norm, dropout, norm_first):
    inner = norm(x) if norm_first else x
    y = x + dropout(sublayer(inner))
    return y if norm_first else norm(y)


# ------------------------------------------ Exercise 4: MyEncoderLayer


class Ex4Base(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


class Ex4WrongMaskPositional(Ex4Base):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask)  # the mask lands in `key`
        x = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(x))), w


class Ex4WrongFloatMask(Ex4Base):
    def forward(self, x, mask=None):
        if mask is not None:
            mask = mask.float()  # 1 = may attend
        a, w = self.self_attention(x, x, x, mask=mask)
        x = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(x))), w


class Ex4WrongReturnsOne(Ex4Base):
    def forward(self, x, mask=None):
        a = self.self_attention(x, x, x, mask=mask)[0]
        x = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(x)))


class Ex4RightKeywords(Ex4Base):
    def forward(self, x, mask=None):
        attended, weights = self.self_attention(query=x, key=x, value=x, mask=mask)
        h = self.norm_1(x + self.dropout(attended))
        y = self.norm_2(h + self.dropout(self.feed_forward(h)))
        return y, weights


# ------------------------------------------ Exercise 5: MyDecoderLayer


class Ex5Base(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def rest(self, y, memory, memory_mask, causal):
        a, sw = self.self_attention(y, y, y, mask=causal)
        y = self.norm_1(y + self.dropout(a))
        c, cw = self.cross_attention(y, memory, memory, mask=memory_mask)
        y = self.norm_2(y + self.dropout(c))
        return self.norm_3(y + self.dropout(self.feed_forward(y))), sw, cw


class Ex5WrongFloatTril(Ex5Base):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        return self.rest(y, memory, memory_mask, torch.tril(torch.ones(T, T)))


class Ex5WrongMaskFromMemory(Ex5Base):
    def forward(self, y, memory, memory_mask=None):
        S = memory.shape[1]
        return self.rest(y, memory, memory_mask, attnlib.causal_mask(S))


class Ex5WrongTriuBool(Ex5Base):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        return self.rest(y, memory, memory_mask, causal)


class Ex5RightTrilBool(Ex5Base):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=y.device).tril()
        return self.rest(y, memory, memory_mask, causal)


ENTRIES = [
    Entry(
        E1,
        "w @ x.T, .T back (reverses a batch)",
        ex1_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(
        E1,
        "x @ w without the transpose",
        ex1_wrong_not_transposed,
        named="used the weights as they are stored, without transposing them",
    ),
    Entry(
        E1,
        "GELU on the product",
        ex1_wrong_gelu_on_product,
        named="applied GELU after multiplying the two branches",
    ),
    Entry(E1, "F.linear and F.gelu", ex1_right_linear, right=True),
    Entry(E1, "erfc for Phi, .mT", ex1_right_mt_norm_cdf, right=True),
    Entry(
        E2,
        "eps added to the standard deviation",
        ex2_wrong_eps_outside_sqrt,
        named="added ε outside the square root",
    ),
    Entry(
        E2,
        "... / sqrt(var) + eps: eps added after dividing",
        ex2_wrong_eps_precedence,
        named=(
            "added ε after dividing by the square root, to the result, not to the variance under it"
        ),
    ),
    Entry(
        E2,
        "(std + eps) ** 0.5",
        ex2_wrong_eps_on_std_squared,
        named="took the square root of the standard deviation plus ε, (σ + ε)^½",
    ),
    Entry(
        E2,
        "normalised over the last dimension only",
        ex2_wrong_last_dim_only,
        named="normalised over the last dimension only, whatever the shape of γ",
    ),
    Entry(E2, "rsqrt of var + eps", ex2_right_rsqrt, right=True),
    Entry(E2, "var_mean with correction=0", ex2_right_var_correction, right=True),
    Entry(
        E3,
        "dropout after the addition",
        ex3_wrong_dropout_after_add,
        named="applied dropout to the sum, skip path included",
    ),
    Entry(
        E3,
        "pre-norm adds to the normed x",
        ex3_wrong_pre_norm_adds_normed,
        named="in pre-norm, carried the normalised x on the skip path",
    ),
    Entry(E3, "one conditional line", ex3_right_one_line_each, right=True),
    Entry(E3, "inner / y names", ex3_right_names, right=True),
    Entry(
        E4,
        "self_attention(x, mask): the mask lands in key",
        Ex4WrongMaskPositional,
        named=("passed the mask as the self-attention's second argument, which is its key"),
    ),
    Entry(
        E4,
        "mask.float() before attention",
        Ex4WrongFloatMask,
        named="passed an attention a float mask of 1s and 0s, not a bool one",
    ),
    Entry(
        E4,
        "returns y only, not (y, weights)",
        Ex4WrongReturnsOne,
        named="returned only y, not (y, weights)",
    ),
    Entry(E4, "keywords for query, key, value", Ex4RightKeywords, right=True),
    Entry(
        E5,
        "causal mask tril(ones(T, T)): float",
        Ex5WrongFloatTril,
        named="passed an attention a float mask of 1s and 0s, not a bool one",
    ),
    Entry(
        E5,
        "causal mask of the memory's length",
        Ex5WrongMaskFromMemory,
        named="built the causal mask for the source's length instead of the target's",
    ),
    Entry(
        E5,
        "triu(diagonal=1) bool: the blocked pairs",
        Ex5WrongTriuBool,
        named="inverted the causal mask",
    ),
    Entry(E5, "bool tril", Ex5RightTrilBool, right=True),
]
