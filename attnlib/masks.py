"""Attention masks. Convention: boolean, ``True`` = this query may attend to this key.

Masks broadcast to ``(B, H, T_q, T_k)``, as in
``torch.nn.functional.scaled_dot_product_attention``. (``torch.nn.MultiheadAttention``
uses the opposite polarity, ``True`` = blocked.)
"""

from __future__ import annotations

import torch


def causal_mask(t_q: int, t_k: int | None = None) -> torch.Tensor:
    r"""Causal ("no peeking at the future") mask: query ``i`` may attend to keys ``j ≤ i``.

    .. math::

        M_{ij} = [\, j \le i + (T_k - T_q) \,]

    When ``t_k > t_q`` the queries are taken to be the *last* ``t_q`` positions of
    the ``t_k`` keys, which is what decoding with a cache of earlier keys needs.
    Polarity: ``True`` = may attend.

    Shapes:
        returns ``(t_q, t_k)`` bool; ``t_k`` defaults to ``t_q``.
    """
    if t_k is None:
        t_k = t_q
    for name, value in (("t_q", t_q), ("t_k", t_k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if t_k < t_q:
        raise ValueError(
            f"t_k must be >= t_q (the queries are the last t_q of the t_k positions), "
            f"got t_q={t_q}, t_k={t_k}"
        )
    return torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)
