"""Multi-head attention: h heads of width d_model/h attend in parallel, then W^O mixes them.

Notebook 05.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib._validate import at_the_door, require_positive_int, require_probability
from attnlib._validate_attention import require_attention_mask
from attnlib._validate_tensors import require_dims, require_dtype_of, require_width
from attnlib.attention import attend, attend_fused
from attnlib.kv_cache import KVCache


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Cut the model width into ``num_heads`` heads of width ``C / num_heads``.

    Raises ``ValueError`` unless ``x`` is 3-D and ``num_heads`` divides its width.

    Shapes:
        x: ``(B, T, C)``; returns ``(B, H, T, C / H)``.
    """
    require_dims("x", x, "(B, T, C)")
    require_positive_int("num_heads", num_heads)
    if x.shape[-1] % num_heads:
        raise ValueError(
            f"num_heads={num_heads} must divide the width of x, got x of shape "
            f"{tuple(x.shape)}: each head gets C / num_heads dims"
        )
    return _split_heads(x, num_heads)


def _split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    batch, length, width = x.shape
    return x.view(batch, length, num_heads, width // num_heads).transpose(1, 2)  # (B, H, T, D)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`split_heads`: concatenate the heads back into one width.

    Shapes:
        x: ``(B, H, T, D)``; returns ``(B, T, H * D)``.
    """
    require_dims("x", x, "(B, H, T, D)")
    return _merge_heads(x)


def _merge_heads(x: torch.Tensor) -> torch.Tensor:
    batch, num_heads, length, head_size = x.shape
    return x.transpose(1, 2).contiguous().view(batch, length, num_heads * head_size)  # (B, T, C)


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention (batch-first), the paper's :math:`\operatorname{MultiHead}(Q, K, V)`.

    .. math::

        \text{head}_i = \operatorname{Attention}(Q W^Q_i, K W^K_i, V W^V_i), \qquad
        \operatorname{MultiHead}(Q, K, V) = \operatorname{Concat}(\text{head}_1, \dots,
        \text{head}_h)\, W^O

    Each of ``w_q``, ``w_k``, ``w_v`` is one ``(d_model → d_model)`` linear map whose
    output is cut into ``num_heads`` slices of ``d_k = d_model / num_heads``: slice
    ``i`` is head ``i``'s :math:`W^Q_i`. ``w_o`` is :math:`W^O`.

    How the heads attend follows ``need_weights``, as in ``torch.nn.MultiheadAttention``:
    ``True`` (the default) computes with attnlib's :func:`scaled_dot_product_attention`
    and returns the weights; ``False`` calls PyTorch's fused kernel through
    :func:`attnlib.attention.fused_attention`, which never hands the weights back, and
    returns ``None`` for them. The outputs agree to float rounding. (For attention that
    never holds the ``(T_q, T_k)`` scores, call :func:`attnlib.tiled_attention` directly.)

    Args:
        d_model: model width C.
        num_heads: H; must divide ``d_model``.
        dropout: dropout on the attention weights, in training mode only.
        bias: whether the four projections have biases.

    Shapes:
        query: ``(B, T_q, C)``; key, value: ``(B, T_k, C)`` (default: ``query``);
        mask: bool, ``True`` = may attend, broadcastable to ``(B, H, T_q, T_k)``;
        returns ``out (B, T_q, C)`` and ``weights (B, H, T_q, T_k)``, or ``None`` for the
        weights when ``need_weights=False``.
    """

    def __init__(
        self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        require_positive_int("d_model", d_model)
        require_positive_int("num_heads", num_heads)
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model ({d_model}) must be divisible by num_heads ({num_heads}): "
                "each head gets d_model / num_heads dims"
            )
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_size = d_model // num_heads
        self.dropout = require_probability("dropout", dropout)
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value`` (self-attention when they are omitted).

        With a ``cache``, the keys and values projected here are appended to it and the
        queries attend to every cached position as well; ``mask`` must then cover all of
        them, e.g. ``causal_mask(T_q, len(cache) + T_q)``.

        Called on its own, it checks its inputs (and the cache checks what it appends);
        called from inside a model that has checked them (:func:`attnlib._validate.at_the_door`),
        it trusts its caller.
        """
        key = query if key is None else key
        value = key if value is None else value
        if at_the_door():
            self._require_inputs(query, key, value, mask, cache)
        q = _split_heads(self.w_q(query), self.num_heads)  # (B, H, T_q, D)
        k = _split_heads(self.w_k(key), self.num_heads)  # (B, H, T_k, D)
        v = _split_heads(self.w_v(value), self.num_heads)  # (B, H, T_k, D)
        if cache is not None:
            k, v = cache.append(k, v)  # (B, H, T_cached + T_k, D)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            heads, weights = attend(q, k, v, mask, dropout_p)
        else:
            heads, weights = attend_fused(q, k, v, mask, dropout_p), None
        return self.w_o(_merge_heads(heads)), weights  # (B, T_q, C)

    def _require_inputs(
        self,
        query: object,
        key: object,
        value: object,
        mask: object,
        cache: KVCache | None,
    ) -> None:
        """Shapes and dtypes only (no scan of the data)."""
        for name, x in (("query", query), ("key", key), ("value", value)):
            require_dtype_of(name, require_width(name, x, self.d_model, ndim=3), self.w_q.weight)
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(
                f"query, key and value must share the batch size and key/value the length, got "
                f"query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}"
            )
        if mask is not None:
            cached = len(cache) if cache is not None else 0
            scores = (query.shape[0], self.num_heads, query.shape[1], cached + key.shape[1])
            require_attention_mask(mask, torch.Size(scores))

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of a ``torch.nn.MultiheadAttention``'s weights in attnlib's layout.

        The two then give the same outputs and, with ``average_attn_weights=False``,
        the same per-head weights. Remember the mask polarity: pass attnlib a mask with
        ``True`` = may attend, and PyTorch the inverted one (see
        :func:`attnlib.masks.to_torch_mha_mask`). Works whether or not the PyTorch
        module is ``batch_first`` (attnlib always is).
        """
        if not isinstance(module, nn.MultiheadAttention):
            raise TypeError(f"module must be a torch.nn.MultiheadAttention, got {type(module)}")
        if module.bias_k is not None or module.add_zero_attn:
            raise ValueError("add_bias_kv and add_zero_attn have no counterpart in attnlib")
        if module.kdim != module.embed_dim or module.vdim != module.embed_dim:
            raise ValueError(
                f"kdim and vdim must equal embed_dim ({module.embed_dim}), "
                f"got kdim={module.kdim}, vdim={module.vdim}"
            )
        has_bias = module.in_proj_bias is not None
        ours = cls(module.embed_dim, module.num_heads, dropout=module.dropout, bias=has_bias)
        if module.in_proj_weight is not None:
            w_q, w_k, w_v = module.in_proj_weight.chunk(3, dim=0)  # 3 × (C, C)
        else:
            w_q, w_k, w_v = module.q_proj_weight, module.k_proj_weight, module.v_proj_weight
        with torch.no_grad():
            for linear, weight in zip((ours.w_q, ours.w_k, ours.w_v), (w_q, w_k, w_v), strict=True):
                linear.weight.copy_(weight)
            ours.w_o.weight.copy_(module.out_proj.weight)
            if has_bias:
                b_q, b_k, b_v = module.in_proj_bias.chunk(3, dim=0)  # 3 × (C,)
                for linear, bias in zip(
                    (ours.w_q, ours.w_k, ours.w_v), (b_q, b_k, b_v), strict=True
                ):
                    linear.bias.copy_(bias)
                ours.w_o.bias.copy_(module.out_proj.bias)
        return ours.to(dtype=module.out_proj.weight.dtype, device=module.out_proj.weight.device)
