"""What notebook 03's checkers share: the reference layer and the properties of a mix.

Every answer of notebook 03 returns ``(out, weights)``: weights whose rows are distributions,
and an output that is those weights applied to the input vectors. The two properties here
turn "differs at index (1, 2)" into what a right answer must do. Notebook 03.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, failed
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._outcomes import call
from attnlib.checks.engine import Property

Tensor = torch.Tensor


def naive_layer(x: Tensor) -> tuple[Tensor, Tensor]:
    """softmax(x xᵀ) x in float64: the reference layer of the notebook's section 2."""
    x = x.double()
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1)
    return weights @ x, weights


def out_is_weights_applied_to_x() -> Property:
    """The output is the returned weights applied to the input vectors: out = weights @ x."""

    def problem(got: object, case: Case) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return None
        out, weights = got
        x = case.args[0]
        if not (isinstance(out, Tensor) and isinstance(weights, Tensor)):
            return None
        if weights.shape != (*x.shape[:-1], x.shape[-2]) or out.shape != x.shape:
            return None
        mixed = weights.detach().double() @ x.double()
        if torch.isfinite(mixed).all() and not torch.allclose(
            out.detach().double(), mixed, atol=1e-3, rtol=1e-3
        ):
            return (
                "your out is not your weights applied to x: each output should be the mix of "
                "the input vectors that its row of weights describes"
            )
        return None

    return Property(problem)


def zero_outside(allowed_of: Callable[[Case], Tensor], what: str) -> Property:
    """The weights are exactly 0 wherever ``allowed_of(case)`` is False (``what`` says where)."""

    def problem(got: object, case: Case) -> str | None:
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return None
        weights = got[1]
        allowed = allowed_of(case)
        if not isinstance(weights, Tensor) or weights.shape[-2:] != allowed.shape[-2:]:
            return None
        stray = (weights.detach().double() != 0) & ~allowed & ~torch.isnan(weights.double())
        if bool(stray.any()):
            where = tuple(int(i) for i in torch.nonzero(stray)[0])
            return (
                f"the weight at index {where} is {float(weights[where]):.3g}, but that key is "
                f"{what}: its weight must be exactly 0"
            )
        return None

    return Property(problem)


def named_by_overflow(
    result: CheckResult,
    exercise: Exercise,
    fn: Callable[..., object],
    float16_case: Case,
    mistake: Mistake,
) -> CheckResult:
    """``result``, or, when it names no mistake and ``fn`` overflows float16 on
    ``float16_case`` (a literal such as -1e9 that float16 cannot hold), a report naming
    ``mistake``: whatever else is wrong, that one is certain."""
    known = ("The mistake:", "does not accept it")
    if result.passed or not result.done or any(words in result.message for words in known):
        return result
    error = call(fn, float16_case).error
    if error is None or "overflow" not in str(error):
        return result
    problem = f"your function raised {type(error).__name__}: {error}"
    return failed(exercise, fn, f"case '{float16_case.description}'", problem, mistake)
