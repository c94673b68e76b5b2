"""Notebook 00, Exercise 6: the worked step and the mistakes learners make on it (the checker is
:mod:`attnlib.checks.nb00_pytorch.accumulation`).

Each mistake is a variant of the worked step, written as a learner would write it: where the
gradients are cleared, where the step is taken, how each batch's loss is weighted and which
loss is returned.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor
Batches = list[tuple[Tensor, Tensor]]


def batch_loss(model: nn.Module, tokens: Tensor, targets: Tensor) -> Tensor:
    """The cross-entropy of one batch: logits (B, T, V) flattened to (B·T, V)."""
    logits = model(tokens)  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def worked_step(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Batches) -> float:
    """The answer the check compares with."""
    optimizer.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = batch_loss(model, tokens, targets) / len(batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


def _variant(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batches: Batches,
    *,
    zero: str = "before",  # "before" the loop, "inside" it, "before step", "after step", "never"
    step_inside: bool = False,
    divide: bool = True,
    weights: str = "batches",  # "batches" or "tokens"
    returned: str = "mean",  # "mean", "sum", "last" or "after"
) -> float | None:
    k, tokens_in_all = len(batches), sum(t.numel() for t, _ in batches)
    if zero == "before":
        optimizer.zero_grad()
    losses = []
    for tokens, targets in batches:
        if zero == "inside":
            optimizer.zero_grad()
        loss = batch_loss(model, tokens, targets)
        losses.append(loss.item())
        if weights == "tokens":
            loss = loss * tokens.numel() / tokens_in_all
        elif divide:
            loss = loss / k
        loss.backward()
        if step_inside:
            optimizer.step()
    if zero == "before step":
        optimizer.zero_grad()
    if not step_inside:
        optimizer.step()
    if zero == "after step":
        optimizer.zero_grad()
    if returned == "sum":
        return sum(losses)
    if returned == "last":
        return losses[-1]
    if returned == "tokens":
        return sum(x * t.numel() / tokens_in_all for x, (t, _) in zip(losses, batches, strict=True))
    if returned == "nothing":
        return None
    if returned == "after":
        with torch.no_grad():
            return sum(batch_loss(model, t, y).item() for t, y in batches) / k
    return sum(losses) / k


def _unflattened(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Batches) -> float:
    optimizer.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens), targets) / len(batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


def _targets_left(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Batches) -> float:
    optimizer.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets) / len(batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


def _running_total(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Batches) -> Any:
    optimizer.zero_grad()
    total: Any = 0.0
    for tokens, targets in batches:
        total = total + batch_loss(model, tokens, targets) / len(batches)
        total.backward()
    optimizer.step()
    return total


def _one_backward(model: nn.Module, optimizer: torch.optim.Optimizer, batches: Batches) -> float:
    optimizer.zero_grad()
    losses = [batch_loss(model, tokens, targets) for tokens, targets in batches]
    mean = torch.stack(losses).mean()
    mean.backward()
    optimizer.step()
    return mean.item()


def _mistake(name: str, why: str, **variant: Any) -> Mistake:
    return Mistake(name, why, lambda m, o, b: _variant(m, o, b, **variant))


MISTAKES = (
    _mistake(
        "cleared the gradients inside the loop, before each batch's backward()",
        "each zero_grad() throws away what the batches before it added: the step follows the "
        "last batch's gradient alone.",
        zero="inside",
    ),
    _mistake(
        "never cleared the gradients",
        "backward() adds to whatever .grad holds, so every step also follows all the gradients "
        "of the earlier calls: the first call is right, the later ones are not.",
        zero="never",
    ),
    _mistake(
        "left the parameters where they were: the gradients cleared just before step(), or no "
        "step() at all",
        "step() moves each parameter along its .grad, so it must come after the backward() calls "
        "with nothing clearing the gradients in between; clearing belongs before the first "
        "backward().",
        zero="before step",
    ),
    _mistake(
        "took a step after every batch instead of once after all of them",
        "that is k small steps, each from a partly built gradient, not one step on the mean "
        "loss; the later batches see parameters the earlier ones moved.",
        step_inside=True,
    ),
    _mistake(
        "ran an ordinary training step on each batch in turn",
        "k full steps, each on one batch: the whole point is one step on all of them together.",
        zero="inside",
        step_inside=True,
        divide=False,
    ),
    _mistake(
        "added up the batches' losses instead of averaging them",
        "the sum, and its gradient, are k times the mean's: with SGD the step is k times too "
        "long, and the loss returned is k times too large.",
        divide=False,
        returned="sum",
    ),
    _mistake(
        "averaged the loss you return but not the gradients",
        "backward() ran on each whole loss, so the gradients add up to the sum's, k times the "
        "mean's: divide each loss by k before backward().",
        divide=False,
    ),
    _mistake(
        "weighted each batch by its number of tokens",
        "that is the mean over all tokens; the task asks for the mean of the batches' losses, "
        "each batch counting the same whatever its size.",
        weights="tokens",
        returned="tokens",
    ),
    _mistake(
        "returned the last batch's loss, not the mean of all of them",
        "the step's loss is the mean over the batches; the last one alone is one k-th of it.",
        returned="last",
    ),
    _mistake(
        "returned nothing",
        "the step is right, but the function must also return the mean loss it stepped on, as a "
        "number: a function without a return statement returns None.",
        returned="nothing",
    ),
    _mistake(
        "returned the loss computed after the step",
        "return the loss the gradients came from, computed before step(); one computed after "
        "it is already smaller.",
        returned="after",
    ),
    Mistake(
        "passed the (B, T, V) logits to F.cross_entropy without flattening them",
        "F.cross_entropy reads the classes from dimension 1, which here is T: flatten the "
        "positions into rows, (B·T, V) and (B·T,), as section 6 does.",
        _unflattened,
    ),
    Mistake(
        "flattened the logits but not the targets",
        "(B·T, V) logits need (B·T,) targets, one per row; (B, T) targets hold one row per "
        "sequence, so the batch sizes disagree.",
        _targets_left,
    ),
    Mistake(
        "called backward() on the running total inside the loop",
        "the total holds the graphs of every batch so far, and backward() frees a graph once it "
        "has run through it: the second call fails. Call backward() on each batch's own loss.",
        _running_total,
    ),
    _mistake(
        "returned the sum of the batches' losses, not their mean",
        "the step follows the mean loss (each batch's loss divided by k), so the loss that goes "
        "with it is the mean too: the sum is k times too large.",
        returned="sum",
    ),
    _mistake(
        "cleared the gradients after step(), not before the first backward()",
        "a model can arrive with gradients in .grad (an ordinary training step leaves its last "
        "backward()'s there): the first batch's backward() adds to them and the step follows "
        "them too. Clearing first is what makes the step depend on these batches alone.",
        zero="after step",
    ),
    Mistake(
        "added all the batches' losses into one graph and called backward() once",
        "the numbers come out the same, but every batch's graph then stays in memory until that "
        "single backward(): accumulation exists for batches that cannot be in memory together, "
        "so each batch's backward() must run as soon as its loss is known.",
        _one_backward,
    ),
)
ONE_BACKWARD = MISTAKES[-1]
