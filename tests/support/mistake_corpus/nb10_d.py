"""Corpus d of notebook 10 (decoder-only GPT): learner answers written blind, see the package.
Fills other than −∞ inside top-k, top-p and the sampler, float32 buffers against float64
probabilities, crashes inside the learner's block."""

import torch
from torch import nn

import attnlib
from mistake_corpus.corpus import Entry

E1, E3, E4, E5 = "ex1_my_gpt_block", "ex5_my_top_k_logits", "ex6_my_top_p_probs", "ex7_my_sample"

# ---------------------------------------------------------------- Exercise 1: the GPT block


class Ex1Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        d, p = config.d_model, config.dropout
        self.attention = attnlib.MultiHeadAttention(d, config.num_heads, dropout=p)
        self.feed_forward = attnlib.FeedForward(d, 4 * d, dropout=p, activation="gelu")
        self.norm_1 = nn.LayerNorm(d)
        self.norm_2 = nn.LayerNorm(d)
        self.dropout = nn.Dropout(p)


class Ex1WrongMaskAsKey(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask)  # the mask lands in `key`
        x = x + self.dropout(a)
        return x + self.dropout(self.feed_forward(self.norm_2(x))), w


class Ex1WrongFloatMask(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(self.norm_1(x), mask=mask.float())
        x = x + self.dropout(a)
        return x + self.dropout(self.feed_forward(self.norm_2(x))), w


class Ex1WrongPostNorm(Ex1Base):
    def forward(self, x, mask):
        a, w = self.attention(x, mask=mask)
        x = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(x))), w


class Ex1RightTupleIndex(Ex1Base):
    def forward(self, x, mask):
        normed = self.norm_1(x)
        attended = self.attention(normed, normed, normed, mask)
        x = x + self.dropout(attended[0])
        x = x + self.dropout(self.feed_forward(self.norm_2(x)))
        return x, attended[1]


# ---------------------------------------------------------------- Exercise 5: top-k


def ex3_wrong_fill_zero(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return torch.where(logits >= kth, logits, torch.zeros_like(logits))


def ex3_wrong_fill_minus_1e9(logits, k):
    kth = logits.topk(k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, -1e9)


def ex3_wrong_kth_no_keepdim(logits, k):
    kth = torch.topk(logits, k).values[..., -1]
    return logits.masked_fill(logits < kth, float("-inf"))


def ex3_wrong_float32_buffer(logits, k):
    values, indices = logits.topk(k, dim=-1)
    out = torch.full(logits.shape, float("-inf"))
    return out.scatter(-1, indices, values)


def ex3_right_scatter_like(logits, k):
    values, indices = torch.topk(logits, k, dim=-1)
    return torch.full_like(logits, float("-inf")).scatter(-1, indices, values)


def ex3_right_sort_threshold(logits, k):
    threshold = logits.sort(dim=-1, descending=True).values[..., k - 1 : k]
    return torch.where(logits < threshold, torch.tensor(float("-inf"), dtype=logits.dtype), logits)


# ---------------------------------------------------------------- Exercise 6: top-p


def ex4_wrong_float32_buffer(probs, top_p):
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(dim=-1) - sorted_p
    sorted_p = sorted_p.masked_fill(before >= top_p, 0.0)
    out = torch.zeros(probs.shape)
    out.scatter_(-1, order, sorted_p)
    return out / out.sum(dim=-1, keepdim=True)


def ex4_wrong_eps_total(probs, top_p):
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(dim=-1) - sorted_p
    kept = torch.where(before < top_p, sorted_p, torch.zeros_like(sorted_p))
    kept = kept / (kept.sum(dim=-1, keepdim=True) + 1e-3)
    return torch.zeros_like(probs).scatter(-1, order, kept)


def ex4_wrong_cumsum_includes_self(probs, top_p):
    sorted_p, order = probs.sort(dim=-1, descending=True)
    kept = sorted_p.masked_fill(sorted_p.cumsum(-1) > top_p, 0.0)
    kept = kept / kept.sum(-1, keepdim=True)
    return torch.zeros_like(probs).scatter(-1, order, kept)


def ex4_right_gather_back(probs, top_p):
    sorted_p, order = torch.sort(probs, dim=-1, descending=True)
    keep_sorted = (sorted_p.cumsum(dim=-1) - sorted_p) < top_p
    keep = keep_sorted.gather(-1, order.argsort(dim=-1))
    kept = probs * keep
    return kept / kept.sum(dim=-1, keepdim=True)


def ex4_right_threshold(probs, top_p):
    sorted_p, _ = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(-1) - sorted_p
    smallest_kept = sorted_p.masked_fill(before >= top_p, float("inf")).amin(-1, keepdim=True)
    kept = torch.where(probs >= smallest_kept, probs, 0.0)
    return kept / kept.sum(-1, keepdim=True)


# ---------------------------------------------------------------- Exercise 7: the sampler


def _nucleus(probs, top_p):
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(dim=-1) - sorted_p
    kept = sorted_p.masked_fill(before >= top_p, 0.0)
    kept = kept / kept.sum(dim=-1, keepdim=True)
    return torch.zeros_like(probs).scatter(-1, order, kept)


def _sample(logits, temperature, top_k, top_p, generator, fill_k, fill_p_logits=None):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        z = torch.where(z < kth, fill_k(z), z)
    probs = torch.softmax(z, dim=-1)
    if top_p is not None:
        if fill_p_logits is None:
            probs = _nucleus(probs, top_p)
        else:
            keep = _nucleus(probs, top_p) > 0
            probs = torch.softmax(torch.where(keep, z, fill_p_logits(z)), dim=-1)
    return torch.multinomial(probs, 1, generator=generator)


def ex5_wrong_top_k_fill_zero(logits, temperature, top_k, top_p, generator):
    return _sample(logits, temperature, top_k, top_p, generator, torch.zeros_like)


def ex5_wrong_top_k_fill_row_min(logits, temperature, top_k, top_p, generator):
    def fill(z):
        return z.amin(dim=-1, keepdim=True).expand_as(z)

    return _sample(logits, temperature, top_k, top_p, generator, fill)


def ex5_wrong_top_k_fill_minus_one(logits, temperature, top_k, top_p, generator):
    def fill(z):
        return torch.full_like(z, -1.0)

    return _sample(logits, temperature, top_k, top_p, generator, fill)


def ex5_wrong_top_p_fill_zero_logits(logits, temperature, top_k, top_p, generator):
    def minus_inf(z):
        return torch.full_like(z, float("-inf"))

    return _sample(logits, temperature, top_k, top_p, generator, minus_inf, torch.zeros_like)


def ex5_wrong_argmax_no_keepdim(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1)

    def minus_inf(z):
        return torch.full_like(z, float("-inf"))

    return _sample(logits, temperature, top_k, top_p, generator, minus_inf)


def ex5_right_fill_finfo_min(logits, temperature, top_k, top_p, generator):
    def lowest(z):
        return torch.full_like(z, torch.finfo(z.dtype).min)

    return _sample(logits, temperature, top_k, top_p, generator, lowest)


def ex5_right_unnormalised_nucleus(logits, temperature, top_k, top_p, generator):
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    z = logits / temperature
    if top_k is not None:
        values, indices = z.topk(top_k, dim=-1)
        z = torch.full_like(z, float("-inf")).scatter(-1, indices, values)
    probs = torch.softmax(z, dim=-1)
    if top_p is not None:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        drop = (sorted_p.cumsum(-1) - sorted_p) >= top_p
        probs = probs.scatter(-1, order, sorted_p.masked_fill(drop, 0.0))
    return torch.multinomial(probs, num_samples=1, generator=generator)  # it renormalises


ENTRIES = [
    Entry(
        E1,
        "attention(x, mask): the mask lands in key",
        Ex1WrongMaskAsKey,
        named="passed the mask as the attention's second argument, which is its key",
    ),
    Entry(
        E1,
        "mask.float() passed to attention",
        Ex1WrongFloatMask,
        named="passed an attention a float mask of 1s and 0s, not a bool one",
    ),
    Entry(
        E1,
        "post-norm wiring",
        Ex1WrongPostNorm,
        named=(
            "normalised after adding (post-norm, LN(x + f(x)), as in notebook 08) instead of before"
        ),
    ),
    Entry(E1, "positional mask after q, k, v; results by index", Ex1RightTupleIndex, right=True),
    Entry(
        E3,
        "filled with 0 instead of -inf",
        ex3_wrong_fill_zero,
        named="set the removed logits to 0 instead of -inf",
    ),
    Entry(
        E3,
        "filled with -1e9",
        ex3_wrong_fill_minus_1e9,
        named=("set the removed logits to a large negative number such as -1e9 instead of -inf"),
    ),
    Entry(
        E3,
        "k-th largest without keepdim",
        ex3_wrong_kth_no_keepdim,
        named="took each row's k-th largest without keeping its dimension",
    ),
    Entry(
        E3,
        "a float32 -inf buffer, scatter of float64 values",
        ex3_wrong_float32_buffer,
        named="a float32 constant breaks float16",
    ),
    Entry(E3, "full_like -inf and scatter", ex3_right_scatter_like, right=True),
    Entry(E3, "sorted threshold, torch.where", ex3_right_sort_threshold, right=True),
    Entry(
        E4,
        "a float32 zeros buffer, scatter_ of float64",
        ex4_wrong_float32_buffer,
        named="a float32 constant breaks float64",
    ),
    Entry(
        E4,
        "+ 1e-3 on the nucleus's total",
        ex4_wrong_eps_total,
        named=("added a small number (an epsilon) to the nucleus's total before dividing by it"),
    ),
    Entry(
        E4,
        "cumsum including the token itself",
        ex4_wrong_cumsum_includes_self,
        named=(
            "kept the tokens whose running total stays within top_p, which drops "
            "the token that carries the total past top_p"
        ),
    ),
    Entry(E4, "the sorted mask gathered back by argsort", ex4_right_gather_back, right=True),
    Entry(E4, "the smallest kept probability as a threshold", ex4_right_threshold, right=True),
    Entry(
        E5,
        "top-k fills 0 instead of -inf",
        ex5_wrong_top_k_fill_zero,
        named="top-k filled the removed logits with a finite number instead of −inf",
    ),
    Entry(
        E5,
        "top-k fills the row's smallest logit",
        ex5_wrong_top_k_fill_row_min,
        named="top-k filled the removed logits with a finite number instead of −inf",
    ),
    Entry(
        E5,
        "top-k fills -1",
        ex5_wrong_top_k_fill_minus_one,
        named="top-k filled the removed logits with a finite number instead of −inf",
    ),
    Entry(
        E5,
        "top-p sets the dropped logits to 0",
        ex5_wrong_top_p_fill_zero_logits,
        named=("top-p set the dropped tokens' logits to a finite number instead of −inf"),
    ),
    Entry(
        E5,
        "greedy argmax without keepdim: shape (B,)",
        ex5_wrong_argmax_no_keepdim,
        named=("returned one id per row as shape (B,), without the column of shape (B, 1)"),
    ),
    Entry(E5, "top-k fills finfo.min", ex5_right_fill_finfo_min, right=True),
    Entry(E5, "nucleus zeroed, not renormalised", ex5_right_unnormalised_nucleus, right=True),
]
