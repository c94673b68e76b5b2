"""Notebook 10, Exercise 3: one training step, ``my_train_step(model, optimizer, scheduler,
windows, max_norm) -> loss``.

The check builds two small next-token models the notebook never shows (float64: an embedding
and a linear layer trained with SGD; the same with a tanh between them trained with AdamW;
each reads at most as many tokens as its longest window's inputs, as a GPT's context does),
each with a linear warm-up schedule, and calls the answer three times on windows of different
shapes. After each call it compares the loss returned, every parameter and the learning rate
with the worked step's. The models arrive with gradients in ``.grad``, as an earlier
``backward()`` leaves them; ``max_norm`` is small enough that clipping changes every step, and
the warm-up changes the rate at every step, so that each of them shows where it happens. A
failing step is named by the first usual mistake (:mod:`.train_step_mistakes`) whose three
calls give what the learner's gave: first counting the gradients left in ``.grad`` (which tell
"clipped after step()" from "not clipped"), then without them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._errors import same_error
from attnlib.checks._exercise import (
    Exercise,
    Mistake,
    checker_of,
    failed,
    not_done,
    passed,
    refused,
    register,
)
from attnlib.checks._framework import (
    CheckResult,
    compare_outputs,
    fixed_generator,
    randn64,
    task_of,
)
from attnlib.checks._threads import one_thread
from attnlib.checks.nb10_gpt.train_step_mistakes import (
    MISTAKES,
    RETURNED_TENSOR,
    next_token_loss,
    worked,
)
from attnlib.course.char_gpt import train_step
from attnlib.training import fit

Tensor = torch.Tensor
Step = Callable[..., Any]

TRAIN_STEP = register(
    Exercise(
        id="ex3_my_train_step",
        notebook="10",
        number=3,
        name="my_train_step",
        hints=(
            "Follow the gradient through one step: it must be cleared of the last step's, "
            "computed from this batch's loss, made safe, used by the optimizer, and only then "
            "may the learning rate move on to the next step's. The loss is section 2's: each "
            "position predicts the token after it.",
            "The model reads windows[:, :-1] and gives (B, T, V) logits; the targets are "
            "windows[:, 1:]. F.cross_entropy wants them flattened, (B·T, V) and (B·T,). Clear "
            "the gradients before backward(); clip the norm of all the model's gradients to "
            "max_norm after backward() and before the optimizer's step; advance the scheduler "
            "after the optimizer's step.",
            "loss from the flattened logits and targets; optimizer.zero_grad(); loss.backward(); "
            "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm); optimizer.step(); "
            "scheduler.step(); return loss.item(), a Python float (the tensor would keep the "
            "step's whole graph alive).",
        ),
    )
)

# What the answer may not call: attnlib's step, or its whole training loop.
STEP_IMPLEMENTATIONS = Forbidden(
    python={train_step: "attnlib.course.char_gpt.train_step", fit: "attnlib.training.fit"}
)

V, C = 9, 4  # the check's models: 9 tokens, 4-wide; no window is 9 long, so T never equals V
WINDOWS = ((2, 6), (3, 5), (1, 8))  # (B, T + 1) of the three calls
MAX_NORM = 0.25  # every gradient's norm in the check is above 1: clipping to it, or to 1, shows
WARMUP = 4  # steps of the warm-up: the rate changes at each of the three calls
KINDS = ("SGD", "AdamW")
PARAMETER_NAMES = ("the embedding table", "the output layer's weight", "the output layer's bias")


class WarmUp:
    """The check's schedule: a linear warm-up of every group's rate, as
    ``LambdaLR(optimizer, lambda i: min(1, (i + 1) / warmup))`` sets it; ``step()`` moves it on.
    An object of this package, so that its count comes back from the grader's sandbox
    (:mod:`attnlib.grading.wire.mirror`)."""

    def __init__(self, optimizer: torch.optim.Optimizer, warmup: int) -> None:
        self.optimizer = optimizer
        self.warmup = warmup
        self.base_lrs = [float(group["lr"]) for group in optimizer.param_groups]
        self.last_epoch = 0
        self._set()

    def _set(self) -> None:
        factor = min(1.0, (self.last_epoch + 1) / self.warmup)
        for group, base in zip(self.optimizer.param_groups, self.base_lrs, strict=True):
            group["lr"] = base * factor

    def step(self) -> None:
        self.last_epoch += 1
        self._set()

    def get_last_lr(self) -> list[float]:
        return [float(group["lr"]) for group in self.optimizer.param_groups]


class TokenModel(nn.Module):
    """The check's next-token model: an embedding, a tanh when asked, a linear layer. Like a
    GPT it reads at most ``max_len`` tokens and says so (a ValueError) when given more.

    Shapes:
        idx: ``(B, T)`` with ``T <= max_len``; returns the logits ``(B, T, V)``.
    """

    def __init__(self, max_len: int, tanh: bool) -> None:
        super().__init__()
        skip = nn.utils.skip_init  # draws nothing from the global generator
        self.embedding = skip(nn.Embedding, V, C, dtype=torch.float64)
        self.output = skip(nn.Linear, C, V, dtype=torch.float64)
        self.max_len, self.tanh = max_len, tanh

    def forward(self, idx: Tensor) -> Tensor:
        if idx.shape[-1] > self.max_len:
            raise ValueError(
                f"idx holds {idx.shape[-1]} tokens, more than the model's max_len = {self.max_len}"
            )
        h = self.embedding(idx)  # (B, T, C)
        return self.output(torch.tanh(h) if self.tanh else h)  # (B, T, V)


def _setup(kind: str) -> tuple[nn.Module, torch.optim.Optimizer, WarmUp, list[Tensor]]:
    """A float64 next-token model, its optimizer, its schedule and the three calls' windows
    (the longest fills the model's context: T = max_len)."""
    g = fixed_generator()
    model = TokenModel(max(t for _, t in WINDOWS) - 1, tanh=kind != "SGD")
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(3.0 * randn64(*parameter.shape, generator=g))
    windows = [torch.randint(V, shape, generator=g) for shape in WINDOWS]
    next_token_loss(model, windows[-1]).backward()  # left over, as an earlier backward leaves
    if kind == "SGD":
        optimizer: torch.optim.Optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
    return model, optimizer, WarmUp(optimizer, WARMUP), windows


@dataclass
class Trajectory:
    """What three calls of a step gave: per call, what it returned, the parameters, their
    gradients and the learning rate after it; or the error of the call that raised."""

    returned: list[Any] = field(default_factory=list)
    parameters: list[tuple[Tensor, ...]] = field(default_factory=list)
    grads: list[tuple[Tensor, ...]] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    error: Exception | None = None


def trajectory(step: Step, kind: str) -> Trajectory:
    """Three calls of ``step`` on a fresh model of ``kind`` (NotImplementedError is raised)."""
    model, optimizer, scheduler, windows = _setup(kind)
    found = Trajectory()
    for w in windows:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = step(model, optimizer, scheduler, w.clone(), MAX_NORM)
        except NotImplementedError:
            raise
        except Exception as error:  # the learner's bug, reported instead of a traceback
            found.error = error
            return found
        found.returned.append(value)
        found.parameters.append(tuple(p.detach().clone() for p in model.parameters()))
        found.grads.append(
            tuple(
                torch.zeros_like(p) if p.grad is None else p.grad.detach().clone()
                for p in model.parameters()
            )
        )
        found.rates.append(float(optimizer.param_groups[0]["lr"]))
    return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, Tensor) and value.numel() == 1 and value.is_floating_point():
        return float(value.detach())
    return None


def _kind_of(value: Any) -> str:
    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
        return "number"
    return type(value).__name__


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 + 1e-7 * abs(b)


def _same(a: Trajectory, b: Trajectory, with_grads: bool) -> bool:
    if (a.error is None) != (b.error is None) or len(a.returned) != len(b.returned):
        return False
    if a.error is not None and b.error is not None and not same_error(a.error, b.error):
        return False
    for i in range(len(a.returned)):
        x, y = a.returned[i], b.returned[i]
        if _kind_of(x) != _kind_of(y):
            return False
        nx, ny = _number(x), _number(y)
        if (nx is None) != (ny is None) or (nx is not None and not _close(nx, ny)):  # type: ignore[arg-type]
            return False
        if not _close(a.rates[i], b.rates[i]):
            return False
        pairs = list(zip(a.parameters[i], b.parameters[i], strict=True))
        if with_grads:
            pairs += list(zip(a.grads[i], b.grads[i], strict=True))
        if not all(torch.allclose(p, q, atol=1e-9, rtol=1e-7) for p, q in pairs):
            return False
    return True


def _problem(got: Trajectory, expected: Trajectory) -> tuple[str, str] | None:
    """(where, what is wrong) at the first difference in the numbers, or None."""
    for i, value in enumerate(got.returned):
        where = f"call {i + 1} of {len(WINDOWS)}"
        number = _number(value)
        if number is None:
            shown = "None" if value is None else f"a {type(value).__name__}"
            return where, f"it returned {shown}, not the loss as a float"
        loss = expected.returned[i]
        if not _close(number, loss):
            return where, f"it returned a loss of {number:.6g}, expected {loss:.6g}"
        for name, mine, theirs in zip(
            PARAMETER_NAMES, got.parameters[i], expected.parameters[i], strict=True
        ):
            problem = compare_outputs(mine, theirs, f"{name} after the step", 1e-9, 1e-7)
            if problem is not None:
                return where, problem
        if not _close(got.rates[i], expected.rates[i]):
            return where, (
                f"the learning rate after the step is {got.rates[i]:.6g}, expected "
                f"{expected.rates[i]:.6g}"
            )
    if got.error is not None:
        where = f"call {len(got.returned) + 1} of {len(WINDOWS)}"
        return where, f"your function raised {type(got.error).__name__}: {got.error}"
    return None


def _recognise(learner: dict[str, Trajectory]) -> Mistake | None:
    """The first mistake whose calls give what the learner's gave on both models, counting the
    gradients left in .grad; else the first that does without them."""
    theirs = [{kind: trajectory(m.fn, kind) for kind in KINDS} for m in MISTAKES]
    for with_grads in (True, False):
        for mistake, trajectories in zip(MISTAKES, theirs, strict=True):
            if all(_same(learner[k], trajectories[k], with_grads) for k in KINDS):
                return mistake
    return None


@checker_of(TRAIN_STEP, MISTAKES)
def check_my_train_step(fn: Step) -> CheckResult:
    """Check ``my_train_step(model, optimizer, scheduler, windows, max_norm)``: one step of
    next-token training with clipping and a schedule; returns the loss as a float.

    Shapes:
        windows: ``(B, T + 1)`` token ids; ``model`` maps ``(B, T)`` to ``(B, T, V)``.
    """
    if not callable(fn):
        problem = f"expected a function, got {type(fn).__name__}"
        return failed(TRAIN_STEP, fn, "as a whole", problem, None)
    with torch.random.fork_rng(devices=[]), one_thread():  # the notebook's stay its own
        return _check(fn)


def _check(fn: Step) -> CheckResult:
    ex, learner = TRAIN_STEP, {}
    for kind in KINDS:
        watch = CallWatch(STEP_IMPLEMENTATIONS)
        try:
            with watch:
                learner[kind] = trajectory(fn, kind)
        except NotImplementedError as error:
            return not_done(ex, fn, str(error) or task_of(fn))
        if watch.seen:
            return refused(ex, fn, watch.seen)
    for kind in KINDS:
        found = _problem(learner[kind], trajectory(worked, kind))
        if found is not None:
            where, problem = found
            model = "SGD" if kind == "SGD" else "AdamW, a tanh between the layers"
            where = f"{where} (a small model trained with {model}, max_norm {MAX_NORM})"
            return failed(ex, fn, where, problem, _recognise(learner))
    tensor = next((v for t in learner.values() for v in t.returned if isinstance(v, Tensor)), None)
    if tensor is not None:
        graph = ", which still holds its graph" if tensor.requires_grad else ""
        problem = f"the numbers are right, but it returns the loss as a tensor{graph}"
        return failed(ex, fn, "every call", problem, RETURNED_TENSOR)
    return passed(ex, fn, f"{len(WINDOWS)} calls on each of two models (SGD and AdamW)")
