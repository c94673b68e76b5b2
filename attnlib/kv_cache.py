"""A key/value cache: the keys and values of earlier positions, kept between decoding steps.

Notebooks 10 and 12.
"""

from __future__ import annotations

import torch

from attnlib._validate import at_the_door
from attnlib._validate_tensors import require_float_tensor


class KVCache:
    """Projected keys and values of every position seen so far, for one attention layer.

    When a decoder generates one token at a time, the keys and values of earlier
    positions never change (a causal mask hides later tokens from them), so they are
    computed once and appended to here; each step then projects only the new token.

    Shapes:
        keys, values: ``(B, H, T_cached, D)``.
    """

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def append(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Add the new positions' keys and values; return all of them.

        Raises:
            TypeError: ``keys`` or ``values`` is not a floating-point tensor, or their
                dtype differs from each other's or from what the cache holds (``torch.cat``
                would silently promote the whole cache).
            ValueError: their shapes differ or are not 4-D, their device differs from each
                other's or from the cache's, or B, H or D differ from the cache's.

        Shapes:
            keys, values: ``(B, H, T_new, D)``; returns ``(B, H, T_cached + T_new, D)`` each.
        """
        # Checked before anything is stored, so that a rejected step leaves the cache as it was;
        # not inside a model's decoding loop, whose door checked what it feeds the cache.
        if at_the_door():
            _require_appendable(self.keys, keys, values)
        if self.keys is None or self.values is None:
            self.keys, self.values = keys, values
        else:
            self.keys = torch.cat([self.keys, keys], dim=-2)  # (B, H, T_cached + T_new, D)
            self.values = torch.cat([self.values, values], dim=-2)
        return self.keys, self.values

    def clear(self) -> None:
        """Forget every cached position."""
        self.keys = self.values = None


def _require_appendable(
    cached: torch.Tensor | None, keys: torch.Tensor, values: torch.Tensor
) -> None:
    """Keys and values of one shape, dtype and device that fit the cached ones but for T."""
    require_float_tensor("keys", keys)
    require_float_tensor("values", values)
    if keys.dim() != 4 or keys.shape != values.shape:
        raise ValueError(
            f"keys and values must share one shape (B, H, T_new, D), got keys "
            f"{tuple(keys.shape)} and values {tuple(values.shape)}"
        )
    if keys.dtype != values.dtype:
        raise TypeError(
            f"keys and values must share a dtype, got keys {keys.dtype} and values {values.dtype}"
        )
    if keys.device != values.device:
        raise ValueError(
            f"keys and values must be on one device, got keys on {keys.device} and "
            f"values on {values.device}"
        )
    if cached is None:
        return
    if keys.dtype != cached.dtype:
        raise TypeError(
            f"new keys and values of dtype {keys.dtype} cannot be appended to a cache "
            f"that holds {cached.dtype}: convert them, e.g. keys.to({cached.dtype}), "
            "or clear() the cache first"
        )
    if keys.device != cached.device:
        raise ValueError(
            f"new keys and values on {keys.device} cannot be appended to a cache on "
            f"{cached.device}: move them, e.g. keys.to('{cached.device}'), or clear() "
            "the cache first"
        )
    if keys.shape[:2] != cached.shape[:2] or keys.shape[-1] != cached.shape[-1]:
        raise ValueError(
            f"new keys of shape {tuple(keys.shape)} do not continue the cached "
            f"keys of shape {tuple(cached.shape)} (B, H, T, D): B, H and D must match"
        )
