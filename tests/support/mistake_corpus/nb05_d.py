"""Learner answers to notebook 05's exercises (multi-head attention), corpus d, written blind:
heads split or joined by a reshape without a transpose, `.T` on a batch, blocks of W^O taken
in the wrong order, crashes."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_my_split_qkv", "ex2_my_head_contributions", "ex3_my_multi_head_attention"

# ------------------------------------------ Exercise 1: my_split_qkv


def ex1_wrong_reshape_no_transpose(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.split(C3 // 3, dim=-1)
    return tuple(t.reshape(B, num_heads, T, D) for t in (q, k, v))


def ex1_wrong_heads_first(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    parts = qkv.view(B, T, num_heads, 3, D).permute(3, 0, 2, 1, 4)  # (3, B, H, T, D)
    return parts[0], parts[1], parts[2]


def ex1_wrong_float_size(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 / 3
    q, k, v = qkv.split(int(C), dim=-1)
    return tuple(t.view(B, T, num_heads, C / num_heads).transpose(1, 2) for t in (q, k, v))


def ex1_right_unflatten(qkv, num_heads):
    q, k, v = qkv.chunk(3, dim=-1)
    return tuple(t.unflatten(-1, (num_heads, -1)).transpose(-3, -2) for t in (q, k, v))


def ex1_right_one_view(qkv, num_heads):
    B, T, C3 = qkv.shape
    parts = qkv.view(B, T, 3, num_heads, C3 // (3 * num_heads)).permute(2, 0, 3, 1, 4)
    return parts[0], parts[1], parts[2]


# ------------------------------------------ Exercise 2: my_head_contributions


def ex2_wrong_concat_reshape_no_transpose(heads, w_o):
    B, H, T, D = heads.shape
    parts = []
    for i in range(H):
        only = torch.zeros_like(heads)
        only[:, i] = heads[:, i]
        concat = only.reshape(B, T, H * D)  # (B, T, H·D)
        parts.append(concat @ w_o)
    return torch.stack(parts, dim=1)


def ex2_wrong_w_o_blocks_swapped(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    blocks = w_o.reshape(D, H, w_o.shape[-1]).transpose(0, 1)  # (H, D, C)
    return heads @ blocks


def ex2_wrong_w_o_columns(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    C = w_o.shape[-1]
    blocks = w_o.T.reshape(H, D, C)  # (H, D, C)
    return heads @ blocks


def ex2_wrong_dot_t_batch(heads, w_o):
    H, D = heads.shape[1], heads.shape[3]
    blocks = w_o.view(H, D, -1)
    return (blocks.T @ heads.T).T


def ex2_wrong_sums_heads(heads, w_o):
    B, H, T, D = heads.shape
    concat = heads.transpose(1, 2).reshape(B, T, H * D)
    return (concat @ w_o).unsqueeze(1).expand(B, H, T, w_o.shape[-1])


def ex2_right_einsum(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return torch.einsum("bhtd,hdc->bhtc", heads, w_o.unflatten(0, (H, D)))


def ex2_right_loop_slices(heads, w_o):
    D = heads.shape[-1]
    parts = [heads[:, i] @ w_o[i * D : (i + 1) * D] for i in range(heads.shape[1])]
    return torch.stack(parts, dim=1)


# ------------------------------------------ Exercise 3: my_multi_head_attention


def _split(t, H):
    B, T, C = t.shape
    return t.view(B, T, H, C // H).transpose(1, 2)


def ex3_wrong_merge_no_transpose(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    q, k, v = _split(y @ w_q, num_heads), _split(x @ w_k, num_heads), _split(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C // num_heads), dim=-1)
    out = (weights @ v).reshape(B, T_y, C)
    return out @ w_o, weights


def ex3_wrong_split_no_transpose(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    T_x, H, D = x.shape[1], num_heads, C // num_heads
    q = (y @ w_q).reshape(B, H, T_y, D)
    k = (x @ w_k).reshape(B, H, T_x, D)
    v = (x @ w_v).reshape(B, H, T_x, D)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(B, T_y, C)
    return out @ w_o, weights


def ex3_wrong_dot_t_batch(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    q, k, v = _split(y @ w_q, num_heads), _split(x @ w_k, num_heads), _split(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.T / math.sqrt(C // num_heads), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(B, T_y, C)
    return out @ w_o, weights


def ex3_wrong_view_after_transpose(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    q, k, v = _split(y @ w_q, num_heads), _split(x @ w_k, num_heads), _split(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C // num_heads), dim=-1)
    out = (weights @ v).transpose(1, 2).view(B, T_y, C)
    return out @ w_o, weights


def ex3_wrong_scale_by_c(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    q, k, v = _split(y @ w_q, num_heads), _split(x @ w_k, num_heads), _split(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(B, T_y, C)
    return out @ w_o, weights


def ex3_right_einsum(y, x, w_q, w_k, w_v, w_o, num_heads):
    H = num_heads
    q = (y @ w_q).unflatten(-1, (H, -1))  # (B, T_y, H, D)
    k = (x @ w_k).unflatten(-1, (H, -1))
    v = (x @ w_v).unflatten(-1, (H, -1))
    scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(q.shape[-1])
    weights = scores.softmax(dim=-1)
    out = torch.einsum("bhts,bshd->bthd", weights, v).flatten(-2)
    return out @ w_o, weights


def ex3_right_loop_heads(y, x, w_q, w_k, w_v, w_o, num_heads):
    C = y.shape[-1]
    D = C // num_heads
    outs, ws = [], []
    for i in range(num_heads):
        cols = slice(i * D, (i + 1) * D)
        q, k, v = y @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols]
        w = torch.softmax(q @ k.mT / D**0.5, dim=-1)
        outs.append(w @ v)
        ws.append(w)
    return torch.cat(outs, dim=-1) @ w_o, torch.stack(ws, dim=1)


ENTRIES = [
    Entry(
        E1,
        "reshape straight to (B, H, T, D)",
        ex1_wrong_reshape_no_transpose,
        named="cut each part straight to (B, H, T, D), without the transpose",
    ),
    Entry(
        E1,
        "viewed as (B, T, H, 3, D): heads before q/k/v",
        ex1_wrong_heads_first,
        named=("cut the fused width into heads before separating the queries, keys and values"),
    ),
    Entry(
        E1,
        "C = C3 / 3, a float size in view",
        ex1_wrong_float_size,
        named=("computed a size with /, which gives a float, where a shape needs a whole number"),
    ),
    Entry(E1, "chunk, unflatten and transpose", ex1_right_unflatten, right=True),
    Entry(E1, "one view (B, T, 3, H, D) and permute", ex1_right_one_view, right=True),
    Entry(
        E2,
        "one head kept, then concat by reshape (no transpose)",
        ex2_wrong_concat_reshape_no_transpose,
        named=(
            "joined the heads by reading (B, H, T, D) straight as (B, T, H·D), "
            "without the transpose"
        ),
    ),
    Entry(
        E2,
        "w_o viewed as (D, H, C), then swapped",
        ex2_wrong_w_o_blocks_swapped,
        named=(
            "gave head h every H-th row of W^O (rows h, h + H, …) instead of rows hD to (h+1)D − 1"
        ),
    ),
    Entry(
        E2,
        "w_o.T reshaped to (H, D, C)",
        ex2_wrong_w_o_columns,
        named="cut W^O transposed into the heads' blocks",
    ),
    Entry(
        E2,
        "(blocks.T @ heads.T).T (reverses a batch)",
        ex2_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(
        E2,
        "the whole output copied to every head",
        ex2_wrong_sums_heads,
        named="gave every head the whole output instead of its own part",
    ),
    Entry(E2, "einsum with w_o unflattened to (H, D, C)", ex2_right_einsum, right=True),
    Entry(E2, "a loop over the row blocks of w_o", ex2_right_loop_slices, right=True),
    Entry(
        E3,
        "merged by reshape without a transpose",
        ex3_wrong_merge_no_transpose,
        named=(
            "joined the heads by reading (B, H, T, D) straight as (B, T, C), without the transpose"
        ),
    ),
    Entry(
        E3,
        "split by reshape without a transpose",
        ex3_wrong_split_no_transpose,
        named=(
            "split into heads by reading (B, T, C) straight as (B, H, T, D), without the transpose"
        ),
    ),
    Entry(
        E3,
        "q @ k.T on (B, H, T, D) (reverses a batch)",
        ex3_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(
        E3,
        "view after transpose: not contiguous",
        ex3_wrong_view_after_transpose,
        named="joined the heads with view after the transpose",
    ),
    Entry(
        E3,
        "scaled by sqrt(C), not sqrt(D)",
        ex3_wrong_scale_by_c,
        named=("divided the scores by √C, the model width, instead of √D, one head's width"),
    ),
    Entry(E3, "einsum with (B, T, H, D) tensors", ex3_right_einsum, right=True),
    Entry(E3, "a loop over the heads' columns", ex3_right_loop_heads, right=True),
]
