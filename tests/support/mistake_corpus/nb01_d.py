"""Learner answers to notebook 01's exercises (dot products), corpus d, written blind: epsilons
in the cosine, `.T` on a batch, float32 accumulators and constants, crashes."""

from __future__ import annotations

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_dot_product", "ex2_cosine", "ex3_most_similar_other"

# ------------------------------------------ Exercise 1: dot_product


def ex1_wrong_float32_accumulator(a, b):
    a, b = torch.broadcast_tensors(a, b)
    out = torch.zeros(a.shape[:-1])
    for i in range(a.shape[-1]):
        out += a[..., i] * b[..., i]
    return out


def ex1_wrong_sum_dtype_float32(a, b):
    return torch.sum(a * b, dim=-1, dtype=torch.float32)


def ex1_wrong_dot_t_batch(a, b):
    return (a @ b.T).diagonal() if a.dim() > 1 else a @ b


def ex1_right_accumulator_like(a, b):
    a, b = torch.broadcast_tensors(a, b)
    out = torch.zeros(a.shape[:-1], dtype=a.dtype)
    for i in range(a.shape[-1]):
        out = out + a[..., i] * b[..., i]
    return out


def ex1_right_mul_sum(a, b):
    return torch.mul(a, b).sum(-1)


# ------------------------------------------ Exercise 2: cosine


def ex2_wrong_eps_product(a, b):
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1) + 1e-6)


def ex2_wrong_eps_each_norm(a, b):
    return (a * b).sum(-1) / ((a.norm(dim=-1) + 1e-6) * (b.norm(dim=-1) + 1e-6))


def ex2_wrong_eps_in_sqrt(a, b):
    la = torch.sqrt((a * a).sum(-1) + 1e-6)
    lb = torch.sqrt((b * b).sum(-1) + 1e-6)
    return (a * b).sum(-1) / (la * lb)


def ex2_wrong_eps_1e4(a, b):
    lengths = a.norm(dim=-1) * b.norm(dim=-1)
    return (a * b).sum(-1) / (lengths + 1e-4)


def ex2_wrong_eps_units(a, b):
    ua = a / (a.norm(dim=-1, keepdim=True) + 1e-5)
    ub = b / (b.norm(dim=-1, keepdim=True) + 1e-5)
    return (ua * ub).sum(-1)


def ex2_wrong_float32_where(a, b):
    lengths = a.norm(dim=-1) * b.norm(dim=-1)
    cos = (a * b).sum(-1) / lengths
    return torch.where(lengths == 0, torch.zeros(lengths.shape), cos.float())


def ex2_right_clamp_tiny(a, b):
    lengths = (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-30)
    return (a * b).sum(-1) / lengths


def ex2_right_where_safe(a, b):
    lengths = torch.linalg.norm(a, dim=-1) * torch.linalg.norm(b, dim=-1)
    safe = torch.where(lengths > 0, lengths, torch.ones_like(lengths))
    return torch.where(lengths > 0, (a * b).sum(-1) / safe, torch.zeros_like(lengths))


# ------------------------------------------ Exercise 3: most_similar_other


def ex3_wrong_dot_t_batch(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    cos = unit @ unit.T
    cos = cos - 3 * torch.eye(X.shape[-2])
    return cos.argmax(dim=-1)


def ex3_wrong_float_indices(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)
    cos = cos.masked_fill(torch.eye(X.shape[-2], dtype=torch.bool), -2.0)
    return cos.argmax(dim=-1).float()


def ex3_wrong_topk_first(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)
    return cos.topk(2, dim=-1).indices[..., 0]


def ex3_right_mt_fill(X):
    unit = X / torch.linalg.vector_norm(X, dim=-1, keepdim=True)
    cos = unit @ unit.mT
    eye = torch.eye(X.shape[-2], dtype=torch.bool, device=X.device)
    return cos.masked_fill(eye, float("-inf")).argmax(dim=-1)


def ex3_right_minus_big_eye(X):
    norms = X.norm(dim=-1, keepdim=True)
    cos = (X / norms) @ (X / norms).transpose(-1, -2)
    return (cos - 10 * torch.eye(X.shape[-2], dtype=X.dtype)).argmax(-1)


ENTRIES = [
    Entry(
        E1,
        "a float32 zeros accumulator, += in a loop",
        ex1_wrong_float32_accumulator,
        named="returns float32 for float64 input",
    ),
    Entry(
        E1,
        "sum(..., dtype=torch.float32)",
        ex1_wrong_sum_dtype_float32,
        named="returns float32 for float64 input",
    ),
    Entry(
        E1,
        "a @ b.T and its diagonal (b.T reverses a batch)",
        ex1_wrong_dot_t_batch,
        named=(
            "took the diagonal of a times b transposed, which holds the pairs' dot "
            "products only for two stacks (N, n)"
        ),
    ),
    Entry(E1, "an accumulator of a's dtype", ex1_right_accumulator_like, right=True),
    Entry(E1, "torch.mul then sum(-1)", ex1_right_mul_sum, right=True),
    Entry(
        E2,
        "+ 1e-6 on the product of the lengths",
        ex2_wrong_eps_product,
        named=(
            "added a small number (an epsilon) to the lengths, which changes every cosine a little"
        ),
    ),
    Entry(
        E2,
        "+ 1e-6 on each length",
        ex2_wrong_eps_each_norm,
        named=(
            "added a small number (an epsilon) to the lengths, which changes every cosine a little"
        ),
    ),
    Entry(
        E2,
        "+ 1e-6 inside each square root",
        ex2_wrong_eps_in_sqrt,
        named=(
            "added a small number (an epsilon) to the lengths, which changes every cosine a little"
        ),
    ),
    Entry(
        E2,
        "+ 1e-4 on the product of the lengths",
        ex2_wrong_eps_1e4,
        named=(
            "added a small number (an epsilon) to the lengths, which changes every cosine a little"
        ),
    ),
    Entry(
        E2,
        "unit vectors with + 1e-5 on each length",
        ex2_wrong_eps_units,
        named=(
            "added a small number (an epsilon) to the lengths, which changes every cosine a little"
        ),
    ),
    Entry(
        E2,
        "torch.where with float32 zeros and a float32 cast",
        ex2_wrong_float32_where,
        named="returns float32 for float64 input",
    ),
    Entry(E2, "clamp_min(1e-30) on the product", ex2_right_clamp_tiny, right=True),
    Entry(E2, "a safe denominator, then torch.where", ex2_right_where_safe, right=True),
    Entry(
        E3,
        "unit @ unit.T (reverses a batch)",
        ex3_wrong_dot_t_batch,
        named="used .T, which reverses every dimension of a batch",
    ),
    Entry(
        E3,
        "argmax(...).float()",
        ex3_wrong_float_indices,
        named="returned a float tensor where the task asks for integers (int64)",
    ),
    Entry(
        E3,
        "topk(2) and took the first (itself)",
        ex3_wrong_topk_first,
        named="returned each vector itself (row i gives i)",
    ),
    Entry(E3, ".mT and masked_fill with -inf", ex3_right_mt_fill, right=True),
    Entry(E3, "minus 10 times a float64 eye", ex3_right_minus_big_eye, right=True),
]
