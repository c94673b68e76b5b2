"""An exception raised by the learner's answer, carried from the sandbox as its type's name
and its message, and raised again in the grader as an exception of the same type when that is
Python's or torch's, else of a new type of that name: no code of the answer's comes along.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import builtins
from typing import Any

import torch

_SYNTHETIC_ERRORS: dict[str, type[Exception]] = {}


class WireError(ValueError):
    """A message that is not what the wire format allows (too big, too deep, malformed)."""


def expect_text(value: Any) -> str:
    """``value`` if it is a str; a :class:`WireError` otherwise."""
    if not isinstance(value, str):
        raise WireError(f"expected a string, got {type(value).__name__}")
    return value


def expect_type_name(value: Any) -> str:
    """``value`` if it is a str that can name a type; a :class:`WireError` otherwise."""
    name = expect_text(value)
    if not name.isidentifier() or len(name) > 100:
        raise WireError(f"not a type's name: {name[:50]!r}")
    return name


def encode_error(error: BaseException) -> dict[str, str]:
    kind = type(error)
    try:
        message = str(error)
    except Exception:  # an exception whose __str__ fails
        message = f"<{kind.__name__}>"
    return {"type": kind.__qualname__, "module": kind.__module__, "message": message[:20_000]}


def decode_error(body: Any) -> Exception:
    """The error as an exception of its own type when that is Python's or torch's, else of a
    new type with its name (no code of the answer's comes along)."""
    if not isinstance(body, dict):
        raise WireError("an error that is not an object")
    qualname, module = expect_text(body.get("type")), expect_text(body.get("module"))
    message = expect_text(body.get("message"))
    kind = _known_error(module, qualname)
    if kind is None:
        name = expect_type_name(qualname.rsplit(".", 1)[-1])
        kind = _SYNTHETIC_ERRORS.setdefault(name, type(name, (Exception,), {}))
    error = kind.__new__(kind)
    error.args = (message,)
    return error


def _known_error(module: str, qualname: str) -> type[Exception] | None:
    owner: Any
    if module == "builtins":
        owner = builtins
    elif module == "torch" or module.startswith("torch."):
        owner = torch
        for part in module.split(".")[1:]:
            owner = getattr(owner, part, None)
    else:
        return None
    for part in qualname.split("."):
        owner = getattr(owner, part, None)
    is_error = isinstance(owner, type) and issubclass(owner, Exception)
    # KeyboardInterrupt and SystemExit are not Exceptions: a check never re-raises them.
    return owner if is_error else None
