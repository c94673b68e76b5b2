r"""Attention without the (T_q, T_k) score matrix: the online softmax and tiled attention.

The softmax of a row needs its maximum (for stability) and its sum before any weight
is known, which seems to require every score at once. The **online softmax** keeps
instead, per row, a running maximum :math:`m` and a running sum :math:`\ell` of
:math:`e^{s - m}`, and updates them one block of scores at a time:

.. math::

    m' = \max(m, \max_j s_j), \qquad
    \ell' = \ell\, e^{m - m'} + \sum_j e^{s_j - m'}

(the factor :math:`e^{m - m'}` re-expresses the old sum relative to the new maximum).
After the last block, :math:`\operatorname{softmax}(s)_j = e^{s_j - m} / \ell`.

**Tiled attention** (the algorithm of FlashAttention, here in plain PyTorch) applies the
same rescaling to the weighted sum of values, so the output can be accumulated tile by
tile of keys and divided by :math:`\ell` at the end. Only a ``(tile_size, tile_size)``
tile of scores exists at any time.

Notebook 12.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attnlib._validate import require_positive_int
from attnlib._validate_attention import require_attention_inputs
from attnlib._validate_tensors import require_finite, require_float_tensor, require_min_ndim
from attnlib.attention import default_scale


@dataclass(frozen=True, eq=False)
class OnlineSoftmaxState:
    """The running maximum and running sum of the online softmax after some blocks.

    Shapes:
        running_max, running_sum: ``(...)``, one per row (``-inf`` and 0 before any block).
    """

    running_max: torch.Tensor
    running_sum: torch.Tensor


def online_softmax_step(state: OnlineSoftmaxState, block: torch.Tensor) -> OnlineSoftmaxState:
    r"""Fold one block of scores into the running maximum and sum.

    .. math::

        m' = \max(m, \max_j s_j), \qquad \ell' = \ell\, e^{m - m'} + \sum_j e^{s_j - m'}

    Scores of ``-inf`` (blocked) add nothing; a row that has seen only ``-inf`` keeps
    :math:`m = -\infty, \ell = 0`. An empty block changes nothing.

    Shapes:
        block: ``(..., n)``; the state's tensors ``(...)``.
    """
    require_float_tensor("block", block)
    require_min_ndim("block", block, 1, "(..., n)")
    if block.shape[-1] == 0:
        return state
    new_max = torch.maximum(state.running_max, block.amax(dim=-1))
    # Rows that have seen nothing but -inf: measure from 0 so that no -inf - -inf appears.
    reference = new_max.masked_fill(new_max == -math.inf, 0.0)
    rescale = torch.exp(state.running_max - reference)  # e^{m - m'}, 0 when m = -inf
    block_sum = torch.exp(block - reference.unsqueeze(-1)).sum(dim=-1)
    return OnlineSoftmaxState(new_max, state.running_sum * rescale + block_sum)


def online_softmax(x: torch.Tensor, tile_size: int) -> torch.Tensor:
    r"""Softmax over the last dim, computed by reading ``x`` in tiles of ``tile_size``.

    .. math::

        \operatorname{softmax}(x)_j = \frac{e^{x_j - m}}{\ell}

    with :math:`m` and :math:`\ell` the running maximum and sum after the last tile.
    The first pass folds each tile into an :class:`OnlineSoftmaxState`; the second
    divides :math:`e^{x - m}` by the final sum. Equal to :func:`attnlib.softmax` (a row
    of ``-inf`` only gives zeros instead of NaN; ``n = 0`` gives the empty input back).

    Shapes:
        x: ``(..., n)``; returns ``(..., n)``.
    """
    require_float_tensor("x", x)
    require_min_ndim("x", x, 1, "(..., n)")
    require_positive_int("tile_size", tile_size)
    state = OnlineSoftmaxState(
        running_max=torch.full(x.shape[:-1], -math.inf, dtype=x.dtype, device=x.device),
        running_sum=torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device),
    )
    for start in range(0, x.shape[-1], tile_size):
        state = online_softmax_step(state, x[..., start : start + tile_size])
    reference = state.running_max.masked_fill(state.running_max == -math.inf, 0.0)
    numerators = torch.exp(x - reference.unsqueeze(-1))
    return numerators / state.running_sum.clamp_min(torch.finfo(x.dtype).tiny).unsqueeze(-1)


def tiled_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
    *,
    tile_size: int = 256,
) -> torch.Tensor:
    r"""Scaled dot-product attention, one ``(tile_size, tile_size)`` tile of scores at a time.

    .. math::

        \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(
            \frac{QK^\top}{\sqrt{d_k}} + \text{mask}\right) V

    For each tile of queries it walks over the tiles of keys, keeping per query the
    running maximum :math:`m`, the running sum :math:`\ell` and an unnormalised output
    :math:`o`. A new tile of scores :math:`S` updates them as

    .. math::

        m' = \max(m, \operatorname{rowmax} S), \quad
        P = e^{S - m'}, \quad
        \ell' = e^{m - m'}\ell + \operatorname{rowsum} P, \quad
        o' = e^{m - m'}\, o + P V_{\text{tile}}

    and the output is :math:`o / \ell`. Memory for scores is ``tile_size²`` per
    (batch, head) instead of ``T_q · T_k``; the result equals
    :func:`attnlib.scaled_dot_product_attention` to float rounding.

    Args:
        mask: bool, **True = may attend**, broadcastable to ``(..., T_q, T_k)``. A query
            that may attend to no key (every query, if ``T_k = 0``) gets output 0, as
            everywhere in attnlib.
        dropout_p: dropout on the attention weights, as in
            :func:`attnlib.scaled_dot_product_attention`: each tile of :math:`P` is
            dropped (and scaled by ``1/(1-p)``) on its way into :math:`o`, not into
            :math:`\ell`, which is dropout of the normalised weights.
        scale: multiplies the scores; default ``1/√d_k``.
        tile_size: rows and columns of each score tile; any ``T`` works (the last
            tile is shorter).

    Raises:
        TypeError, ValueError: as :func:`attnlib.scaled_dot_product_attention`; also a
            ``ValueError`` when ``q``, ``k`` or ``v`` holds NaN or ±inf, or ``tile_size``
            is not positive.

    Shapes:
        q: ``(..., T_q, d_k)``, k: ``(..., T_k, d_k)``, v: ``(..., T_k, d_v)``;
        returns ``(..., T_q, d_v)``.
    """
    mask = require_attention_inputs(q, k, v, mask, dropout_p, scale)
    scale = default_scale(q.shape[-1]) if scale is None else scale
    require_positive_int("tile_size", tile_size)
    # NaN or inf in q, k or v would come out as NaN without a word. One read of each, at
    # the door: O(T·d) beside the loop's O(T_q·T_k·d).
    for name, x in (("q", q), ("k", k), ("v", v)):
        require_finite(name, x)
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    t_q, t_k, d_k, d_v = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    if mask is not None:
        # A view with every broadcast dim spelled out, so that slicing a tile of it works.
        mask = mask.expand(*batch, t_q, t_k)
    # Every (batch, head) pair is an independent problem: flatten them into one dim N so
    # that each tile is a single batched matrix product. Scaling q once is cheaper than S.
    n = math.prod(batch)  # spelled out: with T = 0 a reshape could not infer it
    q = (q * scale).expand(*batch, t_q, d_k).reshape(n, t_q, d_k)  # (N, T_q, d_k)
    k_t = k.expand(*batch, t_k, d_k).reshape(n, t_k, d_k).transpose(1, 2)  # (N, d_k, T_k)
    v = v.expand(*batch, t_k, d_v).reshape(n, t_k, d_v)  # (N, T_k, d_v)
    out = q.new_empty(n, t_q, d_v)
    for q_start in range(0, t_q, tile_size):
        q_end = min(q_start + tile_size, t_q)
        running_max = q.new_full((n, q_end - q_start, 1), -math.inf)  # m
        running_sum = q.new_zeros(n, q_end - q_start, 1)  # ℓ
        acc = q.new_zeros(n, q_end - q_start, d_v)  # o, unnormalised
        for k_start in range(0, t_k, tile_size):
            k_end = min(k_start + tile_size, t_k)
            p = torch.bmm(q[:, q_start:q_end], k_t[:, :, k_start:k_end])  # (N, Bq, Bk): S
            if mask is not None:
                p.masked_fill_(~mask[..., q_start:q_end, k_start:k_end].reshape(p.shape), -math.inf)
            # The output does not depend on the shift m, so m is a constant to autograd
            # (as in attnlib.softmax). Then no value autograd saved is overwritten below,
            # and the tile and running values can be updated in place, with or without grad.
            new_max = torch.maximum(running_max, p.detach().amax(dim=-1, keepdim=True))  # m'
            # A row whose keys so far are all blocked keeps m' = -inf: measure it from 0
            # instead, so that no -inf - (-inf) = NaN appears (its P is 0 either way).
            reference = new_max.masked_fill(new_max == -math.inf, 0.0)
            rescale = torch.exp(running_max - reference)  # e^{m - m'}, 0 on the first tile
            p.sub_(reference).exp_()  # P
            running_sum.mul_(rescale).add_(p.sum(dim=-1, keepdim=True))  # ℓ' = e^{m-m'} ℓ + ΣP
            # Dropout acts on the weights that multiply V, not on the normaliser ℓ.
            p_values = F.dropout(p, p=dropout_p, training=True) if dropout_p > 0.0 else p
            acc.mul_(rescale).baddbmm_(p_values, v[:, k_start:k_end])  # o' = e^{m-m'} o + P V
            running_max = new_max
        # A row that saw no key at all has ℓ = 0 and o = 0: its output is 0.
        out[:, q_start:q_end] = acc / running_sum.clamp_min(torch.finfo(q.dtype).tiny)
    return out.view(*batch, t_q, d_v)  # (..., T_q, d_v)
