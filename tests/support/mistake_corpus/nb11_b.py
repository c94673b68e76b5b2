"""Corpus b for notebook 11 (a real pretrained model), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from mistake_corpus.corpus import Entry

# --------------------------------------------------------------------- Exercise 1: my_max_pool


def ex1_wrong_zero_fill(hidden, token_mask):
    # padding set to zero, so it can never be the largest … unless every real value is negative
    return hidden.masked_fill(~token_mask.unsqueeze(-1), 0.0).amax(dim=1)


def ex1_wrong_multiply_mask(hidden, token_mask):
    masked = hidden * token_mask.unsqueeze(-1).to(hidden.dtype)
    return masked.max(dim=1).values


def ex1_wrong_no_mask(hidden, token_mask):
    return hidden.max(dim=1).values


def ex1_wrong_minus_1e9(hidden, token_mask):
    return hidden.masked_fill(~token_mask[:, :, None], -1e9).amax(1)


def ex1_wrong_feature_dim(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(-1), float("-inf")).amax(dim=-1)


def ex1_wrong_lengths_loop(hidden, token_mask):
    # assumes the real tokens come first
    lengths = token_mask.sum(dim=1)
    rows = [hidden[b, : int(n)].max(dim=0).values for b, n in enumerate(lengths)]
    return torch.stack(rows)


def ex1_wrong_returns_max_tuple(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(-1), float("-inf")).max(dim=1)


def ex1_wrong_polarity(hidden, token_mask):
    return hidden.masked_fill(token_mask.unsqueeze(-1), float("-inf")).amax(dim=1)


def ex1_wrong_in_place(hidden, token_mask):
    hidden.masked_fill_(~token_mask.unsqueeze(-1), float("-inf"))
    return hidden.amax(dim=1)


def ex1_right_loop_boolean_index(hidden, token_mask):
    rows = []
    for b in range(hidden.shape[0]):
        rows.append(hidden[b][token_mask[b]].max(dim=0).values)
    return torch.stack(rows)


def ex1_right_where_inf(hidden, token_mask):
    neg_inf = torch.tensor(float("-inf"), dtype=hidden.dtype)
    return torch.where(token_mask.unsqueeze(-1), hidden, neg_inf).max(dim=1).values


# ------------------------------------------------------------ Exercise 2: previous-token share


def ex2_wrong_next_token(weights):
    return torch.diagonal(weights, offset=1, dim1=-2, dim2=-1).mean(dim=-1)


def ex2_wrong_dims_swapped(weights):
    return torch.diagonal(weights, offset=-1, dim1=-1, dim2=-2).mean(dim=-1)


def ex2_wrong_divide_by_t(weights):
    T = weights.shape[-1]
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).sum(-1) / T


def ex2_wrong_main_diagonal(weights):
    return weights.diagonal(dim1=-2, dim2=-1).mean(-1)


def ex2_wrong_2d_indexing(weights):
    T = weights.shape[-1]
    i = torch.arange(1, T)
    return weights[i, i - 1].mean()


def ex2_wrong_loop_off_by_one(weights):
    T = weights.shape[-1]
    total = torch.zeros(weights.shape[:-2], dtype=weights.dtype)
    for i in range(1, T - 1):
        total = total + weights[..., i, i - 1]
    return total / (T - 1)


def ex2_wrong_one_number(weights):
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean()


def ex2_wrong_argmax_share(weights):
    # share of queries whose strongest key is the previous token
    T = weights.shape[-1]
    best = weights[..., 1:, :].argmax(dim=-1)
    return (best == torch.arange(T - 1)).to(weights.dtype).mean(dim=-1)


def ex2_right_shifted_identity(weights):
    T = weights.shape[-1]
    below = torch.diag(torch.ones(T - 1, dtype=weights.dtype), -1)
    return (weights * below).sum(dim=(-2, -1)) / (T - 1)


def ex2_right_diagonal(weights):
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


# ----------------------------------------------------------- Exercise 3: my_semantic_search


def ex3_wrong_dot_product(query, corpus, k):
    return (corpus @ query).topk(k).indices


def ex3_wrong_query_only_normalised(query, corpus, k):
    scores = corpus @ (query / query.norm())
    return torch.topk(scores, k).indices


def ex3_wrong_norm_dim0(query, corpus, k):
    rows = corpus / corpus.norm(dim=0, keepdim=True)
    return (rows @ (query / query.norm())).topk(k).indices


def ex3_wrong_ascending(query, corpus, k):
    cos = F.cosine_similarity(corpus, query.unsqueeze(0), dim=1)
    return cos.argsort()[:k]


def ex3_wrong_euclidean(query, corpus, k):
    dist = (corpus - query).pow(2).sum(dim=1)
    return dist.topk(k, largest=False).indices


def ex3_wrong_values(query, corpus, k):
    cos = F.normalize(corpus, dim=-1) @ F.normalize(query, dim=0)
    return cos.topk(k).values


def ex3_wrong_no_cut(query, corpus, k):
    cos = F.normalize(corpus, dim=-1) @ F.normalize(query, dim=0)
    return cos.argsort(descending=True)


def ex3_wrong_python_list(query, corpus, k):
    scores = [torch.dot(row, query) / (row.norm() * query.norm()) for row in corpus]
    return sorted(range(len(scores)), key=lambda i: -scores[i].item())[:k]


def ex3_wrong_skip_first(query, corpus, k):
    # the tutorial dropped the best hit because it was the query itself
    cos = F.cosine_similarity(corpus, query[None], dim=-1)
    return cos.topk(k + 1).indices[1:]


def ex3_right_cosine_similarity(query, corpus, k):
    return F.cosine_similarity(corpus, query.unsqueeze(0), dim=-1).topk(k).indices


def ex3_right_argsort_loop(query, corpus, k):
    scores = torch.empty(corpus.shape[0], dtype=torch.float64)
    q = query.double()
    for i, row in enumerate(corpus.double()):
        scores[i] = (row @ q) / (row.norm() * q.norm())
    return torch.argsort(scores, descending=True)[:k]


# ----------------------------------------------------------------- Exercise 4: MyLayerNorm


class _LN(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps


class Ex4WrongUnbiasedVar(_LN):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongEpsOutsideSqrt(_LN):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, unbiased=False, keepdim=True)
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class Ex4WrongFirstDim(_LN):
    def forward(self, x):
        mean = x.mean(0, keepdim=True)
        var = ((x - mean) ** 2).mean(0, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongInitSwapped(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d_model))
        self.bias = nn.Parameter(torch.ones(d_model))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongPlainTensors(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = torch.ones(d_model)
        self.bias = torch.zeros(d_model)
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongFixedEps(_LN):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + 1e-5) + self.bias


class Ex4WrongNoBias(_LN):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps)


class Ex4WrongGammaBetaNames(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta


class Ex4WrongNoKeepdim(_LN):
    def forward(self, x):
        mean = x.mean(-1)
        var = ((x - mean.unsqueeze(-1)) ** 2).mean(-1)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4RightVarMean(_LN):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0, keepdim=True)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class Ex4RightFloat64(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        x64 = x.double()
        centred = x64 - x64.mean(dim=-1, keepdim=True)
        var = centred.square().mean(dim=-1, keepdim=True)
        out = centred / (var + self.eps).sqrt()
        return (out * self.weight.double() + self.bias.double()).to(x.dtype)


# -------------------------------------------------------- Exercise 5: MyMultiHeadAttention


class _MHA(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def heads(self, t):
        B, T, C = t.shape
        return t.view(B, T, self.num_heads, C // self.num_heads).transpose(1, 2)

    def merge(self, t):
        B, h, T, d_k = t.shape
        return t.transpose(1, 2).reshape(B, T, h * d_k)


class Ex5WrongSplitNoTranspose(_MHA):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        q = self.w_q(x).view(B, h, T, C // h)
        k = self.w_k(x).view(B, h, T, C // h)
        v = self.w_v(x).view(B, h, T, C // h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // h)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5WrongScaleByC(_MHA):
    def forward(self, x, token_mask):
        C = x.shape[-1]
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(C)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMaskQueries(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, :, None], torch.finfo(x.dtype).min)
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMaskPolarity(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(token_mask[:, None, None, :], torch.finfo(x.dtype).min)
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMinus1e9(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(token_mask[:, None, None, :] == 0, -1e9)
        weights = scores.softmax(-1)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongSoftmaxQueries(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(dim=-2)
        return self.w_o(self.merge(weights @ v)), weights


class Ex5WrongMergeNoTranspose(_MHA):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.w_o((weights @ v).reshape(B, T, C)), weights


class Ex5WrongNoOutputProjection(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = scores.softmax(-1)
        return self.merge(weights @ v), weights


class Ex5WrongZeroAfterSoftmax(_MHA):
    def forward(self, x, token_mask):
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        weights = scores.softmax(-1) * token_mask[:, None, None, :]  # padding keys get 0
        return self.w_o(self.merge(weights @ v)), weights


class Ex5RightEinsum(_MHA):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        d_k = C // h
        q = self.w_q(x).reshape(B, T, h, d_k)
        k = self.w_k(x).reshape(B, T, h, d_k)
        v = self.w_v(x).reshape(B, T, h, d_k)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / d_k**0.5
        scores = scores.masked_fill(~token_mask.view(B, 1, 1, T), float("-inf"))
        weights = F.softmax(scores, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5RightHeadLoop(_MHA):
    def forward(self, x, token_mask):
        C = x.shape[-1]
        d_k = C // self.num_heads
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)
        outs, all_weights = [], []
        for i in range(self.num_heads):
            cols = slice(i * d_k, (i + 1) * d_k)
            s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(d_k)
            s = torch.where(token_mask.unsqueeze(1), s, torch.finfo(s.dtype).min)
            w = s.softmax(dim=-1)
            outs.append(w @ v[..., cols])
            all_weights.append(w)
        return self.w_o(torch.cat(outs, dim=-1)), torch.stack(all_weights, dim=1)


# ---------------------------------------------------------------- Exercise 6: MyFeedForward


class _FFN(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


class Ex6WrongTanhGelu(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        g = 0.5 * a * (1 + torch.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
        return self.linear2(g)


class Ex6WrongRelu(_FFN):
    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class Ex6WrongErfNoSqrt2(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * 0.5 * (1 + torch.erf(a / 2)))


class Ex6WrongSigmoidGelu(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * torch.sigmoid(1.702 * a))


class Ex6WrongNoHalf(_FFN):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * (1 + torch.erf(a / math.sqrt(2))))


class Ex6WrongGeluAtEnd(_FFN):
    def forward(self, x):
        return F.gelu(self.linear2(self.linear1(x)))


class Ex6WrongNoBias(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class Ex6WrongSizesSwapped(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # (out, in), like a weight matrix
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class Ex6RightFGelu(_FFN):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x), approximate="none"))


class Ex6RightNdtr(_FFN):
    def forward(self, x):
        a = F.linear(x, self.linear1.weight, self.linear1.bias)
        return self.linear2(a * torch.special.ndtr(a))


# --------------------------------------------------------------- Exercise 7: MyEncoderLayer

MyLayerNorm = Ex4RightVarMean
MyMultiHeadAttention = Ex5RightEinsum
MyFeedForward = Ex6RightFGelu


class _Layer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.norm_1 = MyLayerNorm(d_model, eps)
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.norm_2 = MyLayerNorm(d_model, eps)


class Ex7WrongPreNorm(_Layer):
    def forward(self, x, token_mask):
        attended, weights = self.self_attention(self.norm_1(x), token_mask)
        h = x + attended
        return h + self.feed_forward(self.norm_2(h)), weights


class Ex7WrongNoFirstResidual(_Layer):
    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.norm_1(attended)
        return self.norm_2(h + self.feed_forward(h)), weights


class Ex7WrongFfnOnInput(_Layer):
    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.norm_1(x + attended)
        return self.norm_2(h + self.feed_forward(x)), weights


class Ex7WrongSkipFromInput(_Layer):
    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.norm_1(x + attended)
        return self.norm_2(x + self.feed_forward(h)), weights


class Ex7WrongOutputOnly(_Layer):
    def forward(self, x, token_mask):
        attended, _ = self.self_attention(x, token_mask)
        h = self.norm_1(x + attended)
        return self.norm_2(h + self.feed_forward(h))


class Ex7WrongNormsSwapped(_Layer):
    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.norm_2(x + attended)
        return self.norm_1(h + self.feed_forward(h)), weights


class Ex7WrongFixedEps(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)
        self.norm_1 = MyLayerNorm(d_model, 1e-5)
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.norm_2 = MyLayerNorm(d_model, 1e-5)

    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.norm_1(x + attended)
        return self.norm_2(h + self.feed_forward(h)), weights


class Ex7WrongMaskIgnored(_Layer):
    def forward(self, x, token_mask):
        everyone = torch.ones_like(token_mask)
        attended, weights = self.self_attention(x, everyone)
        h = self.norm_1(x + attended)
        return self.norm_2(h + self.feed_forward(h)), weights


class Ex7WrongUnpackReversed(_Layer):
    def forward(self, x, token_mask):
        weights, attended = self.self_attention(x, token_mask)
        h = self.norm_1(x + attended)
        return self.norm_2(h + self.feed_forward(h)), weights


class Ex7RightOneExpression(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.norm_1 = MyLayerNorm(d_model, eps)
        self.norm_2 = MyLayerNorm(d_model, eps)
        self.feed_forward = MyFeedForward(d_model, d_ff)
        self.self_attention = MyMultiHeadAttention(d_model, num_heads)

    def forward(self, x, token_mask):
        out = self.self_attention(x, token_mask)
        x = self.norm_1(x + out[0])
        x = self.norm_2(x + self.feed_forward(x))
        return x, out[1]


class Ex7RightSublayerHelper(_Layer):
    @staticmethod
    def post_norm(x, sublayer_out, norm):
        return norm(x + sublayer_out)

    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        h = self.post_norm(x, attended, self.norm_1)
        return self.post_norm(h, self.feed_forward(h), self.norm_2), weights


E1, E2, E3 = "ex1_my_max_pool", "ex2_my_previous_token_share", "ex3_my_semantic_search"
E4, E5 = "ex4_my_layer_norm", "ex5_my_multi_head_attention"
E6, E7 = "ex6_my_feed_forward", "ex7_my_encoder_layer"

ENTRIES = [
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
        "multiplied by the mask, so padding becomes 0",
        ex1_wrong_multiply_mask,
        named=(
            "set the padding to 0 before taking the maximum (by multiplying by the mask or "
            "filling with 0)"
        ),
    ),
    Entry(
        E1,
        "forgot the mask: max over every token",
        ex1_wrong_no_mask,
        named="took the maximum over every position, padding included",
    ),
    Entry(
        E1,
        "filled the padding with -1e9 (breaks in float16)",
        ex1_wrong_minus_1e9,
        named=(
            "filled the padding with a fixed very negative number (-1e9, or float32's smallest "
            "value) that float16 cannot hold"
        ),
    ),
    Entry(
        E1,
        "took the max over the features instead of the tokens",
        ex1_wrong_feature_dim,
        named="took the maximum over the features (the last dimension), not over the tokens",
    ),
    Entry(
        E1,
        "assumed the real tokens come first (lengths)",
        ex1_wrong_lengths_loop,
        named="took the first positions as the real tokens, as if the padding always came last",
    ),
    Entry(
        E1,
        "returned .max()'s (values, indices) pair",
        ex1_wrong_returns_max_tuple,
        named="returned torch.max's pair (values, indices) instead of the values",
    ),
    Entry(
        E1,
        "masked the real tokens instead of the padding",
        ex1_wrong_polarity,
        named="blocked the real tokens and kept the padding",
    ),
    Entry(
        E1,
        "masked_fill_ on the hidden states in place",
        ex1_wrong_in_place,
        named="wrote into the caller's hidden in place (hidden[~token_mask] = …)",
    ),
    Entry(E1, "a loop with boolean indexing per sentence", ex1_right_loop_boolean_index, True),
    Entry(E1, "torch.where with -inf, then max", ex1_right_where_inf, right=True),
    Entry(
        E2,
        "diagonal offset=1: the next token",
        ex2_wrong_next_token,
        named="took the weight on the next token (the diagonal above the main one)",
    ),
    Entry(
        E2,
        "diagonal offset=-1 with dim1/dim2 swapped: the next token",
        ex2_wrong_dims_swapped,
        named="took the weight on the next token (the diagonal above the main one)",
    ),
    Entry(
        E2,
        "summed the diagonal and divided by T",
        ex2_wrong_divide_by_t,
        named="averaged over all T queries, counting the first one, which has no previous token",
    ),
    Entry(
        E2,
        "took the main diagonal (the token itself)",
        ex2_wrong_main_diagonal,
        named="took the main diagonal over all T queries (each token's weight on itself)",
    ),
    Entry(
        E2,
        "indexed the first two dimensions (2-D only)",
        ex2_wrong_2d_indexing,
        named=(
            "used the leading dimensions as queries and keys, as if the weights were one (T, T) "
            "matrix"
        ),
    ),
    Entry(
        E2,
        "loop stops one query early",
        ex2_wrong_loop_off_by_one,
        named="left out the last query: the loop stops one query early (range(1, T − 1))",
    ),
    Entry(
        E2,
        "one number for all heads",
        ex2_wrong_one_number,
        named="averaged over every layer and head too, giving one number",
    ),
    Entry(
        E2,
        "share of queries whose argmax is the previous token",
        ex2_wrong_argmax_share,
        named=(
            "counted the queries whose largest weight is on the previous token, instead of "
            "averaging the weights"
        ),
    ),
    Entry(E2, "sum of the weights times a shifted identity", ex2_right_shifted_identity, True),
    Entry(E2, "torch.diagonal offset=-1, mean", ex2_right_diagonal, right=True),
    Entry(
        E3,
        "dot product, not cosine",
        ex3_wrong_dot_product,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising the "
            "query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "normalised only the query",
        ex3_wrong_query_only_normalised,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising the "
            "query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "normalised the corpus along dim 0 (per feature)",
        ex3_wrong_norm_dim0,
        named="normalised each feature over the rows (dim 0) instead of each row",
    ),
    Entry(
        E3,
        "argsort ascending: the least similar first",
        ex3_wrong_ascending,
        named="ranked the rows worst first (the smallest cosines first)",
    ),
    Entry(
        E3,
        "nearest by Euclidean distance on raw vectors",
        ex3_wrong_euclidean,
        named="ranked by the Euclidean distance between the raw vectors",
    ),
    Entry(
        E3,
        "returned the cosines, not the indices",
        ex3_wrong_values,
        named="returned the cosines (the scores) instead of the rows' indices",
    ),
    Entry(
        E3,
        "returned every index, not the first k",
        ex3_wrong_no_cut,
        named="returned every row's index in order, not only the best k",
    ),
    Entry(
        E3,
        "returned a Python list from sorted()",
        ex3_wrong_python_list,
        named="returned a Python list of indices instead of a tensor",
    ),
    Entry(
        E3,
        "dropped the best hit as if it were the query itself",
        ex3_wrong_skip_first,
        named="left out the best row, as if it were the query itself",
    ),
    Entry(E3, "F.cosine_similarity then topk", ex3_right_cosine_similarity, right=True),
    Entry(E3, "a loop in float64, argsort descending", ex3_right_argsort_loop, right=True),
    Entry(
        E4,
        "unbiased variance (x.var default)",
        Ex4WrongUnbiasedVar,
        named="used the unbiased variance (divided by C − 1)",
    ),
    Entry(
        E4,
        "eps added to the standard deviation",
        Ex4WrongEpsOutsideSqrt,
        named="added epsilon outside the square root",
    ),
    Entry(
        E4,
        "normalised over the first dimension",
        Ex4WrongFirstDim,
        named="took the mean and variance along dim 0, the first dimension, not the last",
    ),
    Entry(
        E4,
        "weight starts at zeros and bias at ones",
        Ex4WrongInitSwapped,
        named="did not start the weight at ones and the bias at zeros",
    ),
    Entry(
        E4,
        "weight and bias as plain tensors, not parameters",
        Ex4WrongPlainTensors,
        named="kept weight and bias as plain tensors, not nn.Parameter",
    ),
    Entry(
        E4,
        "eps hard-coded to 1e-5",
        Ex4WrongFixedEps,
        named="used a fixed epsilon (PyTorch's default 1e-5) instead of the eps it was given",
    ),
    Entry(
        E4,
        "forgot the bias",
        Ex4WrongNoBias,
        named="left out the bias: scaled by the weight but added no shift",
    ),
    Entry(
        E4,
        "parameters named gamma and beta",
        Ex4WrongGammaBetaNames,
        named="named the parameters gamma and beta instead of weight and bias",
    ),
    Entry(
        E4,
        "mean without keepdim",
        Ex4WrongNoKeepdim,
        named="subtracted a mean and divided by a deviation of shape (…,) instead of (…, 1)",
    ),
    Entry(E4, "torch.var_mean and rsqrt", Ex4RightVarMean, right=True),
    Entry(E4, "computed in float64, cast back", Ex4RightFloat64, right=True),
    Entry(
        E5,
        "split heads with view(B, h, T, d_k)",
        Ex5WrongSplitNoTranspose,
        named=(
            "viewed Q, K and V as (B, h, T, d_k) straight from (B, T, C), then merged the heads "
            "back with a transpose"
        ),
    ),
    Entry(
        E5,
        "scaled by sqrt(d_model) instead of sqrt(d_k)",
        Ex5WrongScaleByC,
        named="divided the scores by √d_model instead of √d_k",
    ),
    Entry(
        E5,
        "masked the padding queries instead of the keys",
        Ex5WrongMaskQueries,
        named="did not block the padding keys (no mask, or the mask applied to the queries)",
    ),
    Entry(
        E5,
        "masked the real tokens (polarity)",
        Ex5WrongMaskPolarity,
        named="blocked the real tokens' keys and kept the padding's",
    ),
    Entry(
        E5,
        "filled with -1e9 (float16 overflow)",
        Ex5WrongMinus1e9,
        named=(
            "filled the padding scores with a fixed number (-1e9, or float32's smallest value) "
            "that float16 cannot hold"
        ),
    ),
    Entry(
        E5,
        "softmax over the queries",
        Ex5WrongSoftmaxQueries,
        named="took the softmax over the queries (dim −2) instead of the keys",
    ),
    Entry(
        E5,
        "merged heads without transposing back",
        Ex5WrongMergeNoTranspose,
        named="merged the heads with a reshape straight from (B, h, T, d_k) to (B, T, C)",
    ),
    Entry(
        E5,
        "forgot the output projection w_o",
        Ex5WrongNoOutputProjection,
        named="left out the output projection w_o",
    ),
    Entry(
        E5,
        "zeroed padding weights after the softmax",
        Ex5WrongZeroAfterSoftmax,
        named=(
            "zeroed the padding weights after the softmax instead of blocking their scores "
            "before it"
        ),
    ),
    Entry(E5, "einsum with reshape(B, T, h, d_k) and -inf", Ex5RightEinsum, right=True),
    Entry(E5, "a loop over heads' column slices, torch.where", Ex5RightHeadLoop, right=True),
    Entry(
        E6,
        "tanh approximation of GELU",
        Ex6WrongTanhGelu,
        named="used the tanh approximation of GELU",
    ),
    Entry(E6, "ReLU instead of GELU", Ex6WrongRelu, named="used ReLU"),
    Entry(
        E6, "Φ with erf(a / 2)", Ex6WrongErfNoSqrt2, named="wrote erf(a / 2) instead of erf(a / √2)"
    ),
    Entry(
        E6,
        "sigmoid approximation a·σ(1.702a)",
        Ex6WrongSigmoidGelu,
        named="used the sigmoid approximation of GELU, a·σ(1.702a)",
    ),
    Entry(
        E6,
        "forgot the 0.5 in Φ",
        Ex6WrongNoHalf,
        named="left out the factor ½ in a·½(1 + erf(a/√2))",
    ),
    Entry(
        E6,
        "GELU after linear2",
        Ex6WrongGeluAtEnd,
        named="applied the activation after the second linear map",
    ),
    Entry(
        E6,
        "linear maps without biases",
        Ex6WrongNoBias,
        named="built the linear maps without biases",
    ),
    Entry(
        E6,
        "nn.Linear sizes in (out, in) order",
        Ex6WrongSizesSwapped,
        named=(
            "built each nn.Linear with its sizes in (out, in) order, linear1 from d_ff to d_model"
        ),
    ),
    Entry(E6, "F.gelu with approximate='none'", Ex6RightFGelu, right=True),
    Entry(E6, "F.linear and torch.special.ndtr", Ex6RightNdtr, right=True),
    Entry(E7, "pre-norm wiring", Ex7WrongPreNorm, named="wired the layer pre-norm, x + f(LN(x))"),
    Entry(
        E7,
        "no residual around the attention",
        Ex7WrongNoFirstResidual,
        named="left out the residual around the self-attention",
    ),
    Entry(
        E7,
        "fed the FFN the layer's input x",
        Ex7WrongFfnOnInput,
        named="fed the feed-forward network x instead of h",
    ),
    Entry(
        E7,
        "second residual adds x instead of h",
        Ex7WrongSkipFromInput,
        named="added the layer's input x, not h, around the feed-forward network",
    ),
    Entry(
        E7,
        "returned only y",
        Ex7WrongOutputOnly,
        named="returned only y, not the pair (y, weights)",
    ),
    Entry(
        E7,
        "used norm_2 first and norm_1 second",
        Ex7WrongNormsSwapped,
        named="swapped norm_1 and norm_2",
    ),
    Entry(
        E7,
        "norms built with eps 1e-5, not the layer's",
        Ex7WrongFixedEps,
        named="built the LayerNorms without the eps the layer was given",
    ),
    Entry(
        E7,
        "passed an all-True mask to the attention",
        Ex7WrongMaskIgnored,
        named="passed the attention an all-True mask, so real tokens attend to the padding",
    ),
    Entry(
        E7,
        "unpacked (weights, out) the wrong way round",
        Ex7WrongUnpackReversed,
        named="unpacked the attention's pair the wrong way round, as (weights, out)",
    ),
    Entry(E7, "parts in another order, indexing the pair", Ex7RightOneExpression, right=True),
    Entry(E7, "a post-norm helper", Ex7RightSublayerHelper, right=True),
]
