"""Notebook 10, Exercise 3: the worked training step and the mistakes learners make on it, each
a step ``(model, optimizer, scheduler, windows, max_norm) -> loss`` written as a learner would
write it (the checker is :mod:`.train_step`).

The mistakes are about order (where the gradients are cleared, clipped, used; when the schedule
moves on), about the loss (its shapes, its targets, its reduction) and about what is returned.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor


def next_token_loss(model: nn.Module, windows: Tensor) -> Tensor:
    """The mean cross-entropy of predicting ``windows[:, 1:]`` from ``windows[:, :-1]``."""
    logits = model(windows[:, :-1])  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


def worked(
    model: nn.Module, optimizer: Any, scheduler: Any, windows: Tensor, max_norm: float
) -> float:
    """The answer the check compares with."""
    loss = next_token_loss(model, windows)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    scheduler.step()
    return loss.item()


def _variant(
    model: nn.Module,
    optimizer: Any,
    scheduler: Any,
    windows: Tensor,
    max_norm: float,
    *,
    zero: str = "before backward",  # "never", "after backward", "after step"
    clip: str = "after backward",  # "before backward", "after step", "to one", "values"
    schedule: str = "after step",  # "before step", "never"
    loss: str = "shifted",  # "unflattened", "unshifted", "whole window", "backwards", "sum"
    step: bool = True,
    grad: bool = True,
    returned: str = "float",  # "tensor", "nothing", "after"
) -> Any:
    inputs, targets = windows[:, :-1], windows[:, 1:]
    if loss == "unshifted":
        targets = inputs
    elif loss in ("whole window", "whole window, cut"):
        inputs = windows
    elif loss == "backwards":
        inputs, targets = windows[:, 1:], windows[:, :-1]
    with torch.enable_grad() if grad else torch.no_grad():
        logits = model(inputs)  # (B, T, V)
    if loss == "whole window, cut":
        logits = logits[:, :-1]  # the last position's prediction has no target
    if loss == "unflattened":
        value = F.cross_entropy(logits, targets)
    elif loss == "view":
        value = F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
    else:
        reduction = "sum" if loss == "sum" else "mean"
        value = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction=reduction
        )
    if zero == "before backward":
        optimizer.zero_grad()
    if clip == "before backward":
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    value.backward()
    if zero == "after backward":
        optimizer.zero_grad()
    if clip == "after backward":
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    elif clip == "to one":
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    elif clip == "values":
        nn.utils.clip_grad_value_(model.parameters(), max_norm)
    if schedule == "before step":
        scheduler.step()
    if step:
        optimizer.step()
    if schedule == "after step":
        scheduler.step()
    if clip == "after step":
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if zero == "after step":
        optimizer.zero_grad()
    if returned == "tensor":
        return value
    if returned == "method":
        return value.item  # not called
    if returned == "nothing":
        return None
    if returned == "after":
        with torch.no_grad():
            return next_token_loss(model, windows).item()
    return value.item()


def _mistake(name: str, why: str, **variant: Any) -> Mistake:
    return Mistake(name, why, lambda m, o, s, w, n: _variant(m, o, s, w, n, **variant))


MISTAKES = (
    _mistake(
        "never cleared the gradients",
        "backward() adds to whatever .grad holds, so every step also follows the gradients of "
        "all the steps before it: the steps grow and point the wrong way.",
        zero="never",
    ),
    _mistake(
        "cleared the gradients after backward() (or never called backward()): step() had no "
        "gradient to follow",
        "zero_grad() throws away what backward() has just computed; it belongs before "
        "backward(), so that the gradient step() follows is this batch's alone.",
        zero="after backward",
    ),
    _mistake(
        "cleared the gradients after step(), not before backward()",
        "a model can arrive with gradients in .grad (any backward() before the loop leaves "
        "some): this step's backward() adds to them and the step follows both. Clearing first "
        "makes each step depend on its own batch alone.",
        zero="after step",
    ),
    _mistake(
        "clipped before backward() (or not at all): step() used the unclipped gradient",
        "clip_grad_norm_ scales the gradients .grad holds at the moment it runs; before "
        "backward() there are none (or the last step's), so the gradient step() follows is "
        "never clipped.",
        clip="before backward",
    ),
    _mistake(
        "clipped after step()",
        "step() has already moved the parameters along the unclipped gradient; clipping "
        "afterwards changes only .grad, which the next step clears.",
        clip="after step",
    ),
    _mistake(
        "clipped the norm to 1.0 instead of the max_norm given",
        "the threshold is an argument: section 5's loop passes 1.0, the check another value; a "
        "number written into the step ignores the one it is given.",
        clip="to one",
    ),
    _mistake(
        "clipped each gradient entry (clip_grad_value_) instead of the gradient's norm",
        "clip_grad_norm_ scales the whole gradient down when its length exceeds max_norm, "
        "keeping its direction; clipping each entry separately changes the direction.",
        clip="values",
    ),
    _mistake(
        "advanced the schedule before the optimizer's step()",
        "the scheduler's step() sets the learning rate of the next step: called first, every step "
        "uses the rate meant for the one after it (during the warm-up, too large from the "
        "start), and PyTorch warns about the order.",
        schedule="before step",
    ),
    _mistake(
        "never advanced the schedule",
        "the learning rate then stays at its first value, almost 0 at the start of a warm-up: "
        "the scheduler's step(), once per step after the optimizer's, is what moves it.",
        schedule="never",
    ),
    _mistake(
        "never called the optimizer's step()",
        "backward() and clipping only compute and scale the gradient; step() is what moves the "
        "parameters along it.",
        step=False,
    ),
    _mistake(
        "computed the loss under torch.no_grad()",
        "no_grad() records no graph, so backward() has nothing to differentiate: the forward "
        "pass of a training step runs with gradients on.",
        grad=False,
    ),
    _mistake(
        "passed the (B, T, V) logits and (B, T) targets to F.cross_entropy without flattening them",
        "F.cross_entropy reads the classes from dimension 1, which here is T: flatten the "
        "positions into rows, (B·T, V) logits and (B·T,) targets (section 2).",
        loss="unflattened",
    ),
    _mistake(
        "flattened the targets with .view, which a slice of the windows cannot take",
        "windows[:, 1:] leaves out each row's first token, so its numbers are not one unbroken "
        "block of memory and .view cannot reshape it; .reshape (or .flatten) copies when it "
        "must.",
        loss="view",
    ),
    _mistake(
        "used the inputs as their own targets (not shifted by one)",
        "position t is trained to predict token t + 1: the targets are windows[:, 1:], the "
        "inputs windows[:, :-1]. Predicting the token the model reads teaches it to copy.",
        loss="unshifted",
    ),
    _mistake(
        "fed the model the whole window, T + 1 tokens, not its first T",
        "a window of T + 1 tokens holds T inputs and, shifted by one, their T targets: the last "
        "token is only ever a target, and with T = max_len (as in section 5) the whole window "
        "is one token more than the model can read.",
        loss="whole window",
    ),
    _mistake(
        "fed the model the whole window, T + 1 tokens, not its first T",
        "a window of T + 1 tokens holds T inputs and, shifted by one, their T targets: the last "
        "token is only ever a target, and with T = max_len (as in section 5) the whole window "
        "is one token more than the model can read.",
        loss="whole window, cut",
    ),
    _mistake(
        "shifted the targets the wrong way: each position predicts the token before it",
        "the inputs are windows[:, :-1] and the targets windows[:, 1:]: the next token, not the "
        "previous one, which the model can already see.",
        loss="backwards",
    ),
    _mistake(
        "summed the cross-entropy over the positions instead of averaging it",
        "the sum grows with B·T, and so do its gradient and the step: the loss the course "
        "reads (about ln V at the start) is the mean per token.",
        loss="sum",
    ),
    _mistake(
        "returned the loss as a tensor instead of a float",
        "the step returns a number to print, plot and keep (the loop keeps every step's loss in "
        "a list); the loss tensor itself keeps the step's whole graph alive for as long as it is "
        "kept. The number inside it, as a Python float, lets the graph go.",
        returned="tensor",
    ),
    _mistake(
        "returned the loss's item method without calling it",
        "item is a method: without the parentheses the step returns the method itself, not the "
        "number it would give.",
        returned="method",
    ),
    _mistake(
        "returned nothing",
        "the step must also return the loss it stepped on, as a number: a function without a "
        "return statement returns None.",
        returned="nothing",
    ),
    _mistake(
        "returned the loss computed after the step",
        "return the loss the gradient came from, computed before step(); one computed after it "
        "is already lower and costs a second forward pass.",
        returned="after",
    ),
)
RETURNED_TENSOR = next(m for m in MISTAKES if m.name.startswith("returned the loss as a tensor"))
