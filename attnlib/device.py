"""Where attnlib computes: the CPU unless asked otherwise.

The course runs on a laptop's CPU: every notebook is written and tested that way. With
a GPU, the expensive steps (training in notebooks 09 and 10, encoding many sentences in
11) can run there: set the environment variable ``ATTNLIB_DEVICE`` before starting
JupyterLab (``ATTNLIB_DEVICE=auto make lab``), or pass ``device=`` to the helpers that
take one. Trained models are handed back on the CPU, so the notebooks' cells work unchanged.
"""

from __future__ import annotations

import os

import torch

DEVICE_VARIABLE = "ATTNLIB_DEVICE"


def _available() -> list[str]:
    names = ["cpu"]
    if torch.cuda.is_available():
        names.append("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    return names


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The device to compute on.

    ``None`` reads ``$ATTNLIB_DEVICE`` and falls back to ``"cpu"``; ``"auto"`` picks CUDA
    if present, else Apple's MPS, else the CPU; anything else (``"cuda:1"``, a
    ``torch.device``) is used as given, after checking that its kind is available.
    """
    if device is None:
        device = os.environ.get(DEVICE_VARIABLE, "").strip() or "cpu"
    if isinstance(device, str) and device == "auto":
        available = _available()
        device = "cuda" if "cuda" in available else "mps" if "mps" in available else "cpu"
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            f"device {device!r} is not a torch device; use 'cpu', 'cuda', 'cuda:1', 'mps' or 'auto'"
        ) from error
    if resolved.type not in _available():
        raise RuntimeError(
            f"device {str(resolved)!r} is not available on this machine (available: "
            f"{', '.join(_available())}); unset {DEVICE_VARIABLE} or pass device='cpu'"
        )
    return resolved
