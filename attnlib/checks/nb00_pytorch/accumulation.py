"""Notebook 00, Exercise 6: one optimizer step on several batches, with one backward() per batch
(gradient accumulation).

``accumulated_step(model, optimizer, batches)`` takes one step on the mean of the batches'
losses, each the cross-entropy of a next-token model over its (B_i, T_i) tokens, and returns
that mean. The check builds two small token models the notebook never shows (an embedding and a
linear layer: one trained with SGD, one with a tanh between them trained with Adam), calls the
answer three times with 3, 2 and 4 batches of different lengths, and compares the returned
loss and every parameter after each call with a worked step, so that gradients left over from
an earlier call show; each model arrives with gradients in .grad, as an ordinary training step
leaves them. SGD shows a gradient of the wrong size; Adam, which ignores the size, shows one of
the wrong direction. A right step counts one backward pass per batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, passed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._threads import one_thread
from attnlib.checks.engine import check_function
from attnlib.checks.nb00_pytorch.accumulation_mistakes import (
    MISTAKES,
    ONE_BACKWARD,
    Batches,
    batch_loss,
    worked_step,
)

Tensor = torch.Tensor
Step = Callable[[nn.Module, torch.optim.Optimizer, Batches], Any]

ACCUMULATED_STEP = register(
    Exercise(
        id="ex6_accumulated_step",
        notebook="00",
        number=6,
        name="accumulated_step",
        hints=(
            "backward() adds to .grad (section 4). Used on purpose, that lets several batches "
            "build one gradient: each backward() adds its batch's share, and one step() then "
            "follows the sum. So decide where the gradients must be cleared, and where they must "
            "not be.",
            "Clear the gradients once, before the first batch, so that nothing from an earlier "
            "call leaks in. For each batch: its loss (the (B, T, V) logits flattened as in "
            "section 6), divided by the number of batches, then backward(). One step() after "
            "the loop.",
            "The mean of k losses is the sum of each loss divided by k, and the gradient of a sum "
            "is the sum of the gradients: so k backward() calls on loss_i / k add up to the "
            "gradient of the mean. Keep a running total of loss_i / k as a number (.item()) to "
            "return it.",
        ),
    )
)

V, C = 7, 4  # vocabulary and width of the check's token models
BATCH_SHAPES = ([(2, 3), (3, 5), (1, 4)], [(2, 2), (2, 6)], [(1, 3), (3, 2), (2, 4), (2, 2)])
PARAMETER_NAMES = ("the embedding table", "the output layer's weight", "the output layer's bias")


def _setup(kind: str) -> tuple[nn.Module, torch.optim.Optimizer, list[Batches]]:
    """A float64 token model, its optimizer and three calls' batches, the same on every run."""
    g = fixed_generator()
    skip = nn.utils.skip_init  # draws nothing from the global generator
    embed = skip(nn.Embedding, V, C, dtype=torch.float64)
    out = skip(nn.Linear, C, V, dtype=torch.float64)
    model = nn.Sequential(embed, out) if kind == "SGD" else nn.Sequential(embed, nn.Tanh(), out)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(0.5 * randn64(*parameter.shape, generator=g))
    calls = [
        [(torch.randint(V, s, generator=g), torch.randint(V, s, generator=g)) for s in shapes]
        for shapes in BATCH_SHAPES
    ]
    batch_loss(model, *calls[0][0]).backward()  # gradients left over, as a training step leaves
    if kind == "SGD":
        return model, torch.optim.SGD(model.parameters(), lr=0.5), calls
    return model, torch.optim.Adam(model.parameters(), lr=0.05), calls


def _trajectory(step: Step, kind: str) -> tuple[Any, ...]:
    """The loss ``step`` returns and every parameter after it, for each of the three calls."""
    model, optimizer, calls = _setup(kind)
    found: list[Any] = []
    for batches in calls:
        loss = step(model, optimizer, [(t.clone(), y.clone()) for t, y in batches])
        if isinstance(loss, Tensor) and loss.numel() == 1:
            loss = loss.item()  # a tensor or a number: the same loss, compared as a number
        found.append(loss)
        found.extend(p.detach().clone() for p in model.parameters())
    return tuple(found)


def _cases() -> list[Case]:
    return [
        Case(f"three {kind} steps on a small token model", (kind,), _trajectory(worked_step, kind))
        for kind in ("SGD", "Adam")
    ]


def _names() -> tuple[str, ...]:
    return tuple(
        name
        for call in (1, 2, 3)
        for name in (
            f"the loss returned by call {call}",
            *(f"{parameter} after call {call}" for parameter in PARAMETER_NAMES),
        )
    )


@checker_of(ACCUMULATED_STEP, MISTAKES)
def check_accumulated_step(fn: Step) -> CheckResult:
    """Check ``accumulated_step(model, optimizer, batches)``: one step on the mean of the
    batches' losses, one backward() per batch; returns that mean."""
    if not callable(fn):
        return check_function(ACCUMULATED_STEP, fn, [], ())

    def run(kind: str) -> tuple[Any, ...]:
        return _trajectory(fn, kind)

    run.__doc__ = fn.__doc__  # a stub's task, for the "not done yet" report
    mistakes = [Mistake(m.name, m.why, lambda kind, m=m: _trajectory(m.fn, kind)) for m in MISTAKES]
    with one_thread():
        result = check_function(
            ACCUMULATED_STEP, run, _cases(), mistakes, atol=1e-7, rtol=1e-6, output_names=_names()
        )
    if not result.passed:
        return result
    backward_calls, k = _backward_calls(fn)
    if backward_calls < k:
        times = "once" if backward_calls == 1 else f"{backward_calls} times"
        where = f"a call with {k} batches"
        problem = f"backward() ran {times}; it should run once per batch"
        return failed(ACCUMULATED_STEP, fn, where, problem, ONE_BACKWARD)
    return passed(ACCUMULATED_STEP, fn, "both models, three calls each")


class _BackwardPasses:
    """A forward hook on the embedding that, at its first forward, starts counting the backward
    passes that reach its table (one per backward(), however many lookups it made). An object
    of this module, not a closure on a list, so that its count comes back from the sandbox when
    grading (:mod:`attnlib.grading.wire.mirror`), where a hook on the table would not travel."""

    def __init__(self) -> None:
        self.passes = 0
        self.listening = False

    def __call__(self, module: nn.Module, inputs: object, output: Tensor) -> None:
        if not self.listening:
            module.weight.register_hook(self._one_more)
            self.listening = True

    def _one_more(self, grad: Tensor) -> None:
        self.passes += 1


def _backward_calls(fn: Step) -> tuple[int, int]:
    """How many backward passes reach the embedding table in one call with k batches, and k."""
    model, optimizer, calls = _setup("SGD")
    counter = _BackwardPasses()
    model[0].register_forward_hook(counter)
    try:
        with one_thread():
            fn(model, optimizer, calls[0])
    except Exception:  # the cases have passed: an error here is not this check's business
        return len(calls[0]), len(calls[0])
    return counter.passes, len(calls[0])
