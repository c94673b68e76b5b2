"""Learner answers to notebook 01's exercises (dot products), corpus c, written blind."""

from __future__ import annotations

import torch

from mistake_corpus.corpus import REFUSED, Entry

E1, E2, E3 = "ex1_dot_product", "ex2_cosine", "ex3_most_similar_other"

# ------------------------------------------ Exercise 1: dot_product


def ex1_wrong_sum_all(a, b):
    return (a * b).sum()


def ex1_wrong_matmul_transpose(a, b):
    return a @ b.T


def ex1_wrong_matmul(a, b):
    return torch.matmul(a, b)


def ex1_wrong_keepdim(a, b):
    return (a * b).sum(dim=-1, keepdim=True)


def ex1_wrong_zip_loop(a, b):
    return torch.stack([(u * v).sum() for u, v in zip(a, b, strict=False)])


def ex1_wrong_in_place(a, b):
    return a.mul_(b).sum(-1)


def ex1_wrong_mean(a, b):
    return (a * b).mean(dim=-1)


def ex1_wrong_first_dim(a, b):
    return torch.sum(a * b, dim=0)


def ex1_refused_torch_dot(a, b):
    return torch.dot(a, b)


def ex1_right_einsum(a, b):
    return torch.einsum("...i,...i->...", a, b)


def ex1_right_batched_matmul(a, b):
    return (a.unsqueeze(-2) @ b.unsqueeze(-1)).squeeze(-1).squeeze(-1)


# ------------------------------------------ Exercise 2: cosine


def ex2_wrong_nan(a, b):
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))


def ex2_wrong_squared_lengths(a, b):
    dots = (a * b).sum(-1)
    return dots / ((a * a).sum(-1) * (b * b).sum(-1)).clamp_min(1e-12)


def ex2_wrong_whole_norm(a, b):
    dots = (a * b).sum(-1)
    return dots / (a.norm() * b.norm()).clamp_min(1e-12)


def ex2_wrong_keepdim_norms(a, b):
    dots = (a * b).sum(-1)
    lengths = a.norm(dim=-1, keepdim=True) * b.norm(dim=-1, keepdim=True)
    return dots / lengths.clamp_min(1e-12)


def ex2_wrong_one_for_zero(a, b):
    lengths = a.norm(dim=-1) * b.norm(dim=-1)
    cos = (a * b).sum(-1) / lengths
    return torch.where(lengths == 0, torch.ones_like(cos), cos)


def ex2_wrong_in_place_units(a, b):
    a /= a.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    b /= b.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return (a * b).sum(-1)


def ex2_wrong_distance(a, b):
    lengths = (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-12)
    return 1 - (a * b).sum(-1) / lengths


def ex2_wrong_norm_first_dim(a, b):
    dots = (a * b).sum(-1)
    return dots / (a.norm(dim=0) * b.norm(dim=0)).clamp_min(1e-12)


def ex2_refused_torch_cosine(a, b):
    return torch.cosine_similarity(a, b, dim=-1)


def ex2_right_nan_to_num(a, b):
    dots = torch.einsum("...i,...i->...", a, b)
    lengths = torch.linalg.vector_norm(a, dim=-1) * torch.linalg.vector_norm(b, dim=-1)
    return torch.nan_to_num(dots / lengths, nan=0.0)


def ex2_right_units_where(a, b):
    na = a.norm(dim=-1, keepdim=True)
    nb = b.norm(dim=-1, keepdim=True)
    ua = torch.where(na > 0, a / na, torch.zeros_like(a))
    ub = torch.where(nb > 0, b / nb, torch.zeros_like(b))
    return (ua * ub).sum(-1)


# ------------------------------------------ Exercise 3: most_similar_other


def _cosines(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    return unit @ unit.transpose(-2, -1)  # (..., T, T)


def ex3_wrong_self_included(X):
    return _cosines(X).argmax(dim=-1)


def ex3_wrong_diagonal_zero(X):
    cos = _cosines(X)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, 0.0).argmax(-1)


def ex3_wrong_dot_products(X):
    scores = X @ X.transpose(-2, -1)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return scores.masked_fill(eye, float("-inf")).argmax(-1)


def ex3_wrong_fill_diagonal_2d(X):
    cos = _cosines(X)
    cos.fill_diagonal_(-2.0)
    return cos.argmax(-1)


def ex3_wrong_minus_eye(X):
    cos = _cosines(X) - torch.eye(X.shape[-2])
    return cos.argmax(dim=-1)


def ex3_wrong_norm_columns(X):
    unit = X / X.norm(dim=-2, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, -torch.inf).argmax(-1)


def ex3_wrong_euclidean(X):
    dist = torch.cdist(X, X)  # (..., T, T)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return dist.masked_fill(eye, torch.inf).argmin(-1)


def ex3_wrong_loop_2d(X):
    T = X.shape[0]
    best = []
    for i in range(T):
        sims = [
            float(X[i] @ X[j] / (X[i].norm() * X[j].norm())) if j != i else -2.0 for j in range(T)
        ]
        best.append(max(range(T), key=lambda j, s=sims: s[j]))
    return torch.tensor(best)


def ex3_refused_cosine_similarity(X):
    cos = torch.cosine_similarity(X[..., :, None, :], X[..., None, :, :], dim=-1)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, -torch.inf).argmax(-1)


def ex3_right_diagonal_view(X):
    norms = X.norm(dim=-1)  # (..., T)
    cos = (X @ X.transpose(-2, -1)) / (norms[..., :, None] * norms[..., None, :])
    cos.diagonal(dim1=-2, dim2=-1).fill_(-torch.inf)
    return cos.argmax(dim=-1)


def ex3_right_where(X):
    unit = X / torch.linalg.vector_norm(X, dim=-1, keepdim=True)
    cos = torch.einsum("...ic,...jc->...ij", unit, unit)
    T = X.shape[-2]
    same = torch.arange(T)[:, None] == torch.arange(T)[None, :]
    return torch.where(same, torch.full_like(cos, -3.0), cos).argmax(-1)


ENTRIES = [
    Entry(
        E1,
        "summed everything, not along the last dim",
        ex1_wrong_sum_all,
        named="added up every product of the whole tensors, with no dimension",
    ),
    Entry(
        E1,
        "a @ b.T: a table of all pairs",
        ex1_wrong_matmul_transpose,
        named="multiplied every vector of a by every vector of b (a table) instead of pairing them",
    ),
    Entry(
        E1,
        "torch.matmul(a, b)",
        ex1_wrong_matmul,
        named="used a matrix product, which is a dot product only for two single vectors",
    ),
    Entry(
        E1,
        "kept the summed dimension (keepdim=True)",
        ex1_wrong_keepdim,
        named="kept the summed dimension, so every dot product comes in a list of one",
    ),
    Entry(
        E1,
        "a loop over zip(a, b) and stack",
        ex1_wrong_zip_loop,
        named="looped over zip(a, b), which pairs the vectors only of two stacks (N, n)",
    ),
    Entry(
        E1,
        "mul_ in place on a",
        ex1_wrong_in_place,
        named="multiplied a in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "mean instead of sum",
        ex1_wrong_mean,
        named="averaged the products instead of adding them up",
    ),
    Entry(
        E1,
        "summed over dim 0",
        ex1_wrong_first_dim,
        named="added up along dim 0 instead of the last dimension",
    ),
    Entry(E1, "torch.dot", ex1_refused_torch_dot, named=REFUSED),
    Entry(E1, "einsum ...i,...i->...", ex1_right_einsum, right=True),
    Entry(E1, "a row times a column with broadcasting @", ex1_right_batched_matmul, right=True),
    Entry(
        E2,
        "no care for zero vectors: 0/0 is NaN",
        ex2_wrong_nan,
        named="did not handle a zero vector: 0 / 0 is NaN",
    ),
    Entry(
        E2,
        "divided by the squared lengths",
        ex2_wrong_squared_lengths,
        named="divided by the squared lengths, (a·a)(b·b), without the square root",
    ),
    Entry(
        E2,
        "norm of the whole tensor, not of each vector",
        ex2_wrong_whole_norm,
        named="took the length of each whole tensor, not of each vector",
    ),
    Entry(
        E2,
        "norms with keepdim=True against a dot without",
        ex2_wrong_keepdim_norms,
        named="kept the lengths' last dimension (keepdim), so the division broadcasts into a table",
    ),
    Entry(
        E2,
        "returned 1 for a zero vector",
        ex2_wrong_one_for_zero,
        named="gave a pair with a zero vector a cosine of 1 instead of 0",
    ),
    Entry(
        E2,
        "normalised a and b in place",
        ex2_wrong_in_place_units,
        named=(
            "changed a tensor it was given in place (an operation ending in _, `-=`, `/=`, "
            "or an assignment into it)"
        ),
    ),
    Entry(
        E2,
        "returned the cosine distance 1 - cos (scipy habit)",
        ex2_wrong_distance,
        named="returned the cosine distance, 1 − cos, not the cosine",
    ),
    Entry(
        E2,
        "norms along dim 0",
        ex2_wrong_norm_first_dim,
        named="took the lengths along dim 0, across the vectors of a stack",
    ),
    Entry(E2, "torch.cosine_similarity", ex2_refused_torch_cosine, named=REFUSED),
    Entry(E2, "nan_to_num after dividing", ex2_right_nan_to_num, right=True),
    Entry(E2, "unit vectors with torch.where, zero stays zero", ex2_right_units_where, right=True),
    Entry(
        E3,
        "forgot to leave out the word itself",
        ex3_wrong_self_included,
        named="returned each vector itself (row i gives i)",
    ),
    Entry(
        E3,
        "set the diagonal to 0 instead of -inf",
        ex3_wrong_diagonal_zero,
        named="took the vector itself out by putting 0 on the diagonal",
    ),
    Entry(
        E3,
        "ranked by dot products, not cosines",
        ex3_wrong_dot_products,
        named="ranked by a score that still grows with the other vector's length (the dot product)",
    ),
    Entry(
        E3,
        "fill_diagonal_, which only works for one matrix",
        ex3_wrong_fill_diagonal_2d,
        named="took the vector itself out with fill_diagonal_, which takes one square matrix only",
    ),
    Entry(
        E3,
        "subtracted the identity: itself gets 0",
        ex3_wrong_minus_eye,
        named="took the vector itself out by putting 0 on the diagonal",
    ),
    Entry(
        E3,
        "normalised the columns instead of the rows",
        ex3_wrong_norm_columns,
        named="divided by the lengths of the columns (dimension -2), not of each vector",
    ),
    Entry(
        E3,
        "nearest by euclidean distance (cdist)",
        ex3_wrong_euclidean,
        named="ranked by the distance between the vectors",
    ),
    Entry(
        E3,
        "double loop written for one (T, C) matrix",
        ex3_wrong_loop_2d,
        named="wrote it for one (T, C) stack only, so a batch of stacks comes out wrong",
    ),
    Entry(
        E3,
        "torch.cosine_similarity with broadcasting",
        ex3_refused_cosine_similarity,
        named=REFUSED,
    ),
    Entry(E3, "fill_ on the diagonal view, batched", ex3_right_diagonal_view, right=True),
    Entry(E3, "einsum table, torch.where with -3", ex3_right_where, right=True),
]
