"""Learner answers to notebook 02's exercises (softmax and scaling), corpus c, written blind."""

from __future__ import annotations

import torch

from mistake_corpus.corpus import REFUSED, Entry

E1, E2, E3 = "ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward"

# ------------------------------------------ Exercise 1: softmax_from_formula


def ex1_wrong_dim0(x):
    e = torch.exp(x)
    return e / e.sum(dim=0, keepdim=True)


def ex1_wrong_no_keepdim(x):
    e = x.exp()
    return e / e.sum(-1)


def ex1_wrong_sum_all(x):
    e = torch.exp(x)
    return e / e.sum()


def ex1_wrong_sum_of_scores(x):
    return torch.exp(x) / x.sum(dim=-1, keepdim=True)


def ex1_wrong_in_place(x):
    x.exp_()
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_loop_rows(x):
    rows = []
    for row in x:
        e = torch.exp(row)
        rows.append(e / e.sum())
    return torch.stack(rows)


def ex1_wrong_no_exp(x):
    return x / x.sum(dim=-1, keepdim=True)


def ex1_wrong_sigmoid(x):
    return 1 / (1 + torch.exp(-x))


def ex1_wrong_log_softmax(x):
    return x - torch.log(torch.exp(x).sum(dim=-1, keepdim=True))


def ex1_refused_softmax(x):
    return torch.softmax(x, dim=-1)


def ex1_right_shifted_float64(x):
    x64 = x.double()
    e = torch.exp(x64 - x64.max(dim=-1, keepdim=True).values)
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)


def ex1_right_pairwise(x):
    # p_i = 1 / sum_j exp(x_j - x_i)
    return 1.0 / torch.exp(x.unsqueeze(-2) - x.unsqueeze(-1)).sum(dim=-1)


# ------------------------------------------ Exercise 2: stable_softmax


def ex2_wrong_no_shift(x, dim=-1):
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_global_max(x, dim=-1):
    e = torch.exp(x - x.max())
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_min_shift(x, dim=-1):
    e = torch.exp(x - x.amin(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_dim_ignored(x, dim=-1):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def ex2_wrong_max_no_keepdim(x, dim=-1):
    e = torch.exp(x - x.max(dim=dim).values)
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_mean_shift(x, dim=-1):
    e = torch.exp(x - x.mean(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_clamped(x, dim=-1):
    e = torch.exp(x.clamp(-80, 80))
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_in_place_shift(x, dim=-1):
    x -= x.amax(dim=dim, keepdim=True)
    x.exp_()
    return x / x.sum(dim=dim, keepdim=True)


def ex2_wrong_sum_last_dim(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def ex2_refused_logsumexp(x, dim=-1):
    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))


def ex2_right_log_z(x, dim=-1):
    m = x.max(dim=dim, keepdim=True)[0]
    log_z = m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))
    return torch.exp(x - log_z)


def ex2_right_movedim(x, dim=-1):
    moved = x.movedim(dim, -1)
    e = (moved - moved.amax(-1, keepdim=True)).exp()
    return (e / e.sum(-1, keepdim=True)).movedim(-1, dim)


# ------------------------------------------ Exercise 3: softmax_backward


def ex3_wrong_diagonal_only(p, g):
    return p * (1 - p) * g


def ex3_wrong_no_keepdim(p, g):
    return p * (g - (p * g).sum(dim=-1))


def ex3_wrong_sign(p, g):
    return p * ((p * g).sum(-1, keepdim=True) - g)


def ex3_wrong_first_dim(p, g):
    return p * (g - (p * g).sum(dim=0, keepdim=True))


def ex3_wrong_sum_of_g(p, g):
    return p * (g - g.sum(dim=-1, keepdim=True))


def ex3_wrong_no_p_factor(p, g):
    return g - (p * g).sum(dim=-1, keepdim=True)


def ex3_wrong_mean(p, g):
    return p * (g - (p * g).mean(dim=-1, keepdim=True))


def ex3_wrong_jacobian_2d(p, g):
    J = torch.diag(p) - torch.outer(p, p)  # (n, n), one row only
    return J @ g


def ex3_refused_autograd(p, g):
    z = torch.log(p).detach().requires_grad_(True)
    torch.softmax(z, dim=-1).backward(g)
    return z.grad


def ex3_right_batched_jacobian(p, g):
    J = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., n, n)
    return (J @ g.unsqueeze(-1)).squeeze(-1)


def ex3_right_einsum(p, g):
    weighted = torch.einsum("...i,...i->...", p, g)  # (...)
    return p * g - p * weighted[..., None]


ENTRIES = [
    Entry(
        E1,
        "summed down dim 0",
        ex1_wrong_dim0,
        named="normalised along the first dimension (each column), not the last (each row)",
    ),
    Entry(
        E1,
        "row sums without keepdim",
        ex1_wrong_no_keepdim,
        named="summed each row but dropped the summed dimension",
    ),
    Entry(
        E1,
        "divided by the sum of everything",
        ex1_wrong_sum_all,
        named="divided by the total of the whole tensor, not by each row's own total",
    ),
    Entry(
        E1,
        "divided by the sum of the scores, not of the exps",
        ex1_wrong_sum_of_scores,
        named="divided the exponentials by the total of the raw scores, not of the exponentials",
    ),
    Entry(
        E1,
        "exp_ in place on x",
        ex1_wrong_in_place,
        named="exponentiated x in place, changing the tensor the caller passed in",
    ),
    Entry(
        E1,
        "a loop over the rows: for one matrix only",
        ex1_wrong_loop_rows,
        named="looped over the rows with `for row in x`, which are rows only of a 2-D input",
    ),
    Entry(
        E1,
        "forgot the exp",
        ex1_wrong_no_exp,
        named="normalised the scores without exponentiating them",
    ),
    Entry(
        E1,
        "wrote the sigmoid instead",
        ex1_wrong_sigmoid,
        named="used the sigmoid, 1 / (1 + e^−z), of each score on its own",
    ),
    Entry(
        E1,
        "returned the log of the softmax",
        ex1_wrong_log_softmax,
        named="returned the log of the softmax (log-probabilities), not the weights",
    ),
    Entry(E1, "torch.softmax", ex1_refused_softmax, named=REFUSED),
    Entry(E1, "max-shifted, in float64, cast back", ex1_right_shifted_float64, right=True),
    Entry(E1, "1 / sum_j exp(x_j - x_i)", ex1_right_pairwise, right=True),
    Entry(
        E2,
        "no shift at all",
        ex2_wrong_no_shift,
        named="exponentiated the scores as they are, without shifting them",
    ),
    Entry(
        E2,
        "subtracted the max of the whole tensor",
        ex2_wrong_global_max,
        named="subtracted the largest score of the whole tensor, not each row's own largest",
    ),
    Entry(
        E2,
        "subtracted the minimum instead of the maximum",
        ex2_wrong_min_shift,
        named="shifted each row by its smallest score",
    ),
    Entry(
        E2,
        "always used the last dim, whatever dim says",
        ex2_wrong_dim_ignored,
        named="always worked along the last dimension, whatever `dim` was",
    ),
    Entry(
        E2,
        "max over dim without keepdim",
        ex2_wrong_max_no_keepdim,
        named="took each row's maximum without keeping its dimension",
    ),
    Entry(E2, "subtracted the mean", ex2_wrong_mean_shift, named="shifted each row by its mean"),
    Entry(
        E2,
        "clamped the scores to [-80, 80]",
        ex2_wrong_clamped,
        named="clamped the scores instead of shifting them",
    ),
    Entry(
        E2,
        "shifted and exponentiated x in place",
        ex2_wrong_in_place_shift,
        named=(
            "changed a tensor it was given in place (an operation ending in _, `-=`, `/=`, "
            "or an assignment into it)"
        ),
    ),
    Entry(
        E2,
        "shift along dim, but summed along the last dim",
        ex2_wrong_sum_last_dim,
        named="shifted along `dim` but took the total along the last dimension",
    ),
    Entry(E2, "torch.logsumexp", ex2_refused_logsumexp, named=REFUSED),
    Entry(E2, "through log Z = m + log sum exp(x - m)", ex2_right_log_z, right=True),
    Entry(E2, "movedim to the end and back", ex2_right_movedim, right=True),
    Entry(
        E3,
        "only the diagonal of the Jacobian: p(1 - p) g",
        ex3_wrong_diagonal_only,
        named="used only the diagonal of J, p_j(1 − p_j)·g_j",
    ),
    Entry(
        E3,
        "the row sum without keepdim",
        ex3_wrong_no_keepdim,
        named="took each row's weighted sum without keeping its dimension",
    ),
    Entry(
        E3,
        "the sign the wrong way round",
        ex3_wrong_sign,
        named="got the sign of the whole result the wrong way round",
    ),
    Entry(
        E3,
        "summed over dim 0",
        ex3_wrong_first_dim,
        named="took the weighted sum down the batch (dim 0), not along each row",
    ),
    Entry(
        E3,
        "subtracted the sum of g, not of p·g",
        ex3_wrong_sum_of_g,
        named="subtracted the plain sum of g, Σ_i g_i, instead of its average weighted by p",
    ),
    Entry(
        E3,
        "forgot to multiply by p",
        ex3_wrong_no_p_factor,
        named="left out the final multiplication by p",
    ),
    Entry(
        E3,
        "the mean of p·g instead of its sum",
        ex3_wrong_mean,
        named="took the mean of p·g along each row instead of its sum",
    ),
    Entry(
        E3,
        "the Jacobian with torch.diag: one row only",
        ex3_wrong_jacobian_2d,
        named="built J with torch.diag and torch.outer, which take one row only",
    ),
    Entry(E3, "autograd through log p", ex3_refused_autograd, named=REFUSED),
    Entry(E3, "batched Jacobian with diag_embed", ex3_right_batched_jacobian, right=True),
    Entry(E3, "p·g minus p times an einsum", ex3_right_einsum, right=True),
]
