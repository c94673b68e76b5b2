"""Corpus b for notebook 07 (masking), written blind from the learner's edition."""

import math

import torch

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ------------------------------------------------------------ Exercise 1: cached_causal_mask


def ex1_wrong_plain_tril(T_q, T_k):
    return torch.ones(T_q, T_k, dtype=torch.bool).tril()


def ex1_wrong_blocked_polarity(T_q, T_k):
    # True where the key is in the future
    return torch.ones(T_q, T_k, dtype=torch.bool).triu(diagonal=T_k - T_q + 1)


def ex1_wrong_offset_sign(T_q, T_k):
    return torch.tril(torch.ones(T_q, T_k, dtype=torch.bool), diagonal=T_q - T_k)


def ex1_wrong_strict(T_q, T_k):
    q_pos = torch.arange(T_k - T_q, T_k).unsqueeze(1)
    k_pos = torch.arange(T_k).unsqueeze(0)
    return k_pos < q_pos


def ex1_wrong_float(T_q, T_k):
    return torch.ones(T_q, T_k).tril(diagonal=T_k - T_q)


def ex1_wrong_offset_off_by_one(T_q, T_k):
    q_pos = torch.arange(T_k - T_q + 1, T_k + 1)[:, None]
    return torch.arange(T_k)[None, :] <= q_pos


def ex1_wrong_first_rows(T_q, T_k):
    square = torch.tril(torch.ones(T_k, T_k)).bool()
    return square[:T_q]


def ex1_wrong_additive(T_q, T_k):
    allowed = torch.ones(T_q, T_k, dtype=torch.bool).tril(T_k - T_q)
    return torch.zeros(T_q, T_k).masked_fill(~allowed, float("-inf"))


def ex1_wrong_loop_bound(T_q, T_k):
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        for j in range(T_q):  # the keys
            mask[i, j] = j <= i + T_k - T_q
    return mask


def ex1_wrong_calls_causal_mask(T_q, T_k):
    return attnlib.causal_mask(T_q, T_k)


def ex1_right_tril_offset(T_q, T_k):
    return torch.tril(torch.ones((T_q, T_k), dtype=torch.bool), diagonal=T_k - T_q)


def ex1_right_loop(T_q, T_k):
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        pos = T_k - T_q + i
        mask[i, : pos + 1] = True
    return mask


def ex1_right_last_rows(T_q, T_k):
    return torch.ones(T_k, T_k, dtype=torch.bool).tril()[T_k - T_q :].clone()


# -------------------------------------------------------------- Exercise 2: my_padding_mask


def ex2_wrong_inverted(lengths, seq_len):
    pads = torch.arange(seq_len)[None, :] >= torch.tensor(lengths)[:, None]
    return pads[:, None, None, :]


def ex2_wrong_two_dims(lengths, seq_len):
    return torch.arange(seq_len).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


def ex2_wrong_query_axis(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]
    return real[:, None, :, None]


def ex2_wrong_less_equal(lengths, seq_len):
    real = torch.arange(seq_len)[None, :] <= torch.tensor(lengths)[:, None]
    return real.view(len(lengths), 1, 1, seq_len)


def ex2_wrong_longest_length(lengths, seq_len):
    T = max(lengths)
    real = torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]
    return real[:, None, None, :]


def ex2_wrong_left_padding(lengths, seq_len):
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, 0, 0, seq_len - n :] = True
    return mask


def ex2_wrong_long_dtype(lengths, seq_len):
    real = (torch.arange(seq_len)[None, :] < torch.tensor(lengths)[:, None]).long()
    return real.reshape(len(lengths), 1, 1, seq_len)


def ex2_wrong_transposed_view(lengths, seq_len):
    real = torch.arange(seq_len)[:, None] < torch.tensor(lengths)[None, :]  # (seq_len, B)
    return real.reshape(len(lengths), 1, 1, seq_len)


def ex2_wrong_calls_padding_mask(lengths, seq_len):
    return attnlib.padding_mask(lengths, seq_len)


def ex2_right_loop(lengths, seq_len):
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, n in enumerate(lengths):
        mask[b, ..., :n] = True
    return mask


def ex2_right_stack(lengths, seq_len):
    rows = [torch.tensor([True] * n + [False] * (seq_len - n)) for n in lengths]
    return torch.stack(rows).view(len(lengths), 1, 1, seq_len)


def ex2_right_lt(lengths, seq_len):
    lens = torch.as_tensor(lengths, dtype=torch.long).reshape(-1, 1, 1, 1)
    return torch.arange(seq_len).reshape(1, 1, 1, -1).lt(lens)


# ---------------------------------------------------------- Exercise 3: my_masked_attention


def _scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def ex3_wrong_minus_inf(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex3_wrong_minus_1e9(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask == 0, -1e9)
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def ex3_wrong_no_zeroing(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def ex3_wrong_polarity(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask, torch.finfo(q.dtype).min)  # fill where mask is set
    weights = torch.softmax(scores, dim=-1).masked_fill(mask, 0.0)
    return weights @ v, weights


def ex3_wrong_zero_after_softmax(q, k, v, mask):
    weights = torch.softmax(_scores(q, k), dim=-1) * mask
    return weights @ v, weights


def ex3_wrong_scores_times_mask(q, k, v, mask):
    weights = torch.softmax(_scores(q, k) * mask, dim=-1)
    return weights @ v, weights


def ex3_wrong_float32_min(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0)
    return weights @ v, weights


def ex3_wrong_renormalise(q, k, v, mask):
    e = torch.exp(_scores(q, k) - _scores(q, k).amax(-1, keepdim=True)) * mask
    weights = e / e.sum(dim=-1, keepdim=True)  # 0 / 0 in an empty row
    return weights @ v, weights


def ex3_wrong_no_scale(q, k, v, mask):
    scores = (q @ k.transpose(-2, -1)).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def ex3_wrong_mask_2d_only(q, k, v, mask):
    scores = _scores(q, k)
    m = mask[(None,) * (scores.dim() - 2)]  # lift the (T_q, T_k) mask to the batch dims
    scores = scores.masked_fill(~m, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~m, 0.0)
    return weights @ v, weights


def ex3_right_inf_then_nan_to_num(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask.logical_not(), -torch.inf)
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ v, weights


def ex3_right_float32_softmax(q, k, v, mask):
    scores = (q.float() @ k.float().mT) / math.sqrt(q.shape[-1])
    scores = torch.where(mask, scores, torch.finfo(torch.float32).min)
    weights = torch.where(mask, scores.softmax(-1), 0.0).to(q.dtype)
    return weights @ v, weights


def ex3_right_manual_softmax(q, k, v, mask):
    scores = _scores(q, k)
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
    total = e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)
    weights = e / total
    return weights @ v, weights


E1, E2, E3 = "ex1_cached_causal_mask", "ex2_padding_mask", "ex3_masked_attention"
ENTRIES = [
    Entry(
        E1,
        "tril of (T_q, T_k): the queries at the first positions",
        ex1_wrong_plain_tril,
        named=("placed the new queries at positions 0 … T_q − 1, ignoring the cached keys"),
    ),
    Entry(
        E1,
        "True where blocked (the future)",
        ex1_wrong_blocked_polarity,
        named="wrote True for the keys a query may not see (True = blocked)",
    ),
    Entry(
        E1,
        "the diagonal offset with the wrong sign",
        ex1_wrong_offset_sign,
        named="moved the border the wrong way, by T_q − T_k instead of T_k − T_q",
    ),
    Entry(
        E1,
        "< instead of <=: the query cannot see itself",
        ex1_wrong_strict,
        named="left out the diagonal: a query may not attend to its own key",
    ),
    Entry(
        E1,
        "a float 0/1 mask, not bool",
        ex1_wrong_float,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E1,
        "query positions shifted by one",
        ex1_wrong_offset_off_by_one,
        named="let each query see one key too many, the one just after its position",
    ),
    Entry(
        E1,
        "took the first T_q rows of the square mask",
        ex1_wrong_first_rows,
        named=("placed the new queries at positions 0 … T_q − 1, ignoring the cached keys"),
    ),
    Entry(
        E1,
        "an additive 0 / -inf mask",
        ex1_wrong_additive,
        named=(
            "returned an additive float mask (0 where allowed, −inf where blocked), not a bool one"
        ),
    ),
    Entry(
        E1,
        "the inner loop runs over T_q keys only",
        ex1_wrong_loop_bound,
        named=("looked only at the first T_q keys: the keys from T_q on are never allowed"),
    ),
    Entry(E1, "called attnlib.causal_mask", ex1_wrong_calls_causal_mask, named=REFUSED),
    Entry(E1, "tril with diagonal T_k - T_q", ex1_right_tril_offset, right=True),
    Entry(E1, "a loop filling each row up to its position", ex1_right_loop, right=True),
    Entry(E1, "the last T_q rows of the square mask", ex1_right_last_rows, right=True),
    Entry(
        E2,
        "True at the pads",
        ex2_wrong_inverted,
        named="wrote True for the padding (True = ignore this key)",
    ),
    Entry(
        E2,
        "returned (B, seq_len), no singleton dims",
        ex2_wrong_two_dims,
        named="returned the (B, seq_len) table without the two size-1 dimensions",
    ),
    Entry(
        E2,
        "put the lengths on the query axis: (B, 1, T, 1)",
        ex2_wrong_query_axis,
        named="put the positions in the query dimension, (B, 1, seq_len, 1)",
    ),
    Entry(
        E2,
        "<= length: the first pad counted as real",
        ex2_wrong_less_equal,
        named=(
            "compared with <= instead of <: the position just after each sentence counts as real"
        ),
    ),
    Entry(
        E2,
        "width max(lengths) instead of seq_len",
        ex2_wrong_longest_length,
        named="made the mask as wide as the longest sentence instead of seq_len",
    ),
    Entry(
        E2,
        "real tokens at the end (left padding)",
        ex2_wrong_left_padding,
        named="put the real tokens at the end of each row (padding on the left)",
    ),
    Entry(
        E2,
        "returned a 0/1 long tensor",
        ex2_wrong_long_dtype,
        named="returned a mask of numbers (0 and 1), not a bool tensor",
    ),
    Entry(
        E2,
        "built (seq_len, B) and reshaped it to (B, …)",
        ex2_wrong_transposed_view,
        named=(
            "compared the lengths along the rows and the positions along the columns: (seq_len, B)"
        ),
    ),
    Entry(E2, "called attnlib.padding_mask", ex2_wrong_calls_padding_mask, named=REFUSED),
    Entry(E2, "a loop setting each row's first n", ex2_right_loop, right=True),
    Entry(E2, "a stack of Python lists of bools", ex2_right_stack, right=True),
    Entry(E2, "arange(...).lt(lengths) with 4-D shapes", ex2_right_lt, right=True),
    Entry(
        E3,
        "filled with -inf: NaN in empty rows",
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
        "finfo.min fill, empty rows left uniform",
        ex3_wrong_no_zeroing,
        named="filled the blocked scores but never set the blocked weights to 0",
    ),
    Entry(
        E3,
        "filled where the mask is True",
        ex3_wrong_polarity,
        named="blocked the pairs where the mask is True (True = blocked)",
    ),
    Entry(
        E3,
        "zeroed blocked weights after the softmax",
        ex3_wrong_zero_after_softmax,
        named=(
            "only set the blocked weights to 0 after the softmax, without masking the scores first"
        ),
    ),
    Entry(
        E3,
        "multiplied the scores by the mask",
        ex3_wrong_scores_times_mask,
        named="set the blocked scores to 0 (or multiplied the scores by the mask)",
    ),
    Entry(
        E3,
        "float32's finfo.min also for float16",
        ex3_wrong_float32_min,
        named=(
            "broke float16: a fill it cannot hold (−1e9, float32's "
            "smallest value) or float32 mixed into its scores"
        ),
    ),
    Entry(
        E3,
        "exp times mask over its sum: 0/0 in empty rows",
        ex3_wrong_renormalise,
        named=(
            "let a row that may attend to nothing divide 0 by 0 (a −inf "
            "fill, or dividing by the row's sum after zeroing)"
        ),
    ),
    Entry(E3, "forgot 1/sqrt(d_k)", ex3_wrong_no_scale, named="did not scale the scores"),
    Entry(
        E3,
        "lifted the mask as if it were always (T_q, T_k)",
        ex3_wrong_mask_2d_only,
        named=("gave the mask two new leading dimensions, as if it were always (T_q, T_k)"),
    ),
    Entry(E3, "-inf fill, then NaN weights set to 0", ex3_right_inf_then_nan_to_num, right=True),
    Entry(E3, "scores and softmax in float32, torch.where", ex3_right_float32_softmax, right=True),
    Entry(E3, "softmax by hand, mask and a tiny floor", ex3_right_manual_softmax, right=True),
]
