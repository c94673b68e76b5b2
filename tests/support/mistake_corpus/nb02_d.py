"""Learner answers to notebook 02's exercises (softmax), corpus d, written blind: float16 scores
that come back in another dtype, epsilons in a softmax's total, batched Jacobians, crashes."""

from __future__ import annotations

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward"

# ------------------------------------------ Exercise 1: softmax_from_formula


def ex1_wrong_eps_total(x):
    e = torch.exp(x)
    return e / (e.sum(dim=-1, keepdim=True) + 1e-3)


def ex1_wrong_float32(x):
    e = torch.exp(x.to(torch.float32))
    return e / e.sum(-1, keepdim=True)


def ex1_wrong_dot_t_batch(x):
    e = torch.exp(x).T
    return (e / e.sum(dim=0)).T


def ex1_right_reciprocal(x):
    e = x.exp()
    return e * e.sum(dim=-1, keepdim=True).reciprocal()


def ex1_right_div_keepdim(x):
    return torch.div(torch.exp(x), torch.exp(x).sum(-1).unsqueeze(-1))


# ------------------------------------------ Exercise 2: stable_softmax


def ex2_wrong_float32_for_half(x, dim=-1):
    x = x.float()  # float16's exp overflows: work in float32
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_double_for_safety(x, dim=-1):
    x = x.double()
    e = torch.exp(x - x.max(dim=dim, keepdim=True).values)
    return e / e.sum(dim=dim, keepdim=True)


def ex2_wrong_eps_large(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / (e.sum(dim=dim, keepdim=True) + 1e-2)


def ex2_wrong_float32_total(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    total = e.sum(dim=dim, keepdim=True, dtype=torch.float32)
    return e / total


def ex2_wrong_max_tuple(x, dim=-1):
    top = torch.max(x, dim)
    e = torch.exp(x - top)
    return e / e.sum(dim, keepdim=True)


def ex2_right_float32_and_back(x, dim=-1):
    work = x.float()
    e = torch.exp(work - work.amax(dim=dim, keepdim=True))
    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)


def ex2_right_log_domain(x, dim=-1):
    shifted = x - x.amax(dim=dim, keepdim=True)
    log_total = torch.log(torch.exp(shifted).sum(dim=dim, keepdim=True))
    return torch.exp(shifted - log_total)


# ------------------------------------------ Exercise 3: softmax_backward


def ex3_wrong_outer_2d(p, g):
    J = torch.diag(p) - torch.outer(p, p)
    return J @ g


def ex3_wrong_no_keepdim(p, g):
    return p * (g - (p * g).sum(dim=-1))


def ex3_wrong_empty_jacobian(p, g):
    n = p.shape[-1]
    J = torch.empty(*p.shape, n)  # (..., n, n)
    for i in range(n):
        for j in range(n):
            J[..., i, j] = p[..., i] * (float(i == j) - p[..., j])
    return (J @ g.unsqueeze(-1)).squeeze(-1)


def ex3_wrong_dot_t_batch(p, g):
    J = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
    return (J @ g.T).T


def ex3_right_einsum_jacobian(p, g):
    J = torch.diag_embed(p) - torch.einsum("...i,...j->...ij", p, p)
    return torch.einsum("...ij,...j->...i", J, g)


def ex3_right_inner(p, g):
    inner = torch.einsum("...i,...i->...", p, g)
    return p * g - p * inner.unsqueeze(-1)


ENTRIES = [
    Entry(
        E1,
        "+ 1e-3 on the total",
        ex1_wrong_eps_total,
        named="added a small number (an epsilon) to the total",
    ),
    Entry(E1, "x.to(float32) first", ex1_wrong_float32, named="returns float32 for float64 input"),
    Entry(
        E1,
        "exp(x).T, sum over dim 0, .T back (reverses a batch)",
        ex1_wrong_dot_t_batch,
        right=True,
    ),
    Entry(E1, "times the reciprocal of the total", ex1_right_reciprocal, right=True),
    Entry(E1, "torch.div by the total unsqueezed", ex1_right_div_keepdim, right=True),
    Entry(
        E2,
        "x.float() for float16, not cast back",
        ex2_wrong_float32_for_half,
        named="returns float32 for float16 input",
    ),
    Entry(
        E2,
        "x.double() for safety, not cast back",
        ex2_wrong_double_for_safety,
        named="returns float64 for float32 input",
    ),
    Entry(
        E2,
        "+ 1e-2 on the total",
        ex2_wrong_eps_large,
        named="added a small number (an epsilon) to the total",
    ),
    Entry(
        E2,
        "the total summed in float32",
        ex2_wrong_float32_total,
        named="returns float32 for float16 input",
    ),
    Entry(
        E2,
        "x - torch.max(x, dim): values and indices",
        ex2_wrong_max_tuple,
        named=("subtracted what max(dim=...) returns, values and indices together, not the values"),
    ),
    Entry(E2, "in float32, cast back to x.dtype", ex2_right_float32_and_back, right=True),
    Entry(E2, "log of the total, then exp", ex2_right_log_domain, right=True),
    Entry(
        E3,
        "torch.diag and torch.outer: one row only",
        ex3_wrong_outer_2d,
        named="built J with torch.diag and torch.outer, which take one row only",
    ),
    Entry(
        E3,
        "(p * g).sum(-1) without keepdim",
        ex3_wrong_no_keepdim,
        named="took each row's weighted sum without keeping its dimension",
    ),
    Entry(
        E3,
        "the Jacobian filled into torch.empty (float32)",
        ex3_wrong_empty_jacobian,
        named="a float32 constant breaks float64",
    ),
    Entry(
        E3,
        "J @ g.T, .T back (reverses a batch)",
        ex3_wrong_dot_t_batch,
        named=("used .T on a batch, which reverses every dimension, not only the last two"),
    ),
    Entry(E3, "the Jacobian by einsum", ex3_right_einsum_jacobian, right=True),
    Entry(E3, "p*g minus p times the inner product", ex3_right_inner, right=True),
]
