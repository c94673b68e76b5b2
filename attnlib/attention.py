"""Scaled dot-product attention: the function every attention module in attnlib calls.

Notebook 04.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attnlib._validate_attention import require_attention_inputs
from attnlib.softmax import softmax_unchecked


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
    So with no keys at all (``T_k = 0``) the output is zeros; with no queries
    (``T_q = 0``) both results are empty.

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
    mask = require_attention_inputs(q, k, v, mask, dropout_p, scale)
    return attend(q, k, v, mask, dropout_p, scale)


def default_scale(d_k: int) -> float:
    r"""The paper's :math:`1/\sqrt{d_k}`.

    A dot product of two vectors of ``d_k`` independent unit-variance entries has
    variance ``d_k``; dividing by :math:`\sqrt{d_k}` brings the scores back to variance 1,
    where the softmax is not yet saturated (notebook 02). With ``d_k = 0`` there are no
    scores to scale, so 1.
    """
    return 1.0 / math.sqrt(d_k) if d_k > 0 else 1.0


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`scaled_dot_product_attention` without its checks, for callers that checked.

    The layers inside attnlib's models build ``q``, ``k`` and ``v`` themselves and check
    the mask at their own door, so they call this: every layer, every decoding step.

    Shapes:
        as :func:`scaled_dot_product_attention`.
    """
    if scale is None:
        scale = default_scale(q.shape[-1])
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., T_q, T_k)
    if mask is not None:
        # The dtype's smallest finite value, not -inf: a fully blocked row then stays
        # finite (uniform) instead of 0/0, and is zeroed just below. (-1e9 would overflow
        # to -inf in float16.)
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = softmax_unchecked(scores, dim=-1)  # (..., T_q, T_k)
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
    and a query row that may attend to no key (or ``T_k = 0``) gets output 0, not NaN.

    Shapes:
        q: ``(..., T_q, d_k)``, k: ``(..., T_k, d_k)``, v: ``(..., T_k, d_v)``;
        mask broadcastable to ``(..., T_q, T_k)``; returns ``(..., T_q, d_v)``.
    """
    mask = require_attention_inputs(q, k, v, mask, dropout_p, scale)
    return attend_fused(q, k, v, mask, dropout_p, scale)


def attend_fused(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> torch.Tensor:
    """:func:`fused_attention` without its checks, for callers that checked (see :func:`attend`).

    Shapes:
        as :func:`fused_attention`.
    """
    if scale is None:
        scale = default_scale(q.shape[-1])
    out = F.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale
    )  # (..., T_q, d_v)
    if mask is not None:
        nothing_to_attend = ~mask.any(dim=-1, keepdim=True)  # (..., T_q, 1)
        out = out.masked_fill(nothing_to_attend, 0.0)  # the kernel leaves NaN there
    return out
