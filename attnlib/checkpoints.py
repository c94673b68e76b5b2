"""Saving and loading models, and training runs to resume: one file, written atomically.

Notebook 09.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.optim.lr_scheduler import LRScheduler

from attnlib._device import default_dtype
from attnlib._training_checks import require_optimizer
from attnlib.gpt import GPT, GPTConfig
from attnlib.training import TrainingHistory
from attnlib.transformer import Transformer, TransformerConfig

FORMAT = "attnlib-checkpoint"
# A training state is an optional "training" entry: version 1 files with and without one are
# read by every version-1 reader (the model part is the same).
VERSION = 1
_KINDS: dict[str, tuple[type[nn.Module], type]] = {
    "Transformer": (Transformer, TransformerConfig),
    "GPT": (GPT, GPTConfig),
}


class CheckpointError(ValueError):
    """A checkpoint file is missing, truncated, or not an attnlib checkpoint."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """No checkpoint file at the path: a :class:`CheckpointError` and a ``FileNotFoundError``."""


def _require_path(path: object) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a pathlib.Path, got {type(path).__name__}")
    if not os.fspath(path):
        raise ValueError("path must name a file, got ''")
    return Path(path)


def save_checkpoint(
    model: Transformer | GPT,
    path: str | os.PathLike[str],
    *,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: LRScheduler | None = None,
    history: TrainingHistory | None = None,
) -> Path:
    """Write ``model``'s config and weights to ``path``, and its training run if given.

    With ``optimizer`` and ``history`` (and the run's ``scheduler``, if it has one) the file
    also holds their states: the optimizer's (moments and all), the schedule's position,
    the history with its step count and :func:`~attnlib.training.fit`'s random state.
    :func:`load_training_state` puts them back, and fit continues the run as if it had
    never stopped. Without them the file holds the model only, as earlier files do.

    The file is written to a temporary file beside ``path`` and then renamed over it, so a
    crash never leaves a half-written checkpoint behind.

    Raises:
        TypeError: ``model`` is not a Transformer or a GPT; ``path`` is not a str or a
            path; an optimizer, scheduler or history of the wrong type, or one of
            ``optimizer`` and ``history`` without the other.
        ValueError: the optimizer holds none of the model's parameters, or the scheduler
            drives another optimizer.
    """
    kind = type(model).__name__
    if kind not in _KINDS or not isinstance(model, _KINDS[kind][0]):
        raise TypeError(f"model must be a Transformer or a GPT, got {type(model).__name__}")
    path = _require_path(path)
    payload: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "config": dataclasses.asdict(model.config),
        "state_dict": {name: t.detach().cpu() for name, t in model.state_dict().items()},
    }
    if optimizer is not None or scheduler is not None or history is not None:
        payload["training"] = _training_state(model, optimizer, scheduler, history)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _training_state(
    model: nn.Module, optimizer: object, scheduler: object, history: object
) -> dict[str, Any]:
    """The optimizer's, the scheduler's and the history's states, as plain tensors and data."""
    if optimizer is None or history is None:
        missing = "optimizer" if optimizer is None else "history"
        raise TypeError(f"saving a training run needs optimizer= and history=, got no {missing}")
    require_optimizer(optimizer, scheduler, model)
    if not isinstance(history, TrainingHistory):
        raise TypeError(f"history must be a TrainingHistory, got {type(history).__name__}")
    return {
        "step": len(history.losses),
        "optimizer": {"class": type(optimizer).__name__, "state": optimizer.state_dict()},
        "scheduler": None
        if scheduler is None
        else {"class": type(scheduler).__name__, "state": scheduler.state_dict()},
        "history": dataclasses.asdict(history),  # the random state's tensors are copied
    }


def _read(path: Path) -> dict[str, Any]:
    """The payload of the attnlib checkpoint at ``path``, its format and version checked."""
    if not path.is_file():
        what = "a directory" if path.is_dir() else "no such file"
        raise CheckpointNotFoundError(f"no checkpoint at {path}: {what}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # truncated or foreign files fail in many ways
        raise CheckpointError(f"{path} is not a readable attnlib checkpoint: {error}") from error
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not an attnlib checkpoint")
    if payload.get("version") != VERSION or payload.get("kind") not in _KINDS:
        raise CheckpointError(
            f"{path} has version {payload.get('version')!r} and kind {payload.get('kind')!r}; "
            f"this attnlib reads version {VERSION} of {sorted(_KINDS)}"
        )
    return payload


def load_checkpoint(path: str | os.PathLike[str]) -> Transformer | GPT:
    """Rebuild the model saved at ``path`` on the CPU, in eval mode, in its weights' dtype.

    Reads files with or without a training state (see :func:`load_training_state`).

    Raises:
        TypeError: ``path`` is not a str or a path.
        CheckpointNotFoundError: there is no file at ``path`` (a ``FileNotFoundError`` and
            a ``CheckpointError``).
        CheckpointError: the file is truncated or not an attnlib checkpoint; the message
            names the path.
    """
    path = _require_path(path)
    payload = _read(path)
    model_class, config_class = _KINDS[payload["kind"]]
    state_dict = payload.get("state_dict")
    if not isinstance(state_dict, dict):
        raise CheckpointError(f"{path} does not match its own config: it holds no state_dict")
    # Rebuild in the weights' own precision: the course trains in float64, and loading into
    # a float32 model would round every weight.
    float_dtypes = {t.dtype for t in state_dict.values() if torch.is_floating_point(t)}
    dtype = float_dtypes.pop() if len(float_dtypes) == 1 else torch.get_default_dtype()
    try:
        with default_dtype(dtype):
            model = model_class(config_class(**payload["config"]))
        model.load_state_dict(state_dict)
    except (TypeError, ValueError, RuntimeError, KeyError) as error:
        raise CheckpointError(f"{path} does not match its own config: {error}") from error
    return model.eval()


def load_training_state(
    path: str | os.PathLike[str],
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler | None = None,
) -> TrainingHistory:
    """Put the training run saved at ``path`` back into ``optimizer`` and ``scheduler``.

    Build them as the run did, on the parameters of the model :func:`load_checkpoint`
    rebuilt from the same file; then ``fit(model, ..., history=history)`` with the returned
    history (and the run's seed) continues the run where it was saved.

    Raises:
        TypeError: ``path``, ``optimizer`` or ``scheduler`` has the wrong type.
        ValueError: ``scheduler`` drives another optimizer.
        CheckpointError: the file is missing or not a checkpoint, holds no training state,
            or holds the state of another kind of optimizer or scheduler, or of other
            parameters; the message names the path.
    """
    path = _require_path(path)
    require_optimizer(optimizer, scheduler)
    training = _read(path).get("training")
    if training is None:
        raise CheckpointError(
            f"{path} holds a model but no training run: save_checkpoint(model, path, "
            "optimizer=..., history=...) saves one"
        )
    try:
        states = {name: training[name] for name in ("optimizer", "scheduler")}
        saved = {name: None if state is None else state["class"] for name, state in states.items()}
        history = TrainingHistory(**training["history"])
        if training["step"] != len(history.losses):
            raise ValueError(f"step {training['step']} of a history of {len(history.losses)}")
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(f"{path} holds a damaged training run: {error!r}") from error
    given = {"optimizer": optimizer, "scheduler": scheduler}
    for name, kind in saved.items():  # all checked before any state is put back
        if kind != (None if given[name] is None else type(given[name]).__name__):
            held = f"the {name} state of a {kind}" if kind else f"no {name} state"
            got = "None" if given[name] is None else f"a {type(given[name]).__name__}"
            raise CheckpointError(f"{path} holds {held}, but {name} is {got}")
    for name, kind in saved.items():
        try:
            if kind is not None:
                given[name].load_state_dict(states[name]["state"])
        except (ValueError, KeyError, RuntimeError, TypeError) as error:
            raise CheckpointError(f"{path}'s {name} state does not fit {name}: {error}") from error
    return history
