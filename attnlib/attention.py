"""Scaled dot-product attention: the function every attention module in attnlib calls.

Notebook 04.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attnlib._validate import require_float_tensor, require_min_ndim
from attnlib.softmax import softmax


def _require_mask(mask: object, scores_shape: torch.Size) -> torch.Tensor:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a bool torch.Tensor or None, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "an additive float mask is not accepted: build a bool one with attnlib.masks"
        )
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores_shape:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the attention scores "
            f"of shape {tuple(scores_shape)} (..., T_q, T_k)"
        )
    return mask


def _require_attention_inputs(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropout_p: float, scale: float | None
) -> float:
    """Check q, k, v and dropout_p the same way for every attention function; the scale."""
    for name, tensor in (("q", q), ("k", k), ("v", v)):
        require_float_tensor(name, tensor)
    require_min_ndim("q", q, 2, "(..., T_q, d_k)")
    require_min_ndim("k", k, 2, "(..., T_k, d_k)")
    require_min_ndim("v", v, 2, "(..., T_k, d_v)")
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
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    return 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale


def _scores_shape(q: torch.Tensor, k: torch.Tensor) -> torch.Size:
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    return torch.Size((*batch, q.shape[-2], k.shape[-2]))


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Scaled dot-product attention, returning the output and the attention weights.

    .. math::

        \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
            \frac{QK^\top}{\sqrt{d_k}} + \text{mask}\right) V

    where the mask sets the score of every blocked (query, key) pair to the
    smallest finite value of the dtype, so its weight is exactly 0. A query
    row that may attend to no key gets weights 0 and output 0 (never NaN), as
    in ``torch.nn.functional.scaled_dot_product_attention``, which this equals.

    Args:
        q: queries.
        k: keys.
        v: values.
        mask: bool, **True = may attend** (the polarity of
            ``torch.nn.functional.scaled_dot_product_attention``; the opposite of
            ``torch.nn.MultiheadAttention``). Broadcastable to ``(..., T_q, T_k)``.
        dropout_p: probability of zeroing each weight (the rest scaled by
            ``1/(1-p)``). Applied whenever it is > 0: modules pass 0 in eval mode.
            Uses torch's global generator, so ``torch.manual_seed`` makes it repeatable.
        scale: multiplies the scores; default ``1/√d_k``.

    Returns:
        ``(out, weights)``; ``weights`` are the ones used for ``out`` (after dropout).

    Shapes:
        q: ``(..., T_q, d_k)``, k: ``(..., T_k, d_k)``, v: ``(..., T_k, d_v)``;
        out: ``(..., T_q, d_v)``, weights: ``(..., T_q, T_k)``. Leading dims broadcast.
    """
    scale = _require_attention_inputs(q, k, v, dropout_p, scale)
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., T_q, T_k)
    if mask is not None:
        mask = _require_mask(mask, scores.shape)
        # The dtype's smallest finite value, not -inf: a fully blocked row then stays
        # finite (uniform) instead of 0/0, and is zeroed just below. (-1e9 would overflow
        # to -inf in float16.)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = softmax(scores, dim=-1)  # (..., T_q, T_k)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # blocked pairs exactly 0, empty rows all 0
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p, training=True)
    out = weights @ v  # (..., T_q, d_v)
    return out, weights


def fused_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> torch.Tensor:
    r"""The same attention as :func:`scaled_dot_product_attention`, by PyTorch's fused kernel.

    .. math::

        \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
            \frac{QK^\top}{\sqrt{d_k}} + \text{mask}\right) V

    ``torch.nn.functional.scaled_dot_product_attention`` computes the scores, the
    softmax and the weighted sum in one kernel that never hands the weights back,
    which is why it is faster and why this function returns only the output. Use it
    when the weights are not needed (inference, training). The conventions are
    attnlib's: mask polarity **True = may attend** (PyTorch's own for this function),
    and a query row that may attend to no key gets output 0, not NaN.

    Shapes:
        q: ``(..., T_q, d_k)``, k: ``(..., T_k, d_k)``, v: ``(..., T_k, d_v)``;
        mask broadcastable to ``(..., T_q, T_k)``; returns ``(..., T_q, d_v)``.
    """
    scale = _require_attention_inputs(q, k, v, dropout_p, scale)
    if mask is not None:
        mask = _require_mask(mask, _scores_shape(q, k))
    out = F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale
    )  # (..., T_q, d_v)
    if mask is not None:
        nothing_to_attend = ~mask.any(dim=-1, keepdim=True)  # (..., T_q, 1)
        out = out.masked_fill(nothing_to_attend, 0.0)  # the kernel leaves NaN there
    return out
