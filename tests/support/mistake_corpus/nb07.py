"""Learner answers to notebook 07's exercises (masking), written blind."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

# --- Exercise 1: cached_causal_mask(T_q, T_k) --------------------------------------------------


def ex1_wrong_no_offset(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril()


def ex1_wrong_triu(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).triu(diagonal=T_k - T_q)


def ex1_wrong_no_diagonal(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_k - T_q - 1)


def ex1_wrong_offset_plus_one(T_q, T_k):
    return torch.tril(torch.ones(T_q, T_k, dtype=torch.bool), diagonal=T_k - T_q + 1)


def ex1_wrong_polarity(T_q, T_k):
    allowed = torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_k - T_q)
    return ~allowed  # True where the query must not look


def ex1_wrong_float(T_q, T_k):
    return torch.ones(T_q, T_k).tril(diagonal=T_k - T_q)


def ex1_wrong_first_rows(T_q, T_k):
    square = torch.tril(torch.ones(T_k, T_k, dtype=torch.bool))
    return square[:T_q]


def ex1_wrong_offset_sign(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril(diagonal=T_q - T_k)


def ex1_wrong_strict_less(T_q, T_k):
    query_pos = torch.arange(T_k - T_q, T_k).unsqueeze(1)
    return torch.arange(T_k).unsqueeze(0) < query_pos


def ex1_wrong_whole_square(T_q, T_k):
    return torch.ones(T_k, T_k, dtype=torch.bool).tril()


def ex1_wrong_transposed(T_q, T_k):
    query_pos = torch.arange(T_k - T_q, T_k)
    return torch.arange(T_k)[:, None] <= query_pos[None, :]  # (T_k, T_q)


def ex1_wrong_loop_long(T_q, T_k):
    mask = torch.zeros(T_q, T_k, dtype=torch.long)
    for i in range(T_q):
        for j in range(T_k):
            if j <= i + T_k - T_q:
                mask[i, j] = 1
    return mask


def ex1_right_tril_bool(T_q, T_k):
    return torch.tril(torch.ones(T_q, T_k), diagonal=T_k - T_q).bool()


def ex1_right_last_rows(T_q, T_k):
    return torch.ones(T_k, T_k).tril().bool()[T_k - T_q :]


def ex1_right_lists(T_q, T_k):
    start = T_k - T_q
    rows = [[key <= start + i for key in range(T_k)] for i in range(T_q)]
    return torch.tensor(rows, dtype=torch.bool)


# --- Exercise 2: my_padding_mask(lengths, seq_len) ---------------------------------------------


def ex2_wrong_less_equal(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] <= torch.tensor(lengths)[:, None]
    return real[:, None, None, :]


def ex2_wrong_two_dims(lengths, seq_len):
    return torch.arange(seq_len).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


def ex2_wrong_three_dims(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]
    return real.unsqueeze(1)


def ex2_wrong_polarity(lengths, seq_len):
    pad = torch.arange(seq_len)[None, :] >= torch.tensor(lengths)[:, None]
    return pad[:, None, None, :]


def ex2_wrong_float(lengths, seq_len):
    mask = torch.zeros(len(lengths), 1, 1, seq_len)
    for b, n in enumerate(lengths):
        mask[b, 0, 0, :n] = 1.0
    return mask


def ex2_wrong_longest(lengths, seq_len):
    T = max(lengths)
    real = torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]
    return real.view(len(lengths), 1, 1, T)


def ex2_wrong_query_axis(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]
    return real[:, None, :, None]  # (B, 1, seq_len, 1)


def ex2_wrong_left_padding(lengths, seq_len):
    rows = [[j >= seq_len - n for j in range(seq_len)] for n in lengths]
    return torch.tensor(rows).view(len(lengths), 1, 1, seq_len)


def ex2_wrong_no_column(lengths, seq_len):
    real = torch.arange(seq_len) < torch.tensor(lengths)
    return real.reshape(-1, 1, 1, seq_len)


def ex2_wrong_one_based(lengths, seq_len):
    positions = torch.arange(1, seq_len + 1)
    real = positions[None, :] < torch.tensor(lengths)[:, None]
    return real[:, None, None, :]


def ex2_wrong_less_equal_unsqueeze(lengths, seq_len):
    lens = torch.tensor(lengths, dtype=torch.float64)
    real = torch.arange(seq_len, dtype=torch.float64) <= lens.unsqueeze(-1)
    return real.unsqueeze(1).unsqueeze(1)


def ex2_right_lists(lengths, seq_len):
    rows = [[j < n for j in range(seq_len)] for n in lengths]
    return torch.tensor(rows, dtype=torch.bool).view(len(lengths), 1, 1, seq_len)


def ex2_right_stack(lengths, seq_len):
    masks = [torch.arange(seq_len) < n for n in lengths]
    return torch.stack(masks).reshape(len(lengths), 1, 1, -1)


def ex2_right_fill(lengths, seq_len):
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, ..., :n] = True
    return mask


# --- Exercise 3: my_masked_attention(q, k, v, mask) --------------------------------------------


def _scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def ex3_wrong_minus_inf(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex3_wrong_minus_1e9(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask == 0, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex3_wrong_not_zeroed(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def ex3_wrong_polarity(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)
    return weights @ v, weights


def ex3_wrong_mask_after_softmax(q, k, v, mask):
    weights = torch.softmax(_scores(q, k), dim=-1) * mask
    return weights @ v, weights


def ex3_wrong_renormalise_nan(q, k, v, mask):
    weights = torch.softmax(_scores(q, k), dim=-1) * mask
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v, weights


def ex3_wrong_add_mask(q, k, v, mask):
    scores = _scores(q, k) + mask.to(q.dtype)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex3_wrong_no_scale(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1)).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0)
    return weights @ v, weights


def ex3_wrong_k_dot_t(q, k, v, mask):
    scores = (q @ k.T / math.sqrt(q.shape[-1])).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0)
    return weights @ v, weights


def ex3_wrong_log_mask(q, k, v, mask):
    scores = _scores(q, k) + torch.log(mask.to(q.dtype))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex3_wrong_float32_min(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def ex3_wrong_float64_minus_1e9(q, k, v, mask):
    scores = _scores(q.double(), k.double()).masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v.double()).to(q.dtype), weights.to(q.dtype)


def ex3_wrong_softmax_dim_minus2(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-2).masked_fill(~mask, 0.0)
    return weights @ v, weights


def ex3_right_nan_to_num(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask.logical_not(), -math.inf)
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ v, weights


def ex3_right_where_float32(q, k, v, mask):
    scores = torch.matmul(q.float(), k.float().mT) * q.shape[-1] ** -0.5
    scores = torch.where(mask, scores, torch.tensor(-3.0e38))
    weights = torch.where(mask, torch.softmax(scores, dim=-1), torch.tensor(0.0))
    out = weights @ v.float()
    return out.to(q.dtype), weights.to(q.dtype)


def ex3_right_manual(q, k, v, mask):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(k.shape[-1])
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
    total = e.sum(dim=-1, keepdim=True)
    weights = torch.where(total > 0, e / total, torch.zeros_like(e))
    return weights @ v, weights


E1, E2, E3 = "ex1_cached_causal_mask", "ex2_padding_mask", "ex3_masked_attention"

ENTRIES = [
    Entry(
        E1,
        "tril without an offset: queries at the first positions",
        ex1_wrong_no_offset,
        named=("placed the new queries at positions 0 … T_q − 1, ignoring the cached keys"),
    ),
    Entry(
        E1,
        "triu instead of tril",
        ex1_wrong_triu,
        named=("kept the upper triangle: each query sees itself and the keys after it"),
    ),
    Entry(
        E1,
        "left out the diagonal (each query's own key)",
        ex1_wrong_no_diagonal,
        named="left out the diagonal: a query may not attend to its own key",
    ),
    Entry(
        E1,
        "offset one too large",
        ex1_wrong_offset_plus_one,
        named="let each query see one key too many, the one just after its position",
    ),
    Entry(
        E1,
        "True = blocked",
        ex1_wrong_polarity,
        named="wrote True for the keys a query may not see (True = blocked)",
    ),
    Entry(
        E1,
        "a float mask of 0s and 1s",
        ex1_wrong_float,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E1,
        "the first T_q rows of the square mask",
        ex1_wrong_first_rows,
        named=("placed the new queries at positions 0 … T_q − 1, ignoring the cached keys"),
    ),
    Entry(
        E1,
        "offset with the wrong sign",
        ex1_wrong_offset_sign,
        named="moved the border the wrong way, by T_q − T_k instead of T_k − T_q",
    ),
    Entry(
        E1,
        "< instead of <=",
        ex1_wrong_strict_less,
        named="left out the diagonal: a query may not attend to its own key",
    ),
    Entry(
        E1,
        "returned the whole (T_k, T_k) mask",
        ex1_wrong_whole_square,
        named=("returned the whole (T_k, T_k) mask, not the rows of the T_q new queries"),
    ),
    Entry(
        E1,
        "keys on the rows: (T_k, T_q)",
        ex1_wrong_transposed,
        named="put the keys in the rows and the queries in the columns",
    ),
    Entry(
        E1,
        "a loop filling a long tensor with 1s",
        ex1_wrong_loop_long,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(E1, "tril of ones with the offset, then .bool()", ex1_right_tril_bool, right=True),
    Entry(E1, "last T_q rows of the square mask", ex1_right_last_rows, right=True),
    Entry(E1, "nested lists of comparisons", ex1_right_lists, right=True),
    Entry(
        E2,
        "<= instead of <",
        ex2_wrong_less_equal,
        named=(
            "compared with <= instead of <: the position just after each sentence counts as real"
        ),
    ),
    Entry(
        E2,
        "left it (B, seq_len)",
        ex2_wrong_two_dims,
        named="returned the (B, seq_len) table without the two size-1 dimensions",
    ),
    Entry(
        E2,
        "only one unsqueeze: (B, 1, seq_len)",
        ex2_wrong_three_dims,
        named="inserted only one size-1 dimension: the mask is (B, 1, seq_len)",
    ),
    Entry(
        E2,
        "True at the pads",
        ex2_wrong_polarity,
        named="wrote True for the padding (True = ignore this key)",
    ),
    Entry(
        E2,
        "a float mask filled in a loop",
        ex2_wrong_float,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E2,
        "width max(lengths) instead of seq_len",
        ex2_wrong_longest,
        named="made the mask as wide as the longest sentence instead of seq_len",
    ),
    Entry(
        E2,
        "put the positions on the query axis (B, 1, seq_len, 1)",
        ex2_wrong_query_axis,
        named="put the positions in the query dimension, (B, 1, seq_len, 1)",
    ),
    Entry(
        E2,
        "padded on the left",
        ex2_wrong_left_padding,
        named="put the real tokens at the end of each row (padding on the left)",
    ),
    Entry(
        E2,
        "compared without a column for the lengths",
        ex2_wrong_no_column,
        named=("compared the positions with the lengths while both lay along the same dimension"),
    ),
    Entry(
        E2,
        "positions counted from 1",
        ex2_wrong_one_based,
        named=("counted the positions from 1: the last real token is marked as padding"),
    ),
    Entry(
        E2,
        "float64 lengths, and <=",
        ex2_wrong_less_equal_unsqueeze,
        named=(
            "compared with <= instead of <: the position just after each sentence counts as real"
        ),
    ),
    Entry(E2, "lists of comparisons", ex2_right_lists, right=True),
    Entry(E2, "stacked rows, reshape", ex2_right_stack, right=True),
    Entry(E2, "filled a bool tensor in a loop", ex2_right_fill, right=True),
    Entry(
        E3,
        "filled with -inf: NaN for empty rows",
        ex3_wrong_minus_inf,
        named=(
            "let a row that may attend to nothing divide 0 by 0 (a −inf "
            "fill, or dividing by the row's sum after zeroing)"
        ),
    ),
    Entry(
        E3,
        "filled with -1e9",
        ex3_wrong_minus_1e9,
        named=("filled the blocked scores with −1e9 and never set the blocked weights to 0"),
    ),
    Entry(
        E3,
        "finfo.min but did not zero the blocked weights",
        ex3_wrong_not_zeroed,
        named="filled the blocked scores but never set the blocked weights to 0",
    ),
    Entry(
        E3,
        "blocked the allowed pairs (polarity)",
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
        "masked after the softmax and renormalised",
        ex3_wrong_renormalise_nan,
        named=(
            "let a row that may attend to nothing divide 0 by 0 (a −inf "
            "fill, or dividing by the row's sum after zeroing)"
        ),
    ),
    Entry(
        E3,
        "added the mask to the scores",
        ex3_wrong_add_mask,
        named=("added the bool mask to the scores, as 1 where allowed and 0 where blocked"),
    ),
    Entry(E3, "forgot the scale", ex3_wrong_no_scale, named="did not scale the scores"),
    Entry(
        E3,
        "k.T for the keys",
        ex3_wrong_k_dot_t,
        named=("transposed k with .T, which reverses every dimension of a batched tensor"),
    ),
    Entry(
        E3,
        "added log(mask) to the scores",
        ex3_wrong_log_mask,
        named=(
            "let a row that may attend to nothing divide 0 by 0 (a −inf "
            "fill, or dividing by the row's sum after zeroing)"
        ),
    ),
    Entry(
        E3,
        "float32's smallest value for every dtype",
        ex3_wrong_float32_min,
        named=(
            "broke float16: a fill it cannot hold (−1e9, float32's "
            "smallest value) or float32 mixed into its scores"
        ),
    ),
    Entry(
        E3,
        "float64 and -1e9",
        ex3_wrong_float64_minus_1e9,
        named="filled the blocked scores but never set the blocked weights to 0",
    ),
    Entry(
        E3,
        "softmax over the queries",
        ex3_wrong_softmax_dim_minus2,
        named="took the softmax over the queries (dim −2) instead of over the keys",
    ),
    Entry(E3, "-inf, then NaN replaced by 0", ex3_right_nan_to_num, right=True),
    Entry(E3, "float32 with torch.where, cast back", ex3_right_where_float32, right=True),
    Entry(E3, "einsum and a softmax by hand", ex3_right_manual, right=True),
]
