"""A key/value cache: the keys and values of earlier positions, kept between decoding steps.

Notebooks 10 and 12.
"""

from __future__ import annotations

import torch

from attnlib._validate_tensors import require_float_tensor


class KVCache:
    """Projected keys and values of every position seen so far, for one attention layer.

    When a decoder generates one token at a time, the keys and values of earlier
    positions never change (a causal mask hides later tokens from them), so they are
    computed once and appended to here; each step then projects only the new token.

    The cache keeps room beyond the positions it holds (doubling it when it runs out), so
    that appending one token copies that token's keys and values, not the whole cache.
    ``keys`` and ``values`` are views of the filled part.

    Shapes:
        keys, values: ``(B, H, T_cached, D)``.
    """

    def __init__(self) -> None:
        # torch.cat would copy the whole cache at every step, O(T²) copies for T tokens;
        # doubling the room when it runs out copies O(T) positions in all.
        self._keys: torch.Tensor | None = None  # (B, H, capacity, D)
        self._values: torch.Tensor | None = None
        self._length = 0

    @property
    def keys(self) -> torch.Tensor | None:
        """The cached keys, ``(B, H, T_cached, D)``, or ``None`` before the first append."""
        return None if self._keys is None else self._keys.narrow(-2, 0, self._length)

    @keys.setter
    def keys(self, keys: torch.Tensor | None) -> None:
        # Whatever is set here is kept as it is, never written into: the next append
        # finds no room beyond its end and moves to a new buffer.
        self._keys = keys
        self._length = 0 if keys is None else keys.shape[-2]

    @property
    def values(self) -> torch.Tensor | None:
        """The cached values, ``(B, H, T_cached, D)``, or ``None`` before the first append."""
        return None if self._values is None else self._values.narrow(-2, 0, self._length)

    @values.setter
    def values(self, values: torch.Tensor | None) -> None:
        self._values = values

    def __len__(self) -> int:
        return self._length

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
        # Checked before anything is stored, so that a rejected step leaves the cache as it was.
        # Every decoding step runs this: it compares dtypes, devices and shapes, never data.
        require_float_tensor("keys", keys)
        require_float_tensor("values", values)
        if keys.dim() != 4 or keys.shape != values.shape:
            raise ValueError(
                f"keys and values must share one shape (B, H, T_new, D), got keys "
                f"{tuple(keys.shape)} and values {tuple(values.shape)}"
            )
        if keys.dtype != values.dtype:
            raise TypeError(
                f"keys and values must share a dtype, got keys {keys.dtype} and values "
                f"{values.dtype}"
            )
        if keys.device != values.device:
            raise ValueError(
                f"keys and values must be on one device, got keys on {keys.device} and "
                f"values on {values.device}"
            )
        if self._keys is None or self._values is None:
            # Kept as given, with no room beyond its end: never written into.
            self._keys, self._values, self._length = keys, values, keys.shape[-2]
            return keys, values
        _require_continues(self._keys, keys)
        cached_keys, cached_values = self.keys, self.values  # (B, H, T_cached, D)
        start, new = self._length, keys.shape[-2]
        if torch.is_grad_enabled() and (keys.requires_grad or values.requires_grad):
            # Writing into a buffer would overwrite what autograd saved for earlier steps.
            self._keys = torch.cat([cached_keys, keys], dim=-2)  # (B, H, T_cached + T_new, D)
            self._values = torch.cat([cached_values, values], dim=-2)
        elif start + new > self._keys.shape[-2]:
            self._keys = _with_room(cached_keys, keys)  # (B, H, 2 (T_cached + T_new), D)
            self._values = _with_room(cached_values, values)
        else:
            self._keys.narrow(-2, start, new).copy_(keys)
            self._values.narrow(-2, start, new).copy_(values)
        self._length = start + new
        return self.keys, self.values  # type: ignore[return-value]

    def clear(self) -> None:
        """Forget every cached position."""
        self._keys = self._values = None
        self._length = 0


def _with_room(cached: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
    """``cached`` then ``new`` along T, followed by as many unfilled positions again."""
    batch, heads, length, width = cached.shape
    room = new.new_empty(batch, heads, length + new.shape[-2], width)
    return torch.cat([cached, new, room], dim=-2)  # (B, H, 2 (T_cached + T_new), D)


def _require_continues(cached: torch.Tensor, keys: torch.Tensor) -> None:
    """New keys (the values were checked to match them) that fit the cached ones but for T."""
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
