"""Saving and loading models: the config and the weights in one file, written atomically.

Notebook 09.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import torch
from torch import nn

from attnlib._device import default_dtype
from attnlib.gpt import GPT, GPTConfig
from attnlib.transformer import Transformer, TransformerConfig

FORMAT = "attnlib-checkpoint"
VERSION = 1
_KINDS: dict[str, tuple[type[nn.Module], type]] = {
    "Transformer": (Transformer, TransformerConfig),
    "GPT": (GPT, GPTConfig),
}


class CheckpointError(ValueError):
    """A checkpoint file is missing, truncated, or not an attnlib checkpoint."""


def save_checkpoint(model: Transformer | GPT, path: str | os.PathLike[str]) -> Path:
    """Write ``model``'s config and weights to ``path``.

    The file is written to a temporary file beside ``path`` and then renamed over
    it, so a crash never leaves a half-written checkpoint behind.
    """
    kind = type(model).__name__
    if kind not in _KINDS or not isinstance(model, _KINDS[kind][0]):
        raise TypeError(f"model must be a Transformer or a GPT, got {type(model).__name__}")
    path = Path(path)
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "config": dataclasses.asdict(model.config),
        "state_dict": {name: t.detach().cpu() for name, t in model.state_dict().items()},
    }
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


def load_checkpoint(path: str | os.PathLike[str]) -> Transformer | GPT:
    """Rebuild the model saved at ``path`` on the CPU, in eval mode, in its weights' dtype.

    Raises:
        CheckpointError: the file is missing, truncated, or not an attnlib checkpoint;
            the message names the path.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {path}")
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
