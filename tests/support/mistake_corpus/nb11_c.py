"""Corpus c of notebook 11 (a pretrained model): learner answers written blind, see the package."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_my_max_pool", "ex2_my_previous_token_share", "ex3_my_semantic_search"
E4, E5 = "ex4_my_layer_norm", "ex5_my_multi_head_attention"
E6, E7 = "ex6_my_feed_forward", "ex7_my_encoder_layer"

# ------------------------------------------------------------------ Exercise 1: max pooling


def ex1_wrong_no_mask(hidden, token_mask):
    return hidden.max(dim=1).values


def ex1_wrong_zero_padding(hidden, token_mask):
    return (hidden * token_mask.unsqueeze(-1)).amax(dim=1)  # padding becomes 0


def ex1_wrong_minus_1e9(hidden, token_mask):
    return hidden.masked_fill(~token_mask[..., None], -1e9).amax(dim=1)


def ex1_wrong_feature_axis(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(-1), float("-inf")).amax(dim=-1)


def ex1_wrong_returns_tuple(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(-1), float("-inf")).max(dim=1)


def ex1_wrong_padding_at_end(hidden, token_mask):
    lengths = token_mask.sum(dim=1)
    return torch.stack([hidden[b, : lengths[b]].amax(dim=0) for b in range(hidden.shape[0])])


def ex1_wrong_polarity(hidden, token_mask):
    return hidden.masked_fill(token_mask.unsqueeze(-1), float("-inf")).amax(dim=1)


def ex1_wrong_mask_on_features(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(1), float("-inf")).amax(dim=1)


def ex1_right_loop(hidden, token_mask):
    rows = [hidden[b][token_mask[b]].max(dim=0).values for b in range(hidden.shape[0])]
    return torch.stack(rows)


def ex1_right_where_inf(hidden, token_mask):
    real = token_mask[:, :, None]  # (B, T, 1)
    return torch.where(real, hidden, torch.tensor(-math.inf, dtype=hidden.dtype)).amax(1)


# ---------------------------------------------------- Exercise 2: the previous-token share


def ex2_wrong_next_token(weights):
    return torch.diagonal(weights, offset=1, dim1=-2, dim2=-1).mean(dim=-1)


def ex2_wrong_divides_by_t(weights):
    t = weights.shape[-1]
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).sum(dim=-1) / t


def ex2_wrong_itself(weights):
    return torch.diagonal(weights, dim1=-2, dim2=-1).mean(dim=-1)


def ex2_wrong_two_d_index(weights):
    t = weights.shape[-1]
    return weights[range(1, t), range(t - 1)].mean()


def ex2_wrong_one_number(weights):
    return torch.diagonal(weights, offset=-1, dim1=-2, dim2=-1).mean()


def ex2_wrong_wraps_around(weights):
    t = weights.shape[-1]
    rows = torch.arange(t)
    return weights[..., rows, rows - 1].mean(dim=-1)  # query 0 looks at the last key


def ex2_wrong_default_diagonal_dims(weights):
    return torch.diagonal(weights, offset=-1).mean(dim=-1)


def ex2_right_diagonal(weights):
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)


def ex2_right_loop(weights):
    t = weights.shape[-1]
    total = torch.zeros(weights.shape[:-2], dtype=weights.dtype)
    for i in range(1, t):
        total = total + weights[..., i, i - 1]
    return total / (t - 1)


# ------------------------------------------------------ Exercise 3: semantic search by cosine


def ex3_wrong_dot_product(query, corpus, k):
    return (corpus @ query).topk(k).indices


def ex3_wrong_normalise_columns(query, corpus, k):
    unit = corpus / corpus.norm(dim=0, keepdim=True)
    return (unit @ (query / query.norm())).topk(k).indices


def ex3_wrong_query_only(query, corpus, k):
    return (corpus @ (query / query.norm())).topk(k).indices


def ex3_wrong_worst_first(query, corpus, k):
    cos = (corpus @ query) / (corpus.norm(dim=1) * query.norm())
    return cos.argsort()[-k:]


def ex3_wrong_euclidean(query, corpus, k):
    distance = (corpus - query).norm(dim=-1)
    return distance.topk(k, largest=False).indices


def ex3_wrong_values(query, corpus, k):
    cos = F.cosine_similarity(corpus, query.unsqueeze(0), dim=-1)
    return cos.topk(k).values


def ex3_wrong_all_rows(query, corpus, k):
    cos = F.cosine_similarity(corpus, query[None, :], dim=1)
    return cos.argsort(descending=True)


def ex3_wrong_index_order(query, corpus, k):
    cos = F.cosine_similarity(corpus, query[None, :], dim=1)
    return cos.topk(k).indices.sort().values


def ex3_right_cosine_similarity(query, corpus, k):
    cos = F.cosine_similarity(corpus, query.unsqueeze(0), dim=-1)
    return cos.argsort(descending=True)[:k]


def ex3_right_python(query, corpus, k):
    scores = []
    for i, row in enumerate(corpus):
        scores.append((float(row @ query) / (float(row.norm()) * float(query.norm())), i))
    scores.sort(key=lambda pair: -pair[0])
    return torch.tensor([i for _, i in scores[:k]], dtype=torch.long)


# ---------------------------------------------------------------- Exercise 4: LayerNorm


class Ex4Base(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps


class Ex4WrongUnbiased(Ex4Base):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongEpsOutside(Ex4Base):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = ((x - mean) ** 2).mean(-1, keepdim=True).sqrt()
        return self.weight * (x - mean) / (std + self.eps) + self.bias


class Ex4WrongFirstAxis(Ex4Base):
    def forward(self, x):
        mean = x.mean(0, keepdim=True)
        var = ((x - mean) ** 2).mean(0, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongNoKeepdim(Ex4Base):
    def forward(self, x):
        mean = x.mean(-1)
        var = ((x - mean.unsqueeze(-1)) ** 2).mean(-1)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4WrongNoAffine(Ex4Base):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps)


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


class Ex4WrongFixedEps(Ex4Base):
    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + 1e-12) + self.bias  # MiniLM's


class Ex4WrongSwappedInit(Ex4Base):
    def __init__(self, d_model, eps):
        super().__init__(d_model, eps)
        self.weight = nn.Parameter(torch.zeros(d_model))
        self.bias = nn.Parameter(torch.ones(d_model))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return self.weight * (x - mean) / torch.sqrt(var + self.eps) + self.bias


class Ex4RightRsqrt(Ex4Base):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class Ex4RightCentred(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        var = centred.pow(2).mean(dim=-1, keepdim=True)
        return centred / (var + self.eps).sqrt() * self.weight + self.bias


# ------------------------------------------------------ Exercise 5: multi-head attention


class Ex5Base(nn.Module):
    scale_by_d_model = False
    key_axis = True
    fill = "min"

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def split(self, t, B, T, h, d):
        return t.view(B, T, h, d).transpose(1, 2)

    def merge(self, t, B, T, C):
        return t.transpose(1, 2).reshape(B, T, C)

    def scores(self, q, k, C, d):
        return q @ k.transpose(-2, -1) / math.sqrt(C if self.scale_by_d_model else d)

    def masked(self, s, token_mask):
        blocked = ~token_mask[:, None, None, :] if self.key_axis else ~token_mask[:, None, :, None]
        value = torch.finfo(s.dtype).min if self.fill == "min" else -1e9
        return s.masked_fill(blocked, value)

    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        d = C // h
        q = self.split(self.w_q(x), B, T, h, d)
        k = self.split(self.w_k(x), B, T, h, d)
        v = self.split(self.w_v(x), B, T, h, d)
        weights = self.masked(self.scores(q, k, C, d), token_mask).softmax(dim=-1)
        return self.w_o(self.merge(weights @ v, B, T, C)), weights


class Ex5WrongNoScale(Ex5Base):
    def scores(self, q, k, C, d):
        return q @ k.transpose(-2, -1)


class Ex5WrongScaleDModel(Ex5Base):
    scale_by_d_model = True


class Ex5WrongSplitNoTranspose(Ex5Base):
    def split(self, t, B, T, h, d):
        return t.view(B, h, T, d)

    def merge(self, t, B, T, C):
        return t.reshape(B, T, C)


class Ex5WrongPolarity(Ex5Base):
    def masked(self, s, token_mask):
        return s.masked_fill(token_mask[:, None, None, :], torch.finfo(s.dtype).min)


class Ex5WrongQueryAxis(Ex5Base):
    key_axis = False


class Ex5WrongMinus1e9(Ex5Base):
    fill = "1e9"


class Ex5WrongNoOutputProjection(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        d = C // h
        q, k, v = (self.split(f(x), B, T, h, d) for f in (self.w_q, self.w_k, self.w_v))
        weights = self.masked(self.scores(q, k, C, d), token_mask).softmax(dim=-1)
        return self.merge(weights @ v, B, T, C), weights


class Ex5WrongMergeNoTranspose(Ex5Base):
    def merge(self, t, B, T, C):
        return t.reshape(B, T, C)


class Ex5WrongZeroAfterSoftmax(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        d = C // h
        q, k, v = (self.split(f(x), B, T, h, d) for f in (self.w_q, self.w_k, self.w_v))
        weights = self.scores(q, k, C, d).softmax(dim=-1) * token_mask[:, None, None, :]
        return self.w_o(self.merge(weights @ v, B, T, C)), weights


class Ex5RightEinsumInf(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        h = self.num_heads
        d = C // h
        q = self.w_q(x).reshape(B, T, h, d)
        k = self.w_k(x).reshape(B, T, h, d)
        v = self.w_v(x).reshape(B, T, h, d)
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / d**0.5
        s = s.masked_fill(~token_mask.view(B, 1, 1, T), float("-inf"))
        weights = torch.softmax(s, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5RightHeadLoop(Ex5Base):
    def forward(self, x, token_mask):
        C = x.shape[-1]
        d = C // self.num_heads
        q, k, v = self.w_q(x), self.w_k(x), self.w_v(x)
        allowed = token_mask.unsqueeze(1)  # (B, 1, T): the keys
        outs, maps = [], []
        for i in range(self.num_heads):
            cols = slice(i * d, (i + 1) * d)
            s = q[..., cols] @ k[..., cols].transpose(1, 2) / math.sqrt(d)
            s = torch.where(allowed, s, torch.tensor(float("-inf"), dtype=s.dtype))
            w = F.softmax(s, dim=-1)
            maps.append(w)
            outs.append(w @ v[..., cols])
        return self.w_o(torch.cat(outs, dim=-1)), torch.stack(maps, dim=1)


# ------------------------------------------------------ Exercise 6: the feed-forward network


class Ex6Base(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def act(self, a):
        return a * 0.5 * (1 + torch.erf(a / math.sqrt(2)))

    def forward(self, x):
        return self.linear2(self.act(self.linear1(x)))


class Ex6WrongTanh(Ex6Base):
    def act(self, a):
        return 0.5 * a * (1 + torch.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))


class Ex6WrongRelu(Ex6Base):
    def act(self, a):
        return torch.relu(a)


class Ex6WrongSigmoid(Ex6Base):
    def act(self, a):
        return a * torch.sigmoid(1.702 * a)


class Ex6WrongErfHalf(Ex6Base):
    def act(self, a):
        return a * 0.5 * (1 + torch.erf(a / 2))


class Ex6WrongErfTimesRoot2(Ex6Base):
    def act(self, a):
        return a * 0.5 * (1 + torch.erf(a * math.sqrt(2)))


class Ex6WrongActivationLast(Ex6Base):
    def forward(self, x):
        return self.act(self.linear2(self.linear1(x)))


class Ex6WrongDensity(Ex6Base):
    def act(self, a):
        return a * torch.exp(-0.5 * a**2) / math.sqrt(2 * math.pi)


class Ex6WrongOnlyPhi(Ex6Base):
    def act(self, a):
        return 0.5 * (1 + torch.erf(a / math.sqrt(2)))


class Ex6RightFunctionalGelu(Ex6Base):
    def forward(self, x):
        return self.linear2(F.gelu(self.linear1(x)))


class Ex6RightNdtr(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * torch.special.ndtr(a))


# ------------------------------------------------------ Exercise 7: the encoder layer


class Ex7Base(nn.Module):
    """The right parts (Exercises 4–6 of this file); each wrong answer changes its forward."""

    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = Ex5Base(d_model, num_heads)
        self.norm_1 = Ex4RightCentred(d_model, eps)
        self.feed_forward = Ex6Base(d_model, d_ff)
        self.norm_2 = Ex4RightCentred(d_model, eps)

    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex7WrongPreNorm(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(self.norm_1(x), token_mask)
        h = x + a
        return h + self.feed_forward(self.norm_2(h)), w


class Ex7WrongNoFirstResidual(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex7WrongFfnReadsInput(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(x)), w


class Ex7WrongOneNorm(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = self.norm_1(x + a)
        return self.norm_1(h + self.feed_forward(h)), w


class Ex7WrongResidualAfterNorm(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        h = x + self.norm_1(a)
        return h + self.norm_2(self.feed_forward(h)), w


class Ex7WrongDefaultEps(Ex7Base):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__(d_model, num_heads, d_ff, eps)
        self.norm_1 = Ex4RightCentred(d_model, 1e-5)
        self.norm_2 = Ex4RightCentred(d_model, 1e-5)


class Ex7WrongNoFfn(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, token_mask)
        return self.norm_1(x + a), w


class Ex7WrongInvertedMask(Ex7Base):
    def forward(self, x, token_mask):
        a, w = self.self_attention(x, ~token_mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), w


class Ex7WrongUnbiasedNormParts(Ex7Base):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__(d_model, num_heads, d_ff, eps)
        self.norm_1 = Ex4WrongUnbiased(d_model, eps)
        self.norm_2 = Ex4WrongUnbiased(d_model, eps)


class Ex7RightNamedSteps(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, eps):
        super().__init__()
        self.self_attention = Ex5RightEinsumInf(d_model, num_heads)
        self.norm_1 = Ex4RightRsqrt(d_model, eps=eps)
        self.feed_forward = Ex6RightNdtr(d_model, d_ff)
        self.norm_2 = Ex4RightRsqrt(d_model, eps=eps)

    def forward(self, x, token_mask):
        attended, weights = self.self_attention(x, token_mask)
        after_attention = self.norm_1(attended + x)
        transformed = self.feed_forward(after_attention)
        return self.norm_2(transformed + after_attention), weights


class Ex7RightTupleIndex(Ex7Base):
    def forward(self, x, token_mask):
        result = self.self_attention(x, token_mask)
        x = self.norm_1(x + result[0])
        x = self.norm_2(x + self.feed_forward(x))
        return x, result[1]


ENTRIES = [
    Entry(
        E1,
        "forgot the mask: max over every position",
        ex1_wrong_no_mask,
        named="took the maximum over every position, padding included",
    ),
    Entry(
        E1,
        "multiplied by the mask, padding becomes 0",
        ex1_wrong_zero_padding,
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
            "filled the padding with a fixed very negative number (-1e9, or float32's smallest "
            "value) that float16 cannot hold"
        ),
    ),
    Entry(
        E1,
        "took the maximum over the features",
        ex1_wrong_feature_axis,
        named="took the maximum over the features (the last dimension), not over the tokens",
    ),
    Entry(
        E1,
        "returned .max(dim=1) itself (values and indices)",
        ex1_wrong_returns_tuple,
        named="returned torch.max's pair (values, indices) instead of the values",
    ),
    Entry(
        E1,
        "assumed the padding comes last",
        ex1_wrong_padding_at_end,
        named="took the first positions as the real tokens, as if the padding always came last",
    ),
    Entry(
        E1,
        "masked the real tokens instead of the padding",
        ex1_wrong_polarity,
        named="blocked the real tokens and kept the padding",
    ),
    Entry(
        E1,
        "unsqueezed the mask on the wrong axis",
        ex1_wrong_mask_on_features,
        named="gave the mask its size-1 dimension in the middle, (B, 1, T), instead of at the end",
    ),
    Entry(E1, "a loop over the sentences, boolean indexing", ex1_right_loop, right=True),
    Entry(E1, "torch.where with -inf", ex1_right_where_inf, right=True),
    Entry(
        E2,
        "took the diagonal above (the next token)",
        ex2_wrong_next_token,
        named="took the weight on the next token (the diagonal above the main one)",
    ),
    Entry(
        E2,
        "divided by T instead of T - 1",
        ex2_wrong_divides_by_t,
        named="averaged over all T queries, counting the first one, which has no previous token",
    ),
    Entry(
        E2,
        "took the main diagonal (the token itself)",
        ex2_wrong_itself,
        named="took the main diagonal over all T queries (each token's weight on itself)",
    ),
    Entry(
        E2,
        "indexed the first two axes (2-D only)",
        ex2_wrong_two_d_index,
        named=(
            "used the leading dimensions as queries and keys, as if the weights were one (T, T) "
            "matrix"
        ),
    ),
    Entry(
        E2,
        "averaged everything to one number",
        ex2_wrong_one_number,
        named="averaged over every layer and head too, giving one number",
    ),
    Entry(
        E2,
        "included query 1, which wraps to the last key",
        ex2_wrong_wraps_around,
        named="wrapped around: query 1 was counted with its weight on the last token",
    ),
    Entry(
        E2,
        "torch.diagonal with its default dims",
        ex2_wrong_default_diagonal_dims,
        named="took the diagonal over the first two dimensions, not the last two",
    ),
    Entry(E2, "diagonal with offset -1 on the last two dims", ex2_right_diagonal, right=True),
    Entry(E2, "a loop over the queries", ex2_right_loop, right=True),
    Entry(
        E3,
        "ranked by the dot product",
        ex3_wrong_dot_product,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising the "
            "query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "normalised the corpus's columns",
        ex3_wrong_normalise_columns,
        named="normalised each feature over the rows (dim 0) instead of each row",
    ),
    Entry(
        E3,
        "normalised only the query",
        ex3_wrong_query_only,
        named=(
            "ranked by the raw dot product, so a long row wins for being long (normalising the "
            "query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "argsort ascending, the last k: worst first",
        ex3_wrong_worst_first,
        named="took the k best from the end of an ascending sort, so they come worst first",
    ),
    Entry(
        E3,
        "nearest by Euclidean distance",
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
        "returned every row's index, sorted",
        ex3_wrong_all_rows,
        named="returned every row's index in order, not only the best k",
    ),
    Entry(
        E3,
        "sorted the k indices by index",
        ex3_wrong_index_order,
        named="returned the best k in the corpus's order, not best first",
    ),
    Entry(E3, "F.cosine_similarity and argsort", ex3_right_cosine_similarity, right=True),
    Entry(E3, "Python loop and sort", ex3_right_python, right=True),
    Entry(
        E4,
        "unbiased variance (torch.var's default)",
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
        "normalised over the first axis",
        Ex4WrongFirstAxis,
        named="took the mean and variance along dim 0, the first dimension, not the last",
    ),
    Entry(
        E4,
        "mean and variance without keepdim",
        Ex4WrongNoKeepdim,
        named="subtracted a mean and divided by a deviation of shape (…,) instead of (…, 1)",
    ),
    Entry(
        E4,
        "forgot weight and bias in forward",
        Ex4WrongNoAffine,
        named="did not apply the learned scale and shift",
    ),
    Entry(
        E4,
        "weight and bias as plain tensors",
        Ex4WrongPlainTensors,
        named="kept weight and bias as plain tensors, not nn.Parameter",
    ),
    Entry(
        E4,
        "eps fixed at MiniLM's 1e-12",
        Ex4WrongFixedEps,
        named="left epsilon out (or used a far smaller one than the eps given)",
    ),
    Entry(
        E4,
        "weight started at zeros, bias at ones",
        Ex4WrongSwappedInit,
        named="did not start the weight at ones and the bias at zeros",
    ),
    Entry(E4, "var_mean and rsqrt", Ex4RightRsqrt, right=True),
    Entry(E4, "centred first, divided by the root", Ex4RightCentred, right=True),
    Entry(
        E5,
        "forgot to divide by sqrt(d_k)",
        Ex5WrongNoScale,
        named="did not divide the scores by √d_k",
    ),
    Entry(
        E5,
        "divided by sqrt(d_model)",
        Ex5WrongScaleDModel,
        named="divided the scores by √d_model instead of √d_k",
    ),
    Entry(
        E5,
        "view(B, h, T, d_k) with no transpose",
        Ex5WrongSplitNoTranspose,
        named="cut the heads with a view to (B, h, T, d_k) straight from (B, T, C)",
    ),
    Entry(
        E5,
        "blocked the real tokens (mask inverted)",
        Ex5WrongPolarity,
        named="blocked the real tokens' keys and kept the padding's",
    ),
    Entry(
        E5,
        "masked the padding queries instead of keys",
        Ex5WrongQueryAxis,
        named="did not block the padding keys (no mask, or the mask applied to the queries)",
    ),
    Entry(
        E5,
        "filled the masked scores with -1e9",
        Ex5WrongMinus1e9,
        named=(
            "filled the padding scores with a fixed number (-1e9, or float32's smallest value) "
            "that float16 cannot hold"
        ),
    ),
    Entry(E5, "forgot w_o", Ex5WrongNoOutputProjection, named="left out the output projection w_o"),
    Entry(
        E5,
        "merged heads with a reshape, no transpose",
        Ex5WrongMergeNoTranspose,
        named="merged the heads with a reshape straight from (B, h, T, d_k) to (B, T, C)",
    ),
    Entry(
        E5,
        "zeroed padding weights after the softmax",
        Ex5WrongZeroAfterSoftmax,
        named=(
            "zeroed the padding weights after the softmax instead of blocking their scores before "
            "it"
        ),
    ),
    Entry(E5, "einsum, -inf for padding", Ex5RightEinsumInf, right=True),
    Entry(E5, "a loop over the heads' columns", Ex5RightHeadLoop, right=True),
    Entry(
        E6,
        "the tanh approximation of GELU",
        Ex6WrongTanh,
        named="used the tanh approximation of GELU",
    ),
    Entry(E6, "ReLU", Ex6WrongRelu, named="used ReLU"),
    Entry(
        E6,
        "the sigmoid approximation a·σ(1.702a)",
        Ex6WrongSigmoid,
        named="used the sigmoid approximation of GELU, a·σ(1.702a)",
    ),
    Entry(
        E6,
        "Φ(a) as (1 + erf(a / 2)) / 2",
        Ex6WrongErfHalf,
        named="wrote erf(a / 2) instead of erf(a / √2)",
    ),
    Entry(
        E6,
        "Φ(a) as (1 + erf(a·√2)) / 2",
        Ex6WrongErfTimesRoot2,
        named="wrote erf(a·√2) instead of erf(a / √2)",
    ),
    Entry(
        E6,
        "GELU after the second linear map",
        Ex6WrongActivationLast,
        named="applied the activation after the second linear map",
    ),
    Entry(
        E6,
        "a times the normal density",
        Ex6WrongDensity,
        named="multiplied a by the normal density φ(a) instead of the distribution function Φ(a)",
    ),
    Entry(E6, "Φ(a) without the factor a", Ex6WrongOnlyPhi, named="applied Φ(a) instead of a·Φ(a)"),
    Entry(E6, "F.gelu (exact by default)", Ex6RightFunctionalGelu, right=True),
    Entry(E6, "torch.special.ndtr for Φ", Ex6RightNdtr, right=True),
    Entry(E7, "pre-norm wiring", Ex7WrongPreNorm, named="wired the layer pre-norm, x + f(LN(x))"),
    Entry(
        E7,
        "no residual around the attention",
        Ex7WrongNoFirstResidual,
        named="left out the residual around the self-attention",
    ),
    Entry(
        E7,
        "the FFN reads x instead of h",
        Ex7WrongFfnReadsInput,
        named="fed the feed-forward network x instead of h",
    ),
    Entry(E7, "norm_1 used twice", Ex7WrongOneNorm, named="used norm_1 for both sublayers"),
    Entry(
        E7,
        "residual added after the norm",
        Ex7WrongResidualAfterNorm,
        named="normalised the sublayer's output before adding the residual, x + LN(f(x))",
    ),
    Entry(
        E7,
        "LayerNorms built with eps 1e-5",
        Ex7WrongDefaultEps,
        named="built the LayerNorms without the eps the layer was given",
    ),
    Entry(
        E7,
        "forgot the FFN sublayer",
        Ex7WrongNoFfn,
        named="left out the feed-forward sublayer: returned h, the attention block's result",
    ),
    Entry(
        E7,
        "passed the mask inverted",
        Ex7WrongInvertedMask,
        named="passed the attention the mask inverted (True = padding, as torch's layers take it)",
    ),
    Entry(
        E7,
        "built from a LayerNorm with unbiased variance",
        Ex7WrongUnbiasedNormParts,
        named="used the unbiased variance (divided by C − 1)",
    ),
    Entry(E7, "named steps, other right parts", Ex7RightNamedSteps, right=True),
    Entry(E7, "the attention's pair by index", Ex7RightTupleIndex, right=True),
]
