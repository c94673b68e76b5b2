"""Checkers for the exercises of notebooks 01–03."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from attnlib.checks import CheckResult
from attnlib.checks._framework import Case, fixed_generator, run_cases, vec
from attnlib.masks import causal_mask
from attnlib.naive_attention import naive_self_attention
from attnlib.similarity import cosine_similarity, dot
from attnlib.softmax import softmax

# --- notebook 01 ---------------------------------------------------------------------------


def check_dot(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check a learner's ``dot(a, b)`` (sum of elementwise products over the last dim)."""
    g = fixed_generator()
    batch_a, batch_b = torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g)
    cases = [
        Case("[1, 2, 3]·[4, 5, 6]", (vec(1, 2, 3), vec(4, 5, 6)), vec(32.0)[0]),
        Case("orthogonal vectors", (vec(1, 0), vec(0, 3)), vec(0.0)[0]),
        Case("opposite vectors", (vec(1, -2), vec(-2, 4)), vec(-10.0)[0]),
        Case(
            "a batch of 3 pairs",
            (batch_a, batch_b),
            dot(batch_a.double(), batch_b.double()),
        ),
    ]
    hints = {
        "default": "multiply elementwise, then add up: (a * b).sum(dim=-1).",
        "a batch of 3 pairs": "sum over the last dimension only (dim=-1), so each row gives "
        "one number.",
    }
    return run_cases("dot", fn, cases, hints)


def check_cosine_similarity(
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> CheckResult:
    """Check a learner's ``cosine_similarity(a, b)`` for 1-D vectors."""
    g = fixed_generator()
    a, b = torch.randn(6, generator=g).double(), torch.randn(6, generator=g).double()
    cases = [
        Case("same direction, different lengths", (vec(1, 2, 2), vec(2, 4, 4)), vec(1.0)[0]),
        Case("opposite directions", (vec(3, 0), vec(-1, 0)), vec(-1.0)[0]),
        Case("orthogonal", (vec(1, 1), vec(1, -1)), vec(0.0)[0]),
        Case("random 6-d vectors", (a, b), cosine_similarity(a, b)),
    ]
    hints = {
        "default": "divide the dot product by the product of the two lengths: "
        "(a * b).sum() / (a.norm() * b.norm()).",
        "same direction, different lengths": "the cosine ignores length: scaling a vector "
        "must not change the result. Did you divide by both norms?",
    }
    return run_cases("cosine_similarity", fn, cases, hints)


def check_score_table(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check a learner's ``score_table(X)`` = every pairwise dot product ``X Xᵀ``."""
    g = fixed_generator()
    x = torch.randn(4, 3, generator=g).double()
    cases = [
        Case("2 orthogonal unit vectors", (torch.eye(2, dtype=torch.float64),), torch.eye(2)),
        Case("4 random 3-d vectors", (x,), x @ x.T),
    ]
    hints = {
        "default": "entry (i, j) is dot(X[i], X[j]); all of them at once is X @ X.T, shape (T, T).",
    }
    return run_cases("score_table", fn, cases, hints)


# --- notebook 02 ---------------------------------------------------------------------------


def check_softmax(
    fn: Callable[[torch.Tensor], torch.Tensor], require_stable: bool = True
) -> CheckResult:
    """Check a learner's ``softmax(x)`` over the last dim; with ``require_stable``, also at
    scores in the thousands, where the plain formula overflows."""
    g = fixed_generator()
    batch = torch.randn(3, 5, generator=g).double()
    cases = [
        Case("[1, 2, 3, 4]", (vec(1, 2, 3, 4),), torch.softmax(vec(1, 2, 3, 4), -1)),
        Case("all equal scores", (vec(5, 5, 5),), vec(1, 1, 1) / 3),
        Case("a batch of 3 rows", (batch,), torch.softmax(batch, -1)),
    ]
    if require_stable:
        big = vec(1000, 1001, 1002)
        cases.append(Case("large scores [1000, 1001, 1002]", (big,), torch.softmax(big, -1)))
        very_negative = vec(-1000, -1001, -1002)
        cases.append(
            Case("very negative scores", (very_negative,), torch.softmax(very_negative, -1))
        )
    hints = {
        "default": "exp(x) / exp(x).sum(dim=-1, keepdim=True); keepdim=True keeps one sum per "
        "row so the division broadcasts.",
        "large scores [1000, 1001, 1002]": "exp(1000) overflows to inf and inf/inf is NaN: "
        "subtract the row maximum first, x - x.max(dim=-1, keepdim=True).values. "
        "It cancels out of the ratio.",
        "very negative scores": "exp(-1000) underflows to 0 and 0/0 is NaN: subtracting the "
        "row maximum fixes this case too.",
        "a batch of 3 rows": "normalise each row on its own: sum over dim=-1 with keepdim=True.",
    }
    return run_cases("softmax", fn, cases, hints, atol=1e-6)


def check_softmax_jacobian(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check a learner's ``softmax_jacobian(p)`` for a 1-D probability vector against autograd."""

    def autograd_jacobian(z: torch.Tensor) -> torch.Tensor:
        return torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), z)

    cases = []
    for description, scores in [
        ("p = softmax([1, 2, 3])", vec(1, 2, 3)),
        ("p = softmax([0, 0, 0, 0])", vec(0, 0, 0, 0)),
        ("a saturated p = softmax([1, 2, 30])", vec(1, 2, 30)),
    ]:
        cases.append(Case(description, (softmax(scores),), autograd_jacobian(scores)))
    hints = {
        "default": "J[i, j] = p[i] * (δ_ij - p[j]): torch.diag(p) - torch.outer(p, p).",
    }
    return run_cases("softmax_jacobian", fn, cases, hints, atol=1e-7)


# --- notebook 03 ---------------------------------------------------------------------------


def _attention_cases() -> list[tuple[str, torch.Tensor]]:
    g = fixed_generator()
    example = torch.tensor(
        [[1.0, 0.0, 1.0, 0.0], [0.0, 2.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]], dtype=torch.float64
    )
    return [
        ("the 3×4 example", example),
        ("5 random 8-d vectors", torch.randn(5, 8, generator=g).double()),
        ("a batch of 2 sequences", torch.randn(2, 4, 3, generator=g).double()),
    ]


def _scaled_reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    weights = softmax(x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1]))
    return weights @ x, weights


def _causal_reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    may_attend = causal_mask(x.shape[-2])  # (T, T), True on and below the diagonal
    scores = (x @ x.transpose(-2, -1)).masked_fill(~may_attend, -torch.inf)
    weights = softmax(scores)
    return weights @ x, weights


_ATTENTION_HINTS = {
    "raised": "use x.transpose(-2, -1) rather than x.T so that a batch (B, T, C) works too.",
    "a batch of 2 sequences": "for a batch (B, T, C), transpose only the last two dims: "
    "x.transpose(-2, -1), and take softmax over dim=-1.",
}


def _check_attention_variant(
    name: str,
    fn: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    reference: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    default_hint: str,
) -> CheckResult:
    cases = [Case(d, (x,), reference(x)) for d, x in _attention_cases()]
    return run_cases(name, fn, cases, {**_ATTENTION_HINTS, "default": default_hint})


def check_naive_self_attention(
    fn: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
) -> CheckResult:
    """Check a learner's naive self-attention: ``weights = softmax(X Xᵀ)``, ``out = weights X``."""
    return _check_attention_variant(
        "naive_self_attention",
        fn,
        naive_self_attention,
        "scores = x @ x.transpose(-2, -1); weights = softmax over the last dim; "
        "out = weights @ x. Return (out, weights).",
    )


def check_scaled_self_attention(
    fn: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
) -> CheckResult:
    """Check ``weights = softmax(X Xᵀ / √C)``, ``out = weights X``."""
    return _check_attention_variant(
        "scaled_self_attention",
        fn,
        _scaled_reference,
        "divide the scores by math.sqrt(C), where C = x.shape[-1], before the softmax. "
        "Return (out, weights).",
    )


def check_causal_self_attention(
    fn: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
) -> CheckResult:
    """Check naive self-attention where position t may only look at positions ≤ t."""
    return _check_attention_variant(
        "causal_self_attention",
        fn,
        _causal_reference,
        "before the softmax, set the scores of the future (above the diagonal) to -inf: "
        "allowed = torch.ones(T, T, dtype=torch.bool).tril() is True where t may attend, "
        "then scores.masked_fill(~allowed, -torch.inf). Their weights become exactly 0.",
    )
