"""Softmax: turning a row of scores into weights that are positive and sum to 1.

Notebook 02.
"""

from __future__ import annotations

import torch

from attnlib._validate import require_positive
from attnlib._validate_tensors import (
    require_dim_index,
    require_float_tensor,
    require_min_ndim,
    require_scores,
)


def softmax(x: torch.Tensor, dim: int = -1, temperature: float = 1.0) -> torch.Tensor:
    r"""Numerically stable softmax with a temperature.

    .. math::

        \operatorname{softmax}(z)_i = \frac{e^{(z_i - m)/\tau}}{\sum_j e^{(z_j - m)/\tau}},
        \qquad m = \max_j z_j

    Subtracting the maximum changes nothing mathematically (it cancels between
    numerator and denominator) but keeps every exponent ≤ 0, so scores in the
    thousands give finite weights instead of ``inf / inf = nan``.
    A temperature τ > 1 flattens the distribution, τ < 1 sharpens it.
    Equal to ``torch.softmax(x / temperature, dim)`` wherever that is a distribution.
    Where it is NaN, this refuses the input instead: a NaN or +inf score, or a slice
    that is entirely ``-inf`` (a ``-inf`` among finite scores is a weight of 0, as
    usual). Attention blocks positions with a bool mask and a finite fill, so it never
    meets such a slice. An empty ``x`` (or a ``dim`` of size 0) has no weights to
    normalise: the result is empty too.

    Args:
        x: scores, any floating-point dtype.
        dim: the dimension that is normalised.
        temperature: τ > 0.

    Raises:
        TypeError: ``x`` is not a floating-point tensor, or ``dim`` / ``temperature``
            is not a number.
        ValueError: ``dim`` is out of range, ``temperature`` is not positive and finite,
            or ``x`` holds NaN, +inf or a slice along ``dim`` with no finite score.

    Shapes:
        x: ``(..., n, ...)``; returns the same shape, summing to 1 along ``dim``.
    """
    require_float_tensor("x", x)
    dim = require_dim_index("dim", dim, max(x.dim(), 1))
    temperature = require_positive("temperature", temperature)
    if x.numel() == 0:
        return x.clone()  # amax has no maximum of nothing to return
    # The maximum softmax subtracts anyway is also the check: NaN propagates into it, +inf
    # is it, and an all -inf slice has it -inf. A valid x costs one look per slice.
    top = x.detach().amax(dim=dim, keepdim=True)  # (..., 1, ...)
    require_scores("x", x, dim, top)
    return _exp_over_sum(x, dim, temperature, top)


def softmax_unchecked(x: torch.Tensor, dim: int = -1, temperature: float = 1.0) -> torch.Tensor:
    """:func:`softmax` without its checks, for callers that made them or need none.

    Attention calls this at every layer and decoding step on scores it built itself,
    with blocked positions filled with the dtype's finite minimum.

    Shapes:
        as :func:`softmax`.
    """
    if x.numel() == 0:
        return x.clone()
    return _exp_over_sum(x, dim, temperature, x.detach().amax(dim=dim, keepdim=True))


def _exp_over_sum(x: torch.Tensor, dim: int, temperature: float, top: torch.Tensor) -> torch.Tensor:
    """The stable softmax given ``top``, the (detached) maximum of ``x`` along ``dim``."""
    # A slice of all -inf has max -inf; -inf - (-inf) is nan either way, as in torch.
    shifted = x - top  # every entry <= 0, the maximum's exactly 0
    if temperature != 1.0:
        # Divided after the shift, never before: x / τ overflows for a small τ (float16
        # logits of 70 at τ = 0.001 are 70,000, past float16's largest, 65,504), while a
        # shifted entry divided by τ can only fall towards -inf, whose exp is a weight of 0.
        shifted = shifted / temperature
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=dim, keepdim=True)


def naive_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    r"""Softmax straight from the formula, :math:`e^{z_i} / \sum_j e^{z_j}`, without the max shift.

    Kept only to show why :func:`softmax` subtracts the maximum: in float32,
    ``exp(89)`` is already ``inf``, so scores of a few hundred give NaN here.

    Its input is checked as :func:`softmax`'s is (``ValueError`` for a NaN, a +inf or
    a slice with no finite score); the NaN it shows comes from finite scores.

    Shapes:
        x: ``(..., n)``; returns the same shape.
    """
    require_float_tensor("x", x)
    dim = require_dim_index("dim", dim, max(x.dim(), 1))
    require_scores("x", x, dim)
    exps = torch.exp(x)
    return exps / exps.sum(dim=dim, keepdim=True)


def softmax_jacobian(p: torch.Tensor) -> torch.Tensor:
    r"""Jacobian of softmax, written in terms of its output ``p``.

    .. math::

        J_{ij} = \frac{\partial p_i}{\partial z_j} = p_i(\delta_{ij} - p_j),
        \qquad J = \operatorname{diag}(p) - p p^\top

    When softmax saturates (one ``p_i`` near 1, the rest near 0) every entry of
    ``J`` goes to 0: that is the vanishing gradient that the 1/√d_k scaling avoids.

    Args:
        p: probabilities along the last dimension (the output of :func:`softmax`).

    Shapes:
        p: ``(..., n)``; returns ``(..., n, n)`` with ``J[..., i, j] = ∂p_i/∂z_j``.
    """
    require_float_tensor("p", p)
    require_min_ndim("p", p, 1, "(..., n)")
    outer = p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., n, n): p_i p_j
    return torch.diag_embed(p) - outer
