"""Argument checks shared by the public functions.

Each check raises before torch can, with a message that names the argument,
the shape or type it got and what it wanted.
"""

from __future__ import annotations

import torch


def require_tensor(name: str, value: object) -> torch.Tensor:
    """Return ``value`` if it is a tensor, else raise a ``TypeError`` naming ``name``."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    return value


def require_float_tensor(name: str, value: object) -> torch.Tensor:
    """A tensor with a floating-point dtype (softmax and friends need one)."""
    tensor = require_tensor(name, value)
    if not tensor.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype, got {tensor.dtype}; "
            f"convert it first, e.g. {name}.float()"
        )
    return tensor


def require_min_ndim(name: str, tensor: torch.Tensor, ndim: int, layout: str) -> None:
    """Raise a ``ValueError`` when ``tensor`` has fewer than ``ndim`` dimensions."""
    if tensor.dim() < ndim:
        raise ValueError(
            f"{name} must have shape {layout} (at least {ndim} dims), "
            f"got shape {tuple(tensor.shape)}"
        )


def require_dim_index(name: str, dim: int, ndim: int) -> int:
    """Normalise a possibly negative ``dim`` for a tensor of ``ndim`` dimensions."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name} must be an int, got {type(dim).__name__}")
    if not -ndim <= dim < ndim:
        raise ValueError(f"{name}={dim} is out of range for a tensor with {ndim} dims")
    return dim % ndim


def require_token_ids(name: str, value: object) -> torch.Tensor:
    """An integer tensor of token ids with shape ``(B, T)``, else a ``TypeError``/``ValueError``."""
    ids = require_tensor(name, value)
    if ids.dim() != 2 or ids.is_floating_point() or ids.dtype == torch.bool:
        raise ValueError(
            f"{name} must be integer ids of shape (B, T), got dtype {ids.dtype} "
            f"and shape {tuple(ids.shape)}"
        )
    return ids


def require_positive_int(name: str, value: object) -> int:
    """A strictly positive ``int`` (``bool`` is refused), else a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def require_positive(name: str, value: float) -> float:
    """A strictly positive, finite real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return float(value)
