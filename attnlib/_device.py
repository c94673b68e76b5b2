"""Where attnlib computes: the CPU unless asked otherwise.

The course runs on a laptop's CPU: every notebook is written and tested that way. With
a GPU, the expensive steps (training in notebooks 09 and 10, encoding many sentences in
11) can run there: set the environment variable ``ATTNLIB_DEVICE`` before starting
JupyterLab (``ATTNLIB_DEVICE=auto make lab``), or pass ``device=`` to the helpers that
take one. Trained models are handed back on the CPU, so the notebooks' cells work unchanged.

The course's models train in float64 on the CPU (:func:`training_dtype`): sums are
rounded differently by different CPUs, and training amplifies those last-bit differences
until two machines end with visibly different models. In float64 they start hundreds of
millions of times smaller: the character GPT of notebook 10 then comes out the same, to
every printed digit, on every machine; the date translator of notebook 09 goes through a
sudden jump in what it has learned, which amplifies them anyway (see
:func:`attnlib.course.date_translator.load_reference_translator`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

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


def training_dtype(device: torch.device, dtype: torch.dtype | None = None) -> torch.dtype:
    """The floating-point type to train in: ``dtype`` if given, else float64 on the CPU.

    float64 keeps the rounding differences between CPUs far smaller (see the module
    docstring) at about 1.5× the time of float32. Accelerators get float32: they are used
    for speed, and Apple's MPS has no float64 at all.
    """
    if dtype is None:
        return torch.float64 if device.type == "cpu" else torch.float32
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    if dtype == torch.float64 and device.type == "mps":
        raise ValueError("Apple's MPS device has no float64; pass dtype=torch.float32")
    return dtype


@contextmanager
def default_dtype(dtype: torch.dtype) -> Iterator[None]:
    """Within the block, new float tensors (and so new modules' weights) are ``dtype``.

    Building a model this way draws its initial weights in ``dtype`` itself: a model
    built in float32 and converted would start from float32-rounded random numbers.
    """
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)
