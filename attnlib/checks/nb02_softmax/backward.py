"""Notebook 02, Exercise 3: the gradient softmax passes back, Jᵀg, for any batch of rows.

The expected gradients come from autograd in float64. The cases show each mistake: a uniform
g (whose right result is exactly 0), a square batch (a sum without ``keepdim``), a 3-D input
(``torch.diag`` takes one row only) and a saturated row.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, vec
from attnlib.checks._implementations import (
    AUTOGRAD,
    LOG_SOFTMAX,
    SOFTMAX,
    SOFTMAX_GRADIENT,
)
from attnlib.checks._slips import transposed_batch
from attnlib.checks.engine import check_function

Tensor = torch.Tensor


SOFTMAX_BACKWARD = register(
    Exercise(
        id="ex3_softmax_backward",
        notebook="02",
        number=3,
        name="softmax_backward",
        hints=(
            "The gradient with respect to the scores is the gradient with respect to the weights "
            "multiplied by Jᵀ, with J the Jacobian of section 4. Write one entry of Jᵀg as a sum "
            "over i and simplify it with J_ij = p_i(δ_ij − p_j).",
            "Entry j of Jᵀg is p_j·g_j minus p_j times one number per row: Σ_i p_i·g_i, the "
            "average of g weighted by p. Nothing of shape (n, n) is needed.",
            "For each row, compute the p-weighted sum of g along the last dimension (keep that "
            "dimension so it lines up with the row), subtract it from g, and multiply the result "
            "by p entry by entry. Check on a saturated row: the result is almost 0.",
        ),
    )
)

# An answer may not let autograd, torch's softmax backward or attnlib's Jacobian do the work,
# nor run a softmax of its own making (autograd through it is the work).
GRADIENT_IMPLEMENTATIONS = SOFTMAX_GRADIENT | AUTOGRAD | SOFTMAX | LOG_SOFTMAX


def _weighted(p: Tensor, g: Tensor) -> Tensor:
    return (p * g).sum(dim=-1, keepdim=True)


MISTAKES = (
    Mistake(
        "multiplied g by p and stopped: only the diagonal term p_j·g_j",
        "J also has the entries −p_i·p_j off its diagonal: every weight moves when any one "
        "score moves, so each entry of the result also depends on all of g.",
        lambda p, g: p * g,
    ),
    Mistake(
        "used only the diagonal of J, p_j(1 − p_j)·g_j",
        "the entries off the diagonal, −p_i·p_j, are missing: they carry how raising one score "
        "lowers every other weight.",
        lambda p, g: p * (1 - p) * g,
    ),
    Mistake(
        "got the sign of the whole result the wrong way round",
        "the diagonal term p_j·g_j enters with a plus and the weighted sum with a minus: "
        "raising a score whose weight the loss wants larger must lower the loss.",
        lambda p, g: p * (_weighted(p, g) - g),
    ),
    Mistake(
        "subtracted the plain mean of g instead of its average weighted by p",
        "the term from the entries off the diagonal is Σ_i p_i·g_i: each g_i counts as much "
        "as its weight, not equally.",
        lambda p, g: p * (g - g.mean(dim=-1, keepdim=True)),
    ),
    Mistake(
        "took the mean of p·g along each row instead of its sum",
        "the term from the entries off the diagonal is Σ_i p_i·g_i, a sum over the row: a "
        "mean divides it by n, so the result no longer matches the change of the loss.",
        lambda p, g: p * (g - (p * g).mean(dim=-1, keepdim=True)),
    ),
    Mistake(
        "took the weighted sum over the whole batch, not over each row",
        "each row is its own softmax with its own Jacobian: the sum runs along the last "
        "dimension only.",
        lambda p, g: p * (g - (p * g).sum()),
    ),
    Mistake(
        "took the weighted sum down the batch (dim 0), not along each row",
        "each row is its own softmax with its own Jacobian: Σ_i p_i·g_i runs over the entries "
        "of one row, the last dimension, not over the rows of the batch.",
        lambda p, g: p * (g - (p * g).sum(dim=0, keepdim=True)),
    ),
    Mistake(
        "took each row's weighted sum without keeping its dimension",
        "the sums have shape (B,) and broadcast along the columns: a square batch mixes rows, "
        "any other shape fails.",
        lambda p, g: p * (g - (p * g).sum(dim=-1)),
    ),
    Mistake(
        "returned the Jacobian (or a matrix per row) instead of the gradient",
        "the gradient has the shape of the scores, (..., n): it is Jᵀ applied to g, not J.",
        lambda p, g: torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2),
    ),
    Mistake(
        "built J with torch.diag and torch.outer, which take one row only",
        "for a batch, torch.diag returns a diagonal instead of building a matrix and "
        "torch.outer refuses: the result must work row by row for any (..., n).",
        lambda p, g: g @ (torch.diag(p) - torch.outer(p, p)),
    ),
    Mistake(
        "multiplied by the weights' product p_j·Σ_i p_i instead of the weighted sum of g",
        "the second term needs g: it is p_j·Σ_i p_i·g_i, and Σ_i p_i alone is always 1.",
        lambda p, g: p * g - p * p.sum(dim=-1, keepdim=True),
    ),
    Mistake(
        "subtracted the plain sum of g, Σ_i g_i, instead of its average weighted by p",
        "the term from the entries off the diagonal is Σ_i p_i·g_i: each g_i counts as much "
        "as its weight, and the weights add up to 1.",
        lambda p, g: p * (g - g.sum(dim=-1, keepdim=True)),
    ),
    Mistake(
        "left out the final multiplication by p",
        "every entry of J, p_i(δ_ij − p_j), carries the factor p of its row: entry j of the "
        "result is p_j times (g_j minus the weighted sum), and a saturated row's tiny weights "
        "make it tiny.",
        lambda p, g: g - _weighted(p, g),
    ),
    Mistake(
        "added p·pᵀ to the diagonal instead of subtracting it (J = diag(p) + p pᵀ)",
        "the entries off the diagonal are −p_i·p_j: raising one score lowers every other "
        "weight. With a plus, the weighted sum is added instead of subtracted.",
        lambda p, g: p * g + p * _weighted(p, g),
    ),
    transposed_batch(
        lambda p, g: ((torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)) @ g.T).T,
        "for one row, g.T is g itself; for a batch (B, n), .T turns it into (n, B), and the "
        "product pairs every row's Jacobian with every row's g: only the last two dimensions "
        "of a batch may swap, and here g needs one extra dimension, not a transpose.",
    ),
    Mistake(
        "mixed up p and g in the formula",
        "the result is p_j times (g_j minus the weighted sum Σ_i p_i·g_i): the weights p "
        "multiply, and it is g from which the sum is subtracted.",
        lambda p, g: g * (p - _weighted(p, g)),
    ),
)


def _autograd_backward(p_scores: Tensor, g: Tensor) -> tuple[Tensor, Tensor]:
    """The weights of ``p_scores`` and, by autograd in float64, the gradient of ⟨g, p⟩."""
    z = p_scores.double().clone().requires_grad_()
    p = torch.softmax(z, dim=-1)
    (grad,) = torch.autograd.grad(p, z, grad_outputs=g.double())
    return p.detach(), grad


def _backward_cases() -> list[Case]:
    gen = fixed_generator()
    specs = [
        ("softmax([1, 2, 3]), g = [1, 0, 0]", vec(1, 2, 3), vec(1, 0, 0)),
        ("a uniform g = [1, 1, 1, 1]: the result is 0", vec(0.5, -1, 2, 0), vec(1, 1, 1, 1)),
        (
            "a batch of 3 rows of 5",
            torch.randn(3, 5, generator=gen),
            torch.randn(3, 5, generator=gen),
        ),
        (
            "a square batch (4, 4)",
            torch.randn(4, 4, generator=gen),
            torch.randn(4, 4, generator=gen),
        ),
        (
            "a (2, 3, 4) tensor",
            torch.randn(2, 3, 4, generator=gen),
            torch.randn(2, 3, 4, generator=gen),
        ),
        ("a saturated row softmax(10·[1, 2, 3, 4])", 10 * vec(1, 2, 3, 4), vec(0.3, -1, 2, 0.5)),
    ]
    cases = []
    for description, scores, g in specs:
        p, grad = _autograd_backward(scores, g)
        cases.append(Case(description, (p, g.double()), grad, atol=1e-7, rtol=1e-5))
    return cases


@checker_of(SOFTMAX_BACKWARD, MISTAKES)
def check_softmax_backward(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``softmax_backward(p, g)``: ∂L/∂z from p = softmax(z) and g = ∂L/∂p, (..., n)."""
    return check_function(
        SOFTMAX_BACKWARD,
        fn,
        _backward_cases(),
        MISTAKES,
        forbidden=GRADIENT_IMPLEMENTATIONS,
    )
