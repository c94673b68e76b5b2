"""Learner answers to notebook 11's exercises (max pooling, the previous-token share, semantic
search, and the capstone's LayerNorm, attention, feed-forward network and encoder layer), written
from the learner's edition and the worked solutions only."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------------------------------------
# Exercise 1: max pooling that ignores padding
# ---------------------------------------------------------------------------------------------


def ex1_wrong_zero_fill(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(-1), 0.0).amax(dim=1)


def ex1_wrong_times_mask(hidden, token_mask):
    return (hidden * token_mask.unsqueeze(-1)).max(dim=1).values


def ex1_wrong_minus_1e9(hidden, token_mask):
    return hidden.masked_fill(~token_mask[..., None], -1e9).max(dim=1).values


def ex1_wrong_minus_1e4(hidden, token_mask):
    out = hidden.masked_fill(~token_mask[:, :, None], -10000.0)  # fits in float16 too
    return out.max(dim=1).values


def ex1_wrong_over_features(hidden, token_mask):
    masked = hidden.masked_fill(~token_mask.unsqueeze(-1), float("-inf"))
    return masked.amax(dim=-1)


def ex1_wrong_max_tuple(hidden, token_mask):
    masked = hidden.masked_fill(~token_mask.unsqueeze(-1), float("-inf"))
    return masked.max(dim=1)


def ex1_wrong_no_mask(hidden, token_mask):
    return hidden.max(dim=1).values


def ex1_wrong_mask_polarity(hidden, token_mask):
    return hidden.masked_fill(token_mask.unsqueeze(-1), float("-inf")).amax(dim=1)


def ex1_wrong_lengths_from_start(hidden, token_mask):
    lengths = token_mask.sum(dim=1)  # the real tokens come first
    rows = [hidden[b, : int(n)].max(dim=0).values for b, n in enumerate(lengths)]
    return torch.stack(rows)


def ex1_wrong_float64_in_place(hidden, token_mask):
    hidden[~token_mask] = float("-inf")  # knock the padding out
    return hidden.double().amax(dim=1).to(hidden.dtype)


def ex1_right_loop(hidden, token_mask):
    return torch.stack([hidden[b][token_mask[b]].max(dim=0).values for b in range(hidden.shape[0])])


def ex1_right_where(hidden, token_mask):
    keep = token_mask.unsqueeze(-1).expand_as(hidden)
    lowest = torch.tensor(float("-inf"), dtype=hidden.dtype)
    return torch.where(keep, hidden, lowest).max(dim=1)[0]


# ---------------------------------------------------------------------------------------------
# Exercise 2: how much a head looks back
# ---------------------------------------------------------------------------------------------


def ex2_wrong_next_token(weights):
    return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=-1)


def ex2_wrong_divided_by_t(weights):
    T = weights.shape[-1]
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(dim=-1) / T


def ex2_wrong_default_diagonal_dims(weights):
    return torch.diagonal(weights, -1).mean(dim=-1)


def ex2_wrong_two_d_slicing(weights):
    below = weights[1:, :-1]  # drop the first query and the last key
    return below.diagonal(dim1=-2, dim2=-1).mean(dim=-1)


def ex2_wrong_one_number(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean()


def ex2_wrong_loop_off_by_one(weights):
    T = weights.shape[-1]
    total = 0
    for i in range(1, T - 1):
        total = total + weights[..., i, i - 1]
    return total / (T - 1)


def ex2_wrong_argmax_share(weights):
    T = weights.shape[-1]
    picks = weights.argmax(dim=-1)[..., 1:]  # (..., T - 1): the key each query likes best
    previous = torch.arange(T - 1)
    return (picks == previous).float().mean(dim=-1)


def ex2_wrong_includes_first_query(weights):
    T = weights.shape[-1]
    below = torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1)
    first = weights[..., 0, 0]
    return (below.sum(dim=-1) + first) / T


def ex2_right_shifted_eye(weights):
    T = weights.shape[-1]
    previous = torch.eye(T, dtype=weights.dtype).roll(-1, dims=1)  # row i, column i - 1
    previous[0] = 0
    return (weights * previous).sum(dim=(-2, -1)) / (T - 1)


def ex2_right_loop(weights):
    T = weights.shape[-1]
    parts = [weights[..., i, i - 1] for i in range(1, T)]
    return torch.stack(parts, dim=-1).mean(dim=-1)


# ---------------------------------------------------------------------------------------------
# Exercise 3: semantic search by cosine
# ---------------------------------------------------------------------------------------------


def ex3_wrong_dot_product(query, corpus, k):
    return (corpus @ query).topk(k).indices


def ex3_wrong_query_only_normalised(query, corpus, k):
    scores = corpus @ (query / query.norm())
    return torch.topk(scores, k).indices


def ex3_wrong_smallest(query, corpus, k):
    cos = (corpus / corpus.norm(dim=1, keepdim=True)) @ (query / query.norm())
    return cos.topk(k, largest=False).indices


def ex3_wrong_argsort_ascending(query, corpus, k):
    cos = F.normalize(corpus, dim=-1) @ F.normalize(query, dim=0)
    return cos.argsort()[:k]


def ex3_wrong_euclidean(query, corpus, k):
    distances = torch.cdist(query[None], corpus)[0]  # closest first
    return distances.topk(k, largest=False).indices


def ex3_wrong_norm_over_rows(query, corpus, k):
    rows = corpus / corpus.norm(dim=0, keepdim=True)
    return (rows @ (query / query.norm())).topk(k).indices


def ex3_wrong_values(query, corpus, k):
    cos = F.cosine_similarity(corpus, query.unsqueeze(0), dim=-1)
    return cos.topk(k).values


def ex3_wrong_skips_the_best(query, corpus, k):
    cos = F.cosine_similarity(corpus, query[None], dim=1)
    order = cos.argsort(descending=True)
    return order[1 : k + 1]  # the first one is the query itself


def ex3_wrong_whole_matrix_norm(query, corpus, k):
    scores = (corpus / corpus.norm()) @ (query / query.norm())
    return scores.topk(k).indices


def ex3_wrong_float64_python_list(query, corpus, k):
    cos = F.cosine_similarity(corpus.double(), query.double()[None], dim=-1)
    return sorted(range(len(cos)), key=lambda i: -cos[i].item())[:k]


def ex3_right_only_rows_normalised(query, corpus, k):
    # the query's length is the same for every row: it cannot change the order
    scores = F.normalize(corpus, dim=1) @ query
    return scores.argsort(descending=True)[:k]


def ex3_right_einsum(query, corpus, k):
    dots = torch.einsum("nc,c->n", corpus, query)
    cos = dots / (corpus.norm(dim=1) * query.norm())
    _, idx = torch.sort(cos, descending=True)
    return idx[:k].long()


# ---------------------------------------------------------------------------------------------
# Exercise 4: LayerNorm with its parameters
# ---------------------------------------------------------------------------------------------


class _LN(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps


class Ex4WrongUnbiased(_LN):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongEpsOutside(_LN):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        sigma = ((x - mu) ** 2).mean(-1, keepdim=True).sqrt()
        return self.weight * (x - mu) / (sigma + self.eps) + self.bias


class Ex4WrongStd(_LN):
    def forward(self, x):
        return (
            self.weight * (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + self.eps)
            + self.bias
        )


class Ex4WrongWholeTensor(_LN):
    def forward(self, x):
        mu = x.mean()
        var = ((x - mu) ** 2).mean()
        return self.weight * (x - mu) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongNoAffine(_LN):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + self.eps)


class Ex4WrongNoKeepdim(_LN):
    def forward(self, x):
        mu = x.mean(dim=-1)
        var = ((x - mu) ** 2).mean(dim=-1)
        return self.weight * (x - mu) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongDefaultEps(_LN):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(var + 1e-5) + self.bias


class Ex4WrongGammaBetaNames(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return self.gamma * (x - mu) / torch.sqrt(var + self.eps) + self.beta


class Ex4WrongZeroWeight(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongCancelling(_LN):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = (x * x).mean(-1, keepdim=True) - mu * mu  # E[x²] − E[x]²
        y = (x - mu) / torch.sqrt(var + self.eps)
        return (self.weight * y + self.bias).to(x.dtype)


class Ex4RightRsqrt(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class Ex4RightFloat64Inside(_LN):
    def forward(self, x):
        x64 = x.double()
        centred = x64 - x64.mean(dim=-1, keepdim=True)
        var = centred.pow(2).mean(dim=-1, keepdim=True)
        normed = (centred / (var + self.eps).sqrt()).to(x.dtype)
        return normed * self.weight + self.bias


# ---------------------------------------------------------------------------------------------
# Exercise 5: multi-head attention with a padding mask
# ---------------------------------------------------------------------------------------------


class _MHA(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def split(self, t):
        B, T, C = t.shape
        return t.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)

    def merge(self, t):
        B, h, T, d = t.shape
        return t.transpose(1, 2).reshape(B, T, h * d)


class Ex5WrongNoScale(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongScaleByWidth(_MHA):
    def forward(self, x, token_mask):
        C = x.shape[-1]
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(C)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMaskPolarity(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMasksQueries(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, :, None], -1e4)
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMinus1e9(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], -1e9)
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongSplitWithoutTranspose(_MHA):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        q = self.w_q(x).reshape(B, h, T, C // h)
        k = self.w_k(x).reshape(B, h, T, C // h)
        v = self.w_v(x).reshape(B, h, T, C // h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // h)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o((weights @ v).reshape(B, T, C)), weights


class Ex5WrongMergeWithoutTranspose(_MHA):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // self.num_heads)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o((weights @ v).reshape(B, T, C)), weights


class Ex5WrongSoftmaxOverQueries(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(dim=-2)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongNoOutputProjection(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.merge(weights @ v), weights


class Ex5WrongMaskAfterSoftmax(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = scores.softmax(-1) * token_mask[:, None, None, :]  # zero the padding keys
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongFloat64HeadMeanWeights(_MHA):
    def forward(self, x, token_mask):
        q, k, v = (self.split(f(x)).double() for f in (self.w_q, self.w_k, self.w_v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        out = self.w_o(self.merge(weights @ v).to(x.dtype))
        return out, weights.mean(dim=1).to(x.dtype)  # one map per sentence


class Ex5RightEinsum(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.h = num_heads
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x, token_mask):
        B, T, C = x.shape
        d = C // self.h
        q = self.w_q(x).unflatten(-1, (self.h, d))  # (B, T, h, d)
        k = self.w_k(x).unflatten(-1, (self.h, d))
        v = self.w_v(x).unflatten(-1, (self.h, d))
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / d**0.5
        scores = scores.masked_fill(~token_mask.view(B, 1, 1, T), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        heads = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)
        return self.w_o(heads), weights


class Ex5RightHeadLoop(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, x, token_mask):
        d_k = x.shape[-1] // self.num_heads
        Q, K, V = self.w_q(x), self.w_k(x), self.w_v(x)
        keys_allowed = token_mask.unsqueeze(1)  # (B, 1, T)
        outs, maps = [], []
        for i in range(self.num_heads):
            cols = slice(i * d_k, (i + 1) * d_k)
            s = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(d_k)  # (B, T, T)
            s = torch.where(keys_allowed, s, torch.finfo(s.dtype).min)
            a = s.softmax(dim=-1)
            outs.append(a @ V[..., cols])
            maps.append(a)
        return self.w_o(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)


# ---------------------------------------------------------------------------------------------
# Exercise 6: the feed-forward network with the exact GELU
# ---------------------------------------------------------------------------------------------


class _FFN(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


class Ex6WrongTanhGelu(_FFN):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x), approximate="tanh"))


class Ex6WrongRelu(_FFN):
    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class Ex6WrongSigmoidGelu(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * torch.sigmoid(1.702 * a))


class Ex6WrongErfOverTwo(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * 0.5 * (1 + torch.erf(a / 2)))


class Ex6WrongGeluTwice(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        gelu = lambda t: t * 0.5 * (1 + torch.erf(t / math.sqrt(2)))  # noqa: E731
        return gelu(self.linear2(gelu(a)))


class Ex6WrongNoHalf(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * (1 + torch.erf(a / math.sqrt(2))))


class Ex6WrongNoBias(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class Ex6WrongPhiMisplaced(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        phi = 0.5 * (1 + torch.erf(a)) / math.sqrt(2)
        return self.linear2(a * phi)


class Ex6WrongSwappedLinears(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        h = F.gelu(x @ self.linear1.weight + self.linear1.bias)  # x times W
        return h @ self.linear2.weight + self.linear2.bias


class Ex6WrongFloat64GeluOnOutput(_FFN):
    def forward(self, x):
        out = self.linear2(self.linear1(x.double().to(x.dtype)))
        return F.gelu(out)


class Ex6RightFunctionalGelu(_FFN):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class Ex6RightNdtr(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(in_features=d_model, out_features=d_ff)
        self.linear2 = nn.Linear(in_features=d_ff, out_features=d_model)

    def forward(self, x):
        hidden = self.linear1(x)
        return self.linear2(hidden * torch.special.ndtr(hidden))


# ---------------------------------------------------------------------------------------------
# Exercise 7: the encoder layer, from the learner's own (right) parts
# ---------------------------------------------------------------------------------------------


class MyLayerNorm(_LN):
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class MyMultiHeadAttention(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.split(self.w_q(x)), self.split(self.w_k(x)), self.split(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class MyFeedForward(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * 0.5 * (1.0 + torch.erf(a / math.sqrt(2.0))))


class _Layer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.norm_1 = MyLayerNorm(d_model, eps)
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.norm_2 = MyLayerNorm(d_model, eps)


class Ex7WrongPreNorm(_Layer):
    def forward(self, x, token_mask):
        a, w = self.self_attention(self.norm_1(x), token_mask)
        h = x + a
        return h + self.feed_forward(self.norm_2(h)), w


class Ex7WrongNoAttentionResidual(_Layer):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex7WrongFfnReadsInput(_Layer):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(x)), w


class Ex7WrongSecondResidualFromInput(_Layer):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_2(x + self.feed_forward(h)), w


class Ex7WrongNormsSwapped(_Layer):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_2(x + a)
        return self.norm_1(h + self.feed_forward(h)), w


class Ex7WrongOnlyOutput(_Layer):
    def forward(self, x, token_mask):
        h = self.norm_1(x + self.self_attention(x, token_mask)[0])
        return self.norm_2(h + self.feed_forward(h))


class Ex7WrongDefaultEps(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.norm_1 = MyLayerNorm(d_model, 1e-5)  # the usual LayerNorm eps
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.norm_2 = MyLayerNorm(d_model, 1e-5)

    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.norm_1(x + attended)
        return self.norm_2(h + self.feed_forward(h)), weights


class Ex7WrongMaskInverted(_Layer):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, ~token_mask)  # True = padding, as in torch
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex7WrongSharedNorm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.norm_1 = MyLayerNorm(d_model, eps)
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.norm_2 = MyLayerNorm(d_model, eps)

    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_1(h + self.feed_forward(h)), w  # one LayerNorm is enough


class _UnbiasedLayerNorm(_LN):
    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(x.var(-1, keepdim=True) + self.eps) + self.bias


class Ex7WrongPartUnbiasedNorm(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.norm_1 = _UnbiasedLayerNorm(d_model, eps)
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.norm_2 = _UnbiasedLayerNorm(d_model, eps)

    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex7RightStepByStep(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.norm_1 = MyLayerNorm(d_model, eps)
        self.norm_2 = MyLayerNorm(d_model, eps)
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.feed_forward = MyFeedForward(d_model, d_ff)

    def forward(self, x, token_mask):
        out = self.self_attention(x, token_mask)
        stream = self.norm_1(out[0] + x)
        stream = self.norm_2(self.feed_forward(stream) + stream)
        return stream, out[1]


class Ex7RightSublayerHelper(_Layer):
    @staticmethod
    def add_norm(x, sub, norm):
        return norm(x + sub)

    def forward(self, x, token_mask):
        a, weights = self.self_attention(x, token_mask)
        x = self.add_norm(x, a, self.norm_1)
        x = self.add_norm(x, self.feed_forward(x), self.norm_2)
        return x, weights


# ---------------------------------------------------------------------------------------------

E1, E2, E3 = "ex1_my_max_pool", "ex2_my_previous_token_share", "ex3_my_semantic_search"
E4, E5, E6 = "ex4_my_layer_norm", "ex5_my_multi_head_attention", "ex6_my_feed_forward"
E7 = "ex7_my_encoder_layer"

ENTRIES = [
    # Exercise 1
    Entry(
        E1,
        "filled the padding with 0 before the max",
        ex1_wrong_zero_fill,
        named=(
            "set the padding to 0 before taking the maximum (by multiplying by the mask or "
            "filling with 0)"
        ),
    ),
    Entry(
        E1,
        "multiplied by the mask, then took the max",
        ex1_wrong_times_mask,
        named=(
            "set the padding to 0 before taking the maximum (by multiplying by the mask or "
            "filling with 0)"
        ),
    ),
    Entry(
        E1,
        "filled the padding with -1e9",
        ex1_wrong_minus_1e9,
        named=(
            "filled the padding with a fixed very negative number (-1e9, or float32's "
            "smallest value) that float16 cannot hold"
        ),
    ),
    Entry(
        E1,
        "filled the padding with -10000",
        ex1_wrong_minus_1e4,
        named=(
            "filled the padding with a fixed negative number (such as -10000) that real "
            "values can fall below"
        ),
    ),
    Entry(
        E1,
        "took the max over the features",
        ex1_wrong_over_features,
        named="took the maximum over the features (the last dimension), not over the tokens",
    ),
    Entry(
        E1,
        "returned max's (values, indices) pair",
        ex1_wrong_max_tuple,
        named="returned torch.max's pair (values, indices) instead of the values",
    ),
    Entry(
        E1,
        "forgot the mask",
        ex1_wrong_no_mask,
        named="took the maximum over every position, padding included",
    ),
    Entry(
        E1,
        "filled the real tokens instead of the padding",
        ex1_wrong_mask_polarity,
        named="blocked the real tokens and kept the padding",
    ),
    Entry(
        E1,
        "the first `length` positions as the real ones",
        ex1_wrong_lengths_from_start,
        named="took the first positions as the real tokens, as if the padding always came last",
    ),
    Entry(
        E1,
        "float64, but wrote -inf into hidden itself",
        ex1_wrong_float64_in_place,
        named="wrote into the caller's hidden in place (hidden[~token_mask] = …)",
    ),
    Entry(E1, "a loop with boolean indexing", ex1_right_loop, right=True),
    Entry(E1, "torch.where with -inf", ex1_right_where, right=True),
    # Exercise 2
    Entry(
        E2,
        "the diagonal above: the next token",
        ex2_wrong_next_token,
        named="took the weight on the next token (the diagonal above the main one)",
    ),
    Entry(
        E2,
        "divided the sum by T instead of T - 1",
        ex2_wrong_divided_by_t,
        named="averaged over all T queries, counting the first one, which has no previous token",
    ),
    Entry(
        E2,
        "torch.diagonal with its default dims",
        ex2_wrong_default_diagonal_dims,
        named="took the diagonal over the first two dimensions, not the last two",
    ),
    Entry(
        E2,
        "sliced [1:, :-1], which only works in 2-D",
        ex2_wrong_two_d_slicing,
        named=(
            "used the leading dimensions as queries and keys, as if the weights were one "
            "(T, T) matrix"
        ),
    ),
    Entry(
        E2,
        "one mean over everything",
        ex2_wrong_one_number,
        named="averaged over every layer and head too, giving one number",
    ),
    Entry(
        E2,
        "the loop stops one query early",
        ex2_wrong_loop_off_by_one,
        named="left out the last query: the loop stops one query early (range(1, T − 1))",
    ),
    Entry(
        E2,
        "the share of queries whose argmax is the previous",
        ex2_wrong_argmax_share,
        named=(
            "counted the queries whose largest weight is on the previous token, instead of "
            "averaging the weights"
        ),
    ),
    Entry(
        E2,
        "counted the first query's own weight too",
        ex2_wrong_includes_first_query,
        named="counted the first query too, with its weight on its own token",
    ),
    Entry(E2, "a shifted identity as a mask", ex2_right_shifted_eye, right=True),
    Entry(E2, "a loop over the queries, stacked", ex2_right_loop, right=True),
    # Exercise 3
    Entry(
        E3,
        "ranked by the dot product",
        ex3_wrong_dot_product,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising "
            "the query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "normalised the query only",
        ex3_wrong_query_only_normalised,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising "
            "the query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "topk with largest=False",
        ex3_wrong_smallest,
        named="ranked the rows worst first (the smallest cosines first)",
    ),
    Entry(
        E3,
        "argsort ascending, first k",
        ex3_wrong_argsort_ascending,
        named="ranked the rows worst first (the smallest cosines first)",
    ),
    Entry(
        E3,
        "the k nearest by Euclidean distance",
        ex3_wrong_euclidean,
        named="ranked by the Euclidean distance between the raw vectors",
    ),
    Entry(
        E3,
        "normalised the corpus along dim 0",
        ex3_wrong_norm_over_rows,
        named="normalised each feature over the rows (dim 0) instead of each row",
    ),
    Entry(
        E3,
        "returned topk's values",
        ex3_wrong_values,
        named="returned the cosines (the scores) instead of the rows' indices",
    ),
    Entry(
        E3,
        "skipped the best row as if it were the query",
        ex3_wrong_skips_the_best,
        named="left out the best row, as if it were the query itself",
    ),
    Entry(
        E3,
        "divided by the norm of the whole corpus",
        ex3_wrong_whole_matrix_norm,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising "
            "the query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "float64, and returned a Python list",
        ex3_wrong_float64_python_list,
        named="returned a Python list of indices instead of a tensor",
    ),
    Entry(
        E3,
        "rows normalised, the query not (same order)",
        ex3_right_only_rows_normalised,
        right=True,
    ),
    Entry(E3, "einsum, sort", ex3_right_einsum, right=True),
    # Exercise 4
    Entry(
        E4,
        "x.var (unbiased)",
        Ex4WrongUnbiased,
        named="used the unbiased variance (divided by C − 1)",
    ),
    Entry(
        E4,
        "eps added to the standard deviation",
        Ex4WrongEpsOutside,
        named="added epsilon outside the square root",
    ),
    Entry(
        E4,
        "x.std (unbiased) plus eps",
        Ex4WrongStd,
        named=(
            "divided by torch.std plus epsilon (the unbiased deviation, epsilon outside the root)"
        ),
    ),
    Entry(
        E4,
        "mean and variance of the whole tensor",
        Ex4WrongWholeTensor,
        named="took one mean and one variance over the whole tensor, not one per vector",
    ),
    Entry(
        E4,
        "forgot weight and bias in forward",
        Ex4WrongNoAffine,
        named="did not apply the learned scale and shift",
    ),
    Entry(
        E4,
        "mean and variance without keepdim",
        Ex4WrongNoKeepdim,
        named="took the mean and variance without keeping the reduced dimension",
    ),
    Entry(
        E4,
        "used 1e-5 instead of the eps given",
        Ex4WrongDefaultEps,
        named="used a fixed epsilon (PyTorch's default 1e-5) instead of the eps it was given",
    ),
    Entry(
        E4,
        "named the parameters gamma and beta",
        Ex4WrongGammaBetaNames,
        named="named the parameters gamma and beta instead of weight and bias",
    ),
    Entry(
        E4,
        "weight starts at zeros",
        Ex4WrongZeroWeight,
        named="did not start the weight at ones and the bias at zeros",
    ),
    Entry(
        E4,
        "E[x²] - E[x]², result cast back",
        Ex4WrongCancelling,
        named="computed the variance as mean(x²) − mean(x)², which cancels when the mean is large",
    ),
    Entry(E4, "var_mean with correction=0 and rsqrt", Ex4RightRsqrt, right=True),
    Entry(E4, "computed in float64, cast back", Ex4RightFloat64Inside, right=True),
    # Exercise 5
    Entry(
        E5,
        "forgot to divide by sqrt(d_k)",
        Ex5WrongNoScale,
        named="did not divide the scores by √d_k",
    ),
    Entry(
        E5,
        "divided by sqrt(d_model)",
        Ex5WrongScaleByWidth,
        named="divided the scores by √d_model instead of √d_k",
    ),
    Entry(
        E5,
        "masked the real tokens instead of the padding",
        Ex5WrongMaskPolarity,
        named="blocked the real tokens' keys and kept the padding's",
    ),
    Entry(
        E5,
        "masked the padding queries (rows)",
        Ex5WrongMasksQueries,
        named="did not block the padding keys (no mask, or the mask applied to the queries)",
    ),
    Entry(
        E5,
        "filled with -1e9",
        Ex5WrongMinus1e9,
        named=(
            "filled the padding scores with a fixed number (-1e9, or float32's smallest "
            "value) that float16 cannot hold"
        ),
    ),
    Entry(
        E5,
        "split the heads with reshape(B, h, T, d_k)",
        Ex5WrongSplitWithoutTranspose,
        named="cut the heads with a view to (B, h, T, d_k) straight from (B, T, C)",
    ),
    Entry(
        E5,
        "merged the heads without transposing back",
        Ex5WrongMergeWithoutTranspose,
        named="merged the heads with a reshape straight from (B, h, T, d_k) to (B, T, C)",
    ),
    Entry(
        E5,
        "softmax over dim -2",
        Ex5WrongSoftmaxOverQueries,
        named="took the softmax over the queries (dim −2) instead of the keys",
    ),
    Entry(E5, "forgot w_o", Ex5WrongNoOutputProjection, named="left out the output projection w_o"),
    Entry(
        E5,
        "zeroed the padding after the softmax",
        Ex5WrongMaskAfterSoftmax,
        named=(
            "zeroed the padding weights after the softmax instead of blocking their scores "
            "before it"
        ),
    ),
    Entry(
        E5,
        "float64 inside; weights averaged over heads",
        Ex5WrongFloat64HeadMeanWeights,
        named="averaged the weights over the heads",
    ),
    Entry(E5, "einsum with unflatten", Ex5RightEinsum, right=True),
    Entry(E5, "a loop over the heads, finfo.min", Ex5RightHeadLoop, right=True),
    # Exercise 6
    Entry(
        E6,
        "F.gelu with approximate='tanh'",
        Ex6WrongTanhGelu,
        named="used the tanh approximation of GELU",
    ),
    Entry(E6, "ReLU", Ex6WrongRelu, named="used ReLU"),
    Entry(
        E6,
        "a * sigmoid(1.702 a)",
        Ex6WrongSigmoidGelu,
        named="used the sigmoid approximation of GELU, a·σ(1.702a)",
    ),
    Entry(
        E6,
        "erf(a / 2) instead of erf(a / sqrt 2)",
        Ex6WrongErfOverTwo,
        named="wrote erf(a / 2) instead of erf(a / √2)",
    ),
    Entry(
        E6,
        "GELU after linear2 too",
        Ex6WrongGeluTwice,
        named="applied GELU twice: to linear2's output too",
    ),
    Entry(
        E6,
        "forgot the 0.5 in Phi",
        Ex6WrongNoHalf,
        named="left out the factor ½ in a·½(1 + erf(a/√2))",
    ),
    Entry(
        E6,
        "linear maps without biases",
        Ex6WrongNoBias,
        named="built the linear maps without biases",
    ),
    Entry(
        E6,
        "0.5 (1 + erf(a)) / sqrt 2",
        Ex6WrongPhiMisplaced,
        named="wrote ½(1 + erf(a)) / √2, with the √2 outside erf instead of dividing a inside it",
    ),
    Entry(
        E6,
        "x @ weight instead of x @ weight.T",
        Ex6WrongSwappedLinears,
        named=(
            "multiplied by the weight matrices as they are (x @ W) instead of calling the "
            "linear maps (x @ Wᵀ)"
        ),
    ),
    Entry(
        E6,
        "a float64 round trip; GELU on the output",
        Ex6WrongFloat64GeluOnOutput,
        named="applied the activation after the second linear map",
    ),
    Entry(E6, "F.gelu (exact by default)", Ex6RightFunctionalGelu, right=True),
    Entry(E6, "torch.special.ndtr for Phi", Ex6RightNdtr, right=True),
    # Exercise 7
    Entry(
        E7,
        "pre-norm, as in notebook 10",
        Ex7WrongPreNorm,
        named="wired the layer pre-norm, x + f(LN(x))",
    ),
    Entry(
        E7,
        "no residual around the attention",
        Ex7WrongNoAttentionResidual,
        named="left out the residual around the self-attention",
    ),
    Entry(
        E7,
        "the FFN reads x instead of h",
        Ex7WrongFfnReadsInput,
        named="fed the feed-forward network x instead of h",
    ),
    Entry(
        E7,
        "the second residual adds x, not h",
        Ex7WrongSecondResidualFromInput,
        named="added the layer's input x, not h, around the feed-forward network",
    ),
    Entry(
        E7,
        "norm_2 after attention, norm_1 after the FFN",
        Ex7WrongNormsSwapped,
        named="swapped norm_1 and norm_2",
    ),
    Entry(
        E7,
        "returned y only",
        Ex7WrongOnlyOutput,
        named="returned only y, not the pair (y, weights)",
    ),
    Entry(
        E7,
        "built the LayerNorms with eps 1e-5",
        Ex7WrongDefaultEps,
        named="built the LayerNorms without the eps the layer was given",
    ),
    Entry(
        E7,
        "passed ~token_mask to the attention",
        Ex7WrongMaskInverted,
        named="passed the attention the mask inverted (True = padding, as torch's layers take it)",
    ),
    Entry(E7, "norm_1 used twice", Ex7WrongSharedNorm, named="used norm_1 for both sublayers"),
    Entry(
        E7,
        "a LayerNorm part with the unbiased variance",
        Ex7WrongPartUnbiasedNorm,
        named="used the unbiased variance (divided by C − 1)",
    ),
    Entry(E7, "registered in another order, x added second", Ex7RightStepByStep, right=True),
    Entry(E7, "an add-and-norm helper", Ex7RightSublayerHelper, right=True),
]
