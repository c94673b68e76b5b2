"""Notebook 00, Exercise 5: the derivative of an elementwise function at many points at once,
with autograd.

``derivative(f, x)`` returns f'(x_i) for every entry of ``x``, where ``f`` acts entry by entry
(as ``torch.tanh`` does). The functions are ones the notebook never shows; the expected
derivatives are worked out by hand. Besides the cases, the check looks at two things a
comparison of values cannot see: whether the ``x`` it passed came back changed (requiring
gradients, or with a ``.grad``), and whether a wrong result is only close to the right one, as
an estimate by a finite difference is.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, compare_outputs, fixed_generator, randn64
from attnlib.checks._run import call
from attnlib.checks.nb00_pytorch._errors import check_by_message

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


def _copy(x: Tensor) -> Tensor:
    return x.detach().clone().requires_grad_(True)


def _summed(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).sum().backward()
    return x.grad


def _non_scalar_backward(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).backward()
    return x.grad


def _mean(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).mean().backward()
    return x.grad


def _no_requires_grad(f: Function, x: Tensor) -> Tensor:
    x = x.detach().clone()
    f(x).sum().backward()
    return x.grad


def _twice(f: Function, x: Tensor) -> Tensor:
    x = _copy(x)
    f(x).sum().backward()
    f(x).sum().backward()
    return x.grad


def _grad_of_the_original(f: Function, x: Tensor) -> Tensor | None:
    f(_copy(x)).sum().backward()
    return x.grad


def _autograd_tuple(f: Function, x: Tensor) -> tuple[Tensor, ...]:
    x = _copy(x)
    return torch.autograd.grad(f(x).sum(), x)


def _changes_x(f: Function, x: Tensor) -> Tensor:
    x.requires_grad_(True)
    f(x).sum().backward()
    return x.grad


def _finite_difference(f: Function, x: Tensor) -> Tensor:
    h = 1e-6
    with torch.no_grad():
        return (f(x + h) - f(x)) / h


MISTAKES = (
    Mistake(
        "called backward() on f(x) itself, which holds many numbers",
        "backward() starts from one number (a loss): for a tensor of many it does not know how "
        "to weigh them and refuses. Make one number whose gradient is the list you want.",
        _non_scalar_backward,
    ),
    Mistake(
        "took the mean of f(x) before backward()",
        "the mean divides every term by the number of entries n, and so every derivative: "
        "the gradient of the mean is f'(x_i) / n.",
        _mean,
    ),
    Mistake(
        "did not ask for gradients before calling f",
        "autograd records only operations on tensors that require gradients, and only from "
        "then on: without it, backward() finds nothing to differentiate.",
        _no_requires_grad,
    ),
    Mistake(
        "returned f(x), not its derivative",
        "the values of f are not its slopes: backward() stores the derivatives in the .grad of "
        "the tensor you differentiate by.",
        lambda f, x: f(x),
    ),
    Mistake(
        "ran backward() twice, so the gradients added up",
        "each backward() adds to .grad rather than replacing it (section 4's second "
        "prediction): the result is twice the derivative.",
        _twice,
    ),
    Mistake(
        "returned a .grad that backward() never filled (it is None)",
        "backward() fills the .grad of the tensor that required gradients and went through f, "
        "the copy; any other tensor's .grad, the x you were given or f(x) itself, stays None.",
        _grad_of_the_original,
    ),
    Mistake(
        "returned the tuple that torch.autograd.grad gives",
        "torch.autograd.grad returns one gradient per input, in a tuple, even for a single "
        "input: the answer is the tensor inside it.",
        _autograd_tuple,
    ),
    Mistake(
        "made the x you were given require gradients, instead of a copy",
        "the caller's tensor comes back changed: it now requires gradients and holds a .grad, "
        "so every later operation on it is recorded and a later backward() adds to that .grad.",
        _changes_x,
    ),
    Mistake(
        "estimated the slopes with a finite difference",
        "(f(x + h) − f(x)) / h is only close to f'(x), off by about h·f''(x)/2 plus rounding "
        "error; autograd gives the derivative itself, exact to the last digits.",
        _finite_difference,
    ),
)
CHANGES_X, FINITE_DIFFERENCE = MISTAKES[-2], MISTAKES[-1]


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
    result = check_by_message(DERIVATIVE, fn, cases, MISTAKES)
    if result.passed and _changes_its_argument(fn):
        where = "the x it was given"
        problem = "after the call, x requires gradients or holds a .grad"
        return failed(DERIVATIVE, fn, where, problem, CHANGES_X)
    unnamed = not result.passed and result.done and "The mistake:" not in result.message
    if unnamed and _only_close(fn, cases):
        where = f"case '{cases[0].description}'"
        problem = "the result is close to the derivative (within 1e-3) but not equal to it"
        return failed(DERIVATIVE, fn, where, problem, FINITE_DIFFERENCE)
    return result
