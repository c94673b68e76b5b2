"""Notebook 00, Exercise 5: the derivative of an elementwise function at many points at once,
with autograd.

``derivative(f, x)`` returns f'(x_i) for every entry of ``x``, where ``f`` acts entry by entry
(as ``torch.tanh`` does). The functions are ones the notebook never shows; the expected
derivatives are worked out by hand. Besides the cases, the check looks at what a comparison
of values cannot see: whether the ``x`` it passed came back changed (requiring gradients, or
with a ``.grad``), and, for a wrong answer, how it called ``f`` (the mistakes are in
:mod:`.derivative_mistakes`): at x + h, as a finite difference does; under ``torch.no_grad()``,
which records nothing; on a float32 copy, which rounds every derivative.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Exercise, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, compare_outputs, fixed_generator, randn64
from attnlib.checks._outcomes import call
from attnlib.checks.engine import check_function
from attnlib.checks.nb00_pytorch.derivative_mistakes import (
    CHANGES_X,
    FINITE_DIFFERENCE,
    IN_FLOAT32,
    MISTAKES,
    NO_REQUIRES_GRAD,
    UNDER_NO_GRAD,
)

Tensor = torch.Tensor
Function = Callable[[Tensor], Tensor]

DERIVATIVE = register(
    Exercise(
        id="ex5_elementwise_derivative",
        notebook="00",
        number=5,
        name="elementwise_derivative",
        hints=(
            "backward() differentiates one number, not a tensor of many. Look for one number, "
            "built from f(x), whose derivative with respect to x_i is f'(x_i) for every i at "
            "once: entry i of f(x) depends on x_i and on nothing else.",
            "Add up the entries of f(x): in the sum, only the term f(x_i) depends on x_i, so the "
            "sum's gradient is the list of f'(x_i). Record the operations on a copy of x, not on "
            "the x you were given, which must come back as it was.",
            "Detach and clone x, make the copy require gradients, call f on the copy, add up the "
            "result, call backward() once and return the copy's .grad. (A mean instead of the "
            "sum divides every derivative by the number of entries.)",
        ),
    )
)


def _silu_derivative(x: Tensor) -> Tensor:
    s = torch.sigmoid(x)
    return s * (1 + x * (1 - s))


def _cases() -> list[Case]:
    g = fixed_generator()
    specs: list[tuple[str, Function, Tensor, Function]] = [
        (
            "f = tanh at 5 points from -2 to 2",
            torch.tanh,
            torch.linspace(-2, 2, 5, dtype=torch.float64),
            lambda x: 1 - torch.tanh(x) ** 2,
        ),
        (
            "f(x) = x³ − 2x on a (2, 3) matrix",
            lambda x: x**3 - 2 * x,
            randn64(2, 3, generator=g),
            lambda x: 3 * x**2 - 2,
        ),
        (
            "f = softplus on a (2, 2, 2) tensor",
            F.softplus,
            randn64(2, 2, 2, generator=g) * 3,
            torch.sigmoid,
        ),
        ("f(x) = x·sigmoid(x) at 4 points", F.silu, randn64(4, generator=g) * 2, _silu_derivative),
        (
            "f(x) = √(x² + 1) at a single point x = [0.75]",
            lambda x: torch.sqrt(x**2 + 1),
            torch.tensor([0.75], dtype=torch.float64),
            lambda x: x / torch.sqrt(x**2 + 1),
        ),
    ]
    return [Case(d, (f, x), slope(x), atol=1e-10, rtol=1e-9) for d, f, x, slope in specs]


def _changes_its_argument(fn: Callable[[Function, Tensor], Tensor]) -> bool:
    x = torch.linspace(-1, 1, 4, dtype=torch.float64)
    try:
        fn(torch.tanh, x)
    except Exception:  # the cases have passed: an error here is not this check's business
        return False
    return x.requires_grad or x.grad is not None


@dataclass
class _Calls:
    """How an answer called f on a float64 x: what each input was, and under which mode."""

    x: Tensor
    inputs: list[Tensor] = field(default_factory=list)
    recording: list[bool] = field(default_factory=list)  # grad mode on and input requires grad
    no_grad: list[bool] = field(default_factory=list)  # input requires grad, grad mode off

    def shifted(self) -> bool:
        """Whether f was called at x + h for a small h ≠ 0, as a finite difference does."""
        for t in self.inputs:
            if t.shape == self.x.shape and t.dtype == self.x.dtype:
                step = (t - self.x).abs()
                if bool((step > 0).all() and (step <= 0.1 * (1 + self.x.abs())).all()):
                    return True
        return False

    def in_lower_precision(self) -> bool:
        return any(t.dtype in (torch.float32, torch.float16, torch.bfloat16) for t in self.inputs)


def _how_f_is_called(fn: Callable[[Function, Tensor], Tensor]) -> _Calls:
    calls = _Calls(torch.linspace(-1.5, 2.0, 6, dtype=torch.float64))

    def spy(t: Tensor) -> Tensor:
        if isinstance(t, Tensor):
            calls.inputs.append(t.detach().clone())
            calls.recording.append(torch.is_grad_enabled() and t.requires_grad)
            calls.no_grad.append(not torch.is_grad_enabled() and t.requires_grad)
        return torch.tanh(t)

    with contextlib.suppress(Exception):  # the cases failed already: how f was called matters
        fn(spy, calls.x.clone())
    return calls


def _only_close(fn: Callable[[Function, Tensor], Tensor], cases: list[Case]) -> bool:
    """Whether ``fn`` is within about 1e-3 of the right derivative on every case, as an
    estimate is."""
    for case in cases:
        outcome = call(fn, case)
        if outcome.error is not None:
            return False
        if compare_outputs(outcome.value, case.expected, "", 1e-3, 1e-3) is not None:
            return False
    return True


@checker_of(DERIVATIVE, MISTAKES)
def check_elementwise_derivative(fn: Callable[[Function, Tensor], Tensor]) -> CheckResult:
    """Check ``elementwise_derivative(f, x)``: f'(x_i) for every entry, with autograd, leaving
    ``x`` unchanged."""
    cases = _cases()
    result = check_function(DERIVATIVE, fn, cases, MISTAKES)
    if result.passed and _changes_its_argument(fn):
        where = "the x it was given"
        problem = "after the call, x requires gradients or holds a .grad"
        return failed(DERIVATIVE, fn, where, problem, CHANGES_X)
    if result.passed or not result.done:
        return result
    named = f"The mistake: {NO_REQUIRES_GRAD.name}." in result.message
    if not named and "The mistake:" in result.message:
        return result
    calls = _how_f_is_called(fn)
    if any(calls.no_grad):
        mistake = UNDER_NO_GRAD
    elif named:
        return result
    elif calls.shifted() or (not any(calls.recording) and _only_close(fn, cases)):
        mistake = FINITE_DIFFERENCE
    elif calls.in_lower_precision():
        mistake = IN_FLOAT32
    else:
        return result
    where, problem = result.message.splitlines()[0].split(", ", 1)[1].split("': ", 1)
    return failed(DERIVATIVE, fn, where + "'", problem, mistake)
