"""Checkers for the notebooks' exercises.

A checker calls the learner's function on several cases, compares each result
with attnlib's reference and returns a :class:`CheckResult` whose text says
what is wrong (which case, expected vs got, a hint) or that all cases passed.
It never lets the learner's exception escape as a bare traceback, and a
function that still raises ``NotImplementedError`` is reported as not done yet.

In a notebook, make the checker call the last line of the cell so that its
report is shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.masks import causal_mask
from attnlib.naive_attention import naive_self_attention
from attnlib.similarity import cosine_similarity, dot
from attnlib.softmax import softmax


@dataclass(frozen=True)
class CheckResult:
    """The outcome of a checker: truthy when every case passed; its repr is the report."""

    name: str
    passed: bool
    message: str
    done: bool = True

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__


@dataclass(frozen=True)
class _Case:
    description: str
    args: tuple[Any, ...]
    expected: torch.Tensor | tuple[torch.Tensor, ...]


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return f"{type(value).__name__}"


def _short(tensor: torch.Tensor) -> str:
    flat = tensor.detach().flatten().tolist()
    shown = ", ".join(f"{v:.4g}" for v in flat[:6])
    return f"[{shown}{', …' if len(flat) > 6 else ''}]"


def _compare(
    got: object, expected: torch.Tensor, what: str, atol: float, rtol: float
) -> str | None:
    """``None`` when ``got`` matches ``expected``, else a sentence saying how it differs."""
    if not isinstance(got, torch.Tensor):
        got_as_number = isinstance(got, (int, float)) and expected.dim() == 0
        if not got_as_number:
            return f"{what} should be a torch.Tensor, but your function returned {_describe(got)}"
        got = torch.tensor(float(got), dtype=torch.float64)
    if tuple(got.shape) != tuple(expected.shape):
        return f"{what} has shape {tuple(got.shape)}, expected shape {tuple(expected.shape)}"
    got64 = got.detach().to(torch.float64)
    expected = expected.to(torch.float64)
    if torch.isnan(got64).any():
        return f"{what} contains NaN: got {_short(got64)}, expected {_short(expected)}"
    close = torch.isclose(got64, expected, atol=atol, rtol=rtol)
    if not bool(close.all()):
        bad = tuple(int(i) for i in torch.nonzero(~close)[0])
        return (
            f"{what} differs at index {bad}: got {got64[bad].item():.6g}, "
            f"expected {expected[bad].item():.6g} "
            f"(got {_short(got64)}, expected {_short(expected)})"
        )
    return None


def _run_cases(
    name: str,
    learner_fn: Callable[..., Any],
    cases: list[_Case],
    hints: dict[str, str],
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> CheckResult:
    if not callable(learner_fn):
        return CheckResult(
            name, False, f"✗ {name}: expected a function, got {_describe(learner_fn)}"
        )
    for case in cases:
        args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in case.args)
        try:
            got = learner_fn(*args)
        except NotImplementedError as error:
            detail = f" ({error})" if str(error) else ""
            return CheckResult(
                name,
                False,
                f"… {name}: not done yet{detail}. Fill in the function above, run its cell, "
                "then run this check again.",
                done=False,
            )
        except Exception as error:  # the learner's bug, reported instead of a traceback
            return CheckResult(
                name,
                False,
                f"✗ {name}, case '{case.description}': your function raised "
                f"{type(error).__name__}: {error}\n  hint: {hints.get('raised', hints['default'])}",
            )
        problem = _check_output(got, case.expected, atol, rtol)
        if problem is not None:
            hint = hints.get(case.description, hints["default"])
            return CheckResult(
                name, False, f"✗ {name}, case '{case.description}': {problem}\n  hint: {hint}"
            )
    return CheckResult(name, True, f"✓ {name} is correct on all {len(cases)} cases.")


def _check_output(
    got: object, expected: torch.Tensor | tuple[torch.Tensor, ...], atol: float, rtol: float
) -> str | None:
    if isinstance(expected, torch.Tensor):
        return _compare(got, expected, "the result", atol, rtol)
    if not isinstance(got, (tuple, list)) or len(got) != len(expected):
        return f"the function should return a pair (out, weights), but it returned {_describe(got)}"
    for label, got_part, expected_part in zip(("out", "weights"), got, expected, strict=True):
        problem = _compare(got_part, expected_part, label, atol, rtol)
        if problem is not None:
            return problem
    return None


def _generator() -> torch.Generator:
    # Fixed cases: a learner sees the same report every time they run the check.
    return torch.Generator().manual_seed(1234)


def _vec(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


# --- notebook 01 ---------------------------------------------------------------------------


def check_dot(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check a learner's ``dot(a, b)`` (sum of elementwise products over the last dim)."""
    g = _generator()
    batch_a, batch_b = torch.randn(3, 5, generator=g), torch.randn(3, 5, generator=g)
    cases = [
        _Case("[1, 2, 3]·[4, 5, 6]", (_vec(1, 2, 3), _vec(4, 5, 6)), _vec(32.0)[0]),
        _Case("orthogonal vectors", (_vec(1, 0), _vec(0, 3)), _vec(0.0)[0]),
        _Case("opposite vectors", (_vec(1, -2), _vec(-2, 4)), _vec(-10.0)[0]),
        _Case(
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
    return _run_cases("dot", fn, cases, hints)


def check_cosine_similarity(
    fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> CheckResult:
    """Check a learner's ``cosine_similarity(a, b)`` for 1-D vectors."""
    g = _generator()
    a, b = torch.randn(6, generator=g).double(), torch.randn(6, generator=g).double()
    cases = [
        _Case("same direction, different lengths", (_vec(1, 2, 2), _vec(2, 4, 4)), _vec(1.0)[0]),
        _Case("opposite directions", (_vec(3, 0), _vec(-1, 0)), _vec(-1.0)[0]),
        _Case("orthogonal", (_vec(1, 1), _vec(1, -1)), _vec(0.0)[0]),
        _Case("random 6-d vectors", (a, b), cosine_similarity(a, b)),
    ]
    hints = {
        "default": "divide the dot product by the product of the two lengths: "
        "(a * b).sum() / (a.norm() * b.norm()).",
        "same direction, different lengths": "the cosine ignores length: scaling a vector "
        "must not change the result. Did you divide by both norms?",
    }
    return _run_cases("cosine_similarity", fn, cases, hints)


def check_score_table(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check a learner's ``score_table(X)`` = every pairwise dot product ``X Xᵀ``."""
    g = _generator()
    x = torch.randn(4, 3, generator=g).double()
    cases = [
        _Case("2 orthogonal unit vectors", (torch.eye(2, dtype=torch.float64),), torch.eye(2)),
        _Case("4 random 3-d vectors", (x,), x @ x.T),
    ]
    hints = {
        "default": "entry (i, j) is dot(X[i], X[j]); all of them at once is X @ X.T, shape (T, T).",
    }
    return _run_cases("score_table", fn, cases, hints)


# --- notebook 02 ---------------------------------------------------------------------------


def check_softmax(
    fn: Callable[[torch.Tensor], torch.Tensor], require_stable: bool = True
) -> CheckResult:
    """Check a learner's ``softmax(x)`` over the last dim; with ``require_stable``, also at
    scores in the thousands, where the plain formula overflows."""
    g = _generator()
    batch = torch.randn(3, 5, generator=g).double()
    cases = [
        _Case("[1, 2, 3, 4]", (_vec(1, 2, 3, 4),), torch.softmax(_vec(1, 2, 3, 4), -1)),
        _Case("all equal scores", (_vec(5, 5, 5),), _vec(1, 1, 1) / 3),
        _Case("a batch of 3 rows", (batch,), torch.softmax(batch, -1)),
    ]
    if require_stable:
        big = _vec(1000, 1001, 1002)
        cases.append(_Case("large scores [1000, 1001, 1002]", (big,), torch.softmax(big, -1)))
        very_negative = _vec(-1000, -1001, -1002)
        cases.append(
            _Case("very negative scores", (very_negative,), torch.softmax(very_negative, -1))
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
    return _run_cases("softmax", fn, cases, hints, atol=1e-6)


def check_softmax_jacobian(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check a learner's ``softmax_jacobian(p)`` for a 1-D probability vector against autograd."""

    def autograd_jacobian(z: torch.Tensor) -> torch.Tensor:
        return torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), z)

    cases = []
    for description, scores in [
        ("p = softmax([1, 2, 3])", _vec(1, 2, 3)),
        ("p = softmax([0, 0, 0, 0])", _vec(0, 0, 0, 0)),
        ("a saturated p = softmax([1, 2, 30])", _vec(1, 2, 30)),
    ]:
        cases.append(_Case(description, (softmax(scores),), autograd_jacobian(scores)))
    hints = {
        "default": "J[i, j] = p[i] * (δ_ij - p[j]): torch.diag(p) - torch.outer(p, p).",
    }
    return _run_cases("softmax_jacobian", fn, cases, hints, atol=1e-7)


# --- notebook 03 ---------------------------------------------------------------------------


def _attention_cases() -> list[tuple[str, torch.Tensor]]:
    g = _generator()
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
    cases = [_Case(d, (x,), reference(x)) for d, x in _attention_cases()]
    return _run_cases(name, fn, cases, {**_ATTENTION_HINTS, "default": default_hint})


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
