"""The checks of tensor arguments: type, dtype, shape, ids, and values that must be finite.

The package's rule is in :mod:`attnlib._validate`, with the checks of plain values.
"""

from __future__ import annotations

import math

import torch

from attnlib._validate import require_int


def require_tensor(name: str, value: object) -> torch.Tensor:
    """``value`` if it is a tensor, else a ``TypeError`` naming ``name``."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    return value


def require_float_tensor(name: str, value: object) -> torch.Tensor:
    """A tensor with a floating-point dtype (softmax and friends need one)."""
    tensor = require_tensor(name, value)
    if not tensor.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype, got {tensor.dtype}; "
            f"convert it first, e.g. {name}.float()"
        )
    return tensor


def require_min_ndim(name: str, tensor: torch.Tensor, ndim: int, layout: str) -> None:
    """A ``ValueError`` when ``tensor`` has fewer than ``ndim`` dimensions."""
    if tensor.dim() < ndim:
        raise ValueError(
            f"{name} must have shape {layout} (at least {ndim} dims), "
            f"got shape {tuple(tensor.shape)}"
        )


def require_generator(name: str, value: object) -> torch.Generator | None:
    """A ``torch.Generator`` or None, else a ``TypeError`` naming ``name``."""
    if value is not None and not isinstance(value, torch.Generator):
        raise TypeError(f"{name} must be a torch.Generator or None, got {type(value).__name__}")
    return value


def require_dims(name: str, value: object, layout: str) -> torch.Tensor:
    """A tensor with exactly as many dims as ``layout`` names, e.g. ``"(B, T, C)"``."""
    tensor = require_tensor(name, value)
    ndim = layout.count(",") + 1
    if tensor.dim() != ndim:
        raise ValueError(
            f"{name} must have shape {layout} ({ndim} dims), got shape {tuple(tensor.shape)}"
        )
    return tensor


def require_width(
    name: str,
    value: object,
    width: int,
    ndim: int | None = None,
    width_name: str | None = None,
) -> torch.Tensor:
    """A float tensor whose last dim is ``width`` (and, if given, with exactly ``ndim`` dims).

    ``width_name`` (e.g. ``"d_model"``) names the width in the message.
    """
    tensor = require_float_tensor(name, value)
    if (ndim is not None and tensor.dim() != ndim) or tensor.dim() < 1 or tensor.shape[-1] != width:
        layout = "(B, T, " if ndim == 3 else "(..., "
        wanted = f"{width_name}={width}" if width_name else f"{width}"
        raise ValueError(f"{name} must have shape {layout}{wanted}), got {tuple(tensor.shape)}")
    return tensor


def require_dtype_of(name: str, tensor: torch.Tensor, weight: torch.Tensor) -> None:
    """A ``TypeError`` when a module's input and its weights differ in dtype."""
    if tensor.dtype != weight.dtype:
        raise TypeError(
            f"{name} has dtype {tensor.dtype} but the module's weights are {weight.dtype}: "
            f"convert one, e.g. {name}.to({weight.dtype}) or module.to({tensor.dtype})"
        )


def require_sequence(
    name: str, value: object, width: int, max_len: int | None = None
) -> torch.Tensor:
    """A float tensor ``(..., T, width)``, with ``T <= max_len`` when that is given."""
    tensor = require_float_tensor(name, value)
    if tensor.dim() < 2 or tensor.shape[-1] != width:
        raise ValueError(f"{name} must have shape (..., T, {width}), got {tuple(tensor.shape)}")
    if max_len is not None and tensor.shape[-2] > max_len:
        raise ValueError(f"{name} has {tensor.shape[-2]} positions, more than max_len={max_len}")
    return tensor


def require_same_width(
    a_name: str, a: object, b_name: str, b: object
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two float tensors ``(..., n)`` with the same ``n`` and leading dims that broadcast."""
    a, b = require_float_tensor(a_name, a), require_float_tensor(b_name, b)
    require_min_ndim(a_name, a, 1, "(..., n)")
    require_min_ndim(b_name, b, 1, "(..., n)")
    got = f"got {a_name} shape {tuple(a.shape)} and {b_name} shape {tuple(b.shape)}"
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"{a_name} and {b_name} must have the same last dimension, {got}")
    try:
        torch.broadcast_shapes(a.shape, b.shape)
    except RuntimeError:
        raise ValueError(f"the shapes of {a_name} and {b_name} do not broadcast, {got}") from None
    return a, b


def require_dim_index(name: str, dim: int, ndim: int) -> int:
    """Normalise a possibly negative ``dim`` for a tensor of ``ndim`` dimensions."""
    require_int(name, dim)
    if not -ndim <= dim < ndim:
        raise ValueError(f"{name}={dim} is out of range for a tensor with {ndim} dims")
    return dim % ndim


def require_token_ids(name: str, value: object, vocab_size: int | None = None) -> torch.Tensor:
    """Integer token ids of shape ``(B, T)``, each in ``[0, vocab_size)`` when that is given.

    A float or bool tensor is the wrong dtype (``TypeError``); the wrong number of dims or
    an id outside the vocabulary is a ``ValueError``.
    """
    ids = require_tensor(name, value)
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise TypeError(f"{name} must be integer token ids, got dtype {ids.dtype}")
    if ids.dim() != 2:
        raise ValueError(f"{name} must have shape (B, T), got {tuple(ids.shape)}")
    if vocab_size is not None and ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(
            f"{name} holds ids outside [0, {vocab_size}): "
            f"min {int(ids.min())}, max {int(ids.max())}"
        )
    return ids


def require_length(name: str, ids: torch.Tensor, max_len: int, min_len: int = 1) -> torch.Tensor:
    """Token ids ``(B, T)`` with ``min_len <= T <= max_len``, the longest sequence a model takes.

    Check ``ids`` with :func:`require_token_ids` first.
    """
    if not min_len <= ids.shape[-1] <= max_len:
        raise ValueError(
            f"{name} must hold {min_len} to {max_len} tokens (max_len), "
            f"got shape {tuple(ids.shape)}"
        )
    return ids


def require_id_sequence(name: str, value: object, vocab_size: int) -> list[int]:
    """One sequence of ids in ``[0, vocab_size)``: a list or tuple of ints or a ``(T,)`` tensor."""
    if isinstance(value, (list, tuple)):
        if any(isinstance(i, bool) or not isinstance(i, int) for i in value):
            raise TypeError(f"every item of {name} must be an int, got {value!r:.80}")
        value = torch.tensor(value, dtype=torch.long)
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"{name} must be a list of ints or a (T,) tensor, got {type(value).__name__}"
        )
    ids = require_token_ids(name, value.reshape(1, -1), vocab_size)
    if value.dim() != 1:
        raise ValueError(f"{name} must have shape (T,), one sequence, got {tuple(value.shape)}")
    return ids[0].tolist()


def _where(hits: torch.Tensor) -> str:
    """``"3 of 40 values, the first at index (0, 2)"`` for a bool tensor with a True in it."""
    first = tuple(int(i) for i in hits.nonzero()[0])
    return f"{int(hits.sum())} of {hits.numel()} values, the first at index {first}"


def require_finite(name: str, value: torch.Tensor) -> torch.Tensor:
    """A ``ValueError`` when a float tensor holds NaN or ±inf, saying how many and where.

    One reduction decides (NaN propagates through ``aminmax``; an inf is the min or the
    max), so a finite tensor costs one read; only a refused one is scanned again.
    """
    if value.numel() == 0:
        return value
    low, high = (float(end) for end in torch.aminmax(value.detach()))
    if math.isfinite(low) and math.isfinite(high):
        return value
    nan = torch.isnan(value)
    if bool(nan.any()):
        raise ValueError(f"{name} holds NaN ({_where(nan)}): find where it came from")
    raise ValueError(
        f"{name} holds inf ({_where(torch.isinf(value))}); it must be finite "
        "(to block positions, pass a bool mask instead)"
    )


def require_scores(
    name: str, value: torch.Tensor, dim: int, row_max: torch.Tensor | None = None
) -> torch.Tensor:
    """Scores a softmax along ``dim`` can turn into weights, else a ``ValueError`` saying why.

    Refused: NaN, +inf (inf / inf), and a row along ``dim`` whose scores are all -inf
    (0 / 0); each would come out NaN. A -inf among finite scores is a weight of 0 and
    stays allowed. Pass ``row_max``, the ``amax`` along ``dim`` (keepdim), when it is at
    hand: NaN propagates into it, +inf is it, and an all -inf row has it -inf, so a valid
    tensor costs one sum of one value per row.
    """
    if value.numel() == 0:
        return value
    dim %= max(value.dim(), 1)
    if row_max is None:
        row_max = value.detach().amax(dim=dim, keepdim=True)
    # Finite unless a row max is NaN or ±inf, or the sum overflows: then the scan below
    # finds nothing, and the scores pass after all.
    if math.isfinite(float(row_max.sum(dtype=torch.float32))):
        return value
    nan = torch.isnan(value)
    if bool(nan.any()):
        raise ValueError(f"{name} holds NaN ({_where(nan)}): its softmax would be NaN")
    plus_inf = torch.isposinf(value)
    if bool(plus_inf.any()):
        raise ValueError(f"{name} holds +inf ({_where(plus_inf)}): its softmax would be NaN")
    empty = ~torch.isfinite(value).any(dim=dim)  # rows along dim with no finite score
    if not bool(empty.any()):
        return value
    first = [str(int(i)) for i in empty.nonzero()[0]] if empty.dim() else []
    first.insert(dim, ":")
    raise ValueError(
        f"{name} has {int(empty.sum())} row(s) along dim={dim} with no finite score, "
        f"the first {name}[{', '.join(first)}] (all -inf): its softmax would be 0/0 = NaN. "
        "To block positions, use a bool mask from attnlib.masks (a row with nothing to "
        f"attend to then gets weights 0), or fill with torch.finfo({name}.dtype).min, not -inf"
    )


def require_probabilities(name: str, value: torch.Tensor) -> torch.Tensor:
    """A float tensor whose every value is a probability in ``[0, 1]`` (no NaN)."""
    if value.numel() == 0:
        return value
    low, high = (float(end) for end in torch.aminmax(value.detach()))
    if low >= 0 and high <= 1:  # NaN propagates into both, and fails both comparisons
        return value
    nan = torch.isnan(value)
    if bool(nan.any()):
        raise ValueError(f"{name} holds NaN ({_where(nan)}); it must hold probabilities")
    raise ValueError(
        f"{name} must hold probabilities in [0, 1], got values from {low:g} to {high:g}"
    )


def require_integer_tensor(name: str, value: object) -> torch.Tensor:
    """A tensor of an integer dtype (ids, class labels); a float or bool one is a ``TypeError``."""
    tensor = require_tensor(name, value)
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer ids (e.g. torch.long), got dtype {tensor.dtype}")
    return tensor


def require_class_ids(
    name: str, ids: torch.Tensor, num_classes: int, ignore_index: int | None = None
) -> torch.Tensor:
    """Integer ids each in ``[0, num_classes)``, or equal to ``ignore_index`` when that is given."""
    outside = (ids < 0) | (ids >= num_classes)
    if ignore_index is not None:
        outside &= ids != ignore_index
    if bool(outside.any()):
        first = tuple(int(i) for i in outside.nonzero()[0])
        allowed = "" if ignore_index is None else f" (or ignore_index={ignore_index})"
        raise ValueError(
            f"{name} holds ids outside [0, {num_classes}){allowed}: {int(ids[first])} at index "
            f"{first}, {int(outside.sum())} of {ids.numel()} in all"
        )
    return ids
