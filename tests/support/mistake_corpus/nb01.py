"""Learner answers to notebook 01's exercises (dot products and word vectors), written before
reading the checkers' tables."""

import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- ex1: dot_product


def ex1_wrong_sum_everything(a, b):
    return (a * b).sum()


def ex1_wrong_first_dim(a, b):
    return torch.sum(a * b, dim=0)


def ex1_wrong_matmul_transpose(a, b):
    return a @ b.T


def ex1_wrong_matmul(a, b):
    return torch.matmul(a, b)


def ex1_wrong_einsum_vectors(a, b):
    return torch.einsum("i,i->", a, b)


def ex1_wrong_keepdim(a, b):
    return (a * b).sum(dim=-1, keepdim=True)


def ex1_wrong_python_loop(a, b):
    total = 0
    for i in range(len(a)):
        total = total + a[i] * b[i]
    return total


def ex1_wrong_float64_first_dim(a, b):
    return (a.double() * b.double()).sum(0).to(a.dtype)


def ex1_wrong_lengths(a, b):
    return a.norm(dim=-1) * b.norm(dim=-1)


def ex1_wrong_in_place(a, b):
    return a.mul_(b).sum(-1)


def ex1_right_einsum(a, b):
    return torch.einsum("...i,...i->...", a, b)


def ex1_right_batched_matmul(a, b):
    rows = a.unsqueeze(-2)  # (..., 1, n)
    cols = b.unsqueeze(-1)  # (..., n, 1)
    return (rows @ cols).squeeze(-1).squeeze(-1)


def ex1_right_float64(a, b):
    return torch.mul(a.double(), b.double()).sum(-1).to(torch.result_type(a, b))


# ---------------------------------------------------------------- ex2: cosine


def _dots(a, b):
    return (a * b).sum(dim=-1)


def ex2_wrong_nan_for_zero(a, b):
    return _dots(a, b) / (a.norm(dim=-1) * b.norm(dim=-1))


def ex2_wrong_clamp_at_one(a, b):
    lengths = a.norm(dim=-1) * b.norm(dim=-1)
    return _dots(a, b) / lengths.clamp(min=1)


def ex2_wrong_whole_tensor_norm(a, b):
    return _dots(a, b) / (a.norm() * b.norm()).clamp_min(1e-12)


def ex2_wrong_normalise_no_keepdim(a, b):
    ua = a / a.norm(dim=-1).clamp_min(1e-12)
    ub = b / b.norm(dim=-1).clamp_min(1e-12)
    return (ua * ub).sum(-1)


def ex2_wrong_no_sqrt(a, b):
    aa = (a * a).sum(-1)
    bb = (b * b).sum(-1)
    return _dots(a, b) / (aa * bb).clamp_min(1e-12)


def ex2_wrong_python_if(a, b):
    if a.norm() == 0 or b.norm() == 0:
        return torch.tensor(0.0)
    return _dots(a, b) / (a.norm(dim=-1) * b.norm(dim=-1))


def ex2_wrong_length_of_a_squared(a, b):
    return _dots(a, b) / (a.norm(dim=-1) ** 2).clamp_min(1e-12)


def ex2_wrong_abs(a, b):
    lengths = (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-12)
    return _dots(a, b).abs() / lengths


def ex2_wrong_float64_no_sqrt(a, b):
    a64, b64 = a.double(), b.double()
    lengths = (a64 * a64).sum(-1) * (b64 * b64).sum(-1)
    cos = (a64 * b64).sum(-1) / lengths.clamp_min(1e-12)
    return cos.to(a.dtype)


def ex2_wrong_norm_dim0(a, b):
    lengths = (a.norm(dim=0) * b.norm(dim=0)).clamp_min(1e-12)
    return _dots(a, b) / lengths


def ex2_right_nan_to_num(a, b):
    return torch.nan_to_num(_dots(a, b) / (a.norm(dim=-1) * b.norm(dim=-1)))


def ex2_right_where(a, b):
    lengths = torch.linalg.vector_norm(a, dim=-1) * torch.linalg.vector_norm(b, dim=-1)
    safe = torch.where(lengths == 0, torch.ones_like(lengths), lengths)
    return torch.where(lengths == 0, torch.zeros_like(lengths), _dots(a, b) / safe)


def ex2_right_unit_vectors(a, b):
    ua = a / a.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    ub = b / b.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    return torch.einsum("...i,...i->...", ua, ub)


# ---------------------------------------------------------------- ex3: most_similar_other


def _cosine_table(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    return unit @ unit.transpose(-2, -1)  # (..., T, T)


def _mask_self(table):
    eye = torch.eye(table.shape[-1], dtype=torch.bool)
    return table.masked_fill(eye, float("-inf"))


def ex3_wrong_itself_not_excluded(X):
    return _cosine_table(X).argmax(dim=-1)


def ex3_wrong_dot_products(X):
    return _mask_self(X @ X.transpose(-2, -1)).argmax(dim=-1)


def ex3_wrong_diagonal_zero(X):
    cos = _cosine_table(X)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, 0.0).argmax(dim=-1)


def ex3_wrong_argmax_dim0(X):
    return _mask_self(_cosine_table(X)).argmax(dim=0)


def ex3_wrong_second_of_topk(X):
    return _cosine_table(X).topk(2, dim=-1).indices[..., 1]


def ex3_wrong_values(X):
    return _mask_self(_cosine_table(X)).max(dim=-1).values


def ex3_wrong_dot_t(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    return _mask_self(unit @ unit.T).argmax(-1)


def ex3_wrong_fill_diagonal(X):
    cos = _cosine_table(X)
    cos.fill_diagonal_(-float("inf"))
    return cos.argmax(dim=-1)


def ex3_wrong_off_by_one(X):
    cos = _cosine_table(X)
    out = torch.zeros(X.shape[:-1], dtype=torch.long)
    for i in range(X.shape[-2]):
        others = torch.cat([cos[..., i, :i], cos[..., i, i + 1 :]], dim=-1)
        out[..., i] = others.argmax(dim=-1)
    return out


def ex3_wrong_float64_dot_products(X):
    X64 = X.double()
    return _mask_self(X64 @ X64.mT).argmax(-1)


def ex3_right_normalize_minus_three(X):
    unit = F.normalize(X, dim=-1)
    cos = unit @ unit.mT - 3 * torch.eye(X.shape[-2], dtype=X.dtype)
    return cos.argmax(dim=-1)


def ex3_right_outer_norms(X):
    n = X.norm(dim=-1)  # (..., T)
    cos = (X @ X.mT) / (n[..., :, None] * n[..., None, :])
    itself = torch.eye(X.shape[-2], dtype=torch.bool)
    return torch.where(itself, torch.tensor(float("-inf"), dtype=cos.dtype), cos).argmax(-1)


def ex3_right_minus_1e9(X):
    cos = _cosine_table(X)
    cos = cos.masked_fill(torch.eye(X.shape[-2], dtype=torch.bool), -1e9)
    return torch.argmax(cos, dim=-1)


E1, E2, E3 = "ex1_dot_product", "ex2_cosine", "ex3_most_similar_other"

ENTRIES = [
    # ex1
    Entry(
        E1,
        "summed everything, no dim",
        ex1_wrong_sum_everything,
        named="added up every product of the whole tensors, with no dimension",
    ),
    Entry(
        E1,
        "summed over dim 0",
        ex1_wrong_first_dim,
        named="added up along dim 0 instead of the last dimension",
    ),
    Entry(
        E1,
        "a @ b.T, a table of every pair",
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
        "einsum i,i-> that only takes single vectors",
        ex1_wrong_einsum_vectors,
        named="wrote an einsum for two single vectors only",
    ),
    Entry(
        E1,
        "kept the summed dim with keepdim",
        ex1_wrong_keepdim,
        named="kept the summed dimension, so every dot product comes in a list of one",
    ),
    Entry(
        E1,
        "a Python loop over range(len(a))",
        ex1_wrong_python_loop,
        named=(
            "looped over range(len(a)), which runs along dim 0: the entries only of a single vector"
        ),
    ),
    Entry(
        E1,
        "in float64, summed over dim 0",
        ex1_wrong_float64_first_dim,
        named="added up along dim 0 instead of the last dimension",
    ),
    Entry(
        E1,
        "multiplied the two lengths",
        ex1_wrong_lengths,
        named="multiplied the lengths of the two vectors",
    ),
    Entry(
        E1,
        "a.mul_(b): multiplied a in place",
        ex1_wrong_in_place,
        named="multiplied a in place, changing the tensor the caller passed in",
    ),
    Entry(E1, "einsum ...i,...i->...", ex1_right_einsum, True),
    Entry(E1, "(..., 1, n) @ (..., n, 1), squeezed", ex1_right_batched_matmul, True),
    Entry(E1, "in float64, cast back", ex1_right_float64, True),
    # ex2
    Entry(
        E2,
        "no guard: 0 / 0 is NaN for a zero vector",
        ex2_wrong_nan_for_zero,
        named="did not handle a zero vector: 0 / 0 is NaN",
    ),
    Entry(
        E2,
        "clamped the lengths at 1",
        ex2_wrong_clamp_at_one,
        named="kept the product of the lengths from falling below 1, not only from reaching 0",
    ),
    Entry(
        E2,
        "the norm of the whole tensor",
        ex2_wrong_whole_tensor_norm,
        named="took the length of each whole tensor, not of each vector",
    ),
    Entry(
        E2,
        "normalised with norms without keepdim",
        ex2_wrong_normalise_no_keepdim,
        named="divided the vectors by their lengths without keeping the lengths' last dimension",
    ),
    Entry(
        E2,
        "forgot the square roots of the lengths",
        ex2_wrong_no_sqrt,
        named="divided by the squared lengths, (a\u00b7a)(b\u00b7b), without the square root",
    ),
    Entry(
        E2,
        "a Python if on the norm",
        ex2_wrong_python_if,
        named=(
            "checked for a zero vector by the length of the whole tensor, which misses one "
            "in a stack"
        ),
    ),
    Entry(
        E2,
        "divided by ‖a‖² as in the projection",
        ex2_wrong_length_of_a_squared,
        named="divided by the squared length of a, a·a, as a projection divides by b·b",
    ),
    Entry(
        E2,
        "took the absolute value of the dot product",
        ex2_wrong_abs,
        named="took the absolute value of the dot product",
    ),
    Entry(
        E2,
        "in float64, forgot the square roots",
        ex2_wrong_float64_no_sqrt,
        named="divided by the squared lengths, (a\u00b7a)(b\u00b7b), without the square root",
    ),
    Entry(
        E2,
        "lengths along dim 0",
        ex2_wrong_norm_dim0,
        named="took the lengths along dim 0, across the vectors of a stack",
    ),
    Entry(E2, "nan_to_num after dividing", ex2_right_nan_to_num, True),
    Entry(E2, "torch.where around a safe division", ex2_right_where, True),
    Entry(E2, "unit vectors first, then einsum", ex2_right_unit_vectors, True),
    # ex3
    Entry(
        E3,
        "forgot to leave out the row itself",
        ex3_wrong_itself_not_excluded,
        named="returned each vector itself (row i gives i)",
    ),
    Entry(
        E3,
        "used dot products, not cosines",
        ex3_wrong_dot_products,
        named="ranked by a score that still grows with the other vector's length (the dot product)",
    ),
    Entry(
        E3,
        "set the diagonal to 0 instead of -inf",
        ex3_wrong_diagonal_zero,
        named="took the vector itself out by putting 0 on the diagonal",
    ),
    Entry(
        E3,
        "argmax over dim 0",
        ex3_wrong_argmax_dim0,
        named="took the largest along dim 0, which is the batch of a (B, T, C) input",
    ),
    Entry(
        E3,
        "the second of topk, assuming the first is itself",
        ex3_wrong_second_of_topk,
        named="took the second-largest cosine, counting on the largest to be the vector itself",
    ),
    Entry(
        E3,
        "returned the cosines instead of positions",
        ex3_wrong_values,
        named="returned the best cosine, not the position of the vector that has it",
    ),
    Entry(
        E3,
        "unit @ unit.T, which breaks for a batch",
        ex3_wrong_dot_t,
        named="used .T, which reverses every dimension of a batch",
    ),
    Entry(
        E3,
        "fill_diagonal_, which wants a square matrix",
        ex3_wrong_fill_diagonal,
        named="took the vector itself out with fill_diagonal_, which takes one square matrix only",
    ),
    Entry(
        E3,
        "loop without the row, forgot to shift the index",
        ex3_wrong_off_by_one,
        named="left the vector itself out of its row but did not shift the positions after it",
    ),
    Entry(
        E3,
        "float64 dot products, not cosines",
        ex3_wrong_float64_dot_products,
        named="ranked by a score that still grows with the other vector's length (the dot product)",
    ),
    Entry(E3, "F.normalize, minus 3 on the diagonal", ex3_right_normalize_minus_three, True),
    Entry(E3, "X @ X.mT over the outer product of norms", ex3_right_outer_norms, True),
    Entry(E3, "masked_fill with -1e9", ex3_right_minus_1e9, True),
]
