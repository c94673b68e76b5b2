"""Naive self-attention: every position mixes all positions, weighted by raw dot products.

Notebook 03.
"""

from __future__ import annotations

import torch

from attnlib._validate_tensors import require_float_tensor, require_min_ndim
from attnlib.softmax import softmax_unchecked


def naive_self_attention(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Self-attention in its simplest form: no projections, no scaling, no mask.

    .. math::

        W = \operatorname{softmax}(X X^\top), \qquad \text{out} = W X

    Row ``t`` of ``W`` says how much of each position ``s`` goes into the new
    vector of position ``t``; each row sums to 1, so ``out[t]`` is a weighted
    average (a "paint mix") of the input vectors. The score of a vector with
    itself is its squared length, which is why long vectors mostly attend to
    themselves here: notebooks 02 and 04 fix that with scaling and projections.

    Args:
        x: one vector per position.

    Shapes:
        x: ``(..., T, C)``; returns ``out (..., T, C)`` and ``weights (..., T, T)``.
    """
    require_float_tensor("x", x)
    require_min_ndim("x", x, 2, "(..., T, C)")
    scores = x @ x.transpose(-2, -1)  # (..., T, T)
    weights = softmax_unchecked(scores, dim=-1)  # (..., T, T), rows sum to 1
    out = weights @ x  # (..., T, C)
    return out, weights
