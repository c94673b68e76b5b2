"""Training support: label-smoothed cross-entropy, the warm-up schedule, and a seeded loop.

Notebook 09.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from attnlib._validate import (
    require_class_ids,
    require_float_tensor,
    require_int,
    require_integer_tensor,
    require_min_ndim,
    require_positive_int,
    require_probability,
)


def label_smoothed_cross_entropy(
    logits: torch.Tensor,
    target: torch.Tensor,
    smoothing: float = 0.1,
    ignore_index: int | None = None,
) -> torch.Tensor:
    r"""Cross-entropy against a target distribution that keeps ``smoothing`` for all classes.

    .. math::

        \mathcal{L} = (1 - \varepsilon)\,(-\log p_y) + \varepsilon \cdot
        \frac{1}{V} \sum_{k=1}^{V} (-\log p_k)

    averaged over the positions whose target is not ``ignore_index`` (padding).
    The paper uses ε = 0.1: the model is never pushed to be certain, which hurts
    perplexity a little and helps accuracy. Equal to
    ``F.cross_entropy(..., label_smoothing=ε, ignore_index=...)``.

    Raises:
        TypeError: ``logits`` is not a floating-point tensor, ``target`` not an integer
            one, ``smoothing`` not a number or ``ignore_index`` not an int.
        ValueError: the shapes disagree, ``smoothing`` is outside ``[0, 1)``, or a target
            id is outside ``[0, V)`` (``ignore_index`` excepted).

    Shapes:
        logits: ``(..., V)``; target: ``(...)`` long; returns a scalar.
    """
    require_min_ndim("logits", require_float_tensor("logits", logits), 1, "(..., V)")
    require_integer_tensor("target", target)  # class ids; probabilities are not taken
    if logits.shape[:-1] != target.shape:
        raise ValueError(
            f"logits (..., V) and target (...) must agree, got {tuple(logits.shape)} "
            f"and {tuple(target.shape)}"
        )
    require_probability("smoothing", smoothing)  # a probability in [0, 1), as dropout is
    if ignore_index is not None:
        require_int("ignore_index", ignore_index)
    # One pass over the ids (small beside the logits): gather would fail with an index
    # error that names neither the argument nor the id.
    require_class_ids("target", target, logits.shape[-1], ignore_index)
    target = target.long()  # gather takes int64 indices (no copy when target is already)
    # Half precision is computed in float32; float64 stays float64.
    work_dtype = torch.promote_types(logits.dtype, torch.float32)
    log_probs = F.log_softmax(logits.to(work_dtype), dim=-1).reshape(-1, logits.shape[-1])  # (N, V)
    target = target.reshape(-1)  # (N,)
    keep = (
        torch.ones_like(target, dtype=torch.bool)
        if ignore_index is None
        else target != ignore_index
    )
    safe_target = target.masked_fill(~keep, 0)
    nll = -log_probs.gather(1, safe_target[:, None])[:, 0]  # (N,)
    uniform = -log_probs.mean(dim=-1)  # (N,)
    per_token = (1.0 - smoothing) * nll + smoothing * uniform
    return per_token[keep].sum() / keep.sum().clamp_min(1)


def warmup_inverse_sqrt(step: int, d_model: int, warmup_steps: int) -> float:
    r"""The paper's learning-rate factor: linear warm-up, then decay as 1/√step.

    .. math::

        \text{lr}(s) = d_\text{model}^{-1/2} \cdot \min\!\left(s^{-1/2},\; s \cdot
        w^{-3/2}\right)

    rising for ``w`` warm-up steps to a peak of :math:`(d_\text{model} w)^{-1/2}`.
    ``step`` counts from 1.
    """
    require_int("step", step, minimum=1)
    require_int("warmup_steps", warmup_steps, minimum=1)
    require_positive_int("d_model", d_model)
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def warmup_scheduler(
    optimizer: torch.optim.Optimizer, d_model: int, warmup_steps: int, factor: float = 1.0
) -> torch.optim.lr_scheduler.LambdaLR:
    """A scheduler that sets ``lr = factor · warmup_inverse_sqrt(step)``.

    Build the optimizer with ``lr=1.0``: the schedule gives the whole learning rate.
    """
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda index: factor * warmup_inverse_sqrt(index + 1, d_model, warmup_steps)
    )


@dataclass
class TrainingHistory:
    """Loss and learning rate of every step, and the wall time of the loop."""

    losses: list[float] = field(default_factory=list)
    learning_rates: list[float] = field(default_factory=list)
    seconds: float = 0.0


def fit(
    model: nn.Module,
    loss_on_batch: Callable[[torch.Generator], torch.Tensor],
    steps: int,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    clip_norm: float | None = 1.0,
    seed: int = 0,
    progress: bool = False,
) -> TrainingHistory:
    """Train for ``steps`` steps and return the history.

    Each step draws a batch through ``loss_on_batch(generator)`` (the generator is
    seeded with ``seed``, as is torch's global generator for dropout), back-propagates,
    clips the gradient norm to ``clip_norm``, steps the optimizer and the scheduler.
    The model's initial weights come from when it was built: seed before building
    it for a fully repeatable run. ``progress`` shows a text progress bar (tqdm) on stderr.
    """
    require_int("steps", steps, minimum=1)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    history = TrainingHistory()
    bar = None
    if progress:
        # The plain-text bar, not tqdm.auto's widget: a widget updated during a long cell
        # stalls headless runners such as nbval waiting for the kernel's messages.
        from tqdm.std import tqdm

        bar = tqdm(total=steps, desc="training", mininterval=5.0)  # few lines in a notebook
    start = time.perf_counter()
    model.train()
    try:
        for _ in range(steps):
            loss = loss_on_batch(generator)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip_norm is not None:
                nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
            history.learning_rates.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            history.losses.append(loss.item())
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{history.losses[-1]:.3f}", refresh=False)
    finally:
        if bar is not None:
            bar.close()
        model.eval()
    history.seconds = time.perf_counter() - start
    return history
