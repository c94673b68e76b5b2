"""Learner answers to notebook 08's exercises (the Transformer block), written blind."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: gated FFN

EX1 = "ex1_gated_feed_forward"


def ex1_wrong_gelu_on_up(x, w_gate, w_up, w_down):
    gate = x @ w_gate.T
    up = F.gelu(x @ w_up.T)
    return (gate * up) @ w_down.T


def ex1_wrong_relu(x, w_gate, w_up, w_down):
    return (torch.relu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T


def ex1_wrong_tanh_gelu(x, w_gate, w_up, w_down):
    gate = F.gelu(x @ w_gate.T, approximate="tanh")
    return (gate * (x @ w_up.T)) @ w_down.T


def ex1_wrong_sigmoid_gate(x, w_gate, w_up, w_down):
    gate = torch.sigmoid(x @ w_gate.T)
    return (gate * (x @ w_up.T)) @ w_down.T


def ex1_wrong_gelu_after_product(x, w_gate, w_up, w_down):
    hidden = F.gelu((x @ w_gate.T) * (x @ w_up.T))
    return hidden @ w_down.T


def ex1_wrong_2d_only(x, w_gate, w_up, w_down):
    gate = F.gelu(torch.mm(x, w_gate.t()))
    up = torch.mm(x, w_up.t())
    return torch.mm(gate * up, w_down.t())


def ex1_wrong_added(x, w_gate, w_up, w_down):
    return (F.gelu(x @ w_gate.T) + x @ w_up.T) @ w_down.T


def ex1_wrong_gelu_no_sqrt2(x, w_gate, w_up, w_down):
    a = x @ w_gate.T
    gate = a * 0.5 * (1 + torch.erf(a / 2))
    return (gate * (x @ w_up.T)) @ w_down.T


def ex1_wrong_einsum_swapped(x, w_gate, w_up, w_down):
    gate = F.gelu(torch.einsum("...d,fd->...f", x, w_up))
    up = torch.einsum("...d,fd->...f", x, w_gate)
    return torch.einsum("...f,df->...d", gate * up, w_down)


def ex1_wrong_no_transpose(x, w_gate, w_up, w_down):
    gate = F.gelu(x @ w_gate)
    return (gate * (x @ w_up)) @ w_down


def ex1_wrong_float64_sigmoid_approx(x, w_gate, w_up, w_down):
    a = x.double() @ w_gate.double().T
    gate = a * torch.sigmoid(1.702 * a)
    out = (gate * (x.double() @ w_up.double().T)) @ w_down.double().T
    return out.to(x.dtype)


def ex1_right_einsum(x, w_gate, w_up, w_down):
    gate = F.gelu(torch.einsum("...d,fd->...f", x, w_gate))
    up = torch.einsum("...d,fd->...f", x, w_up)
    return torch.einsum("...f,df->...d", gate * up, w_down)


def ex1_right_flatten_erf(x, w_gate, w_up, w_down):
    flat = x.reshape(-1, x.shape[-1])  # (N, d)
    a = flat @ w_gate.transpose(0, 1)
    gate = 0.5 * a * (1.0 + torch.erf(a / math.sqrt(2.0)))
    out = (gate * (flat @ w_up.transpose(0, 1))) @ w_down.transpose(0, 1)
    return out.reshape(x.shape)


def ex1_right_linear_float64(x, w_gate, w_up, w_down):
    xd = x.double()
    hidden = F.gelu(F.linear(xd, w_gate.double())) * F.linear(xd, w_up.double())
    return F.linear(hidden, w_down.double()).to(x.dtype)


# ---------------------------------------------------------------- Exercise 2: LayerNorm

EX2 = "ex2_layer_norm"


def ex2_wrong_last_dim_only(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_unbiased(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_eps_outside_sqrt(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    std = x.std(dim=dims, keepdim=True, unbiased=False)
    return gamma * (x - mean) / (std + eps) + beta


def ex2_wrong_mean_of_squares(x, gamma, beta, eps=1e-5):
    dims = [x.dim() - 1 - i for i in range(gamma.dim())]
    mean = x.mean(dim=dims, keepdim=True)
    var = (x * x).mean(dim=dims, keepdim=True) - mean**2
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_no_eps(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mean) * torch.rsqrt(var) + beta


def ex2_wrong_over_batch(x, gamma, beta, eps=1e-5):
    mean = x.mean(dim=0, keepdim=True)
    var = x.var(dim=0, keepdim=True, unbiased=False)
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


def ex2_wrong_gamma_beta_swapped(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return beta * (x - mean) / torch.sqrt(var + eps) + gamma


def ex2_wrong_flatten_after_batch(x, gamma, beta, eps=1e-5):
    flat = x.reshape(x.shape[0], -1)
    mean = flat.mean(dim=1, keepdim=True)
    var = ((flat - mean) ** 2).mean(dim=1, keepdim=True)
    normed = ((flat - mean) / torch.sqrt(var + eps)).reshape(x.shape)
    return gamma * normed + beta


def ex2_wrong_eps_ignored(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    return gamma * (x - mean) / torch.sqrt(var + 1e-5) + beta


def ex2_wrong_in_place(x, gamma, beta, eps=1e-5):
    dims = tuple(range(-gamma.dim(), 0))
    x -= x.mean(dim=dims, keepdim=True)
    var = (x**2).mean(dim=dims, keepdim=True)
    x /= torch.sqrt(var + eps)
    return gamma * x + beta


def ex2_wrong_float64_no_keepdim(x, gamma, beta, eps=1e-5):
    xd = x.double()
    dims = tuple(range(-gamma.dim(), 0))
    mean = xd.mean(dim=dims)
    var = xd.var(dim=dims, unbiased=False)
    return (gamma * (xd - mean) / torch.sqrt(var + eps) + beta).to(x.dtype)


def ex2_right_flatten_trailing(x, gamma, beta, eps=1e-5):
    lead = x.shape[: x.dim() - gamma.dim()]
    flat = x.reshape(*lead, -1)
    var, mean = torch.var_mean(flat, dim=-1, keepdim=True, correction=0)
    normed = ((flat - mean) / torch.sqrt(var + eps)).reshape(x.shape)
    return normed * gamma + beta


def ex2_right_float64(x, gamma, beta, eps=1e-5):
    dims = list(range(x.dim() - gamma.dim(), x.dim()))
    xd = x.to(torch.float64)
    centred = xd - xd.mean(dim=dims, keepdim=True)
    var = centred.pow(2).mean(dim=dims, keepdim=True)
    out = centred / (var + eps).sqrt() * gamma.double() + beta.double()
    return out.to(x.dtype)


# ---------------------------------------------------------------- Exercise 3: residual block

EX3 = "ex3_residual_block"


def ex3_wrong_polarity(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return norm(x + dropout(sublayer(x)))
    return x + dropout(sublayer(norm(x)))


def ex3_wrong_no_dropout(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + sublayer(norm(x))
    return norm(x + sublayer(x))


def ex3_wrong_dropout_after_add(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return dropout(x + sublayer(norm(x)))
    return norm(dropout(x + sublayer(x)))


def ex3_wrong_dropout_on_input(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + sublayer(norm(dropout(x)))
    return norm(x + sublayer(dropout(x)))


def ex3_wrong_pre_norm_adds_normed(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        n = norm(x)
        return n + dropout(sublayer(n))
    return norm(x + dropout(sublayer(x)))


def ex3_wrong_post_norm_on_sublayer(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return x + norm(dropout(sublayer(x)))


def ex3_wrong_pre_norm_norms_again(x, sublayer, norm, dropout, norm_first):
    h = norm(x) if norm_first else x
    return norm(x + dropout(sublayer(h)))


def ex3_wrong_pre_norm_no_skip(x, sublayer, norm, dropout, norm_first):
    if norm_first:
        return dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


def ex3_wrong_dropout_twice(x, sublayer, norm, dropout, norm_first):
    out = dropout(sublayer(norm(x) if norm_first else x))
    out = dropout(out)
    return x + out if norm_first else norm(x + out)


def ex3_wrong_post_norm_missing(x, sublayer, norm, dropout, norm_first):
    inp = norm(x) if norm_first else x
    return x + dropout(sublayer(inp))


def ex3_right_one_expression(x, sublayer, norm, dropout, norm_first):
    return x + dropout(sublayer(norm(x))) if norm_first else norm(x + dropout(sublayer(x)))


def ex3_right_steps(x, sublayer, norm, dropout, norm_first):
    residual = x
    if norm_first:
        x = norm(x)
    out = residual + dropout(sublayer(x))
    if not norm_first:
        out = norm(out)
    return out


# ---------------------------------------------------------------- Exercise 4: encoder layer

EX4 = "ex4_my_encoder_layer"


class _EncoderBase(nn.Module):
    """What every learner's __init__ below writes (the paper's names and parts)."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


class Ex4WrongPreNorm(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


class Ex4WrongNoDropout(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex4WrongNoMask(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongNormsSwapped(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_2(x + self.dropout(a))
        return self.norm_1(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongFfnReadsInput(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(x))), w


class Ex4WrongSecondSkipFromInput(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(h))), w


class Ex4WrongReturnsOnlyOutput(_EncoderBase):
    def forward(self, x, mask=None):
        a, _ = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h)))


class Ex4WrongDropoutEverywhere(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, dropout=dropout)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongOneSharedNorm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = self.norm_1  # one LayerNorm is enough?
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongMaskInverted(_EncoderBase):
    def forward(self, x, mask=None):
        if mask is not None:
            mask = ~mask  # PyTorch's padding mask is True = pad
        a, w = self.self_attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4WrongDropoutAfterNorm(_EncoderBase):
    def forward(self, x, mask=None):
        a, w = self.self_attention(x, mask=mask)
        h = self.dropout(self.norm_1(x + a))
        return self.dropout(self.norm_2(h + self.feed_forward(h))), w


class Ex4WrongGeluFfn(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, activation="gelu")
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        a, w = self.self_attention(x, x, x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), w


class Ex4RightHelper(_EncoderBase):
    def _add_norm(self, x, out, norm):
        return norm(x + self.dropout(out))

    def forward(self, x, mask=None):
        attended, weights = self.self_attention(x, x, x, mask=mask)
        x = self._add_norm(x, attended, self.norm_1)
        x = self._add_norm(x, self.feed_forward(x), self.norm_2)
        return x, weights


class Ex4RightExplicit(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.norm_2 = nn.LayerNorm(d_model, eps=1e-5)
        self.norm_1 = nn.LayerNorm(d_model, eps=1e-5)
        self.feed_forward = attnlib.FeedForward(d_model=d_model, d_ff=d_ff)
        self.self_attention = attnlib.MultiHeadAttention(d_model=d_model, num_heads=num_heads)

    def forward(self, x, mask=None):
        out, attn_weights = self.self_attention(query=x, mask=mask)
        residual = x + self.dropout(out)
        h = self.norm_1(residual)
        ff = self.dropout(self.feed_forward(h))
        return self.norm_2(ff + h), attn_weights


# ---------------------------------------------------------------- Exercise 5: decoder layer

EX5 = "ex5_my_decoder_layer"


class _DecoderBase(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def _rest(self, y, h1, w_self, memory, memory_mask):
        """The cross-attention and FFN blocks, written correctly (the mistakes are elsewhere)."""
        r, w_cross = self.cross_attention(h1, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h2)))
        return z, w_self, w_cross


class Ex5WrongNotCausal(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w = self.self_attention(y)
        h1 = self.norm_1(y + self.dropout(a))
        return self._rest(y, h1, w, memory, memory_mask)


class Ex5WrongCausalUpper(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        mask = torch.triu(torch.ones(T, T), diagonal=1).bool()  # the future is masked
        a, w = self.self_attention(y, mask=mask)
        h1 = self.norm_1(y + self.dropout(a))
        return self._rest(y, h1, w, memory, memory_mask)


class Ex5WrongNoSelfDiagonal(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        mask = torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)  # strictly earlier tokens
        a, w = self.self_attention(y, mask=mask)
        h1 = self.norm_1(y + self.dropout(a))
        return self._rest(y, h1, w, memory, memory_mask)


class Ex5WrongCrossSwapped(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.size(1)))
        h1 = self.norm_1(y + self.dropout(a))
        r, w_cross = self.cross_attention(memory, h1, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h2)))
        return z, w_self, w_cross


class Ex5WrongMemoryMaskNotUsed(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.size(1)))
        h1 = self.norm_1(y + self.dropout(a))
        r, w_cross = self.cross_attention(h1, memory)
        h2 = self.norm_2(h1 + self.dropout(r))
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h2)))
        return z, w_self, w_cross


class Ex5WrongCrossQueriesFromInput(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.size(1)))
        h1 = self.norm_1(y + self.dropout(a))
        r, w_cross = self.cross_attention(y, memory, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h2)))
        return z, w_self, w_cross


class Ex5WrongPreNorm(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(self.norm_1(y), mask=attnlib.causal_mask(y.shape[1]))
        h1 = y + self.dropout(a)
        r, w_cross = self.cross_attention(self.norm_2(h1), memory, mask=memory_mask)
        h2 = h1 + self.dropout(r)
        return h2 + self.dropout(self.feed_forward(self.norm_3(h2))), w_self, w_cross


class Ex5WrongCausalInCross(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        T, S = y.shape[1], memory.shape[1]
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(T))
        h1 = self.norm_1(y + self.dropout(a))
        cross_mask = attnlib.causal_mask(T, S)
        if memory_mask is not None:
            cross_mask = cross_mask & memory_mask
        r, w_cross = self.cross_attention(h1, memory, mask=cross_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h2)))
        return z, w_self, w_cross


class Ex5WrongNoCrossDropout(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a))
        r, w_cross = self.cross_attention(h1, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + r)
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h2)))
        return z, w_self, w_cross


class Ex5WrongWeightsSwapped(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a))
        z, w_self, w_cross = self._rest(y, h1, w_self, memory, memory_mask)
        return z, w_cross, w_self


class Ex5WrongFfnReadsH1(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        a, w_self = self.self_attention(y, mask=attnlib.causal_mask(y.shape[1]))
        h1 = self.norm_1(y + self.dropout(a))
        r, w_cross = self.cross_attention(h1, memory, mask=memory_mask)
        h2 = self.norm_2(h1 + self.dropout(r))
        z = self.norm_3(h2 + self.dropout(self.feed_forward(h1)))
        return z, w_self, w_cross


class Ex5WrongFloatMask(_DecoderBase):
    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        a, w = self.self_attention(y, mask=torch.tril(torch.ones(T, T)))
        h1 = self.norm_1(y + self.dropout(a))
        return self._rest(y, h1, w, memory, memory_mask)


class Ex5RightHelper(_DecoderBase):
    def _sub(self, x, out, norm):
        return norm(x + self.dropout(out))

    def forward(self, y, memory, memory_mask=None):
        T = y.shape[1]
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=y.device))
        a, self_weights = self.self_attention(y, y, y, mask=causal)
        y = self._sub(y, a, self.norm_1)
        r, cross_weights = self.cross_attention(y, memory, memory, mask=memory_mask)
        y = self._sub(y, r, self.norm_2)
        y = self._sub(y, self.feed_forward(y), self.norm_3)
        return y, self_weights, cross_weights


class Ex5RightArangeMask(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1, self.norm_2, self.norm_3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(self, y, memory, memory_mask=None):
        pos = torch.arange(y.shape[1])
        causal = (pos[None, :] <= pos[:, None])[None, None]  # (1, 1, T, T)
        sa, sw = self.self_attention(y, mask=causal)
        h = self.norm_1(self.dropout(sa) + y)
        ca, cw = self.cross_attention(h, key=memory, value=memory, mask=memory_mask)
        h = self.norm_2(self.dropout(ca) + h)
        return self.norm_3(self.dropout(self.feed_forward(h)) + h), sw, cw


# ---------------------------------------------------------------- the entries

ENTRIES = [
    # Exercise 1
    Entry(
        EX1,
        "put the GELU on the up projection instead of the gate",
        ex1_wrong_gelu_on_up,
        named="put GELU on the up branch instead of the gate",
    ),
    Entry(
        EX1,
        "used ReLU instead of GELU",
        ex1_wrong_relu,
        named="used ReLU as the gate's non-linearity instead of GELU",
    ),
    Entry(
        EX1,
        "used the tanh approximation of GELU",
        ex1_wrong_tanh_gelu,
        named="used GELU's tanh approximation",
    ),
    Entry(
        EX1,
        "bent the gate with a sigmoid (GLU) instead of GELU",
        ex1_wrong_sigmoid_gate,
        named="used a sigmoid gate (the original GLU) instead of GELU",
    ),
    Entry(
        EX1,
        "applied GELU after multiplying gate and up",
        ex1_wrong_gelu_after_product,
        named="applied GELU after multiplying the two branches",
    ),
    Entry(
        EX1,
        "torch.mm: works only for a 2-D x",
        ex1_wrong_2d_only,
        named="wrote it for a 2-D x only (torch.mm, or .t() of x)",
    ),
    Entry(
        EX1,
        "added the gate and the up projection instead of multiplying",
        ex1_wrong_added,
        named="added the two branches instead of multiplying them",
    ),
    Entry(
        EX1,
        "wrote GELU by hand with erf(a / 2), no √2",
        ex1_wrong_gelu_no_sqrt2,
        named="wrote GELU by hand with erf(z / 2): the √2 is missing",
    ),
    Entry(
        EX1,
        "einsum, with w_gate and w_up mixed up",
        ex1_wrong_einsum_swapped,
        named="put GELU on the up branch instead of the gate",
    ),
    Entry(
        EX1,
        "did not transpose the (out, in) weights",
        ex1_wrong_no_transpose,
        named="used the weights as they are stored, without transposing them",
    ),
    Entry(
        EX1,
        "float64, and GELU as x·sigmoid(1.702x)",
        ex1_wrong_float64_sigmoid_approx,
        named="used GELU's sigmoid approximation, z·σ(1.702 z)",
    ),
    Entry(EX1, "einsum", ex1_right_einsum, right=True),
    Entry(EX1, "flattened to 2-D, GELU by hand with erf", ex1_right_flatten_erf, right=True),
    Entry(EX1, "F.linear in float64, cast back", ex1_right_linear_float64, right=True),
    # Exercise 2
    Entry(
        EX2,
        "normalised over the last dimension only",
        ex2_wrong_last_dim_only,
        named="normalised over the last dimension only, whatever the shape of γ",
    ),
    Entry(
        EX2,
        "used the unbiased variance (torch.var's default)",
        ex2_wrong_unbiased,
        named="used the unbiased variance (dividing by n − 1)",
    ),
    Entry(
        EX2,
        "added eps to the standard deviation, outside the sqrt",
        ex2_wrong_eps_outside_sqrt,
        named="added ε outside the square root",
    ),
    Entry(
        EX2,
        "variance as mean of squares minus squared mean",
        ex2_wrong_mean_of_squares,
        named="computed the variance as mean(x²) − mean(x)², which cancels in float32",
    ),
    Entry(EX2, "forgot eps", ex2_wrong_no_eps, named="left ε out"),
    Entry(
        EX2,
        "took mean and variance over the batch dimension",
        ex2_wrong_over_batch,
        named="normalised along dim 0, across the batch (as BatchNorm does)",
    ),
    Entry(EX2, "swapped gamma and beta", ex2_wrong_gamma_beta_swapped, named="swapped γ and β"),
    Entry(
        EX2,
        "flattened everything after the batch dimension",
        ex2_wrong_flatten_after_batch,
        named="normalised everything after the first dimension, whatever the shape of γ",
    ),
    Entry(
        EX2,
        "hard-coded eps = 1e-5 instead of the argument",
        ex2_wrong_eps_ignored,
        named="always used ε = 1e-5, ignoring the eps argument",
    ),
    Entry(
        EX2,
        "subtracted the mean from x in place",
        ex2_wrong_in_place,
        named="changed x in place (x -= …, x /= …)",
    ),
    Entry(
        EX2,
        "float64, and forgot keepdim",
        ex2_wrong_float64_no_keepdim,
        named="took the mean and the variance without keeping the reduced dimensions",
    ),
    Entry(EX2, "flattened the trailing dims, var_mean", ex2_right_flatten_trailing, right=True),
    Entry(EX2, "in float64, cast back", ex2_right_float64, right=True),
    # Exercise 3
    Entry(
        EX3,
        "mixed up which wiring norm_first means",
        ex3_wrong_polarity,
        named="swapped the two wirings: norm_first=True is pre-norm",
    ),
    Entry(EX3, "never used the dropout", ex3_wrong_no_dropout, named="left dropout out"),
    Entry(
        EX3,
        "applied dropout after the residual add",
        ex3_wrong_dropout_after_add,
        named="applied dropout to the sum, skip path included",
    ),
    Entry(
        EX3,
        "applied dropout to the input of the sublayer",
        ex3_wrong_dropout_on_input,
        named="applied dropout to the block's input x, before the norm",
    ),
    Entry(
        EX3,
        "pre-norm: added the normalised x, not x",
        ex3_wrong_pre_norm_adds_normed,
        named="in pre-norm, carried the normalised x on the skip path",
    ),
    Entry(
        EX3,
        "post-norm: normalised the sublayer output, not the sum",
        ex3_wrong_post_norm_on_sublayer,
        named="in post-norm, normalised the sublayer's output instead of the sum",
    ),
    Entry(
        EX3,
        "pre-norm: normalised the sum as well",
        ex3_wrong_pre_norm_norms_again,
        named="in pre-norm, normalised the sum as well",
    ),
    Entry(
        EX3,
        "pre-norm: forgot to add x back",
        ex3_wrong_pre_norm_no_skip,
        named="left out the skip path: returned the sublayer's branch only",
    ),
    Entry(EX3, "applied the dropout twice", ex3_wrong_dropout_twice, named="applied dropout twice"),
    Entry(
        EX3,
        "post-norm: forgot the LayerNorm",
        ex3_wrong_post_norm_missing,
        named="in post-norm, left out the LayerNorm",
    ),
    Entry(EX3, "one conditional expression", ex3_right_one_expression, right=True),
    Entry(EX3, "step by step with a saved residual", ex3_right_steps, right=True),
    # Exercise 4
    Entry(
        EX4,
        "wired it pre-norm, as attnlib's default",
        Ex4WrongPreNorm,
        named="wired it pre-norm, x + f(LN(x)): the paper's layer is post-norm",
    ),
    Entry(EX4, "never applied the residual dropout", Ex4WrongNoDropout, named="left dropout out"),
    Entry(
        EX4,
        "did not pass the mask to self-attention",
        Ex4WrongNoMask,
        named="did not pass the padding mask to the self-attention",
    ),
    Entry(
        EX4,
        "used norm_2 after attention and norm_1 after the FFN",
        Ex4WrongNormsSwapped,
        named="put norm_1 and norm_2 in each other's place",
    ),
    Entry(
        EX4,
        "fed the FFN the layer's input instead of h",
        Ex4WrongFfnReadsInput,
        named="gave the feed-forward network the layer's input x instead of h",
    ),
    Entry(
        EX4,
        "second residual adds the layer's input x",
        Ex4WrongSecondSkipFromInput,
        named="added the layer's input x, not h, on the feed-forward block's skip path",
    ),
    Entry(
        EX4,
        "returned only the output, not the weights",
        Ex4WrongReturnsOnlyOutput,
        named="returned only y, not (y, weights)",
    ),
    Entry(
        EX4,
        "gave the dropout rate to attention and FFN too",
        Ex4WrongDropoutEverywhere,
        named="gave the attention or the feed-forward network a dropout of its own",
    ),
    Entry(
        EX4,
        "one LayerNorm for both blocks",
        Ex4WrongOneSharedNorm,
        named="shared one module between two sublayers",
    ),
    Entry(
        EX4,
        "inverted the mask as for PyTorch",
        Ex4WrongMaskInverted,
        named="inverted the padding mask",
    ),
    Entry(
        EX4,
        "applied dropout after each LayerNorm",
        Ex4WrongDropoutAfterNorm,
        named="applied dropout after the LayerNorm",
    ),
    Entry(
        EX4,
        "GELU FFN, and attention called with (x, x, x)",
        Ex4WrongGeluFfn,
        named="gave the feed-forward network GELU instead of the paper's ReLU",
    ),
    Entry(EX4, "a helper for add & norm, attention(x, x, x)", Ex4RightHelper, right=True),
    Entry(EX4, "keyword arguments, modules in another order", Ex4RightExplicit, right=True),
    # Exercise 5
    Entry(
        EX5,
        "no causal mask in self-attention",
        Ex5WrongNotCausal,
        named="gave the self-attention no causal mask",
    ),
    Entry(
        EX5,
        "causal mask with triu: True on the future",
        Ex5WrongCausalUpper,
        named="inverted the causal mask",
    ),
    Entry(
        EX5,
        "causal mask that hides the token itself too",
        Ex5WrongNoSelfDiagonal,
        named="hid each position from itself too (a mask strictly below the diagonal)",
    ),
    Entry(
        EX5,
        "cross-attention with queries and memory swapped",
        Ex5WrongCrossSwapped,
        named="swapped the cross-attention's roles: queries from memory, keys and values from h1",
    ),
    Entry(
        EX5,
        "did not pass memory_mask to cross-attention",
        Ex5WrongMemoryMaskNotUsed,
        named="did not pass the memory mask to the cross-attention",
    ),
    Entry(
        EX5,
        "cross-attention queries from y, not from h1",
        Ex5WrongCrossQueriesFromInput,
        named="gave the cross-attention the layer's input y as its queries, not h1",
    ),
    Entry(
        EX5,
        "wired it pre-norm",
        Ex5WrongPreNorm,
        named="wired it pre-norm, y + f(LN(y)): the paper's layer is post-norm",
    ),
    Entry(
        EX5,
        "also applied a causal mask in cross-attention",
        Ex5WrongCausalInCross,
        named="also gave the cross-attention a causal mask, on top of the memory mask",
    ),
    Entry(
        EX5,
        "no dropout on the cross-attention block",
        Ex5WrongNoCrossDropout,
        named="left the cross-attention block without dropout",
    ),
    Entry(
        EX5,
        "returned the cross weights before the self weights",
        Ex5WrongWeightsSwapped,
        named="returned the two attentions' weights in the other order",
    ),
    Entry(
        EX5,
        "fed the FFN h1 instead of h2",
        Ex5WrongFfnReadsH1,
        named="gave the feed-forward network h1 instead of h2",
    ),
    Entry(
        EX5,
        "causal mask as a float tril of ones",
        Ex5WrongFloatMask,
        named="passed an attention a float mask of 1s and 0s, not a bool one",
    ),
    Entry(EX5, "bool tril mask, add & norm helper", Ex5RightHelper, right=True),
    Entry(EX5, "mask from arange, (1, 1, T, T), keywords", Ex5RightArangeMask, right=True),
]
