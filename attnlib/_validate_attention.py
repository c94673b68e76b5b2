"""The checks every attention function makes at its door: q, k, v, the mask and the scale.

The package's rule is in :mod:`attnlib._validate`.
"""

from __future__ import annotations

import torch

from attnlib._validate import require_positive, require_probability
from attnlib._validate_tensors import require_float_tensor, require_min_ndim


def require_bool_mask(name: str, value: object) -> torch.Tensor:
    """A ``torch.bool`` tensor (attnlib's masks: **True = may attend**)."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{name} must be a bool torch.Tensor (True = may attend), got {type(value).__name__}"
        )
    if value.dtype != torch.bool:
        raise TypeError(
            f"{name} must be a bool torch.Tensor (True = may attend), got dtype {value.dtype}; "
            "an additive float mask is not accepted: build a bool one with attnlib.masks"
        )
    return value


def require_attention_mask(
    mask: object, scores_shape: torch.Size, name: str = "mask"
) -> torch.Tensor:
    """A bool mask that broadcasts to the scores ``(..., T_q, T_k)``."""
    mask = require_bool_mask(name, mask)
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores_shape:
        raise ValueError(
            f"{name} of shape {tuple(mask.shape)} does not broadcast to the attention scores "
            f"of shape {tuple(scores_shape)} (..., T_q, T_k)"
        )
    return mask


def require_attention_inputs(
    q: object, k: object, v: object, mask: object, dropout_p: object, scale: object
) -> torch.Tensor | None:
    """The checks every attention function makes at its door; returns the mask to use.

    ``scale``, when given, must be positive and finite: 0 would make every weight equal,
    and a negative scale would attend to the least similar key, neither of which is a
    scaled dot product.

    Shapes:
        q: ``(..., T_q, d_k)``, k: ``(..., T_k, d_k)``, v: ``(..., T_k, d_v)``, leading
        dims broadcastable; mask broadcastable to ``(..., T_q, T_k)``.
    """
    layouts = {"q": "(..., T_q, d_k)", "k": "(..., T_k, d_k)", "v": "(..., T_k, d_v)"}
    for name, x in (("q", q), ("k", k), ("v", v)):
        require_min_ndim(name, require_float_tensor(name, x), 2, layouts[name])
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dim d_k, got q shape {tuple(q.shape)} "
            f"and k shape {tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same length T_k (dim -2), got k shape {tuple(k.shape)} "
            f"and v shape {tuple(v.shape)}"
        )
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the leading dims of q {tuple(q.shape)}, k {tuple(k.shape)} and v "
            f"{tuple(v.shape)} do not broadcast"
        ) from None
    require_probability("dropout_p", dropout_p)
    if scale is not None:
        require_positive("scale", scale)
    if mask is None:
        return None
    return require_attention_mask(mask, torch.Size((*batch, q.shape[-2], k.shape[-2])))
