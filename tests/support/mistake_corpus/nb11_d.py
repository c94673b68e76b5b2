"""Corpus d of notebook 11 (a pretrained model): learner answers written blind, see the package.
float16 inputs met with float32 constants and buffers, epsilons placed elsewhere, heads split
or joined without a transpose, `.T` on a batch."""

import math

import torch
from torch import nn

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_my_max_pool", "ex2_my_previous_token_share", "ex3_my_semantic_search"
E4, E5, E6 = "ex4_my_layer_norm", "ex5_my_multi_head_attention", "ex6_my_feed_forward"

# ---------------------------------------------------------------- Exercise 1: max pooling


def ex1_wrong_minus_1e9(hidden, token_mask):
    return hidden.masked_fill(~token_mask.unsqueeze(-1), -1e9).amax(dim=1)


def ex1_wrong_finfo_float32(hidden, token_mask):
    lowest = torch.finfo(torch.float32).min
    return hidden.masked_fill(~token_mask[..., None], lowest).max(dim=1).values


def ex1_wrong_float32_where(hidden, token_mask):
    blocked = torch.full(hidden.shape, float("-inf"))
    return torch.where(token_mask[:, :, None], hidden, blocked).amax(dim=1)


def ex1_wrong_upcast(hidden, token_mask):
    h = hidden.float()  # float16 is fragile
    return h.masked_fill(~token_mask[..., None], float("-inf")).amax(dim=1)


def ex1_wrong_times_mask(hidden, token_mask):
    return (hidden * token_mask[..., None]).amax(dim=1)


def ex1_right_finfo_of_dtype(hidden, token_mask):
    lowest = torch.finfo(hidden.dtype).min
    return hidden.masked_fill(~token_mask.unsqueeze(-1), lowest).amax(dim=1)


def ex1_right_loop(hidden, token_mask):
    rows = [hidden[b][token_mask[b]].amax(dim=0) for b in range(hidden.shape[0])]
    return torch.stack(rows)


# ---------------------------------------------------------------- Exercise 2: previous-token share


def ex2_wrong_diagonal_first_dims(weights):
    return torch.diagonal(weights, offset=-1).mean(dim=-1)


def ex2_wrong_diagonal_above(weights):
    return weights.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1)


def ex2_wrong_divided_by_t(weights):
    T = weights.shape[-1]
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / T


def ex2_right_slices(weights):
    T = weights.shape[-1]
    rows, cols = torch.arange(1, T), torch.arange(0, T - 1)
    return weights[..., rows, cols].mean(dim=-1)


def ex2_right_eye_offset(weights):
    T = weights.shape[-1]
    below = torch.eye(T, dtype=weights.dtype).roll(-1, dims=-1).tril()
    return (weights * below).sum(dim=(-2, -1)) / (T - 1)


# ---------------------------------------------------------------- Exercise 3: semantic search


def ex3_wrong_dot_products(query, corpus, k):
    return (corpus @ query).topk(k).indices


def ex3_wrong_ascending(query, corpus, k):
    cos = (corpus @ query) / (corpus.norm(dim=-1) * query.norm())
    return cos.argsort()[:k]


def ex3_wrong_float_indices(query, corpus, k):
    cos = (corpus @ query) / (corpus.norm(dim=-1) * query.norm())
    order = sorted(range(len(cos)), key=lambda i: -float(cos[i]))
    return torch.tensor(order[:k], dtype=torch.float32)


def ex3_right_eps_ranking(query, corpus, k):
    unit = corpus / (corpus.norm(dim=-1, keepdim=True) + 1e-8)
    return torch.topk(unit @ (query / query.norm()), k).indices


def ex3_right_argsort_descending(query, corpus, k):
    cos = torch.cosine_similarity(corpus, query.unsqueeze(0), dim=-1)
    return cos.argsort(descending=True)[:k]


# ---------------------------------------------------------------- Exercise 4: LayerNorm


class Ex4WrongEpsOutside(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        sigma = (x - mu).pow(2).mean(-1, keepdim=True).sqrt()
        return self.weight * (x - mu) / (sigma + self.eps) + self.bias


class Ex4WrongStd(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(x.var(-1, keepdim=True) + self.eps) + self.bias


class Ex4WrongEpsFixed(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = (x - mu).pow(2).mean(-1, keepdim=True)
        return self.weight * (x - mu) / torch.sqrt(var + 1e-5) + self.bias


class Ex4RightRsqrt(nn.Module):
    def __init__(self, d_model, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        inv = torch.rsqrt(centred.square().mean(dim=-1, keepdim=True) + self.eps)
        return torch.addcmul(self.bias, centred * inv, self.weight)


# ---------------------------------------------------------------- Exercise 5: multi-head attention


class Ex5Base(nn.Module):
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


class Ex5WrongZerosBuffer(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        H, D = self.num_heads, C // self.num_heads
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        concat = torch.zeros(B, T, C)
        for i in range(H):
            concat[..., i * D : (i + 1) * D] = weights[:, i] @ v[:, i]
        return self.w_o(concat), weights


class Ex5WrongMinus1e9(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // self.num_heads)
        scores = scores.masked_fill(~token_mask[:, None, None, :], -1e9)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5WrongMergeNoTranspose(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // self.num_heads)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5WrongSplitNoTranspose(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        H, D = self.num_heads, C // self.num_heads
        q = self.w_q(x).reshape(B, H, T, D)
        k = self.w_k(x).reshape(B, H, T, D)
        v = self.w_v(x).reshape(B, H, T, D)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5WrongDotTBatch(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.T / math.sqrt(C // self.num_heads)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, C)
        return self.w_o(out), weights


class Ex5RightFinfoOfDtype(Ex5Base):
    def forward(self, x, token_mask):
        C = x.shape[-1]
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = q @ k.mT / math.sqrt(C // self.num_heads)
        keep = token_mask[:, None, None, :]
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1) * keep
        out = (weights @ v).transpose(1, 2).flatten(2)
        return self.w_o(out), weights


class Ex5RightFloat32Softmax(Ex5Base):
    def forward(self, x, token_mask):
        B, T, C = x.shape
        q, k, v = self.heads(self.w_q(x)), self.heads(self.w_k(x)), self.heads(self.w_v(x))
        scores = (q @ k.transpose(-2, -1)).float() / math.sqrt(C // self.num_heads)
        scores = scores.masked_fill(~token_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1).to(x.dtype)
        out = (weights @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.w_o(out), weights


# ---------------------------------------------------------------- Exercise 6: feed-forward


class Ex6Base(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


class Ex6WrongTanh(Ex6Base):
    def forward(self, x):
        a = self.linear1(x)
        gelu = 0.5 * a * (1 + torch.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))
        return self.linear2(gelu)


class Ex6WrongSigmoid(Ex6Base):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * torch.sigmoid(1.702 * a))


class Ex6RightErf(Ex6Base):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(0.5 * a * (1.0 + torch.erf(a / math.sqrt(2.0))))


class Ex6RightSpecial(Ex6Base):
    def forward(self, x):
        a = self.linear1(x)
        return self.linear2(a * torch.special.ndtr(a))


ENTRIES = [
    Entry(
        E1,
        "masked_fill with -1e9",
        ex1_wrong_minus_1e9,
        named=(
            "filled the padding with a fixed very negative number (-1e9, or "
            "float32's smallest value) that float16 cannot hold"
        ),
    ),
    Entry(
        E1,
        "masked_fill with float32's lowest number",
        ex1_wrong_finfo_float32,
        named=(
            "filled the padding with a fixed very negative number (-1e9, or "
            "float32's smallest value) that float16 cannot hold"
        ),
    ),
    Entry(
        E1,
        "torch.where with a float32 -inf tensor",
        ex1_wrong_float32_where,
        named="returns float32 for float16 input",
    ),
    Entry(
        E1,
        "hidden.float() first, never cast back",
        ex1_wrong_upcast,
        named="returns float32 for float64 input",
    ),
    Entry(
        E1,
        "padding multiplied by 0",
        ex1_wrong_times_mask,
        named=(
            "set the padding to 0 before taking the maximum (by multiplying by the "
            "mask or filling with 0)"
        ),
    ),
    Entry(E1, "finfo of hidden's dtype", ex1_right_finfo_of_dtype, right=True),
    Entry(E1, "a loop over the sentences", ex1_right_loop, right=True),
    Entry(
        E2,
        "torch.diagonal(offset=-1) on dims 0 and 1",
        ex2_wrong_diagonal_first_dims,
        named="took the diagonal over the first two dimensions, not the last two",
    ),
    Entry(
        E2,
        "offset=+1: the token after",
        ex2_wrong_diagonal_above,
        named="took the weight on the next token (the diagonal above the main one)",
    ),
    Entry(
        E2,
        "summed and divided by T",
        ex2_wrong_divided_by_t,
        named=("averaged over all T queries, counting the first one, which has no previous token"),
    ),
    Entry(E2, "advanced indexing rows 1.., cols ..T-1", ex2_right_slices, right=True),
    Entry(E2, "a rolled eye below the diagonal", ex2_right_eye_offset, right=True),
    Entry(
        E3,
        "ranked by dot products",
        ex3_wrong_dot_products,
        named=(
            "ranked by the raw dot product, so a long row wins for being long "
            "(normalising the query alone changes no ranking)"
        ),
    ),
    Entry(
        E3,
        "argsort ascending",
        ex3_wrong_ascending,
        named="ranked the rows worst first (the smallest cosines first)",
    ),
    Entry(
        E3,
        "float32 indices from a Python sort",
        ex3_wrong_float_indices,
        named="returned a float tensor where the task asks for integers (int64)",
    ),
    Entry(E3, "+ 1e-8 on the lengths (the ranking stays)", ex3_right_eps_ranking, right=True),
    Entry(E3, "cosine_similarity and argsort descending", ex3_right_argsort_descending, right=True),
    Entry(
        E4,
        "eps added to the standard deviation",
        Ex4WrongEpsOutside,
        named="added epsilon outside the square root",
    ),
    Entry(
        E4,
        "x.var(): the unbiased variance",
        Ex4WrongStd,
        named="used the unbiased variance (divided by C − 1)",
    ),
    Entry(
        E4,
        "eps fixed at 1e-5",
        Ex4WrongEpsFixed,
        named=("used a fixed epsilon (PyTorch's default 1e-5) instead of the eps it was given"),
    ),
    Entry(E4, "rsqrt and addcmul", Ex4RightRsqrt, right=True),
    Entry(
        E5,
        "heads written into torch.zeros (float32)",
        Ex5WrongZerosBuffer,
        named="a float32 constant breaks float64",
    ),
    Entry(
        E5,
        "masked_fill with -1e9",
        Ex5WrongMinus1e9,
        named=(
            "filled the padding scores with a fixed number (-1e9, or float32's "
            "smallest value) that float16 cannot hold"
        ),
    ),
    Entry(
        E5,
        "merged by reshape without a transpose",
        Ex5WrongMergeNoTranspose,
        named=("merged the heads with a reshape straight from (B, h, T, d_k) to (B, T, C)"),
    ),
    Entry(
        E5,
        "split by reshape without a transpose",
        Ex5WrongSplitNoTranspose,
        named=(
            "viewed Q, K and V as (B, h, T, d_k) straight from (B, T, C), then "
            "merged the heads back with a transpose"
        ),
    ),
    Entry(
        E5,
        "q @ k.T on (B, H, T, D) (reverses a batch)",
        Ex5WrongDotTBatch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(E5, "finfo of the scores' dtype", Ex5RightFinfoOfDtype, right=True),
    Entry(E5, "softmax in float32, weights cast back", Ex5RightFloat32Softmax, right=True),
    Entry(E6, "the tanh approximation", Ex6WrongTanh, named="used the tanh approximation of GELU"),
    Entry(
        E6,
        "x * sigmoid(1.702 x)",
        Ex6WrongSigmoid,
        named="used the sigmoid approximation of GELU, a·σ(1.702a)",
    ),
    Entry(E6, "erf", Ex6RightErf, right=True),
    Entry(E6, "torch.special.ndtr", Ex6RightSpecial, right=True),
]
