"""Training support: label-smoothed cross-entropy, the warm-up schedule, a resumable loop.

Notebook 09.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import LRScheduler

from attnlib._training_checks import require_fit_arguments, require_instance
from attnlib._validate import require_int, require_positive_int, require_probability
from attnlib._validate_tensors import (
    require_class_ids,
    require_float_tensor,
    require_integer_tensor,
    require_min_ndim,
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
    """What :func:`fit` did, step by step, and where its run can continue from.

    ``losses[i]`` and ``learning_rates[i]`` are those of step ``i + 1``; ``seconds`` is the
    loop's wall time. ``seed`` is the run's seed and ``rng_state`` fit's random state where
    the run stopped (its copy of torch's global generator, which dropout draws from, and
    the batch generator's): ``fit(..., history=history)`` continues from there.
    """

    losses: list[float] = field(default_factory=list)
    learning_rates: list[float] = field(default_factory=list)
    # Two histories are equal when the same steps happened, however long they took.
    seconds: float = field(default=0.0, compare=False)
    seed: int | None = None
    rng_state: dict[str, torch.Tensor] | None = field(default=None, repr=False, compare=False)


class NonFiniteLossError(ValueError):
    """A step's loss is NaN or infinite; fit stopped before its update. See ``step``, ``loss``."""

    def __init__(self, step: int, loss: float, history: TrainingHistory) -> None:
        super().__init__(
            f"the loss of step {step} is {loss}: fit stopped before updating the weights with "
            f"it; the {step - 1} steps before are in this error's .history (a lower learning "
            "rate or a clip_norm is the usual cure)"
        )
        self.step, self.loss, self.history = step, loss, history

    def __reduce__(self) -> tuple[type, tuple[int, float, TrainingHistory]]:
        # Pickled from its fields, not from its message (for multiprocessing, for one).
        return type(self), (self.step, self.loss, self.history)


def _require_continuable(
    history: TrainingHistory, steps: int, seed: int, scheduler: LRScheduler | None
) -> int:
    """The number of steps ``history`` holds, once fit can continue the run from them.

    Raises:
        ValueError: ``history`` is inconsistent or has no random state to continue from;
            ``seed`` is not the run's; ``steps`` is not beyond ``history``; ``scheduler``
            has not taken as many steps as ``history`` holds.
    """
    done = len(history.losses)
    if len(history.learning_rates) != done:
        raise ValueError(f"history holds {done} losses, {len(history.learning_rates)} rates")
    if history.rng_state is None and done:  # e.g. one built by hand, not filled by fit
        raise ValueError(f"history holds {done} steps but no random state to go on from")
    if history.seed is not None and history.seed != seed:
        raise ValueError(f"seed={seed}, but history's run started from seed={history.seed}")
    if steps <= done:
        raise ValueError(f"steps={steps} counts the run's steps, and history holds {done}")
    taken = getattr(scheduler, "last_epoch", done)
    if done and taken != done:  # e.g. a fresh scheduler, which would restart the schedule
        raise ValueError(f"scheduler has taken {taken} steps, history {done}: restore it too")
    return done


def _loss_value(loss: object, step: int, history: TrainingHistory) -> float:
    """The float of a loss fit can back-propagate, checked before any torch error."""
    if not isinstance(loss, torch.Tensor):
        raise TypeError(f"loss_on_batch must return a tensor, got {type(loss).__name__}")
    if loss.dim() != 0:
        raise ValueError(
            f"loss_on_batch must return a scalar loss (shape ()), got shape "
            f"{tuple(loss.shape)}: reduce it, e.g. with .mean()"
        )
    if not loss.requires_grad:
        raise ValueError(
            "loss_on_batch returned a loss that does not require grad (made under no_grad?)"
        )
    value = loss.item()
    if not math.isfinite(value):
        raise NonFiniteLossError(step, value, history)
    return value


def _rng_state(generator: torch.Generator) -> dict[str, torch.Tensor]:
    return {"torch": torch.get_rng_state(), "generator": generator.get_state()}


def _start_random_state(history: TrainingHistory, seed: int, on_cpu: bool) -> torch.Generator:
    """The batch generator, and torch's global one (dropout's) set alike: from ``seed`` for a
    new run, from where ``history`` stopped for a continued one."""
    generator = torch.Generator()
    if history.rng_state is None:  # a new run
        (torch.default_generator if on_cpu else torch).manual_seed(seed)
        generator.manual_seed(seed)
        history.seed = seed
    else:
        torch.set_rng_state(history.rng_state["torch"])
        generator.set_state(history.rng_state["generator"])
    return generator


def _progress_bar(steps: int, done: int) -> Any:
    # The plain-text bar, not tqdm.auto's widget: a widget updated during a long cell
    # stalls headless runners such as nbval waiting for the kernel's messages.
    from tqdm.std import tqdm

    return tqdm(total=steps, initial=done, desc="training", mininterval=5.0)


def fit(
    model: nn.Module,
    loss_on_batch: Callable[[torch.Generator], torch.Tensor],
    steps: int,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler | None = None,
    clip_norm: float | None = 1.0,
    seed: int = 0,
    progress: bool = False,
    *,
    history: TrainingHistory | None = None,
) -> TrainingHistory:
    """Train until the run has taken ``steps`` steps in all; return its history.

    Each step draws a batch through ``loss_on_batch(generator)``, which returns a scalar
    loss, back-propagates, clips the gradient norm to ``clip_norm`` (``None``: no
    clipping), steps the optimizer and the scheduler. ``progress`` shows a text progress
    bar (tqdm) on stderr. The model trains in train mode and ends in eval mode.

    Random numbers: the batch generator and fit's own copy of torch's global generator
    (dropout's) start from ``seed``; the caller's global generator is left as it was.
    Seed before building the model too, for a fully repeatable run.

    Keeping a run: fit fills ``history`` step by step (a new one if ``None``). Pass your
    own (``history = TrainingHistory()``, ``fit(..., history=history)``) and after an
    interrupt (the ``KeyboardInterrupt`` of "interrupt kernel" is raised on, not
    swallowed) or an error it holds every finished step. fit with that history and the
    same model, optimizer, scheduler and seed continues the run to the weights of an
    uninterrupted one (on the CPU, and unless the interrupt fell inside ``optimizer.step``),
    as it does from ``load_training_state`` of a ``save_checkpoint(..., history=...)``.

    Raises:
        TypeError: an argument, or the loss, has the wrong type.
        ValueError: ``steps`` < 1, ``clip_norm`` not positive and finite, ``seed`` < 0; an
            optimizer of another model, a scheduler of another optimizer; a ``history`` these
            arguments do not continue; a loss that is not a scalar requiring grad.
        NonFiniteLossError: a step's loss is NaN or infinite (a ``ValueError``).
    """
    require_fit_arguments(
        model, loss_on_batch, steps, optimizer, scheduler, clip_norm, seed, progress
    )
    require_instance("history", history, (TrainingHistory, type(None)), "a TrainingHistory")
    kept = history is not None
    history = TrainingHistory() if history is None else history
    done = _require_continuable(history, steps, seed, scheduler)
    device_type = next(model.parameters()).device.type
    on_cpu = device_type == "cpu"
    # A CPU run forks and seeds the CPU generator only: no accelerator's is touched.
    with torch.random.fork_rng(devices=[] if on_cpu else None, device_type=device_type):
        generator = _start_random_state(history, seed, on_cpu)
        bar = _progress_bar(steps, done) if progress else None
        start = time.perf_counter()
        model.train()
        try:
            for step in range(done + 1, steps + 1):
                # Where this step starts: a run continued from here draws what it would have.
                history.rng_state = _rng_state(generator)
                loss = loss_on_batch(generator)
                value = _loss_value(loss, step, history)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if clip_norm is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
                learning_rate = optimizer.param_groups[0]["lr"]
                optimizer.step()
                if scheduler is not None:
                    scheduler.step()
                history.losses.append(value)
                history.learning_rates.append(learning_rate)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{value:.3f}", refresh=False)
            history.rng_state = _rng_state(generator)
        except KeyboardInterrupt as interrupt:
            if hasattr(interrupt, "add_note"):  # Python 3.11+: printed under the traceback
                where = "`history` holds them" if kept else "pass history= to keep them"
                done = len(history.losses)
                interrupt.add_note(f"fit: interrupted after {done} of {steps} steps; {where}")
            raise
        finally:
            history.seconds += time.perf_counter() - start
            model.eval()
            if bar is not None:
                bar.close()
    return history
