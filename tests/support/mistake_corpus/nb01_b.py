"""Learner answers to notebook 01's exercises (dot products), corpus b, written blind."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: dot_product


def ex1_wrong_sum_everything(a, b):
    return (a * b).sum()


def ex1_wrong_matmul(a, b):
    return a @ b


def ex1_wrong_dim0(a, b):
    return (a * b).sum(dim=0)


def ex1_wrong_keepdim(a, b):
    return (a * b).sum(dim=-1, keepdim=True)


def ex1_wrong_loop_first_dim(a, b):
    total = 0
    for i in range(len(a)):
        total = total + a[i] * b[i]
    return total


def ex1_wrong_diagonal_of_table(a, b):
    return (a @ b.T).diagonal()


def ex1_wrong_in_place(a, b):
    a.mul_(b)
    return a.sum(dim=-1)


def ex1_wrong_dim1_float64(a, b):
    return torch.sum(a.double() * b.double(), dim=1).to(a.dtype)


def ex1_wrong_mean(a, b):
    return a.mul(b).mean(-1)


def ex1_right_loop_last_dim(a, b):
    total = a[..., 0] * b[..., 0]
    for i in range(1, a.shape[-1]):
        total = total + a[..., i] * b[..., i]
    return total


def ex1_right_mul_axis(a, b):
    return torch.mul(a, b).sum(axis=-1)


def ex1_right_row_times_column(a, b):
    return (a.unsqueeze(-2) @ b.unsqueeze(-1)).squeeze(-1).squeeze(-1)


# ---------------------------------------------------------------- Exercise 2: cosine


def _dot(a, b):
    return (a * b).sum(dim=-1)


def ex2_wrong_nan_for_zero(a, b):
    return _dot(a, b) / (a.norm(dim=-1) * b.norm(dim=-1))


def ex2_right_eps_added(a, b):
    return _dot(a, b) / (a.norm(dim=-1) * b.norm(dim=-1) + 1e-8)


def ex2_wrong_whole_norm(a, b):
    denom = a.norm() * b.norm()
    if denom == 0:
        return torch.zeros_like(_dot(a, b))
    return _dot(a, b) / denom


def ex2_wrong_only_a_checked(a, b):
    na, nb = a.norm(dim=-1), b.norm(dim=-1)
    return torch.where(na == 0, torch.zeros_like(na), _dot(a, b) / (na * nb))


def ex2_wrong_no_sqrt(a, b):
    denom = (a**2).sum(-1) * (b**2).sum(-1)
    return _dot(a, b) / denom.clamp_min(1e-12)


def ex2_wrong_sum_of_lengths(a, b):
    denom = a.norm(dim=-1) + b.norm(dim=-1)
    return _dot(a, b) / denom.clamp_min(1e-12)


def ex2_wrong_only_a_normalised(a, b):
    na = a.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return ((a / na) * b).sum(-1)


def ex2_wrong_python_if(a, b):
    denom = torch.linalg.norm(a, dim=-1) * torch.linalg.norm(b, dim=-1)
    if denom == 0:
        return torch.zeros_like(denom)
    return _dot(a, b) / denom


def ex2_wrong_clamp_at_one(a, b):
    na = a.norm(dim=-1).clamp(min=1.0)
    nb = b.norm(dim=-1).clamp(min=1.0)
    return _dot(a, b) / (na * nb)


def ex2_right_normalize_first(a, b):
    return (F.normalize(a, dim=-1) * F.normalize(b, dim=-1)).sum(dim=-1)


def ex2_right_where(a, b):
    dots = _dot(a, b)
    denom = torch.sqrt((a * a).sum(-1)) * torch.sqrt((b * b).sum(-1))
    return torch.where(denom == 0, torch.zeros_like(dots), dots / denom)


def ex2_right_masked_fill_float64(a, b):
    a64, b64 = a.double(), b.double()
    dots = (a64 * b64).sum(-1)
    denom = a64.norm(dim=-1) * b64.norm(dim=-1)
    out = dots / denom.masked_fill(denom == 0, 1.0)
    return out.to(torch.promote_types(a.dtype, b.dtype))


# ---------------------------------------------------------------- Exercise 3: most_similar_other


def _cosines(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    return unit @ unit.transpose(-2, -1)  # (..., T, T)


def ex3_wrong_itself_not_removed(X):
    return _cosines(X).argmax(dim=-1)


def ex3_wrong_dot_products(X):
    scores = X @ X.transpose(-2, -1)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return scores.masked_fill(eye, float("-inf")).argmax(dim=-1)


def ex3_wrong_diagonal_zero(X):
    cos = _cosines(X)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, 0.0).argmax(dim=-1)


def ex3_wrong_fill_diagonal(X):
    cos = _cosines(X)
    cos.fill_diagonal_(-float("inf"))
    return cos.argmax(-1)


def ex3_wrong_argmin(X):
    cos = _cosines(X)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, float("inf")).argmin(dim=-1)


def ex3_wrong_drop_cosine_one(X):
    cos = _cosines(X)
    return cos.masked_fill(cos > 0.9999, -2.0).argmax(dim=-1)


def ex3_wrong_eye_of_shape0(X):
    cos = _cosines(X)
    eye = torch.eye(X.shape[0], dtype=torch.bool)
    return cos.masked_fill(eye, float("-inf")).argmax(dim=-1)


def ex3_wrong_dot_t(X):
    unit = X / X.norm(dim=-1, keepdim=True)
    cos = unit @ unit.T
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, float("-inf")).argmax(dim=-1)


def ex3_wrong_values(X):
    cos = _cosines(X)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, float("-inf")).max(dim=-1).values


def ex3_wrong_columns_normalised(X):
    unit = X / X.norm(dim=-2, keepdim=True)
    cos = unit @ unit.transpose(-2, -1)
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, float("-inf")).argmax(dim=-1)


def ex3_wrong_second_best(X):
    order = _cosines(X).argsort(dim=-1, descending=True)
    return order[..., 1]


def ex3_wrong_loop_2d(X):
    t = X.shape[0]
    best = []
    for i in range(t):
        top, where = -2.0, -1
        for j in range(t):
            if j == i:
                continue
            c = (X[i] @ X[j] / (X[i].norm() * X[j].norm())).item()
            if c > top:
                top, where = c, j
        best.append(where)
    return torch.tensor(best)


def ex3_right_minus_two(X):
    n = X.norm(dim=-1)
    cos = (X @ X.mT) / (n.unsqueeze(-1) * n.unsqueeze(-2))
    eye = torch.eye(X.shape[-2], dtype=torch.bool)
    return cos.masked_fill(eye, -2.0).argmax(-1)


def ex3_right_subtract_on_diagonal(X):
    cos = _cosines(X)
    return (cos - 3 * torch.eye(X.shape[-2], dtype=cos.dtype)).argmax(dim=-1)


def ex3_right_index_diagonal(X):
    cos = _cosines(X).clone()
    idx = torch.arange(X.shape[-2])
    cos[..., idx, idx] = float("-inf")
    return torch.argmax(cos, dim=-1)


E1, E2, E3 = "ex1_dot_product", "ex2_cosine", "ex3_most_similar_other"

ENTRIES = [
    Entry(
        E1,
        "summed every product into one number",
        ex1_wrong_sum_everything,
        named="added up every product of the whole tensors, with no dimension",
    ),
    Entry(
        E1,
        "used a @ b",
        ex1_wrong_matmul,
        named="used a matrix product, which is a dot product only for two single vectors",
    ),
    Entry(
        E1,
        "summed along dim 0",
        ex1_wrong_dim0,
        named="added up along dim 0 instead of the last dimension",
    ),
    Entry(
        E1,
        "kept the summed dimension (keepdim=True)",
        ex1_wrong_keepdim,
        named="kept the summed dimension, so every dot product comes in a list of one",
    ),
    Entry(
        E1,
        "looped over len(a), the first dimension",
        ex1_wrong_loop_first_dim,
        named=(
            "looped over range(len(a)), which runs along dim 0: the entries only of a single vector"
        ),
    ),
    Entry(
        E1,
        "took the diagonal of a @ b.T",
        ex1_wrong_diagonal_of_table,
        named=(
            "took the diagonal of a times b transposed, which holds the pairs' dot products only "
            "for two stacks (N, n)"
        ),
    ),
    Entry(
        E1,
        "multiplied a in place with mul_",
        ex1_wrong_in_place,
        named="multiplied a in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "worked in float64 (cast back) but summed along dim 1",
        ex1_wrong_dim1_float64,
        named="added up along dim 1, which is the last dimension only for a stack (N, n)",
    ),
    Entry(
        E1,
        "took the mean of the products instead of their sum",
        ex1_wrong_mean,
        named="averaged the products instead of adding them up",
    ),
    Entry(E1, "loop over the last dimension with a[..., i]", ex1_right_loop_last_dim, right=True),
    Entry(E1, "torch.mul and sum(axis=-1)", ex1_right_mul_axis, right=True),
    Entry(E1, "row times column with unsqueeze and @", ex1_right_row_times_column, right=True),
    Entry(
        E2,
        "no care for zero vectors: 0 / 0 gives NaN",
        ex2_wrong_nan_for_zero,
        named="did not handle a zero vector: 0 / 0 is NaN",
    ),
    Entry(
        E2,
        "added 1e-8 to the product of the lengths (counted wrong in the blind run; the course"
        " accepts a small added eps, as its own tests do, so judged right)",
        ex2_right_eps_added,
        right=True,
    ),
    Entry(
        E2,
        "norm of the whole tensor, not of each vector",
        ex2_wrong_whole_norm,
        named="took the length of each whole tensor, not of each vector",
    ),
    Entry(
        E2,
        "only checked whether a is zero",
        ex2_wrong_only_a_checked,
        named="handled a zero vector in one of the two tensors only, not in the other",
    ),
    Entry(
        E2,
        "forgot the square roots: divided by the squared lengths",
        ex2_wrong_no_sqrt,
        named="divided by the squared lengths, (a·a)(b·b), without the square root",
    ),
    Entry(
        E2,
        "divided by the sum of the lengths",
        ex2_wrong_sum_of_lengths,
        named="divided by the sum of the lengths, not their product",
    ),
    Entry(
        E2,
        "divided by the length of a only",
        ex2_wrong_only_a_normalised,
        named="divided by the length of a only",
    ),
    Entry(
        E2,
        "a Python if on the product of lengths",
        ex2_wrong_python_if,
        named=(
            "handled a zero vector with Python's if (or max), which looks at a whole tensor at once"
        ),
    ),
    Entry(
        E2,
        "clamped each length at 1 instead of at a tiny number",
        ex2_wrong_clamp_at_one,
        named="kept each length from falling below 1, not only from reaching 0",
    ),
    Entry(E2, "F.normalize both, then sum of products", ex2_right_normalize_first, right=True),
    Entry(E2, "torch.where on a zero denominator", ex2_right_where, right=True),
    Entry(
        E2, "float64, zero denominators replaced by 1", ex2_right_masked_fill_float64, right=True
    ),
    Entry(
        E3,
        "did not take each vector itself out",
        ex3_wrong_itself_not_removed,
        named="returned each vector itself (row i gives i)",
    ),
    Entry(
        E3,
        "ranked by dot products, not cosines",
        ex3_wrong_dot_products,
        named="ranked by a score that still grows with the other vector's length (the dot product)",
    ),
    Entry(
        E3,
        "put 0 on the diagonal instead of -inf",
        ex3_wrong_diagonal_zero,
        named="took the vector itself out by putting 0 on the diagonal",
    ),
    Entry(
        E3,
        "fill_diagonal_, which only takes a 2-D table",
        ex3_wrong_fill_diagonal,
        named="took the vector itself out with fill_diagonal_, which takes one square matrix only",
    ),
    Entry(
        E3,
        "argmin, as if the cosine were a distance",
        ex3_wrong_argmin,
        named="took the least similar vector (the smallest cosine)",
    ),
    Entry(
        E3,
        "removed every cosine above 0.9999 as 'itself'",
        ex3_wrong_drop_cosine_one,
        named="took out every cosine of 1 (or nearly 1), not the vector itself",
    ),
    Entry(
        E3,
        "eye of size X.shape[0]",
        ex3_wrong_eye_of_shape0,
        named=(
            "made the diagonal mask with the size of the first dimension, which is T only for one "
            "stack"
        ),
    ),
    Entry(
        E3,
        "unit @ unit.T on a batch",
        ex3_wrong_dot_t,
        named="used .T, which reverses every dimension of a batch",
    ),
    Entry(
        E3,
        "returned the best cosines, not their positions",
        ex3_wrong_values,
        named="returned the best cosine, not the position of the vector that has it",
    ),
    Entry(
        E3,
        "normalised the columns (dim -2) instead of the rows",
        ex3_wrong_columns_normalised,
        named="divided by the lengths of the columns (dimension -2), not of each vector",
    ),
    Entry(
        E3,
        "sorted and took the second best, assuming the best is itself",
        ex3_wrong_second_best,
        named="took the second-largest cosine, counting on the largest to be the vector itself",
    ),
    Entry(
        E3,
        "a double loop for one (T, C) matrix only",
        ex3_wrong_loop_2d,
        named="wrote it for one (T, C) stack only, so a batch of stacks comes out wrong",
    ),
    Entry(
        E3, "cosines by dividing by both norms, -2 on the diagonal", ex3_right_minus_two, right=True
    ),
    Entry(E3, "subtract 3 on the diagonal", ex3_right_subtract_on_diagonal, right=True),
    Entry(E3, "-inf written into the diagonal by index", ex3_right_index_diagonal, right=True),
]
