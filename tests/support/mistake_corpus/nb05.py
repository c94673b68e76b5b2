"""Learner answers to notebook 05's exercises (multi-head attention), written blind."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

# --- Exercise 1: my_split_qkv(qkv, num_heads) -------------------------------------------------


def ex1_wrong_plain_view(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // num_heads
    q, k, v = qkv.split(C, dim=-1)
    return (
        q.reshape(B, num_heads, T, D),
        k.reshape(B, num_heads, T, D),
        v.reshape(B, num_heads, T, D),
    )


def ex1_wrong_heads_first(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, num_heads, 3, D).permute(3, 0, 2, 1, 4)
    return q, k, v


def ex1_wrong_chunk_time(qkv, num_heads):
    B, _T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.chunk(3, dim=1)
    return tuple(t.reshape(B, -1, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_forgot_three(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // num_heads
    q, k, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 3, 1, 4)
    return q, k, v


def ex1_wrong_no_transpose(qkv, num_heads):
    B, T, _ = qkv.shape
    q, k, v = qkv.chunk(3, dim=-1)
    return tuple(t.view(B, T, num_heads, -1) for t in (q, k, v))


def ex1_wrong_permute_keeps_t(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 1, 3, 4)
    return q, k, v


def ex1_wrong_head_dims_strided(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // num_heads
    out = []
    for t in qkv.split(C, dim=-1):
        out.append(t.reshape(B, T, D, num_heads).permute(0, 3, 1, 2))
    return tuple(out)


def ex1_wrong_float_division(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 / 3 / num_heads
    q, k, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 3, 1, 4)
    return q, k, v


def ex1_wrong_split_size(qkv, num_heads):
    B, T, _C3 = qkv.shape
    q, k, v = torch.split(qkv, 3, dim=-1)
    D = q.shape[-1] // num_heads
    return tuple(t.view(B, T, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_order_kqv(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    k, q, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 3, 1, 4)
    return q, k, v


def ex1_wrong_float64_plain_view(qkv, num_heads):
    x = qkv.double()
    B, T, C3 = x.shape
    D = C3 // 3 // num_heads
    q, k, v = x.chunk(3, dim=-1)
    return tuple(t.reshape(B, num_heads, T, D).to(qkv.dtype) for t in (q, k, v))


def ex1_wrong_last_two_swapped(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 3, 4, 1)
    return q, k, v


def ex1_right_unflatten_unbind(qkv, num_heads):
    C = qkv.shape[-1] // 3
    parts = qkv.unflatten(-1, (3, num_heads, C // num_heads))  # (B, T, 3, H, D)
    return parts.movedim(2, 0).transpose(2, 3).unbind(0)


def ex1_right_loop(qkv, num_heads):
    C = qkv.size(-1) // 3
    D = C // num_heads
    result = []
    for j in range(3):
        block = qkv[..., j * C : (j + 1) * C]
        heads = [block[..., i * D : (i + 1) * D] for i in range(num_heads)]
        result.append(torch.stack(heads, dim=1))
    return tuple(result)


def ex1_right_split_reshape(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = torch.split(qkv, [C, C, C], dim=2)
    return tuple(t.reshape(B, T, num_heads, C // num_heads).permute(0, 2, 1, 3) for t in (q, k, v))


# --- Exercise 2: my_head_contributions(heads, w_o) ---------------------------------------------


def ex2_wrong_view_d_h(heads, w_o):
    _B, H, _T, D = heads.shape
    blocks = w_o.reshape(D, H, -1).permute(1, 0, 2)  # (H, D, C)
    return heads @ blocks


def ex2_wrong_columns(heads, w_o):
    H, D = heads.shape[1], heads.shape[3]
    return torch.stack([heads[:, i] @ w_o[:, i * D : (i + 1) * D].T for i in range(H)], dim=1)


def ex2_wrong_split_evenly(heads, w_o):
    B, H, T, D = heads.shape
    concat = heads.transpose(1, 2).reshape(B, T, H * D)
    out = concat @ w_o
    return (out / H).unsqueeze(1).expand(B, H, T, w_o.shape[1])


def ex2_wrong_linear_layout(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return heads @ w_o.t().reshape(H, D, -1)  # W^O as nn.Linear keeps it, (out, in)


def ex2_right_transposed_twice(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return heads @ w_o.T.reshape(-1, H, D).permute(1, 2, 0)


def ex2_wrong_rows_off_by_d(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    parts = [heads[:, i] @ w_o[i : i + D] for i in range(H)]
    return torch.stack(parts, dim=1)


def ex2_wrong_stack_dim0(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return torch.stack([heads[:, i] @ w_o[i * D : (i + 1) * D] for i in range(H)])


def ex2_wrong_returned_total(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return (heads @ w_o.view(H, D, -1)).sum(dim=1)


def ex2_wrong_zeroed_merge_no_transpose(heads, w_o):
    B, H, T, D = heads.shape
    contributions = []
    for i in range(H):
        only_i = torch.zeros_like(heads)
        only_i[:, i] = heads[:, i]
        contributions.append(only_i.reshape(B, T, H * D) @ w_o)
    return torch.stack(contributions, dim=1)


def ex2_wrong_no_clone(heads, w_o):
    B, H, T, D = heads.shape
    contributions = []
    for i in range(H):
        only_i = heads  # meant a copy
        for j in range(H):
            if j != i:
                only_i[:, j] = 0
        contributions.append(only_i.transpose(1, 2).reshape(B, T, H * D) @ w_o)
    return torch.stack(contributions, dim=1)


def ex2_wrong_einsum_dh(heads, w_o):
    _B, H, _T, D = heads.shape
    return torch.einsum("bhtd,dhc->bhtc", heads, w_o.view(D, H, -1))


def ex2_wrong_float64_columns(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    w = w_o.double()
    parts = [heads[:, i].double() @ w[:, i * D : (i + 1) * D].T for i in range(H)]
    return torch.stack(parts, dim=1).to(heads.dtype)


def ex2_right_einsum(heads, w_o):
    H, D = heads.shape[1], heads.shape[3]
    return torch.einsum("bhtd,hdc->bhtc", heads, w_o.reshape(H, D, w_o.shape[-1]))


def ex2_right_loop_rows(heads, w_o):
    H, D = heads.size(1), heads.size(-1)
    parts = []
    for i in range(H):
        rows = w_o[i * D : (i + 1) * D, :]  # (D, C)
        parts.append(torch.matmul(heads[:, i], rows))
    return torch.stack(parts, dim=1)


def ex2_right_zero_others(heads, w_o):
    B, H, T, D = heads.shape
    contributions = []
    for i in range(H):
        only_i = torch.zeros_like(heads, dtype=torch.float64)
        only_i[:, i] = heads[:, i]
        concat = only_i.permute(0, 2, 1, 3).reshape(B, T, H * D)
        contributions.append(concat @ w_o.double())
    return torch.stack(contributions, dim=1).to(heads.dtype)


# --- Exercise 3: my_multi_head_attention(y, x, w_q, w_k, w_v, w_o, num_heads) -----------------


def _heads(t, h):
    B, T, C = t.shape
    return t.view(B, T, h, C // h).transpose(1, 2)


def _merge(t):
    B, H, T, D = t.shape
    return t.transpose(1, 2).reshape(B, T, H * D)


def ex3_wrong_scale_c(y, x, w_q, w_k, w_v, w_o, num_heads):
    C = y.shape[-1]
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C), dim=-1)
    return _merge(weights @ v) @ w_o, weights


def ex3_wrong_plain_view_split(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    T_x = x.shape[1]
    D = C // num_heads
    q = (y @ w_q).view(B, num_heads, T_y, D)
    k = (x @ w_k).view(B, num_heads, T_x, D)
    v = (x @ w_v).view(B, num_heads, T_x, D)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return _merge(weights @ v) @ w_o, weights


def ex3_wrong_plain_merge(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    concat = (weights @ v).reshape(B, T_y, C)
    return concat @ w_o, weights


def ex3_wrong_linear_layout(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q, k, v = (_heads(t @ w.T, num_heads) for t, w in ((y, w_q), (x, w_k), (x, w_v)))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return _merge(weights @ v) @ w_o.T, weights


def ex3_wrong_self_attention(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(y @ w_k, num_heads), _heads(y @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return _merge(weights @ v) @ w_o, weights


def ex3_wrong_one_length(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T, C = y.shape
    D = C // num_heads

    def split(t):
        return t.reshape(B, T, num_heads, D).transpose(1, 2)

    q, k, v = split(y @ w_q), split(x @ w_k), split(x @ w_v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return weights.matmul(v).transpose(1, 2).reshape(B, T, C) @ w_o, weights


def ex3_wrong_no_w_o(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return _merge(weights @ v), weights


def ex3_wrong_softmax_over_heads(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=1)
    return _merge(weights @ v) @ w_o, weights


def ex3_wrong_strided_heads(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads

    def split(t):
        B, T, _C = t.shape
        return t.reshape(B, T, D, num_heads).permute(0, 3, 1, 2)

    q, k, v = split(y @ w_q), split(x @ w_k), split(x @ w_v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return _merge(weights @ v) @ w_o, weights


def ex3_wrong_averaged_weights(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return _merge(weights @ v) @ w_o, weights.mean(dim=1)


def ex3_wrong_no_scale(y, x, w_q, w_k, w_v, w_o, num_heads):
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = (q @ k.mT).softmax(-1)
    return _merge(weights @ v) @ w_o, weights


def ex3_wrong_float64_scale_c(y, x, w_q, w_k, w_v, w_o, num_heads):
    y64, x64 = y.double(), x.double()
    C = y.shape[-1]
    q = _heads(y64 @ w_q.double(), num_heads)
    k = _heads(x64 @ w_k.double(), num_heads)
    v = _heads(x64 @ w_v.double(), num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) * C**-0.5, dim=-1)
    out = _merge(weights @ v) @ w_o.double()
    return out.to(y.dtype), weights.to(y.dtype)


def ex3_wrong_k_dot_t(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(D), dim=-1)
    return _merge(weights @ v) @ w_o, weights


def ex3_right_loop_heads(y, x, w_q, w_k, w_v, w_o, num_heads):
    C = y.shape[-1]
    D = C // num_heads
    q_all, k_all, v_all = y @ w_q, x @ w_k, x @ w_v
    outs, ws = [], []
    for i in range(num_heads):
        cols = slice(i * D, (i + 1) * D)
        s = q_all[..., cols] @ k_all[..., cols].transpose(1, 2) / D**0.5
        w = torch.softmax(s, dim=-1)
        outs.append(w @ v_all[..., cols])
        ws.append(w)
    return torch.cat(outs, dim=-1) @ w_o, torch.stack(ws, dim=1)


def ex3_right_einsum(y, x, w_q, w_k, w_v, w_o, num_heads):
    D = y.shape[-1] // num_heads
    q = (y @ w_q).unflatten(-1, (num_heads, D))  # (B, T_y, H, D)
    k = (x @ w_k).unflatten(-1, (num_heads, D))
    v = (x @ w_v).unflatten(-1, (num_heads, D))
    weights = torch.einsum("bqhd,bkhd->bhqk", q, k).div(math.sqrt(D)).softmax(dim=-1)
    concat = torch.einsum("bhqk,bkhd->bqhd", weights, v).flatten(-2)
    return concat @ w_o, weights


def ex3_right_float64(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    T_x = x.shape[1]
    D = C // num_heads
    q = (y.double() @ w_q.double()).reshape(B, T_y, num_heads, D).permute(0, 2, 1, 3)
    k = (x.double() @ w_k.double()).reshape(B, T_x, num_heads, D).permute(0, 2, 1, 3)
    v = (x.double() @ w_v.double()).reshape(B, T_x, num_heads, D).permute(0, 2, 1, 3)
    s = q @ k.transpose(-1, -2) / math.sqrt(D)
    e = (s - s.amax(-1, keepdim=True)).exp()
    weights = e / e.sum(-1, keepdim=True)
    out = (weights @ v).permute(0, 2, 1, 3).reshape(B, T_y, C) @ w_o.double()
    return out.to(y.dtype), weights.to(y.dtype)


E1, E2, E3 = "ex1_my_split_qkv", "ex2_my_head_contributions", "ex3_my_multi_head_attention"

ENTRIES = [
    Entry(
        E1,
        "reshaped each third straight to (B, H, T, D)",
        ex1_wrong_plain_view,
        named="cut each part straight to (B, H, T, D), without the transpose",
    ),
    Entry(
        E1,
        "cut into heads first, then into q, k, v (H, 3, D)",
        ex1_wrong_heads_first,
        named=("cut the fused width into heads before separating the queries, keys and values"),
    ),
    Entry(
        E1,
        "chunked along the tokens instead of the width",
        ex1_wrong_chunk_time,
        named=(
            "separated the queries, keys and values along the tokens instead of along the width"
        ),
    ),
    Entry(
        E1,
        "head size from 3C / H (forgot the 3)",
        ex1_wrong_forgot_three,
        named="took the head size from the fused width, 3C / H, instead of C / H",
    ),
    Entry(
        E1,
        "forgot to move the heads before the tokens",
        ex1_wrong_no_transpose,
        named=("left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)"),
    ),
    Entry(
        E1,
        "permute left T before H",
        ex1_wrong_permute_keeps_t,
        named=("left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)"),
    ),
    Entry(
        E1,
        "cut each token into (D, H) instead of (H, D)",
        ex1_wrong_head_dims_strided,
        named=("gave head h the interleaved dims h, h + H, h + 2H, … instead of a block of D"),
    ),
    Entry(
        E1,
        "computed D with / (a float) and viewed with it",
        ex1_wrong_float_division,
        named=("computed a size with /, which gives a float, where a shape needs a whole number"),
    ),
    Entry(
        E1,
        "torch.split(qkv, 3) splits into pieces of 3",
        ex1_wrong_split_size,
        named=("gave torch.split the number of parts, 3, where it takes the size of each part"),
    ),
    Entry(
        E1,
        "unpacked the thirds as k, q, v",
        ex1_wrong_order_kqv,
        named="returned the keys as q and the queries as k",
    ),
    Entry(
        E1,
        "float64 and a plain reshape to (B, H, T, D)",
        ex1_wrong_float64_plain_view,
        named="cut each part straight to (B, H, T, D), without the transpose",
    ),
    Entry(
        E1,
        "permute gave (B, H, D, T)",
        ex1_wrong_last_two_swapped,
        named=("moved the tokens to the last dimension: (B, H, D, T) instead of (B, H, T, D)"),
    ),
    Entry(E1, "unflatten, movedim, unbind", ex1_right_unflatten_unbind, right=True),
    Entry(E1, "slices in a loop, stacked", ex1_right_loop, right=True),
    Entry(E1, "torch.split with sizes, reshape and permute", ex1_right_split_reshape, right=True),
    Entry(
        E2,
        "cut W^O into (D, H, C) and permuted",
        ex2_wrong_view_d_h,
        named=(
            "gave head h every H-th row of W^O (rows h, h + H, …) instead of rows hD to (h+1)D − 1"
        ),
    ),
    Entry(
        E2,
        "took head i's columns of W^O instead of its rows",
        ex2_wrong_columns,
        named=("took head h's columns of W^O (as if it were stored (out, in)) instead of its rows"),
    ),
    Entry(
        E2,
        "gave every head the output divided by H",
        ex2_wrong_split_evenly,
        named=("gave every head an equal share of the output, the output divided by H"),
    ),
    Entry(
        E2,
        "transposed W^O as if it were nn.Linear's",
        ex2_wrong_linear_layout,
        named="cut W^O transposed into the heads' blocks",
    ),
    Entry(E2, "transposed, cut (C, H, D), permuted back", ex2_right_transposed_twice, right=True),
    Entry(
        E2,
        "rows i to i + D instead of i·D to (i+1)·D",
        ex2_wrong_rows_off_by_d,
        named=("took rows h to h + D − 1 of W^O for head h instead of rows hD to (h+1)D − 1"),
    ),
    Entry(
        E2,
        "stacked the heads' parts on dim 0",
        ex2_wrong_stack_dim0,
        named=(
            "stacked the heads' parts in front of the batch: (H, B, T, C) instead of (B, H, T, C)"
        ),
    ),
    Entry(
        E2,
        "summed over the heads: returned the output",
        ex2_wrong_returned_total,
        named=("returned the sum over the heads (the whole output) instead of each head's part"),
    ),
    Entry(
        E2,
        "zeroed the other heads, merged without the transpose",
        ex2_wrong_zeroed_merge_no_transpose,
        named=(
            "joined the heads by reading (B, H, T, D) straight as (B, T, "
            "H·D), without the transpose"
        ),
    ),
    Entry(
        E2,
        "zeroed the other heads in place in the input (no copy)",
        ex2_wrong_no_clone,
        named=(
            "zeroed the other heads in heads itself, not in a copy, so later heads were zeros too"
        ),
    ),
    Entry(
        E2,
        "einsum with W^O viewed as (D, H, C)",
        ex2_wrong_einsum_dh,
        named=(
            "gave head h every H-th row of W^O (rows h, h + H, …) instead of rows hD to (h+1)D − 1"
        ),
    ),
    Entry(
        E2,
        "float64, and columns of W^O instead of rows",
        ex2_wrong_float64_columns,
        named=("took head h's columns of W^O (as if it were stored (out, in)) instead of its rows"),
    ),
    Entry(E2, "einsum with (H, D, C)", ex2_right_einsum, right=True),
    Entry(E2, "loop over the heads' blocks of rows", ex2_right_loop_rows, right=True),
    Entry(
        E2, "zeroed the other heads in a copy, merged, float64", ex2_right_zero_others, right=True
    ),
    Entry(
        E3,
        "scaled by √C instead of √D",
        ex3_wrong_scale_c,
        named=("divided the scores by √C, the model width, instead of √D, one head's width"),
    ),
    Entry(
        E3,
        "viewed the projections straight as (B, H, T, D)",
        ex3_wrong_plain_view_split,
        named=(
            "split into heads by reading (B, T, C) straight as (B, H, T, D), without the transpose"
        ),
    ),
    Entry(
        E3,
        "merged the heads with a reshape, no transpose",
        ex3_wrong_plain_merge,
        named=(
            "joined the heads by reading (B, H, T, D) straight as (B, T, C), without the transpose"
        ),
    ),
    Entry(
        E3,
        "transposed the weights as if they were nn.Linear's",
        ex3_wrong_linear_layout,
        named="used each weight as nn.Linear stores it, x @ w.T, instead of x @ w",
    ),
    Entry(
        E3,
        "took the keys and values from y",
        ex3_wrong_self_attention,
        named=("took the keys and values from y as well: self-attention, not cross-attention"),
    ),
    Entry(
        E3,
        "used y's length for x too",
        ex3_wrong_one_length,
        named="cut x's keys and values into heads with y's length, T_y",
    ),
    Entry(E3, "forgot W^O", ex3_wrong_no_w_o, named="forgot W^O: returned the concatenated heads"),
    Entry(
        E3,
        "softmax over the heads (dim=1)",
        ex3_wrong_softmax_over_heads,
        named="took the softmax over the heads (dim=1)",
    ),
    Entry(
        E3,
        "cut the width into (D, H): strided heads",
        ex3_wrong_strided_heads,
        named=("gave head h the interleaved dims h, h + H, … instead of a block of D dims"),
    ),
    Entry(
        E3,
        "returned the weights averaged over the heads",
        ex3_wrong_averaged_weights,
        named="returned the weights averaged over the heads, (B, T_y, T_x)",
    ),
    Entry(E3, "forgot the scale", ex3_wrong_no_scale, named="did not scale the scores"),
    Entry(
        E3,
        "float64, scaled by √C",
        ex3_wrong_float64_scale_c,
        named=("divided the scores by √C, the model width, instead of √D, one head's width"),
    ),
    Entry(
        E3,
        "transposed k's dims 1 and 2 (heads and tokens)",
        ex3_wrong_k_dot_t,
        named=("swapped k's dims 1 and 2 (the heads and the tokens) instead of its last two"),
    ),
    Entry(E3, "a loop over the heads' columns", ex3_right_loop_heads, right=True),
    Entry(E3, "unflatten and einsum", ex3_right_einsum, right=True),
    Entry(E3, "float64, permute, softmax by hand", ex3_right_float64, right=True),
]
