"""Learner answers to notebook 02's exercises (softmax and scaling), corpus b, written blind."""

from __future__ import annotations

import math

import numpy as np
import torch

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: softmax_from_formula


def ex1_wrong_global_sum(x):
    e = torch.exp(x)
    return e / e.sum()


def ex1_wrong_no_keepdim(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1)


def ex1_wrong_dim0(x):
    e = x.exp()
    return e / e.sum(dim=0, keepdim=True)


def ex1_wrong_dim1(x):
    return torch.exp(x) / torch.exp(x).sum(dim=1, keepdim=True)


def ex1_wrong_no_exp(x):
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_by_max(x):
    e = torch.exp(x)
    return e / e.max(dim=-1, keepdim=True).values


def ex1_wrong_in_place(x):
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_log_softmax(x):
    return x - torch.log(torch.exp(x).sum(dim=-1, keepdim=True))


def ex1_wrong_loop_rows(x):
    return torch.stack([torch.exp(row) / torch.exp(row).sum() for row in x])


def ex1_wrong_scaled(x):
    e = torch.exp(x / math.sqrt(x.shape[-1]))
    return e / e.sum(-1, keepdim=True)


def ex1_right_div_unsqueeze(x):
    e = torch.exp(x)
    return e.div(e.sum(-1).unsqueeze(-1))


def ex1_right_numpy(x):
    e = np.exp(x.numpy())
    return torch.from_numpy(e / e.sum(axis=-1, keepdims=True))


def ex1_right_shifted(x):
    e = (x - x.max(-1, keepdim=True).values).exp()
    return e / e.sum(-1)[..., None]


# ---------------------------------------------------------------- Exercise 2: stable_softmax


def ex2_wrong_global_max(x, dim=-1):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_ignores_dim(x, dim=-1):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_max_no_keepdim(x, dim=-1):
    e = torch.exp(x - x.max(dim=dim).values)
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_min(x, dim=-1):
    e = torch.exp(x - x.min(dim=dim, keepdim=True).values)
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_mean(x, dim=-1):
    e = torch.exp(x - x.mean(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_float64_no_shift(x, dim=-1):
    e = x.double().exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)


def ex2_wrong_clamp(x, dim=-1):
    e = torch.exp(x.clamp(max=80.0))
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_sum_last_dim(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def ex2_wrong_max_indices(x, dim=-1):
    m = x.max(dim=dim, keepdim=True)[1]
    e = torch.exp(x - m)
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_in_place(x, dim=-1):
    x -= x.amax(dim=dim, keepdim=True)
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)


def ex2_right_logsumexp_by_hand(x, dim=-1):
    m = x.amax(dim=dim, keepdim=True)
    lse = m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
    return torch.exp(x - lse)


def ex2_right_move_dim_last(x, dim=-1):
    moved = x.transpose(dim, -1)
    e = torch.exp(moved - moved.max(dim=-1, keepdim=True).values)
    return (e / e.sum(dim=-1, keepdim=True)).transpose(dim, -1)


def ex2_right_float32_inside(x, dim=-1):
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    m, _ = torch.max(xf, dim=dim, keepdim=True)
    e = torch.exp(xf - m)
    return (e / torch.sum(e, dim=dim, keepdim=True)).to(x.dtype)


# ---------------------------------------------------------------- Exercise 3: softmax_backward


def ex3_wrong_diagonal_only(p, g):
    return p * g


def ex3_wrong_mean_of_g(p, g):
    return p * (g - g.mean(dim=-1, keepdim=True))


def ex3_wrong_global_sum(p, g):
    return p * (g - (p * g).sum())


def ex3_wrong_no_keepdim(p, g):
    return p * (g - (p * g).sum(dim=-1))


def ex3_wrong_p_one_minus_p(p, g):
    return p * (1 - p) * g


def ex3_wrong_jacobian_1d(p, g):
    jac = torch.diag(p) - torch.outer(p, p)
    return jac @ g


def ex3_wrong_sign(p, g):
    return p * ((p * g).sum(dim=-1, keepdim=True) - g)


def ex3_wrong_p_and_g_swapped(p, g):
    return g * (p - (p * g).sum(dim=-1, keepdim=True))


def ex3_wrong_no_factor_p(p, g):
    return g - (p * g).sum(dim=-1, keepdim=True)


def ex3_wrong_sum_dim0(p, g):
    return p * (g - (p * g).sum(dim=0, keepdim=True))


def ex3_right_batched_jacobian(p, g):
    jac = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., n, n)
    return (g.unsqueeze(-2) @ jac).squeeze(-2)


def ex3_right_einsum(p, g):
    s = torch.einsum("...i,...i->...", p, g)
    return p * g - p * s.unsqueeze(-1)


def ex3_right_float64(p, g):
    p64, g64 = p.double(), g.double()
    out = p64 * (g64 - torch.sum(p64 * g64, dim=-1, keepdim=True))
    return out.to(torch.promote_types(p.dtype, g.dtype))


E1, E2, E3 = "ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward"

ENTRIES = [
    Entry(
        E1,
        "divided by the total of the whole tensor",
        ex1_wrong_global_sum,
        named="divided by the total of the whole tensor, not by each row's own total",
    ),
    Entry(
        E1,
        "row totals without keepdim",
        ex1_wrong_no_keepdim,
        named="summed each row but dropped the summed dimension",
    ),
    Entry(
        E1,
        "summed along dim 0",
        ex1_wrong_dim0,
        named="normalised along the first dimension (each column), not the last (each row)",
    ),
    Entry(
        E1,
        "summed along dim 1, right for a matrix only",
        ex1_wrong_dim1,
        named="summed along dim 1, which is the last dimension only for a 2-D input",
    ),
    Entry(
        E1,
        "forgot the exponential",
        ex1_wrong_no_exp,
        named="normalised the scores without exponentiating them",
    ),
    Entry(
        E1,
        "divided by the largest exponential, not the total",
        ex1_wrong_by_max,
        named="divided by the row's largest exponential instead of the total",
    ),
    Entry(
        E1,
        "exponentiated x in place with exp_",
        ex1_wrong_in_place,
        named="exponentiated x in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "returned the log of the softmax",
        ex1_wrong_log_softmax,
        named="returned the log of the softmax (log-probabilities), not the weights",
    ),
    Entry(
        E1,
        "looped over the rows of x, which only works for a matrix",
        ex1_wrong_loop_rows,
        named="looped over the rows with `for row in x`, which are rows only of a 2-D input",
    ),
    Entry(
        E1,
        "divided the scores by sqrt(n) first, as attention does",
        ex1_wrong_scaled,
        named="divided the scores by √n first, as scaled dot-product attention does",
    ),
    Entry(E1, "sum, unsqueeze, div", ex1_right_div_unsqueeze, right=True),
    Entry(E1, "numpy and back", ex1_right_numpy, right=True),
    Entry(E1, "row maximum subtracted first", ex1_right_shifted, right=True),
    Entry(
        E2,
        "subtracted the largest score of the whole tensor",
        ex2_wrong_global_max,
        named="subtracted the largest score of the whole tensor, not each row's own largest",
    ),
    Entry(
        E2,
        "always along the last dimension, whatever dim",
        ex2_wrong_ignores_dim,
        named="always worked along the last dimension, whatever `dim` was",
    ),
    Entry(
        E2,
        "max along dim without keepdim",
        ex2_wrong_max_no_keepdim,
        named="took each row's maximum without keeping its dimension",
    ),
    Entry(
        E2,
        "subtracted the smallest score",
        ex2_wrong_min,
        named="shifted each row by its smallest score",
    ),
    Entry(E2, "subtracted the mean score", ex2_wrong_mean, named="shifted each row by its mean"),
    Entry(
        E2,
        "no shift, counting on float64 to hold the exponentials",
        ex2_wrong_float64_no_shift,
        named="exponentiated the scores as they are, without shifting them",
    ),
    Entry(
        E2,
        "clamped the scores at 80 instead of shifting them",
        ex2_wrong_clamp,
        named="clamped the large scores from above instead of shifting them",
    ),
    Entry(
        E2,
        "shifted along dim but summed along the last dimension",
        ex2_wrong_sum_last_dim,
        named="shifted along `dim` but took the total along the last dimension",
    ),
    Entry(
        E2,
        "took max(...)[1], the positions, as the maximum",
        ex2_wrong_max_indices,
        named="subtracted the positions of the largest scores (what max(dim=...)[1] holds), "
        "not their values",
    ),
    Entry(
        E2,
        "shifted x in place with -=",
        ex2_wrong_in_place,
        named=(
            "changed a tensor it was given in place (an operation ending in _, `-=`, `/=`, or an "
            "assignment into it)"
        ),
    ),
    Entry(E2, "log-sum-exp by hand, then exp(x - lse)", ex2_right_logsumexp_by_hand, right=True),
    Entry(E2, "moved dim to the end and back", ex2_right_move_dim_last, right=True),
    Entry(
        E2, "half precision computed in float32, cast back", ex2_right_float32_inside, right=True
    ),
    Entry(
        E3,
        "returned p * g: the diagonal of the Jacobian only, no cross terms",
        ex3_wrong_diagonal_only,
        named="multiplied g by p and stopped: only the diagonal term p_j·g_j",
    ),
    Entry(
        E3,
        "subtracted the plain mean of g, not the p-weighted one",
        ex3_wrong_mean_of_g,
        named="subtracted the plain mean of g instead of its average weighted by p",
    ),
    Entry(
        E3,
        "weighted sum over the whole tensor",
        ex3_wrong_global_sum,
        named="took the weighted sum over the whole batch, not over each row",
    ),
    Entry(
        E3,
        "weighted sum without keepdim",
        ex3_wrong_no_keepdim,
        named="took each row's weighted sum without keeping its dimension",
    ),
    Entry(
        E3,
        "p(1 - p) g, the diagonal formula",
        ex3_wrong_p_one_minus_p,
        named="used only the diagonal of J, p_j(1 − p_j)·g_j",
    ),
    Entry(
        E3,
        "built the Jacobian with diag and outer, one row only",
        ex3_wrong_jacobian_1d,
        named="built J with torch.diag and torch.outer, which take one row only",
    ),
    Entry(
        E3,
        "the two terms subtracted the wrong way round",
        ex3_wrong_sign,
        named="got the sign of the whole result the wrong way round",
    ),
    Entry(
        E3, "swapped p and g", ex3_wrong_p_and_g_swapped, named="mixed up p and g in the formula"
    ),
    Entry(
        E3,
        "forgot the factor p in front",
        ex3_wrong_no_factor_p,
        named="left out the final multiplication by p",
    ),
    Entry(
        E3,
        "weighted sum along dim 0",
        ex3_wrong_sum_dim0,
        named="took the weighted sum down the batch (dim 0), not along each row",
    ),
    Entry(
        E3, "batched Jacobian with diag_embed, g times J", ex3_right_batched_jacobian, right=True
    ),
    Entry(E3, "einsum for the weighted sum", ex3_right_einsum, right=True),
    Entry(E3, "in float64, cast back", ex3_right_float64, right=True),
]
