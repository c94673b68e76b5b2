"""Checkers for the autograd and training exercises of the PyTorch primer: a gradient taken
with autograd, and one optimizer step (the tensor exercises are in
:mod:`attnlib.checks.pytorch_basics`).

The gradient is compared with derivatives worked out by hand; the training step with a
textbook step (``zero_grad``, loss, ``backward``, ``step``) taken on an identical copy of the
model, step by step for three steps. A wrong result is compared with the usual mistakes
(a forgotten ``zero_grad`` or ``requires_grad``, ``backward`` or ``step`` left out, a
summed loss, ...) and the one it matches is named.

Notebook 00.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attnlib.checks._framework import (
    Case,
    CheckResult,
    compare_outputs,
    fixed_generator,
    not_done,
    randn64,
)
from attnlib.checks.pytorch_basics import ATOL, RTOL, failed, run_with_mistakes

# --- autograd ------------------------------------------------------------------------------


def _backward_without_requires_grad(f: Callable, x: torch.Tensor) -> torch.Tensor:
    f(x).backward()
    return x.grad


def _autograd(f: Callable, x: torch.Tensor) -> torch.Tensor:
    x = x.detach().clone().requires_grad_(True)
    f(x).backward()
    return x.grad


def check_gradient(fn: Callable[[Callable, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``gradient(f, x)``, autograd's gradient of a scalar ``f`` at ``x``, against
    derivatives worked out by hand."""
    g = fixed_generator()
    points, w, X = randn64(3, generator=g), randn64(3, generator=g), randn64(2, 3, generator=g)
    one_two_three = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    cases = [
        Case(
            "f(x) = (x ** 2).sum() at [1, 2, 3]",
            (lambda x: (x**2).sum(), one_two_three),
            2 * one_two_three,
        ),
        Case(
            "f(x) = torch.sin(x).sum() at 3 points",
            (lambda x: torch.sin(x).sum(), points),
            torch.cos(points),
        ),
        Case(
            "f(X) = ((X @ w) ** 2).sum() for X of shape (2, 3)",
            (lambda x: ((x @ w) ** 2).sum(), X),
            2 * (X @ w)[:, None] * w[None, :],  # d/dX_ij of Σ_i (X_i · w)² = 2 (X_i · w) w_j
        ),
    ]
    mistakes = {
        "calling backward() on a tensor that does not require grad": (
            _backward_without_requires_grad
        ),
        "returning f(x) instead of its gradient": lambda f, x: f(x),
        "returning a .grad that is still None": lambda f, x: None,
        "twice the gradient (backward() run twice, so .grad accumulated)": lambda f, x: (
            2 * _autograd(f, x)
        ),
    }
    hints = {
        "default": "x = x.detach().clone().requires_grad_(True); f(x).backward(); return x.grad.",
        "calling backward() on a tensor that does not require grad": "make x require grad "
        "(on a copy: x = x.detach().clone().requires_grad_(True)) before computing f(x), so "
        "that autograd records the operations.",
        "returning f(x) instead of its gradient": "after y = f(x) and y.backward(), the "
        "gradient is in x.grad: return x.grad.",
        "returning a .grad that is still None": "x.grad stays None unless backward() "
        "reaches x itself: make x require grad, call f(x).backward() on that very x, then "
        "return x.grad.",
        "twice the gradient (backward() run twice, so .grad accumulated)": "call backward() "
        "once: each call adds to .grad rather than replacing it.",
    }
    return run_with_mistakes("gradient", fn, cases, mistakes, hints)


# --- one optimizer step --------------------------------------------------------------------


def _setup(optimizer_name: str) -> tuple[nn.Module, torch.optim.Optimizer, torch.Tensor, Any]:
    """A float64 model, its optimizer and a small regression set, the same on every call."""
    g = fixed_generator()
    # skip_init draws nothing from the global generator, so a check leaves the notebook's alone.
    layer = nn.utils.skip_init
    if optimizer_name == "SGD":
        model: nn.Module = layer(nn.Linear, 3, 1, dtype=torch.float64)
    else:
        model = nn.Sequential(
            layer(nn.Linear, 3, 4, dtype=torch.float64),
            nn.Tanh(),
            layer(nn.Linear, 4, 1, dtype=torch.float64),
        )
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.5 * randn64(*parameter.shape, generator=g))
    x = randn64(8, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64) + 0.3
    if optimizer_name == "SGD":
        return model, torch.optim.SGD(model.parameters(), lr=0.1), x, y
    return model, torch.optim.Adam(model.parameters(), lr=0.05), x, y


def _step(model, optimizer, x, y, zero_grad=True, backward=True, reduction="mean") -> Any:
    if zero_grad:
        optimizer.zero_grad()
    loss = F.mse_loss(model(x), y, reduction=reduction)
    if backward:
        loss.backward()
    optimizer.step()
    return loss


def _loss_after_the_step(model, optimizer, x, y) -> Any:
    _step(model, optimizer, x, y)
    return F.mse_loss(model(x), y)


def _trajectory(step: Callable[..., Any], optimizer_name: str) -> list[tuple[Any, list]]:
    """The loss ``step`` returns and the parameters after it, for three steps."""
    model, optimizer, x, y = _setup(optimizer_name)
    out = []
    for _ in range(3):
        loss = step(model, optimizer, x.clone(), y.clone())
        out.append((loss, [p.detach().clone() for p in model.parameters()]))
    return out


def _difference(got: list[tuple[Any, list]], expected: list[tuple[Any, list]]) -> str | None:
    for i, ((loss, params), (want_loss, want)) in enumerate(zip(got, expected, strict=True)):
        problem = compare_outputs(
            loss, want_loss.detach(), f"the loss returned by step {i + 1}", ATOL, RTOL
        )
        for j, (p, q) in enumerate(zip(params, want, strict=True)):
            what = f"parameter {j} after step {i + 1}"
            problem = problem or compare_outputs(p, q, what, ATOL, RTOL)
        if problem:
            return problem
    return None


STEP = (
    "optimizer.zero_grad(); loss = F.mse_loss(model(x), y); loss.backward(); "
    "optimizer.step(); return loss."
)
STEP_MISTAKES: dict[str, tuple[Callable[..., Any], str]] = {
    "forgetting optimizer.zero_grad()": (
        lambda m, o, x, y: _step(m, o, x, y, zero_grad=False),
        "backward() adds to each .grad: without zero_grad() first, every step also carries "
        "all the earlier gradients.",
    ),
    "a step that never moves the parameters": (
        lambda m, o, x, y: _step(m, o, x, y, backward=False),
        "backward() fills each .grad and step() moves the parameters along it: call "
        "loss.backward(), then optimizer.step(), with zero_grad() before backward(), not "
        "between backward() and step().",
    ),
    "the summed squared error": (
        lambda m, o, x, y: _step(m, o, x, y, reduction="sum"),
        "use the mean squared error, F.mse_loss(model(x), y), not the sum of the squares.",
    ),
    "returning the loss after the step": (
        _loss_after_the_step,
        "return the loss computed before optimizer.step(), the one backward() ran on.",
    ),
}


def check_training_step(fn: Callable[..., Any]) -> CheckResult:
    """Check ``training_step(model, optimizer, x, y)`` (returns the mean squared error before
    the step): three steps with SGD, then with Adam, each against a textbook step."""
    name = "training_step"
    if not callable(fn):
        return CheckResult(name, False, f"✗ {name}: expected a function, got {type(fn).__name__}")
    for optimizer_name, case in [
        ("SGD", "three SGD steps on nn.Linear(3, 1)"),
        ("Adam", "three Adam steps on a small two-layer model"),
    ]:
        try:
            got = _trajectory(fn, optimizer_name)
        except NotImplementedError as error:
            return not_done(name, fn, error)
        except Exception as error:  # the learner's bug, explained rather than raised
            return failed(name, case, f"your function raised {type(error).__name__}: {error}", STEP)
        problem = _difference(got, _trajectory(_step, optimizer_name))
        if problem is None:
            continue
        for label, (wrong, hint) in STEP_MISTAKES.items():
            if _difference(got, _trajectory(wrong, optimizer_name)) is None:
                return failed(name, case, f"{problem}. That is what {label} gives", hint)
        return failed(name, case, problem, STEP)
    return CheckResult(name, True, f"✓ {name} is correct on all 2 cases.")
