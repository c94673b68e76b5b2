r"""The neuron view: one head's computation for one query token, step by step.

For query token ``i`` of a head, from the layer's own projections of its input ``x``:

.. math::

    q = x_i W^Q, \quad k_j = x_j W^K, \quad v_j = x_j W^V, \quad
    s_j = \frac{q \cdot k_j}{\sqrt{d_k}} = \frac{1}{\sqrt{d_k}} \sum_d (q \circ k_j)_d, \quad
    a = \operatorname{softmax}(s \text{ over the keys } j \text{ with } M_{ij}), \quad
    o = \sum_j a_j v_j

:func:`neuron_steps` computes every intermediate in float64 from ``q``, ``k`` and ``v``;
:func:`neuron_view` projects them first with the weights of an
:class:`attnlib.MultiHeadAttention` (one of its heads) or an :class:`attnlib.AttentionHead`,
so it serves MiniLM (notebook 11), the char GPT (10) and the toy models of 04 and 05.
The mask is bool, ``True`` = may attend (notebook 07's polarity): a key it blocks gets
weight exactly 0, a query it blocks from every key gets weights of 0 and an output of 0.

Notebooks 04, 05, 10 and 11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attnlib._validate_attention import require_bool_mask
from attnlib._validate_tensors import require_width
from attnlib.softmax import softmax


@dataclass(frozen=True, eq=False)
class NeuronView:
    """Every step of one head's attention for one query token, in float64.

    ``scores`` are the scaled scores of all keys, blocked ones included (the mask acts only
    in the softmax, as ``weights`` shows: exactly 0 where ``mask`` is False). ``scale`` is
    the factor the scores were multiplied by, :math:`1/\\sqrt{d_k}` unless told otherwise.

    Shapes:
        q: ``(D,)``; k, q_times_k: ``(T, D)``; scores, mask, weights: ``(T,)``;
        values, weighted_values: ``(T, D_v)``; output: ``(D_v,)``, the sum of the
        weighted values (this head's slice of the attention output before ``W^O``).
    """

    head: int
    query: int
    scale: float
    q: torch.Tensor
    k: torch.Tensor
    q_times_k: torch.Tensor
    scores: torch.Tensor
    mask: torch.Tensor
    weights: torch.Tensor
    values: torch.Tensor
    weighted_values: torch.Tensor
    output: torch.Tensor


def neuron_steps(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
    head: int = 0,
    query: int = 0,
) -> NeuronView:
    """Each step from one query ``q`` over keys ``k`` and values ``v`` to the output, in float64.

    ``head`` and ``query`` only label the result.

    Shapes:
        q: ``(D,)``; k: ``(T, D)``; v: ``(T, D_v)``; mask: ``(T,)`` bool, ``True`` = may
        attend (default: every key).
    """
    q, k, v = (t.detach().double().cpu() for t in (q, k, v))
    if q.dim() != 1 or k.dim() != 2 or v.dim() != 2 or k.shape != (v.shape[0], q.shape[0]):
        raise ValueError(
            f"q, k, v must be (D,), (T, D), (T, D_v), got {tuple(q.shape)}, {tuple(k.shape)}, "
            f"{tuple(v.shape)}"
        )
    length = k.shape[0]
    if mask is None:
        mask = torch.ones(length, dtype=torch.bool)
    mask = require_bool_mask("mask", mask).cpu()
    if mask.shape != (length,):
        raise ValueError(f"mask must be ({length},), got {tuple(mask.shape)}")
    scale = 1.0 / math.sqrt(q.shape[0]) if scale is None else float(scale)
    q_times_k = q * k  # (T, D)
    scores = q_times_k.sum(dim=-1) * scale  # (T,)
    blocked = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = softmax(blocked, dim=-1).masked_fill(~mask, 0.0)  # (T,); all 0 if none allowed
    weighted = weights[:, None] * v  # (T, D_v)
    return NeuronView(
        head=head, query=query, scale=scale, q=q, k=k, q_times_k=q_times_k, scores=scores,
        mask=mask, weights=weights, values=v, weighted_values=weighted,
        output=weighted.sum(dim=0),
    )  # fmt: skip


def _project(linear: nn.Linear, x: torch.Tensor, head: int, width: int) -> torch.Tensor:
    rows = slice(head * width, (head + 1) * width)
    weight = linear.weight.detach().double().cpu()[rows]  # (D, C)
    bias = None if linear.bias is None else linear.bias.detach().double().cpu()[rows]  # (D,)
    return nn.functional.linear(x, weight, bias)  # (T, D)


@torch.no_grad()
def neuron_view(
    attention: nn.Module,
    x: torch.Tensor,
    head: int,
    query: int,
    mask: torch.Tensor | None = None,
) -> NeuronView:
    """The steps of head ``head`` of ``attention`` for query token ``query`` of ``x``.

    ``attention`` is a :class:`attnlib.MultiHeadAttention` (head ``h`` is slice ``h`` of
    its ``w_q``, ``w_k``, ``w_v``) or an :class:`attnlib.AttentionHead` (``head`` 0);
    ``mask`` is bool, ``True`` = may attend: the query's row ``(T,)`` or the whole
    ``(T, T)`` (default: every key).

    Shapes:
        x: ``(T, C)``, the attention's input (self-attention, one sequence).
    """
    num_heads = getattr(attention, "num_heads", 1)
    width = getattr(attention, "head_size", getattr(attention, "d_k", None))
    if width is None or not hasattr(attention, "w_q"):
        raise TypeError(
            f"attention must be a MultiHeadAttention or AttentionHead, got {type(attention)}"
        )
    value_width = getattr(attention, "d_v", width)
    x = require_width("x", x, attention.w_q.in_features, ndim=2).detach().double().cpu()
    length = x.shape[0]
    for name, value, count in (("head", head, num_heads), ("query", query, length)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
            raise ValueError(f"{name} must be an int in [0, {count - 1}], got {value!r}")
    if mask is not None and mask.dim() == 2:
        if mask.shape != (length, length):
            raise ValueError(f"mask must be ({length},) or ({length}, {length}), "
                             f"got {tuple(mask.shape)}")  # fmt: skip
        mask = mask[query]  # (T,): the query's row
    q = _project(attention.w_q, x[query : query + 1], head, width)[0]  # (D,)
    k = _project(attention.w_k, x, head, width)  # (T, D)
    v = _project(attention.w_v, x, head, value_width)  # (T, D_v)
    return neuron_steps(q, k, v, mask, head=head, query=query)
