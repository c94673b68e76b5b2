"""The argument checks of :func:`attnlib.training.fit` and of saving a run.

Beside ``_validate.py`` (the package-wide checks): these know models, optimizers and
schedulers. A training history is checked where it is defined, in :mod:`attnlib.training`,
so that imports run one way: training imports these checks, never the reverse. The same
rule holds: a wrong type raises ``TypeError``, a right type with a wrong value
``ValueError``, and each message names the argument and what it got.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau

from attnlib._validate import require_int, require_number


def require_instance(name: str, value: object, kind: type | tuple[type, ...], wanted: str) -> None:
    """A ``TypeError`` naming ``name`` unless ``value`` is a ``kind`` (``wanted`` says which)."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {wanted}, got {type(value).__name__}")


def require_optimizer(
    optimizer: object, scheduler: object = None, model: nn.Module | None = None
) -> None:
    """An optimizer (of some of ``model``'s parameters), and ``None`` or a scheduler of it.

    Raises:
        TypeError: not an optimizer; not an LRScheduler, or one that needs a metric.
        ValueError: an optimizer of none of ``model``'s parameters; a scheduler of another.
    """
    require_instance("optimizer", optimizer, torch.optim.Optimizer, "a torch.optim.Optimizer")
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    if model is not None and not held & {id(p) for p in model.parameters()}:  # it would not move
        raise ValueError(f"optimizer holds {len(held)} tensors and none of model's parameters")
    if scheduler is not None:
        require_instance("scheduler", scheduler, LRScheduler, "an LRScheduler or None")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise TypeError("scheduler must step without a metric; ReduceLROnPlateau needs one")
        if scheduler.optimizer is not optimizer:
            raise ValueError("scheduler drives another optimizer than optimizer")


def require_fit_arguments(
    model: object,
    loss_on_batch: object,
    steps: object,
    optimizer: object,
    scheduler: object,
    clip_norm: object,
    seed: object,
    progress: object,
) -> None:
    """Every argument of :func:`attnlib.training.fit` but its history, as its docstring says."""
    if not callable(loss_on_batch):
        raise TypeError(f"loss_on_batch must be a function, got {type(loss_on_batch).__name__}")
    require_int("steps", steps, minimum=1)
    require_instance("model", model, nn.Module, "an nn.Module")
    require_optimizer(optimizer, scheduler, model)
    # clip_norm=0 would scale every gradient to 0: the weights would never move.
    if clip_norm is not None and not 0 < require_number("clip_norm", clip_norm) < math.inf:
        raise ValueError(f"clip_norm must be positive and finite (or None), got {clip_norm}")
    require_int("seed", seed, minimum=0)
    require_instance("progress", progress, bool, "a bool")
