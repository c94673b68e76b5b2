"""Corpus c for notebook 07 (masking), written blind from the learner's edition."""

import math

import torch

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ----------------------------------------------------------- Exercise 1: cached_causal_mask


def ex1_wrong_plain_tril(T_q, T_k):
    # queries at positions 0 … T_q − 1
    return torch.ones(T_q, T_k, dtype=torch.bool).tril()


def ex1_wrong_strict(T_q, T_k):
    pos_q = torch.arange(T_k - T_q, T_k).unsqueeze(1)
    return torch.arange(T_k).unsqueeze(0) < pos_q


def ex1_wrong_offset_plus_one(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_k - T_q + 1)


def ex1_wrong_blocked_polarity(T_q, T_k):
    # True where the key lies in the future
    return torch.ones(T_q, T_k, dtype=torch.bool).triu(diagonal=T_k - T_q + 1)


def ex1_wrong_float_mask(T_q, T_k):
    return torch.tril(torch.ones(T_q, T_k), diagonal=T_k - T_q)


def ex1_wrong_offset_sign(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_q - T_k)


def ex1_wrong_first_rows(T_q, T_k):
    return torch.tril(torch.ones(T_k, T_k, dtype=torch.bool))[:T_q]


def ex1_wrong_transposed(T_q, T_k):
    full = torch.ones(T_k, T_k, dtype=torch.bool).tril()
    return full[-T_q:].T


def ex1_wrong_loop_new_positions(T_q, T_k):
    # loops, but gives query i the position i + T_q instead of T_k − T_q + i
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        for j in range(T_k):
            mask[i, j] = j <= i + T_q - 1
    return mask


def ex1_refused_attnlib(T_q, T_k):
    return attnlib.causal_mask(T_q, T_k)


def ex1_right_last_rows(T_q, T_k):
    square = torch.tril(torch.ones(T_k, T_k)).bool()
    return square[T_k - T_q :]


def ex1_right_loops(T_q, T_k):
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        mask[i, : T_k - T_q + i + 1] = True
    return mask


# ------------------------------------------------------------- Exercise 2: my_padding_mask


def ex2_wrong_less_equal(lengths, seq_len):
    lens = torch.tensor(lengths).view(-1, 1, 1, 1)
    return torch.arange(seq_len).view(1, 1, 1, -1) <= lens


def ex2_wrong_2d(lengths, seq_len):
    return torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]


def ex2_wrong_query_axis(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]
    return real[:, None, :, None]


def ex2_wrong_true_at_pads(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] >= torch.tensor(lengths)[:, None]
    return real[:, None, None, :]


def ex2_wrong_left_padding_slice(lengths, seq_len):
    # the real tokens taken from the end
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, 0, 0, -n:] = True
    return mask


def ex2_wrong_long_mask(lengths, seq_len):
    mask = torch.zeros(len(lengths), seq_len, dtype=torch.long)
    for b, n in enumerate(lengths):
        mask[b, :n] = 1
    return mask.unsqueeze(1).unsqueeze(1)


def ex2_wrong_width_from_lengths(lengths, seq_len):
    width = max(lengths)
    real = torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]
    return real.view(len(lengths), 1, 1, width)


def ex2_wrong_float(lengths, seq_len):
    real = (torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]).float()
    return real[:, None, None, :]


def ex2_right_loop(lengths, seq_len):
    rows = [[j < n for j in range(seq_len)] for n in lengths]
    return torch.tensor(rows, dtype=torch.bool).reshape(len(lengths), 1, 1, seq_len)


def ex2_right_cumsum(lengths, seq_len):
    ones = torch.ones(len(lengths), seq_len, dtype=torch.long)
    real = ones.cumsum(dim=1) <= torch.tensor(lengths, dtype=torch.long).unsqueeze(1)
    return real.unsqueeze(1).unsqueeze(2)


# --------------------------------------------------------- Exercise 3: my_masked_attention


def _scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def ex3_wrong_minus_inf(q, k, v, mask):
    weights = torch.softmax(_scores(q, k).masked_fill(~mask, float("-inf")), dim=-1)
    return weights @ v, weights


def ex3_wrong_minus_1e9(q, k, v, mask):
    weights = torch.softmax(_scores(q, k).masked_fill(mask == 0, -1e9), dim=-1)
    return weights @ v, weights


def ex3_wrong_no_zeroing(q, k, v, mask):
    s = _scores(q, k)
    weights = s.masked_fill(~mask, torch.finfo(s.dtype).min).softmax(dim=-1)
    return weights @ v, weights


def ex3_wrong_polarity(q, k, v, mask):
    s = _scores(q, k)
    s = s.masked_fill(mask, torch.finfo(s.dtype).min)
    weights = torch.softmax(s, dim=-1).masked_fill(mask, 0.0)
    return weights @ v, weights


def ex3_wrong_mask_after_softmax(q, k, v, mask):
    weights = torch.softmax(_scores(q, k), dim=-1) * mask
    return weights @ v, weights


def ex3_wrong_k_dot_t(q, k, v, mask):
    s = q @ k.T / math.sqrt(q.shape[-1])
    s = s.masked_fill(~mask, torch.finfo(s.dtype).min)
    weights = torch.softmax(s, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def ex3_wrong_no_scale(q, k, v, mask):
    s = q @ k.transpose(-2, -1)
    s = s.masked_fill(~mask, torch.finfo(s.dtype).min)
    weights = torch.softmax(s, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def ex3_wrong_manual_divide(q, k, v, mask):
    # a hand-made softmax over the allowed keys: 0 / 0 on an empty row
    s = _scores(q, k)
    e = torch.exp(s - s.amax(dim=-1, keepdim=True)) * mask
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ v, weights


def ex3_wrong_float32_min(q, k, v, mask):
    s = _scores(q, k)
    s = s.masked_fill(~mask, torch.finfo(torch.float32).min)
    weights = torch.softmax(s, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def ex3_refused_torch(q, k, v, mask):
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    s = _scores(q, k).masked_fill(~mask, -torch.inf)
    return out, torch.softmax(s, dim=-1).nan_to_num(0.0)


def ex3_right_nan_to_num(q, k, v, mask):
    s = torch.matmul(q, k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    weights = torch.softmax(s.masked_fill(~mask, -torch.inf), dim=-1).nan_to_num(0.0)
    return torch.matmul(weights, v), weights


def ex3_right_where_manual(q, k, v, mask):
    s = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    s = torch.where(mask, s, torch.finfo(s.dtype).min)
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    e = torch.where(mask, e, torch.zeros_like(e))
    total = e.sum(dim=-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return weights @ v, weights


E1, E2, E3 = "ex1_cached_causal_mask", "ex2_padding_mask", "ex3_masked_attention"
ENTRIES = [
    Entry(
        E1,
        "tril of (T_q, T_k): queries at 0 … T_q − 1",
        ex1_wrong_plain_tril,
        named="placed the new queries at positions 0 … T_q − 1, ignoring the cached keys",
    ),
    Entry(
        E1,
        "< instead of <=: a query cannot see itself",
        ex1_wrong_strict,
        named="left out the diagonal: a query may not attend to its own key",
    ),
    Entry(
        E1,
        "diagonal offset one too many",
        ex1_wrong_offset_plus_one,
        named="let each query see one key too many, the one just after its position",
    ),
    Entry(
        E1,
        "True where blocked",
        ex1_wrong_blocked_polarity,
        named="wrote True for the keys a query may not see (True = blocked)",
    ),
    Entry(
        E1,
        "a float mask of ones and zeros",
        ex1_wrong_float_mask,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E1,
        "diagonal offset with the wrong sign",
        ex1_wrong_offset_sign,
        named="moved the border the wrong way, by T_q − T_k instead of T_k − T_q",
    ),
    Entry(
        E1,
        "the first T_q rows of the square mask",
        ex1_wrong_first_rows,
        named="placed the new queries at positions 0 … T_q − 1, ignoring the cached keys",
    ),
    Entry(
        E1,
        "transposed: (T_k, T_q)",
        ex1_wrong_transposed,
        named="put the keys in the rows and the queries in the columns",
    ),
    Entry(E1, "loop with query i at position i + T_q", ex1_wrong_loop_new_positions),
    Entry(E1, "called attnlib.causal_mask", ex1_refused_attnlib, named=REFUSED),
    Entry(E1, "the last T_q rows of the square mask", ex1_right_last_rows, right=True),
    Entry(E1, "loop setting a prefix per row", ex1_right_loops, right=True),
    Entry(
        E2,
        "<= length: one pad too many",
        ex2_wrong_less_equal,
        named="compared with <= instead of <: the position just after each sentence counts as real",
    ),
    Entry(
        E2,
        "returned (B, seq_len)",
        ex2_wrong_2d,
        named="returned the (B, seq_len) table without the two size-1 dimensions",
    ),
    Entry(
        E2,
        "put the positions on the query axis, (B, 1, seq_len, 1)",
        ex2_wrong_query_axis,
        named="put the positions in the query dimension, (B, 1, seq_len, 1)",
    ),
    Entry(
        E2,
        "True at the pads",
        ex2_wrong_true_at_pads,
        named="wrote True for the padding (True = ignore this key)",
    ),
    Entry(
        E2,
        "took the real tokens from the end; length 0 marks all",
        ex2_wrong_left_padding_slice,
        named="put the real tokens at the end of each row (padding on the left)",
    ),
    Entry(
        E2,
        "a long (0/1) mask",
        ex2_wrong_long_mask,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E2,
        "width max(lengths) instead of seq_len",
        ex2_wrong_width_from_lengths,
        named="made the mask as wide as the longest sentence instead of seq_len",
    ),
    Entry(
        E2,
        "a float mask",
        ex2_wrong_float,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(E2, "a loop of comparisons", ex2_right_loop, right=True),
    Entry(E2, "cumsum of ones against the lengths", ex2_right_cumsum, right=True),
    Entry(
        E3,
        "filled with -inf: NaN on an empty row",
        ex3_wrong_minus_inf,
        named=(
            "let a row that may attend to nothing divide 0 by 0 (a −inf fill, or dividing by "
            "the row's sum after zeroing)"
        ),
    ),
    Entry(
        E3,
        "filled with -1e9",
        ex3_wrong_minus_1e9,
        named="filled the blocked scores with −1e9 and never set the blocked weights to 0",
    ),
    Entry(
        E3,
        "finfo.min but empty rows left uniform",
        ex3_wrong_no_zeroing,
        named="filled the blocked scores but never set the blocked weights to 0",
    ),
    Entry(
        E3,
        "masked where mask is True (polarity)",
        ex3_wrong_polarity,
        named="blocked the pairs where the mask is True (True = blocked)",
    ),
    Entry(
        E3,
        "multiplied the weights by the mask after the softmax",
        ex3_wrong_mask_after_softmax,
        named=(
            "only set the blocked weights to 0 after the softmax, without masking the scores first"
        ),
    ),
    Entry(
        E3,
        "k.T: 2-D only",
        ex3_wrong_k_dot_t,
        named="transposed k with .T, which reverses every dimension of a batched tensor",
    ),
    Entry(E3, "forgot the 1/√d_k", ex3_wrong_no_scale, named="did not scale the scores"),
    Entry(
        E3,
        "hand-made softmax, 0/0 on an empty row",
        ex3_wrong_manual_divide,
        named=(
            "let a row that may attend to nothing divide 0 by 0 (a −inf fill, or dividing by "
            "the row's sum after zeroing)"
        ),
    ),
    Entry(
        E3,
        "float32's finfo.min whatever the dtype",
        ex3_wrong_float32_min,
        named=(
            "broke float16: a fill it cannot hold (−1e9, float32's smallest value) or "
            "float32 mixed into its scores"
        ),
    ),
    Entry(E3, "called PyTorch's attention for out", ex3_refused_torch, named=REFUSED),
    Entry(E3, "-inf then nan_to_num", ex3_right_nan_to_num, right=True),
    Entry(E3, "torch.where and a guarded hand-made softmax", ex3_right_where_manual, right=True),
]
