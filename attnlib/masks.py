"""Attention masks. Convention: boolean, ``True`` = this query may attend to this key.

Masks broadcast to ``(B, H, T_q, T_k)``, as in
``torch.nn.functional.scaled_dot_product_attention``. (``torch.nn.MultiheadAttention``
uses the opposite polarity, ``True`` = blocked.)

Notebook 07.
"""

from __future__ import annotations

import torch

from attnlib._validate import require_int, require_positive_int
from attnlib._validate_attention import require_bool_mask
from attnlib._validate_tensors import require_token_ids


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
    require_positive_int("t_q", t_q)
    require_positive_int("t_k", t_k)
    if t_k < t_q:
        raise ValueError(
            f"t_k must be >= t_q (the queries are the last t_q of the t_k positions), "
            f"got t_q={t_q}, t_k={t_k}"
        )
    return torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)


def padding_mask(lengths: torch.Tensor | list[int], seq_len: int) -> torch.Tensor:
    r"""Padding mask for sequences padded to ``seq_len``: keys past each length are blocked.

    .. math::

        M_{b,j} = [\, j < \text{lengths}_b \,]

    Polarity: ``True`` = a real token that may be attended to. The two singleton
    dims broadcast over heads and queries, so every query of sequence ``b``
    ignores its padding.

    Shapes:
        lengths: ``(B,)``; returns ``(B, 1, 1, seq_len)`` bool.
    """
    lengths_t = _require_lengths(lengths)
    require_positive_int("seq_len", seq_len)
    if len(lengths_t) and (lengths_t.min() < 0 or lengths_t.max() > seq_len):
        raise ValueError(f"lengths must lie in [0, seq_len={seq_len}], got {lengths_t.tolist()}")
    positions = torch.arange(seq_len, device=lengths_t.device)  # (seq_len,)
    real = positions.unsqueeze(0) < lengths_t.unsqueeze(1)  # (B, seq_len)
    return real[:, None, None, :]  # (B, 1, 1, seq_len)


def padding_mask_from_ids(token_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Padding mask from token ids: every position whose id is not ``pad_id`` may be attended to.

    Polarity: ``True`` = real token.

    Shapes:
        token_ids: ``(B, T)`` integer; returns ``(B, 1, 1, T)`` bool.
    """
    require_token_ids("token_ids", token_ids)
    require_int("pad_id", pad_id)
    return (token_ids != pad_id)[:, None, None, :]  # (B, 1, 1, T)


def padding_mask_from_token_mask(token_mask: torch.Tensor) -> torch.Tensor:
    """Padding mask from a per-token flag, as tokenizers return it (``attention_mask``).

    Polarity: ``True`` = real token, in the input and the output alike (Hugging Face's
    ``attention_mask`` uses 1 = real token too, so no inversion is needed).

    Shapes:
        token_mask: ``(B, T)`` bool; returns ``(B, 1, 1, T)`` bool.
    """
    require_bool_mask("token_mask", token_mask)
    if token_mask.dim() != 2:
        raise ValueError(f"token_mask must have shape (B, T), got {tuple(token_mask.shape)}")
    return token_mask[:, None, None, :]  # (B, 1, 1, T)


def to_torch_mha_mask(mask: torch.Tensor, num_heads: int | None = None) -> torch.Tensor:
    """Convert an attnlib mask (``True`` = may attend) to ``nn.MultiheadAttention``'s ``attn_mask``.

    ``torch.nn.MultiheadAttention`` reads a bool ``attn_mask`` the other way round
    (``True`` = blocked) and wants it as ``(T_q, T_k)`` or, per batch and head,
    ``(B * num_heads, T_q, T_k)`` with heads folded into the batch.

    Shapes:
        mask: ``(T_q, T_k)`` → ``(T_q, T_k)``; or anything broadcastable to
        ``(B, H, T_q, T_k)`` with ≥ 3 dims, given ``num_heads=H`` → ``(B * H, T_q, T_k)``.
    """
    require_bool_mask("mask", mask)
    if mask.dim() < 2:
        raise ValueError(
            f"mask must have shape (T_q, T_k) or (B, H, T_q, T_k), got {tuple(mask.shape)}"
        )
    if mask.dim() == 2:
        return ~mask
    if num_heads is None:
        raise ValueError(
            f"a mask of shape {tuple(mask.shape)} needs num_heads to be folded into "
            "(B * num_heads, T_q, T_k)"
        )
    require_positive_int("num_heads", num_heads)
    if mask.dim() > 4:
        raise ValueError(f"mask must have at most 4 dims (B, H, T_q, T_k), got {tuple(mask.shape)}")
    full = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))  # (B|1, H|1, T_q, T_k)
    if full.shape[1] not in (1, num_heads):
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} has {full.shape[1]} heads (dim -3), "
            f"but num_heads={num_heads}"
        )
    batch = full.shape[0]
    full = full.expand(batch, num_heads, *full.shape[-2:])  # (B, H, T_q, T_k)
    return ~full.reshape(batch * num_heads, *full.shape[-2:])  # (B * H, T_q, T_k)


def from_torch_mha_mask(attn_mask: torch.Tensor, num_heads: int | None = None) -> torch.Tensor:
    """Convert ``nn.MultiheadAttention``'s bool ``attn_mask`` (``True`` = blocked) to attnlib's.

    Shapes:
        attn_mask: ``(T_q, T_k)`` → ``(T_q, T_k)``; ``(B * H, T_q, T_k)`` with
        ``num_heads=H`` → ``(B, H, T_q, T_k)``.
    """
    require_bool_mask("attn_mask", attn_mask)
    if attn_mask.dim() == 2:
        return ~attn_mask
    if num_heads is not None:
        require_positive_int("num_heads", num_heads)
    if attn_mask.dim() != 3 or num_heads is None or attn_mask.shape[0] % num_heads:
        raise ValueError(
            f"attn_mask must be (T_q, T_k), or (B * num_heads, T_q, T_k) with num_heads given, "
            f"got shape {tuple(attn_mask.shape)} and num_heads={num_heads}"
        )
    unfolded = attn_mask.reshape(-1, num_heads, *attn_mask.shape[-2:])  # (B, H, T_q, T_k)
    return ~unfolded


def to_torch_key_padding_mask(mask: torch.Tensor) -> torch.Tensor:
    """Convert a padding mask ``(B, 1, 1, T_k)`` (``True`` = real) to ``key_padding_mask``.

    ``nn.MultiheadAttention``'s ``key_padding_mask`` is ``(B, T_k)`` with ``True`` = ignore.

    Shapes:
        mask: ``(B, 1, 1, T_k)`` or ``(B, T_k)``; returns ``(B, T_k)`` bool.
    """
    require_bool_mask("mask", mask)
    if mask.dim() == 4 and mask.shape[1] == mask.shape[2] == 1:
        mask = mask[:, 0, 0, :]  # (B, T_k)
    if mask.dim() != 2:
        raise ValueError(f"mask must be (B, 1, 1, T_k) or (B, T_k), got {tuple(mask.shape)}")
    return ~mask


def _require_lengths(lengths: object) -> torch.Tensor:
    """Sequence lengths as a 1-D integer tensor: a float or bool dtype is a ``TypeError``."""
    if isinstance(lengths, (list, tuple)) and not lengths:
        return torch.zeros(0, dtype=torch.long)  # as_tensor would make [] float
    try:
        lengths_t = torch.as_tensor(lengths)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"lengths must be a sequence of ints (B,), got {lengths!r}") from None
    if lengths_t.is_floating_point() or lengths_t.is_complex() or lengths_t.dtype == torch.bool:
        raise TypeError(f"lengths must be a 1-D sequence of ints (B,), got dtype {lengths_t.dtype}")
    if lengths_t.dim() != 1:
        raise ValueError(
            f"lengths must be a 1-D sequence of ints (B,), got shape {tuple(lengths_t.shape)}"
        )
    return lengths_t
