"""Corpus c for notebook 05 (multi-head attention), written blind from the learner's edition."""

import math

import torch
import torch.nn.functional as F

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ----------------------------------------------------------------- Exercise 1: my_split_qkv


def ex1_wrong_heads_outer(qkv, num_heads):
    # read the 3C as head after head, each holding its q, k and v
    B, T, C3 = qkv.shape
    D = C3 // (3 * num_heads)
    q, k, v = qkv.view(B, T, num_heads, 3, D).permute(3, 0, 2, 1, 4)
    return q, k, v


def ex1_wrong_no_transpose(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = qkv.split(C, dim=-1)
    D = C // num_heads
    return (
        q.reshape(B, num_heads, T, D),
        k.reshape(B, num_heads, T, D),
        v.reshape(B, num_heads, T, D),
    )


def ex1_wrong_forgot_permute_heads(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 1, 3, 4)  # 3 × (B, T, H, D)
    return q, k, v


def ex1_wrong_strided_heads(qkv, num_heads):
    # D first, then heads: head i gets every H-th dimension
    B, T, C3 = qkv.shape
    C = C3 // 3
    D = C // num_heads
    parts = qkv.chunk(3, dim=-1)
    return tuple(p.view(B, T, D, num_heads).permute(0, 3, 1, 2) for p in parts)


def ex1_wrong_chunk_dim1(qkv, num_heads):
    B, _, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.chunk(3, dim=1)
    return tuple(t.reshape(B, -1, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_forgot_three(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // num_heads
    q, k, v = qkv.chunk(3, dim=-1)
    return tuple(t.view(B, T, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_stack_dim2(qkv, num_heads):
    # a loop over heads, stacked on the wrong dimension
    C = qkv.shape[-1] // 3
    D = C // num_heads
    out = []
    for part in range(3):
        heads = [qkv[..., part * C + i * D : part * C + (i + 1) * D] for i in range(num_heads)]
        out.append(torch.stack(heads, dim=2))
    return tuple(out)


def ex1_wrong_reshape_3_first(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = qkv.reshape(B, 3, T, C).unbind(1)
    return tuple(t.reshape(B, T, num_heads, C // num_heads).transpose(1, 2) for t in (q, k, v))


def ex1_refused_split_heads(qkv, num_heads):
    q, k, v = qkv.chunk(3, dim=-1)
    return tuple(attnlib.split_heads(t, num_heads) for t in (q, k, v))


def ex1_right_unflatten(qkv, num_heads):
    parts = qkv.unflatten(-1, (3, num_heads, -1))  # (B, T, 3, H, D)
    parts = parts.movedim(2, 0).transpose(2, 3)  # (3, B, H, T, D)
    return parts[0], parts[1], parts[2]


def ex1_right_loop(qkv, num_heads):
    C = qkv.shape[-1] // 3
    D = C // num_heads
    result = []
    for which in range(3):
        block = qkv[:, :, which * C : (which + 1) * C]
        heads = [block[:, :, h * D : (h + 1) * D] for h in range(num_heads)]
        result.append(torch.stack(heads, dim=1))
    return tuple(result)


# --------------------------------------------------------- Exercise 2: my_head_contributions


def ex2_wrong_strided_rows(heads, w_o):
    H, D = heads.shape[1], heads.shape[3]
    per_head = w_o.view(D, H, -1).transpose(0, 1)  # (H, D, C)
    return heads @ per_head


def ex2_wrong_linear_convention(heads, w_o):
    # thought W^O is stored (out, in)
    H, D = heads.shape[1], heads.shape[3]
    return heads @ w_o.T.reshape(H, D, -1)


def ex2_wrong_all_use_first_rows(heads, w_o):
    D = heads.shape[-1]
    return heads @ w_o[:D]


def ex2_wrong_divided_by_h(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return heads @ w_o.view(H, D, -1) / H


def ex2_wrong_layout_bthc(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return torch.einsum("bhtd,hdc->bthc", heads, w_o.reshape(H, D, -1))


def ex2_wrong_slice_forgot_d(heads, w_o):
    D = heads.shape[-1]
    parts = [heads[:, i] @ w_o[i : i + D] for i in range(heads.shape[1])]
    return torch.stack(parts, dim=1)


def ex2_wrong_loop_stack_dim2(heads, w_o):
    D = heads.shape[-1]
    parts = [heads[:, i] @ w_o[i * D : (i + 1) * D] for i in range(heads.shape[1])]
    return torch.stack(parts, dim=2)


def ex2_wrong_returns_sum(heads, w_o):
    B, H, T, D = heads.shape
    concat = heads.transpose(1, 2).reshape(B, T, H * D)
    return concat @ w_o


def ex2_right_zero_padding(heads, w_o):
    # head i alone: the concatenation with every other head set to zero
    B, H, T, D = heads.shape
    out = []
    for i in range(H):
        only_i = torch.zeros_like(heads)
        only_i[:, i] = heads[:, i]
        out.append(only_i.transpose(1, 2).reshape(B, T, H * D) @ w_o)
    return torch.stack(out, dim=1)


def ex2_right_einsum(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return torch.einsum("bhtd,hdc->bhtc", heads, w_o.reshape(H, D, w_o.shape[-1]))


# ------------------------------------------------------ Exercise 3: my_multi_head_attention


def _mha(y, x, w_q, w_k, w_v, w_o, num_heads, *, scale_by=None, linear=False):
    B, T_y, C = y.shape
    D = C // num_heads
    if linear:
        w_q, w_k, w_v, w_o = w_q.T, w_k.T, w_v.T, w_o.T
    q = (y @ w_q).view(B, T_y, num_heads, D).transpose(1, 2)
    k = (x @ w_k).view(B, -1, num_heads, D).transpose(1, 2)
    v = (x @ w_v).view(B, -1, num_heads, D).transpose(1, 2)
    s = q @ k.transpose(-2, -1) / math.sqrt(scale_by or D)
    w = s.softmax(-1)
    return ((w @ v).transpose(1, 2).reshape(B, T_y, C)) @ w_o, w


def ex3_wrong_linear_convention(y, x, w_q, w_k, w_v, w_o, num_heads):
    return _mha(y, x, w_q, w_k, w_v, w_o, num_heads, linear=True)


def ex3_wrong_scale_c(y, x, w_q, w_k, w_v, w_o, num_heads):
    return _mha(y, x, w_q, w_k, w_v, w_o, num_heads, scale_by=y.shape[-1])


def ex3_wrong_reshape_no_transpose(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    T_x, D = x.shape[1], C // num_heads
    q = (y @ w_q).reshape(B, num_heads, T_y, D)
    k = (x @ w_k).reshape(B, num_heads, T_x, D)
    v = (x @ w_v).reshape(B, num_heads, T_x, D)
    weights = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(D), dim=-1)
    return (weights @ v).reshape(B, T_y, C) @ w_o, weights


def ex3_wrong_merge_no_transpose(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q = (y @ w_q).view(B, T_y, num_heads, D).transpose(1, 2)
    k = (x @ w_k).view(B, x.shape[1], num_heads, D).transpose(1, 2)
    v = (x @ w_v).view(B, x.shape[1], num_heads, D).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return (weights @ v).reshape(B, T_y, C) @ w_o, weights


def ex3_wrong_keys_from_y(y, x, w_q, w_k, w_v, w_o, num_heads):
    return _mha(y, y, w_q, w_k, w_v, w_o, num_heads)


def ex3_wrong_mean_weights(y, x, w_q, w_k, w_v, w_o, num_heads):
    out, w = _mha(y, x, w_q, w_k, w_v, w_o, num_heads)
    return out, w.mean(dim=1)


def ex3_wrong_no_w_o(y, x, w_q, w_k, w_v, w_o, num_heads):
    out, w = _mha(y, x, w_q, w_k, w_v, torch.eye(y.shape[-1], dtype=y.dtype), num_heads)
    return out, w


def ex3_wrong_softmax_keys_dim(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q = (y @ w_q).view(B, T_y, num_heads, D).transpose(1, 2)
    k = (x @ w_k).view(B, -1, num_heads, D).transpose(1, 2)
    v = (x @ w_v).view(B, -1, num_heads, D).transpose(1, 2)
    weights = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-2)
    return (weights @ v).transpose(1, 2).reshape(B, T_y, C) @ w_o, weights


def ex3_refused_attnlib_sdpa(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q = (y @ w_q).view(B, T_y, num_heads, D).transpose(1, 2)
    k = (x @ w_k).view(B, -1, num_heads, D).transpose(1, 2)
    v = (x @ w_v).view(B, -1, num_heads, D).transpose(1, 2)
    heads, weights = attnlib.scaled_dot_product_attention(q, k, v)
    return heads.transpose(1, 2).reshape(B, T_y, C) @ w_o, weights


def ex3_right_head_loop(y, x, w_q, w_k, w_v, w_o, num_heads):
    C = y.shape[-1]
    D = C // num_heads
    outs, ws = [], []
    for i in range(num_heads):
        cols = slice(i * D, (i + 1) * D)
        q, k, v = y @ w_q[:, cols], x @ w_k[:, cols], x @ w_v[:, cols]
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(D), dim=-1)
        outs.append(w @ v)
        ws.append(w)
    return torch.cat(outs, dim=-1) @ w_o, torch.stack(ws, dim=1)


def ex3_right_einsum(y, x, w_q, w_k, w_v, w_o, num_heads):
    H = num_heads
    q = torch.einsum("btc,chd->bhtd", y, w_q.unflatten(1, (H, -1)))
    k = torch.einsum("btc,chd->bhtd", x, w_k.unflatten(1, (H, -1)))
    v = torch.einsum("btc,chd->bhtd", x, w_v.unflatten(1, (H, -1)))
    weights = torch.einsum("bhid,bhjd->bhij", q, k).mul(q.shape[-1] ** -0.5).softmax(-1)
    heads = torch.einsum("bhij,bhjd->bhid", weights, v)
    out = torch.einsum("bhid,hdc->bic", heads, w_o.unflatten(0, (H, -1)))
    return out, weights


E1, E2, E3 = "ex1_my_split_qkv", "ex2_my_head_contributions", "ex3_my_multi_head_attention"
ENTRIES = [
    Entry(
        E1,
        "read the 3C as head after head, each with q, k, v",
        ex1_wrong_heads_outer,
        named="cut the fused width into heads before separating the queries, keys and values",
    ),
    Entry(
        E1,
        "reshaped each part straight to (B, H, T, D)",
        ex1_wrong_no_transpose,
        named="cut each part straight to (B, H, T, D), without the transpose",
    ),
    Entry(
        E1,
        "left the heads after the tokens, (B, T, H, D)",
        ex1_wrong_forgot_permute_heads,
        named="left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)",
    ),
    Entry(
        E1,
        "split each part as (D, H): strided heads",
        ex1_wrong_strided_heads,
        named="gave head h the interleaved dims h, h + H, h + 2H, … instead of a block of D",
    ),
    Entry(
        E1,
        "chunked along the tokens (dim 1)",
        ex1_wrong_chunk_dim1,
        named="separated the queries, keys and values along the tokens instead of along the width",
    ),
    Entry(
        E1,
        "head size 3C / H, forgetting the 3",
        ex1_wrong_forgot_three,
        named="took the head size from the fused width, 3C / H, instead of C / H",
    ),
    Entry(
        E1,
        "loop over heads stacked on dim 2",
        ex1_wrong_stack_dim2,
        named="left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)",
    ),
    Entry(
        E1,
        "reshaped to (B, 3, T, C) as if q, k, v came one after another in memory",
        ex1_wrong_reshape_3_first,
        named="read the fused (B, T, 3C) straight as (B, 3, T, C), without moving the 3",
    ),
    Entry(E1, "called attnlib.split_heads", ex1_refused_split_heads, named=REFUSED),
    Entry(E1, "unflatten and movedim", ex1_right_unflatten, right=True),
    Entry(E1, "slices in a loop", ex1_right_loop, right=True),
    Entry(
        E2,
        "split W^O's rows as (D, H): strided",
        ex2_wrong_strided_rows,
        named=(
            "gave head h every H-th row of W^O (rows h, h + H, …) instead of rows hD to (h+1)D − 1"
        ),
    ),
    Entry(
        E2,
        "treated W^O as stored (out, in)",
        ex2_wrong_linear_convention,
        named="cut W^O transposed into the heads' blocks",
    ),
    Entry(
        E2,
        "every head used the first D rows of W^O",
        ex2_wrong_all_use_first_rows,
        named="multiplied every head by the first D rows of W^O, the rows of head 0",
    ),
    Entry(
        E2,
        "divided each contribution by H",
        ex2_wrong_divided_by_h,
        named="divided each head's part by the number of heads",
    ),
    Entry(
        E2,
        "returned (B, T, H, C)",
        ex2_wrong_layout_bthc,
        named="returned the parts as (B, T, H, C) instead of (B, H, T, C)",
    ),
    Entry(
        E2,
        "sliced rows i : i + D instead of i·D : (i+1)·D",
        ex2_wrong_slice_forgot_d,
        named="took rows h to h + D − 1 of W^O for head h instead of rows hD to (h+1)D − 1",
    ),
    Entry(
        E2,
        "loop stacked on dim 2",
        ex2_wrong_loop_stack_dim2,
        named="returned the parts as (B, T, H, C) instead of (B, H, T, C)",
    ),
    Entry(
        E2,
        "returned the summed output, not per head",
        ex2_wrong_returns_sum,
        named="returned the sum over the heads (the whole output) instead of each head's part",
    ),
    Entry(E2, "zero out the other heads and multiply", ex2_right_zero_padding, right=True),
    Entry(E2, "einsum with W^O reshaped (H, D, C)", ex2_right_einsum, right=True),
    Entry(
        E3,
        "used the weights as nn.Linear's (out, in)",
        ex3_wrong_linear_convention,
        named="used each weight as nn.Linear stores it, x @ w.T, instead of x @ w",
    ),
    Entry(
        E3,
        "scaled by √C instead of √D",
        ex3_wrong_scale_c,
        named="divided the scores by √C, the model width, instead of √D, one head's width",
    ),
    Entry(
        E3,
        "reshaped to heads without transposing",
        ex3_wrong_reshape_no_transpose,
        named="split and joined the heads by reading the shapes straight, without either transpose",
    ),
    Entry(
        E3,
        "merged the heads without transposing back",
        ex3_wrong_merge_no_transpose,
        named=(
            "joined the heads by reading (B, H, T, D) straight as (B, T, C), without the transpose"
        ),
    ),
    Entry(
        E3,
        "took keys and values from y (self-attention)",
        ex3_wrong_keys_from_y,
        named="took the keys and values from y as well: self-attention, not cross-attention",
    ),
    Entry(
        E3,
        "returned the weights averaged over heads",
        ex3_wrong_mean_weights,
        named="returned the weights averaged over the heads, (B, T_y, T_x)",
    ),
    Entry(
        E3,
        "forgot the output projection",
        ex3_wrong_no_w_o,
        named="forgot W^O: returned the concatenated heads",
    ),
    Entry(
        E3,
        "softmax over the queries (dim -2)",
        ex3_wrong_softmax_keys_dim,
        named="took the softmax over the queries (dim=-2) instead of over the keys",
    ),
    Entry(
        E3, "used attnlib's scaled dot-product attention", ex3_refused_attnlib_sdpa, named=REFUSED
    ),
    Entry(E3, "a loop over heads with column slices", ex3_right_head_loop, right=True),
    Entry(E3, "einsum throughout", ex3_right_einsum, right=True),
]
