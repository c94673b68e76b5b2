"""Learner answers to notebook 02's exercises (softmax and scaling), written before reading the
checkers' tables."""

import math

import torch

from mistake_corpus.corpus import REFUSED, Entry

# ---------------------------------------------------------------- ex1: softmax_from_formula


def ex1_wrong_global_sum(x):
    exps = torch.exp(x)
    return exps / exps.sum()


def ex1_wrong_no_keepdim(x):
    exps = torch.exp(x)
    return exps / exps.sum(dim=-1)


def ex1_wrong_no_exp(x):
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_dim1(x):
    exps = torch.exp(x)
    return exps / exps.sum(dim=1, keepdim=True)


def ex1_wrong_by_max(x):
    exps = torch.exp(x)
    return exps / exps.max(dim=-1, keepdim=True).values


def ex1_wrong_log_probabilities(x):
    return x - torch.log(torch.exp(x).sum(dim=-1, keepdim=True))


def ex1_wrong_row_loop(x):
    rows = [torch.exp(row) / torch.exp(row).sum() for row in x]
    return torch.stack(rows)


def ex1_wrong_in_place(x):
    x.exp_()
    return x / x.sum(-1, keepdim=True)


def ex1_wrong_float64_dim0(x):
    exps = torch.exp(x.double())
    return (exps / exps.sum(0, keepdim=True)).to(x.dtype)


def ex1_wrong_e_as_2718(x):
    exps = 2.718**x
    return exps / exps.sum(dim=-1, keepdim=True)


def ex1_right_unsqueeze(x):
    e = x.exp()
    return e.div(e.sum(-1).unsqueeze(-1))


def ex1_right_math_e(x):
    powers = math.e**x
    return powers / torch.sum(powers, dim=-1, keepdim=True)


def ex1_right_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))


# ---------------------------------------------------------------- ex2: stable_softmax


def ex2_wrong_global_max(x, dim=-1):
    exps = torch.exp(x - x.max())
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_wrong_ignores_dim(x, dim=-1):
    exps = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return exps / exps.sum(dim=-1, keepdim=True)


def ex2_wrong_max_no_keepdim(x, dim=-1):
    exps = torch.exp(x - x.amax(dim=dim))
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_wrong_max_without_values(x, dim=-1):
    exps = torch.exp(x - x.max(dim=dim, keepdim=True))
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_wrong_min(x, dim=-1):
    exps = torch.exp(x - x.amin(dim=dim, keepdim=True))
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_wrong_mean(x, dim=-1):
    exps = torch.exp(x - x.mean(dim=dim, keepdim=True))
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_wrong_clamp(x, dim=-1):
    exps = torch.exp(x.clamp(-80, 80))
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_wrong_sum_last_dim(x, dim=-1):
    exps = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return exps / exps.sum(dim=-1, keepdim=True)


def ex2_wrong_float64_global_max(x, dim=-1):
    x64 = x.double()
    exps = torch.exp(x64 - x64.max())
    return (exps / exps.sum(dim=dim, keepdim=True)).to(x.dtype)


def ex2_wrong_divide_by_max(x, dim=-1):
    scaled = x / x.abs().amax(dim=dim, keepdim=True)
    exps = torch.exp(scaled)
    return exps / exps.sum(dim=dim, keepdim=True)


def ex2_right_logsumexp(x, dim=-1):
    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))


def ex2_right_float32(x, dim=-1):
    y = x.float()
    m = y.max(dim=dim, keepdim=True).values
    e = (y - m).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)


def ex2_right_movedim(x, dim=-1):
    moved = x.movedim(dim, -1)
    e = torch.exp(moved - moved.max(-1, keepdim=True).values)
    return (e / e.sum(-1, keepdim=True)).movedim(-1, dim)


# ---------------------------------------------------------------- ex3: softmax_backward


def ex3_wrong_unweighted_sum(p, g):
    return p * (g - g.sum(dim=-1, keepdim=True))


def ex3_wrong_global_sum(p, g):
    return p * (g - (p * g).sum())


def ex3_wrong_no_keepdim(p, g):
    return p * (g - (p * g).sum(dim=-1))


def ex3_wrong_jacobian_1d(p, g):
    J = torch.diag(p) - torch.outer(p, p)
    return J @ g


def ex3_wrong_no_outer_p(p, g):
    return g - (p * g).sum(dim=-1, keepdim=True)


def ex3_wrong_sign(p, g):
    return p * ((p * g).sum(-1, keepdim=True) - g)


def ex3_wrong_jacobian_plus(p, g):
    J = torch.diag_embed(p) + p.unsqueeze(-1) * p.unsqueeze(-2)
    return (J @ g.unsqueeze(-1)).squeeze(-1)


def ex3_wrong_diagonal_of_jacobian(p, g):
    return p * (1 - p) * g


def ex3_wrong_p_and_g_swapped(p, g):
    return g * (p - (p * g).sum(dim=-1, keepdim=True))


def ex3_wrong_float64_diagonal(p, g):
    return (p.double() * g.double()).to(p.dtype)


def ex3_right_batched_jacobian(p, g):
    J = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., n, n)
    return (J @ g.unsqueeze(-1)).squeeze(-1)


def ex3_right_einsum(p, g):
    inner = torch.einsum("...i,...i->...", p, g)
    return p * g - p * inner[..., None]


def ex3_right_distributed(p, g):
    pg = p * g
    return pg - p * pg.sum(-1, keepdim=True)


E1, E2, E3 = "ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward"

ENTRIES = [
    # ex1
    Entry(
        E1,
        "divided by the sum of the whole tensor",
        ex1_wrong_global_sum,
        named="divided by the total of the whole tensor, not by each row's own total",
    ),
    Entry(
        E1,
        "summed the row without keepdim",
        ex1_wrong_no_keepdim,
        named="summed each row but dropped the summed dimension",
    ),
    Entry(
        E1,
        "forgot the exp",
        ex1_wrong_no_exp,
        named="normalised the scores without exponentiating them",
    ),
    Entry(
        E1,
        "summed over dim 1, right only for a matrix",
        ex1_wrong_dim1,
        named="summed along dim 1, which is the last dimension only for a 2-D input",
    ),
    Entry(
        E1,
        "divided by the largest exp, not the sum",
        ex1_wrong_by_max,
        named="divided by the row's largest exponential instead of the total",
    ),
    Entry(
        E1,
        "returned the log of the softmax",
        ex1_wrong_log_probabilities,
        named="returned the log of the softmax (log-probabilities), not the weights",
    ),
    Entry(
        E1,
        "a loop over the rows of x",
        ex1_wrong_row_loop,
        named="looped over the rows with `for row in x`, which are rows only of a 2-D input",
    ),
    Entry(
        E1,
        "x.exp_() in place",
        ex1_wrong_in_place,
        named="exponentiated x in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "in float64, summed over dim 0",
        ex1_wrong_float64_dim0,
        named="normalised along the first dimension (each column), not the last (each row)",
    ),
    Entry(
        E1,
        "used 2.718 for e",
        ex1_wrong_e_as_2718,
        named="used a rounded value of e (such as 2.718) as the base",
    ),
    Entry(E1, "exp, then div by the unsqueezed sum", ex1_right_unsqueeze, True),
    Entry(E1, "math.e ** x", ex1_right_math_e, True),
    Entry(E1, "exp(x - logsumexp)", ex1_right_logsumexp, True),
    # ex2
    Entry(
        E2,
        "subtracted the max of the whole tensor",
        ex2_wrong_global_max,
        named="subtracted the largest score of the whole tensor, not each row's own largest",
    ),
    Entry(
        E2,
        "always worked along the last dim, ignoring dim",
        ex2_wrong_ignores_dim,
        named="always worked along the last dimension, whatever `dim` was",
    ),
    Entry(
        E2,
        "the max without keepdim",
        ex2_wrong_max_no_keepdim,
        named="took each row's maximum without keeping its dimension",
    ),
    Entry(
        E2,
        "subtracted x.max(dim=...) itself, not .values",
        ex2_wrong_max_without_values,
        named="subtracted what max(dim=...) returns, values and indices together, not the values",
    ),
    Entry(
        E2,
        "subtracted the min instead of the max",
        ex2_wrong_min,
        named="shifted each row by its smallest score",
    ),
    Entry(E2, "subtracted the mean", ex2_wrong_mean, named="shifted each row by its mean"),
    Entry(
        E2,
        "clamped the scores to ±80",
        ex2_wrong_clamp,
        named="clamped the scores instead of shifting them",
    ),
    Entry(
        E2,
        "max along dim but sum along -1",
        ex2_wrong_sum_last_dim,
        named="shifted along `dim` but took the total along the last dimension",
    ),
    Entry(
        E2,
        "float64, and the max of the whole tensor",
        ex2_wrong_float64_global_max,
        named="subtracted the largest score of the whole tensor, not each row's own largest",
    ),
    Entry(
        E2,
        "divided by the largest |score| to make them small",
        ex2_wrong_divide_by_max,
        named=(
            "divided the scores by the row's largest absolute score instead of subtracting "
            "the largest"
        ),
    ),
    Entry(
        E2,
        "exp(x - logsumexp): the task refuses torch.logsumexp",
        ex2_right_logsumexp,
        named=REFUSED,
    ),
    Entry(E2, "in float32, cast back", ex2_right_float32, True),
    Entry(E2, "movedim to the end and back", ex2_right_movedim, True),
    # ex3
    Entry(
        E3,
        "subtracted the plain sum of g",
        ex3_wrong_unweighted_sum,
        named="subtracted the plain sum of g, Σ_i g_i, instead of its average weighted by p",
    ),
    Entry(
        E3,
        "the weighted sum over the whole batch",
        ex3_wrong_global_sum,
        named="took the weighted sum over the whole batch, not over each row",
    ),
    Entry(
        E3,
        "the weighted sum without keepdim",
        ex3_wrong_no_keepdim,
        named="took each row's weighted sum without keeping its dimension",
    ),
    Entry(
        E3,
        "J = diag(p) - outer(p, p), for one row only",
        ex3_wrong_jacobian_1d,
        named="built J with torch.diag and torch.outer, which take one row only",
    ),
    Entry(
        E3,
        "forgot to multiply by p at the end",
        ex3_wrong_no_outer_p,
        named="left out the final multiplication by p",
    ),
    Entry(
        E3,
        "the sign the wrong way round",
        ex3_wrong_sign,
        named="got the sign of the whole result the wrong way round",
    ),
    Entry(
        E3,
        "J = diag(p) + p pᵀ",
        ex3_wrong_jacobian_plus,
        named="added p·pᵀ to the diagonal instead of subtracting it (J = diag(p) + p pᵀ)",
    ),
    Entry(
        E3,
        "p(1 - p) g: the diagonal of J only",
        ex3_wrong_diagonal_of_jacobian,
        named="used only the diagonal of J, p_j(1 − p_j)·g_j",
    ),
    Entry(
        E3, "mixed up p and g", ex3_wrong_p_and_g_swapped, named="mixed up p and g in the formula"
    ),
    Entry(
        E3,
        "float64, and only p * g",
        ex3_wrong_float64_diagonal,
        named="multiplied g by p and stopped: only the diagonal term p_j·g_j",
    ),
    Entry(E3, "the batched Jacobian times g", ex3_right_batched_jacobian, True),
    Entry(E3, "einsum for the weighted sum", ex3_right_einsum, True),
    Entry(E3, "p g - p Σ p g", ex3_right_distributed, True),
]
