"""One attention head with learned projections W^Q, W^K, W^V.

Notebook 04.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib._validate import require_positive_int, require_probability
from attnlib._validate_tensors import require_dtype_of, require_sequence
from attnlib.attention import scaled_dot_product_attention


class AttentionHead(nn.Module):
    r"""A single attention head: project, then scaled dot-product attention.

    .. math::

        Q = X_q W^Q,\quad K = X_{kv} W^K,\quad V = X_{kv} W^V,\qquad
        \text{out} = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V

    The query and key width ``d_k`` (d_q = d_k, they are dotted together) and the
    value width ``d_v`` need not equal ``d_model``: notebook 04 projects 4-d inputs
    to 3-d queries and keys. Pass different ``query`` and ``key``/``value``
    sequences for cross-attention.

    Args:
        d_model: width of the input vectors.
        d_k: width of queries and keys.
        d_v: width of values (default ``d_k``).
        bias: whether the projections have biases (the paper's have none).
        dropout: dropout on the attention weights, in training mode only.

    Shapes:
        query: ``(..., T_q, d_model)``; key, value: ``(..., T_k, d_model)`` (default: ``query``);
        mask: bool, ``True`` = may attend, broadcastable to ``(..., T_q, T_k)``;
        returns ``out (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.
    """

    def __init__(
        self,
        d_model: int,
        d_k: int,
        d_v: int | None = None,
        bias: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        for name, value in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
            require_positive_int(name, value)
        require_probability("dropout", dropout)
        self.d_model, self.d_k, self.d_v, self.dropout = d_model, d_k, d_v, dropout
        self.w_q = nn.Linear(d_model, d_k, bias=bias)
        self.w_k = nn.Linear(d_model, d_k, bias=bias)
        self.w_v = nn.Linear(d_model, d_v, bias=bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend from ``query`` to ``key``/``value`` (self-attention when they are omitted)."""
        key = query if key is None else key
        value = key if value is None else value
        for name, x in (("query", query), ("key", key), ("value", value)):
            self._require_input(name, x)
        return self._attend(query, key, value, mask)

    def _require_input(self, name: str, x: object) -> None:
        require_dtype_of(name, require_sequence(name, x, self.d_model), self.w_q.weight)

    def _attend(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        q = self.w_q(query)  # (..., T_q, d_k)
        k = self.w_k(key)  # (..., T_k, d_k)
        v = self.w_v(value)  # (..., T_k, d_v)
        dropout_p = self.dropout if self.training else 0.0
        return scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=dropout_p)


class SelfAttention(AttentionHead):
    """:class:`AttentionHead` where one sequence supplies queries, keys and values.

    Shapes:
        x: ``(..., T, d_model)``; returns ``out (..., T, d_v)`` and ``weights (..., T, T)``.
    """

    def forward(  # type: ignore[override]
        self, x: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Self-attention over ``x``."""
        self._require_input("x", x)
        return self._attend(x, x, x, mask)
