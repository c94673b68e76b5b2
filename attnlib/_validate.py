"""The argument checks of every public entry point: the rule, and the checks of plain values.

One rule for the whole package: a value of the wrong type (or a tensor of the wrong
dtype) raises ``TypeError``; a value of the right type with the wrong shape, size or
range raises ``ValueError``. Each message names the argument, what it got and what it
wanted, and each check runs before torch could fail with a message of its own.
Tensors are checked by :mod:`attnlib._validate_tensors`, attention's inputs by
:mod:`attnlib._validate_attention`.

Where the checks run: once, at the door. A public entry point (``GPT.forward`` and
``generate``, ``Transformer.forward``, ``BertModel.forward``, the public functions) checks
its arguments, then runs its insides under :func:`inputs_checked`. A public layer that a
learner may also call on its own (``MultiHeadAttention``, ``FeedForward``, ``KVCache``,
``Encoder``...) checks only :func:`at_the_door`: called on its own it checks, called from
inside a checked model it trusts its caller, so no check runs once per layer per step.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

# Per thread (and per asyncio task): a call in another thread checks its own inputs.
_INPUTS_CHECKED: ContextVar[bool] = ContextVar("attnlib_inputs_checked", default=False)


@contextmanager
def inputs_checked() -> Iterator[None]:
    """Run a public entry point's insides, after it has checked its inputs.

    The public layers and helpers called inside skip their own checks (:func:`at_the_door`
    is ``False`` there). Only attnlib's own code runs inside: never a caller's callback,
    whose calls must be checked.
    """
    token = _INPUTS_CHECKED.set(True)
    try:
        yield
    finally:
        _INPUTS_CHECKED.reset(token)


def at_the_door() -> bool:
    """Whether a public layer must check its inputs: ``False`` under :func:`inputs_checked`."""
    return not _INPUTS_CHECKED.get()


def require_int(name: str, value: object, minimum: int | None = None) -> int:
    """An ``int`` (not ``bool``: ``TypeError``) of at least ``minimum`` (``ValueError``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def require_positive_int(name: str, value: object) -> int:
    """An ``int`` of at least 1."""
    if require_int(name, value) < 1:
        raise ValueError(f"{name} must be a positive int, got {value}")
    return value


def require_even(name: str, value: int) -> int:
    """An even ``int`` (dims that come in pairs: sin/cos, rotation planes)."""
    if require_int(name, value) % 2:
        raise ValueError(f"{name} must be even (dims come in pairs), got {value}")
    return value


def require_number(name: str, value: object) -> float:
    """A real number (``int`` or ``float``, not ``bool``), else a ``TypeError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def require_positive(name: str, value: object) -> float:
    """A strictly positive, finite real number."""
    number = require_number(name, value)
    if not 0 < number < math.inf:
        raise ValueError(f"{name} must be positive and finite, got {value}")
    return number


def require_finite_number(name: str, value: object) -> float:
    """A real number that is neither NaN nor infinite (of either sign)."""
    number = require_number(name, value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return number


def require_non_negative(name: str, value: object) -> float:
    """A real number ``>= 0`` and finite (a temperature, where 0 is the greedy limit)."""
    number = require_number(name, value)
    if not 0.0 <= number < math.inf:
        raise ValueError(f"{name} must be >= 0 and finite, got {value}")
    return number


def require_probability(name: str, value: object, interval: str = "[0, 1)") -> float:
    """A probability in ``[0, 1)`` (dropout, label smoothing) or in ``(0, 1]`` (top-p)."""
    number = require_number(name, value)
    if not (0.0 <= number < 1.0 if interval == "[0, 1)" else 0.0 < number <= 1.0):
        raise ValueError(f"{name} must be in {interval}, got {value}")
    return number


def require_sampling_settings(temperature: object, top_k: object, top_p: object) -> None:
    """A sampler's settings: ``temperature >= 0`` (0 is greedy), ``top_k`` and ``top_p`` or None.

    A negative temperature would invert the ranking; a ``top_k`` above the vocabulary keeps
    every token; ``top_p`` is in ``(0, 1]``.
    """
    require_non_negative("temperature", temperature)
    if top_k is not None:
        require_positive_int("top_k", top_k)
    if top_p is not None:
        require_probability("top_p", top_p, "(0, 1]")


def require_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """One of the strings ``allowed``."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str, one of {tuple(allowed)}, got {type(value).__name__}"
        )
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")
    return value


def require_choices(name: str, values: object, allowed: Sequence[str]) -> tuple[str, ...]:
    """A non-empty sequence of strings drawn from ``allowed``."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a sequence drawn from {tuple(allowed)}, got {values!r}")
    if not values:
        raise ValueError(f"{name} must not be empty; choose from {tuple(allowed)}")
    return tuple(require_choice(f"each of {name}", value, allowed) for value in values)


def require_date(name: str, value: object) -> datetime.date:
    """A ``datetime.date`` (a ``datetime.datetime`` is refused: its time would be dropped)."""
    if not isinstance(value, datetime.date) or isinstance(value, datetime.datetime):
        raise TypeError(f"{name} must be a datetime.date, got {type(value).__name__}")
    return value


def require_text(name: str, value: object) -> str:
    """A ``str`` (one text), else a ``TypeError`` naming ``name``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def require_texts(name: str, value: object) -> list[str]:
    """A list or tuple of strings (a lone string is refused: it is not a batch)."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of str, got {type(value).__name__}")
    for text in value:
        if not isinstance(text, str):
            raise TypeError(f"every item of {name} must be a str, got {type(text).__name__}")
    return list(value)
