"""Learner answers to notebook 07's exercises (masking), corpus d, written blind: masks in the
wrong dtype, float16 attention that comes back float32 or crashes on a float32 constant,
epsilons that vanish in float16, crashes."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_cached_causal_mask", "ex2_padding_mask", "ex3_masked_attention"

# ------------------------------------------ Exercise 1: cached_causal_mask


def ex1_wrong_float_mask(T_q, T_k):
    return torch.tril(torch.ones(T_q, T_k), diagonal=T_k - T_q)


def ex1_wrong_int_mask(T_q, T_k):
    rows = torch.arange(T_k - T_q, T_k)[:, None]
    return (torch.arange(T_k)[None, :] <= rows).long()


def ex1_wrong_offset_sign(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_q - T_k)


def ex1_right_compare(T_q, T_k):
    return torch.arange(T_k) <= torch.arange(T_k - T_q, T_k).unsqueeze(-1)


def ex1_right_last_rows(T_q, T_k):
    return torch.ones(T_k, T_k).tril().bool()[T_k - T_q :]


# ------------------------------------------ Exercise 2: my_padding_mask


def ex2_wrong_list_index(lengths, seq_len):
    positions = torch.arange(seq_len)
    mask = positions[None, :] < lengths[:, None]
    return mask[:, None, None, :]


def ex2_wrong_float_mask(lengths, seq_len):
    mask = torch.zeros(len(lengths), seq_len)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
    return mask.view(len(lengths), 1, 1, seq_len)


def ex2_wrong_shape_b_seq(lengths, seq_len):
    return torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]


def ex2_right_loop(lengths, seq_len):
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, ..., :n] = True
    return mask


def ex2_right_lt(lengths, seq_len):
    lens = torch.as_tensor(lengths).view(-1, 1, 1, 1)
    return torch.arange(seq_len).view(1, 1, 1, -1).lt(lens)


# ------------------------------------------ Exercise 3: my_masked_attention


def ex3_wrong_float32_zero_rows(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    empty = ~mask.any(dim=-1, keepdim=True)
    weights = torch.where(empty, torch.zeros(weights.shape), weights)
    return weights @ v.to(weights.dtype), weights


def ex3_wrong_finfo_float32(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, dim=-1) * mask
    return weights @ v, weights


def ex3_wrong_minus_1e9(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1) * mask
    return weights @ v, weights


def ex3_wrong_eps_vanishes_half(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores) * mask
    weights = e / (e.sum(dim=-1, keepdim=True) + 1e-9)
    return weights @ v, weights


def ex3_wrong_eps_large(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores) * mask
    weights = e / (e.sum(dim=-1, keepdim=True) + 1e-4)
    return weights @ v, weights


def ex3_wrong_softmax_float32_not_back(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1)).float() / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights @ v.float(), weights


def ex3_right_float32_then_back(q, k, v, mask):
    scores = (q.float() @ k.float().mT) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0).to(q.dtype)
    return weights @ v, weights


def ex3_right_where_zeros_like(q, k, v, mask):
    scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(weights.isnan(), torch.zeros_like(weights), weights)
    return weights @ v, weights


ENTRIES = [
    Entry(
        E1,
        "tril of torch.ones: a float mask",
        ex1_wrong_float_mask,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E1,
        "comparison turned .long()",
        ex1_wrong_int_mask,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E1,
        "diagonal T_q - T_k: the offset's sign flipped",
        ex1_wrong_offset_sign,
        named="moved the border the wrong way, by T_q − T_k instead of T_k − T_q",
    ),
    Entry(E1, "arange comparison", ex1_right_compare, right=True),
    Entry(E1, "last rows of a square tril", ex1_right_last_rows, right=True),
    Entry(
        E2,
        "lengths[:, None] on the Python list",
        ex2_wrong_list_index,
        named="indexed a Python list as if it were a tensor",
    ),
    Entry(
        E2,
        "a float mask of zeros and ones",
        ex2_wrong_float_mask,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E2,
        "shape (B, seq_len), not (B, 1, 1, seq_len)",
        ex2_wrong_shape_b_seq,
        named="returned the (B, seq_len) table without the two size-1 dimensions",
    ),
    Entry(E2, "a bool loop", ex2_right_loop, right=True),
    Entry(E2, "arange.lt(lengths) in 4-D", ex2_right_lt, right=True),
    Entry(
        E3,
        "empty rows zeroed with torch.zeros (float32)",
        ex3_wrong_float32_zero_rows,
        named="returns float32 for float16 input",
    ),
    Entry(
        E3,
        "masked_fill with float32's lowest number",
        ex3_wrong_finfo_float32,
        named=(
            "broke float16: a fill it cannot hold (−1e9, float32's smallest value) "
            "or float32 mixed into its scores"
        ),
    ),
    Entry(
        E3,
        "masked_fill with -1e9",
        ex3_wrong_minus_1e9,
        named=(
            "broke float16: a fill it cannot hold (−1e9, float32's smallest value) "
            "or float32 mixed into its scores"
        ),
    ),
    Entry(
        E3,
        "+ 1e-9 on the total: vanishes in float16",
        ex3_wrong_eps_vanishes_half,
        named=(
            "added an epsilon to each row's total that float16 rounds to 0, so a "
            "row that may attend to nothing is still 0 / 0 there"
        ),
    ),
    Entry(
        E3,
        "+ 1e-4 on the total",
        ex3_wrong_eps_large,
        named=(
            "added a small number (an epsilon) to each row's total, so its weights "
            "add up to less than 1"
        ),
    ),
    Entry(
        E3,
        "softmax in float32, never cast back",
        ex3_wrong_softmax_float32_not_back,
        named="returns float32 for float64 input",
    ),
    Entry(E3, "in float32, weights cast back", ex3_right_float32_then_back, right=True),
    Entry(E3, "NaN replaced with zeros_like", ex3_right_where_zeros_like, right=True),
]
