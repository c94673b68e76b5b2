"""Corpus b for notebook 05 (multi-head attention), written blind from the learner's edition."""

import math

import torch

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ------------------------------------------------------------------ Exercise 1: my_split_qkv


def ex1_wrong_plain_view(qkv, num_heads):
    B, T, C3 = qkv.shape
    C = C3 // 3
    q, k, v = qkv.chunk(3, dim=-1)
    D = C // num_heads
    return (
        q.reshape(B, num_heads, T, D),
        k.reshape(B, num_heads, T, D),
        v.reshape(B, num_heads, T, D),
    )


def ex1_wrong_interleaved_layout(qkv, num_heads):
    # every head's q, k and v next to each other, as some codebases store it
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, num_heads, 3, D).permute(3, 0, 2, 1, 4)
    return q, k, v


def ex1_wrong_forgot_third(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // num_heads
    q, k, v = qkv.split(C3 // 3, dim=-1)
    return tuple(t.reshape(B, T, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_chunk_tokens(qkv, num_heads):
    B, _, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = torch.chunk(qkv, 3, dim=1)
    return tuple(t.reshape(B, -1, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_heads_strided(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, 3, D, num_heads).permute(2, 0, 4, 1, 3)
    return q, k, v


def ex1_wrong_permute_order(qkv, num_heads):
    B, T, C3 = qkv.shape
    D = C3 // 3 // num_heads
    q, k, v = qkv.view(B, T, 3, num_heads, D).permute(2, 0, 1, 3, 4)
    return q, k, v


def ex1_wrong_numpy_split(qkv, num_heads):
    # like np.split(a, 3): three equal parts
    q, k, v = qkv.split(3, dim=-1)
    B, T, C = q.shape
    D = C // num_heads
    return tuple(t.view(B, T, num_heads, D).transpose(1, 2) for t in (q, k, v))


def ex1_wrong_stack_dim2(qkv, num_heads):
    C = qkv.shape[-1] // 3
    D = C // num_heads
    parts = []
    for j in range(3):
        block = qkv[..., j * C : (j + 1) * C]
        parts.append(torch.stack([block[..., i * D : (i + 1) * D] for i in range(num_heads)], 2))
    return tuple(parts)


def ex1_wrong_h_and_d_swapped(qkv, num_heads):
    B, T, _ = qkv.shape
    q, k, v = qkv.view(B, T, 3, -1, num_heads).permute(2, 0, 3, 1, 4)  # num_heads as the size
    return q, k, v


def ex1_wrong_calls_split_heads(qkv, num_heads):
    q, k, v = qkv.chunk(3, dim=-1)
    return tuple(attnlib.split_heads(t, num_heads) for t in (q, k, v))


def ex1_right_chunk_then_heads(qkv, num_heads):
    out = []
    for part in qkv.chunk(3, dim=-1):  # (B, T, C) each
        B, T, C = part.shape
        out.append(part.reshape(B, T, num_heads, C // num_heads).permute(0, 2, 1, 3))
    return tuple(out)


def ex1_right_loop_slices(qkv, num_heads):
    C = qkv.shape[-1] // 3
    D = C // num_heads
    result = []
    for j in range(3):
        heads = [qkv[:, :, j * C + i * D : j * C + (i + 1) * D] for i in range(num_heads)]
        result.append(torch.stack(heads, dim=1))
    return result[0], result[1], result[2]


def ex1_right_unflatten(qkv, num_heads):
    parts = qkv.unflatten(-1, (3, num_heads, -1))  # (B, T, 3, H, D)
    q, k, v = parts.movedim(2, 0).transpose(2, 3).unbind(0)
    return q, k, v


# --------------------------------------------------------- Exercise 2: my_head_contributions


def ex2_wrong_blocks_strided(heads, w_o):
    H, D = heads.shape[1], heads.shape[3]
    w = w_o.view(D, H, -1).transpose(0, 1)  # (H, D, C)
    return heads @ w


def ex2_wrong_even_share(heads, w_o):
    B, H, T, D = heads.shape
    concat = heads.transpose(1, 2).reshape(B, T, H * D)
    out = concat @ w_o  # (B, T, C)
    return (out / H).unsqueeze(1).expand(B, H, T, -1)


def ex2_wrong_linear_layout(heads, w_o):
    H, D = heads.shape[1], heads.shape[3]
    w = w_o.T.reshape(H, D, -1)  # thought W^O was stored (out, in) like nn.Linear
    return torch.matmul(heads, w)


def ex2_wrong_slice_by_h(heads, w_o):
    H = heads.shape[1]
    contributions = []
    for i in range(H):
        block = w_o[i * H : (i + 1) * H]
        contributions.append(heads[:, i] @ block)
    return torch.stack(contributions, dim=1)


def ex2_wrong_stack_dim2(heads, w_o):
    H, D = heads.size(1), heads.size(-1)
    return torch.stack([heads[:, i] @ w_o[i * D : (i + 1) * D] for i in range(H)], dim=2)


def ex2_wrong_summed_over_heads(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return torch.einsum("bhtd,hdc->btc", heads, w_o.reshape(H, D, -1))


def ex2_wrong_d_from_t(heads, w_o):
    T = heads.shape[2]
    per_head = w_o.shape[0] // T  # rows per head
    w = w_o.reshape(-1, per_head, w_o.shape[-1])
    return heads @ w


def ex2_wrong_full_w_o_per_head(heads, w_o):
    # each head's share: the concatenation through W^O
    B, H, T, D = heads.shape
    concat = heads.permute(0, 2, 1, 3).reshape(B, T, H * D)
    return torch.stack([concat @ w_o for _ in range(H)], dim=1)


def ex2_right_loop(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    parts = [heads[:, i] @ w_o[i * D : (i + 1) * D, :] for i in range(H)]  # each (B, T, C)
    return torch.stack(parts, dim=1)


def ex2_right_einsum(heads, w_o):
    H, D = heads.shape[1], heads.shape[-1]
    return torch.einsum("bhtd,hdc->bhtc", heads, w_o.reshape(H, D, w_o.shape[1]))


def ex2_right_masked_concat(heads, w_o):
    B, H, T, D = heads.shape
    concat = heads.transpose(1, 2).reshape(B, T, H * D)
    out = []
    for i in range(H):
        keep = torch.zeros(H * D, dtype=heads.dtype)
        keep[i * D : (i + 1) * D] = 1
        out.append((concat * keep) @ w_o)
    return torch.stack(out, 1)


# ------------------------------------------------------- Exercise 3: my_multi_head_attention


def ex3_wrong_plain_view(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    T_x = x.shape[1]
    D = C // num_heads
    q = (y @ w_q).view(B, num_heads, T_y, D)
    k = (x @ w_k).view(B, num_heads, T_x, D)
    v = (x @ w_v).view(B, num_heads, T_x, D)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    concat = (weights @ v).transpose(1, 2).reshape(B, T_y, C)
    return concat @ w_o, weights


def _heads(t, num_heads):
    B, T, C = t.shape
    return t.view(B, T, num_heads, C // num_heads).transpose(1, 2)


def ex3_wrong_scale_model_width(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(C), dim=-1)
    return (weights @ v).transpose(1, 2).reshape(B, T_y, C) @ w_o, weights


def ex3_wrong_linear_convention(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q, k = _heads(y @ w_q.T, num_heads), _heads(x @ w_k.T, num_heads)
    v = _heads(x @ w_v.T, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return (weights @ v).transpose(1, 2).reshape(B, T_y, C) @ w_o.T, weights


def ex3_wrong_softmax_dim2(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=2)
    return (weights @ v).transpose(1, 2).reshape(B, T_y, C) @ w_o, weights


def ex3_wrong_merge_no_transpose(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = (q @ k.transpose(-2, -1) / math.sqrt(D)).softmax(-1)
    concat = (weights @ v).reshape(B, T_y, C)
    return concat @ w_o, weights


def ex3_wrong_forgot_w_o(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return (weights @ v).transpose(1, 2).reshape(B, T_y, C), weights


def ex3_wrong_same_length(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T, C = y.shape
    H, D = num_heads, C // num_heads
    q = (y @ w_q).view(B, T, H, D).transpose(1, 2)
    k = (x @ w_k).view(B, T, H, D).transpose(1, 2)
    v = (x @ w_v).view(B, T, H, D).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    return (weights @ v).transpose(1, 2).reshape(B, T, C) @ w_o, weights


def ex3_wrong_weights_averaged(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q, k, v = _heads(y @ w_q, num_heads), _heads(x @ w_k, num_heads), _heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(B, T_y, C) @ w_o
    return out, weights.mean(dim=1)  # like nn.MultiheadAttention


def ex3_wrong_heads_strided_float64(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    H, D = num_heads, C // num_heads

    def split(t):
        return t.double().reshape(B, t.shape[1], D, H).permute(0, 3, 1, 2)

    q, k, v = split(y @ w_q), split(x @ w_k), split(x @ w_v)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1)
    concat = (weights @ v).permute(0, 2, 3, 1).reshape(B, T_y, C)
    return (concat @ w_o.double()).to(y.dtype), weights.to(y.dtype)


def ex3_wrong_uses_split_heads(y, x, w_q, w_k, w_v, w_o, num_heads):
    q = attnlib.split_heads(y @ w_q, num_heads)
    k = attnlib.split_heads(x @ w_k, num_heads)
    v = attnlib.split_heads(x @ w_v, num_heads)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return attnlib.merge_heads(weights @ v) @ w_o, weights


def ex3_right_loop_heads(y, x, w_q, w_k, w_v, w_o, num_heads):
    C = y.shape[-1]
    D = C // num_heads
    q_all, k_all, v_all = y @ w_q, x @ w_k, x @ w_v
    outs, maps = [], []
    for i in range(num_heads):
        cols = slice(i * D, (i + 1) * D)
        s = q_all[..., cols] @ k_all[..., cols].transpose(1, 2) / D**0.5
        w = s.softmax(dim=-1)  # (B, T_y, T_x)
        outs.append(w @ v_all[..., cols])
        maps.append(w)
    return torch.cat(outs, dim=-1) @ w_o, torch.stack(maps, dim=1)


def ex3_right_einsum(y, x, w_q, w_k, w_v, w_o, num_heads):
    B, T_y, C = y.shape
    D = C // num_heads
    q = torch.einsum("btc,cd->btd", y, w_q).reshape(B, T_y, num_heads, D)
    k = torch.einsum("bsc,cd->bsd", x, w_k).reshape(B, -1, num_heads, D)
    v = torch.einsum("bsc,cd->bsd", x, w_v).reshape(B, -1, num_heads, D)
    weights = torch.softmax(torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(D), dim=-1)
    heads = torch.einsum("bhts,bshd->bthd", weights, v).reshape(B, T_y, C)
    return heads @ w_o, weights


def ex3_right_sum_of_contributions(y, x, w_q, w_k, w_v, w_o, num_heads):
    C = y.shape[-1]
    H, D = num_heads, C // num_heads
    q = (y @ w_q).unflatten(-1, (H, D)).transpose(1, 2)
    k = (x @ w_k).unflatten(-1, (H, D)).transpose(1, 2)
    v = (x @ w_v).unflatten(-1, (H, D)).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    weights = torch.exp(scores - scores.max(-1, keepdim=True).values)
    weights = weights / weights.sum(-1, keepdim=True)
    heads = weights @ v  # (B, H, T_y, D)
    return (heads @ w_o.view(H, D, C)).sum(dim=1), weights


E1, E2, E3 = "ex1_my_split_qkv", "ex2_my_head_contributions", "ex3_my_multi_head_attention"
ENTRIES = [
    Entry(
        E1,
        "reshaped each part straight to (B, H, T, D), no transpose",
        ex1_wrong_plain_view,
        named="cut each part straight to (B, H, T, D), without the transpose",
    ),
    Entry(
        E1,
        "assumed q, k, v interleaved per head",
        ex1_wrong_interleaved_layout,
        named=("cut the fused width into heads before separating the queries, keys and values"),
    ),
    Entry(
        E1,
        "head size from 3C / H, forgot the 3",
        ex1_wrong_forgot_third,
        named="took the head size from the fused width, 3C / H, instead of C / H",
    ),
    Entry(
        E1,
        "chunked along the tokens instead of the width",
        ex1_wrong_chunk_tokens,
        named=(
            "separated the queries, keys and values along the tokens instead of along the width"
        ),
    ),
    Entry(
        E1,
        "viewed the width as (D, H): heads take every H-th dim",
        ex1_wrong_heads_strided,
        named=("gave head h the interleaved dims h, h + H, h + 2H, … instead of a block of D"),
    ),
    Entry(
        E1,
        "permute left the tokens before the heads",
        ex1_wrong_permute_order,
        named="left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)",
    ),
    Entry(
        E1,
        "split(3) thinking it makes three parts, like np.split",
        ex1_wrong_numpy_split,
        named=("gave torch.split the number of parts, 3, where it takes the size of each part"),
    ),
    Entry(
        E1,
        "stacked the heads on dim 2: (B, T, H, D)",
        ex1_wrong_stack_dim2,
        named="left the heads after the tokens: (B, T, H, D) instead of (B, H, T, D)",
    ),
    Entry(
        E1,
        "mixed up the head count and the head size",
        ex1_wrong_h_and_d_swapped,
        named=("took num_heads for the head size: D heads of H dims each, instead of H heads of D"),
    ),
    Entry(E1, "called attnlib.split_heads", ex1_wrong_calls_split_heads, named=REFUSED),
    Entry(E1, "chunk, then reshape and permute each", ex1_right_chunk_then_heads, right=True),
    Entry(E1, "a loop over slices, stacked on dim 1", ex1_right_loop_slices, right=True),
    Entry(E1, "unflatten and movedim", ex1_right_unflatten, right=True),
    Entry(
        E2,
        "grouped W^O's rows as (D, H): every H-th row",
        ex2_wrong_blocks_strided,
        named=(
            "gave head h every H-th row of W^O (rows h, h + H, …) instead of rows hD to (h+1)D − 1"
        ),
    ),
    Entry(
        E2,
        "gave every head 1/H of the whole output",
        ex2_wrong_even_share,
        named="gave every head an equal share of the output, the output divided by H",
    ),
    Entry(
        E2,
        "transposed W^O as if it were an nn.Linear weight",
        ex2_wrong_linear_layout,
        named="cut W^O transposed into the heads' blocks",
    ),
    Entry(
        E2,
        "sliced H rows per head instead of D",
        ex2_wrong_slice_by_h,
        named=(
            "cut W^O into blocks of H rows instead of D, mixing up the "
            "number of heads and the head size"
        ),
    ),
    Entry(
        E2,
        "stacked the contributions on dim 2",
        ex2_wrong_stack_dim2,
        named="returned the parts as (B, T, H, C) instead of (B, H, T, C)",
    ),
    Entry(
        E2,
        "summed over the heads: returned the output itself",
        ex2_wrong_summed_over_heads,
        named=("returned the sum over the heads (the whole output) instead of each head's part"),
    ),
    Entry(
        E2,
        "took the head size from T",
        ex2_wrong_d_from_t,
        named=(
            "cut W^O into one block per token instead of one per head "
            "(the heads' shape read as (B, T, H, D))"
        ),
    ),
    Entry(
        E2,
        "every head gets the whole concat @ W^O",
        ex2_wrong_full_w_o_per_head,
        named="gave every head the whole output instead of its own part",
    ),
    Entry(E2, "a loop over the heads", ex2_right_loop, right=True),
    Entry(E2, "einsum with W^O reshaped to (H, D, C)", ex2_right_einsum, right=True),
    Entry(E2, "concat with the other heads zeroed", ex2_right_masked_concat, right=True),
    Entry(
        E3,
        "viewed straight to (B, H, T, D)",
        ex3_wrong_plain_view,
        named=(
            "split into heads by reading (B, T, C) straight as (B, H, T, D), without the transpose"
        ),
    ),
    Entry(
        E3,
        "scaled by sqrt(C), the model width",
        ex3_wrong_scale_model_width,
        named=("divided the scores by √C, the model width, instead of √D, one head's width"),
    ),
    Entry(
        E3,
        "used the weights as nn.Linear does (x @ W.T)",
        ex3_wrong_linear_convention,
        named="used each weight as nn.Linear stores it, x @ w.T, instead of x @ w",
    ),
    Entry(
        E3,
        "softmax over dim 2, the queries",
        ex3_wrong_softmax_dim2,
        named="took the softmax over the queries (dim=-2) instead of over the keys",
    ),
    Entry(
        E3,
        "merged the heads with a reshape only",
        ex3_wrong_merge_no_transpose,
        named=(
            "joined the heads by reading (B, H, T, D) straight as (B, T, C), without the transpose"
        ),
    ),
    Entry(
        E3, "forgot W^O", ex3_wrong_forgot_w_o, named="forgot W^O: returned the concatenated heads"
    ),
    Entry(
        E3,
        "used y's length for x's keys and values",
        ex3_wrong_same_length,
        named="cut x's keys and values into heads with y's length, T_y",
    ),
    Entry(
        E3,
        "returned the weights averaged over heads",
        ex3_wrong_weights_averaged,
        named="returned the weights averaged over the heads, (B, T_y, T_x)",
    ),
    Entry(
        E3,
        "float64 and heads cut as (D, H)",
        ex3_wrong_heads_strided_float64,
        named=("gave head h the interleaved dims h, h + H, … instead of a block of D dims"),
    ),
    Entry(E3, "used split_heads and merge_heads", ex3_wrong_uses_split_heads, named=REFUSED),
    Entry(E3, "a loop over heads on column slices", ex3_right_loop_heads, right=True),
    Entry(E3, "einsum with heads in dim 2", ex3_right_einsum, right=True),
    Entry(E3, "sum of per-head contributions", ex3_right_sum_of_contributions, right=True),
]
