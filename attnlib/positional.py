"""Positional information: sinusoidal encodings, learned embeddings and rotary embeddings (RoPE).

Notebook 06.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from attnlib._validate import (
    at_the_door,
    require_even,
    require_int,
    require_number,
    require_positive_int,
)
from attnlib._validate_tensors import (
    require_float_tensor,
    require_min_ndim,
    require_sequence,
    require_tensor,
)


def sinusoidal_encoding(max_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    r"""The Transformer paper's fixed positional encodings.

    .. math::

        PE_{p,\,2i} = \sin\!\left(\frac{p}{\text{base}^{2i/d}}\right), \qquad
        PE_{p,\,2i+1} = \cos\!\left(\frac{p}{\text{base}^{2i/d}}\right)

    Pair ``i`` is a rotation at angular frequency :math:`\omega_i = \text{base}^{-2i/d}`,
    so wavelengths grow geometrically from 2π to ``base``·2π, and
    ``PE[p + k]`` is a fixed linear map (a rotation per pair) of ``PE[p]``.
    The paper's base is 10000.

    Shapes:
        returns ``(max_len, d_model)`` float32.
    """
    require_positive_int("max_len", max_len)
    require_positive_int("d_model", d_model)
    require_even("d_model", d_model)
    _require_base(base)
    angles = _angles(torch.arange(max_len, dtype=torch.float64), d_model, base)  # (T, d/2)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


def _require_base(base: object) -> float:
    """The frequency base: a number above 1 (wavelengths grow from 2π to base·2π)."""
    if not 1.0 < require_number("base", base) < math.inf:
        raise ValueError(f"base must be > 1 and finite, got {base}")
    return float(base)


def _angles(positions: torch.Tensor, dim: int, base: float) -> torch.Tensor:
    """Angle ``p · base^(-2i/dim)`` for every position and pair ``i``, shape ``(..., dim/2)``."""
    frequencies = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)  # (dim/2,)
    return positions.to(torch.float64).unsqueeze(-1) * frequencies  # (..., dim/2)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds :func:`sinusoidal_encoding` to its input (a fixed buffer, nothing learned).

    Shapes:
        x: ``(B, T, d_model)`` with ``T ≤ max_len``; returns the same shape.
    """

    def __init__(self, d_model: int, max_len: int = 5000, base: float = 10000.0) -> None:
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model, base), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x + PE[:T]``."""
        if at_the_door():  # not inside a model, whose door checked the ids x embeds
            require_sequence("x", x, self.d_model, self.max_len)
        return x + self.pe[: x.shape[-2]].to(x.dtype)  # (T, C) broadcasts over the batch


class LearnedPositionalEmbedding(nn.Module):
    """Adds a learned vector per position (as in BERT and GPT-2) to its input.

    Shapes:
        x: ``(B, T, d_model)`` with ``T ≤ max_len``; returns the same shape.
    """

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        require_positive_int("max_len", max_len)
        require_positive_int("d_model", d_model)
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x + E[0:T]``."""
        require_sequence("x", x, self.d_model, self.max_len)
        positions = torch.arange(x.shape[-2], device=x.device)  # (T,)
        return x + self.embedding(positions)  # (T, C) broadcasts over the batch


def apply_rotary(
    x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0
) -> torch.Tensor:
    r"""Rotary position embedding (RoPE): rotate each pair of dims by an angle set by the position.

    .. math::

        \begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
        \begin{pmatrix} \cos p\,\omega_i & -\sin p\,\omega_i \\
                        \sin p\,\omega_i & \cos p\,\omega_i \end{pmatrix}
        \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix},
        \qquad \omega_i = \text{base}^{-2i/D}

    Applied to queries and keys (not values), it makes their dot product depend
    only on the *offset* between positions:
    :math:`\langle R_m q, R_n k \rangle = \langle q, R_{n-m} k \rangle`.

    Args:
        x: queries or keys.
        positions: position of each row; default ``0 … T-1``.
        base: the frequency base, 10000 as for the sinusoids.

    Shapes:
        x: ``(..., T, D)`` with even ``D``; positions: ``(T,)``; returns ``(..., T, D)``.
    """
    require_float_tensor("x", x)
    require_min_ndim("x", x, 2, "(..., T, D)")
    length, dim = x.shape[-2], x.shape[-1]
    require_even("the last dim of x", dim)
    _require_base(base)
    if positions is None:
        positions = torch.arange(length, device=x.device)
    elif require_tensor("positions", positions).shape != (length,):
        raise ValueError(
            f"positions must have shape (T,) = ({length},), got {tuple(positions.shape)}"
        )
    angles = _angles(positions, dim, base)  # (T, D/2)
    cos, sin = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, D/2) each
    rotated = torch.stack(
        (even * cos - odd * sin, even * sin + odd * cos), dim=-1
    )  # (..., T, D/2, 2)
    return rotated.flatten(-2)  # (..., T, D): pairs interleaved back in place


class RotaryEmbedding(nn.Module):
    """Applies :func:`apply_rotary` to queries and keys; holds only the base (nothing learned).

    Shapes:
        q: ``(..., T_q, D)``, k: ``(..., T_k, D)``; returns both rotated, same shapes.
    """

    def __init__(self, head_size: int, base: float = 10000.0) -> None:
        super().__init__()
        require_positive_int("head_size", head_size)
        require_even("head_size", head_size)
        _require_base(base)
        self.head_size, self.base = head_size, base

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, q_offset: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate ``q`` and ``k``; ``q_offset`` is the position of the first query.

        With a cache of earlier keys, the ``T_q`` new queries sit at positions
        ``q_offset … q_offset + T_q - 1`` while keys start at 0.
        """
        require_sequence("q", q, self.head_size)
        require_sequence("k", k, self.head_size)
        require_int("q_offset", q_offset, minimum=0)
        q_positions = torch.arange(q_offset, q_offset + q.shape[-2], device=q.device)  # (T_q,)
        return apply_rotary(q, q_positions, self.base), apply_rotary(k, base=self.base)
