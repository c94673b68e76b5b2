"""Values on the wire as plain data, and nothing that runs: what the sandbox sends the grader.

A submission's answers run in a sandboxed process; the checkers that score them run in the
grader's own process, which never runs a line of the submission. What the answer returns comes
back as JSON-ready data (:func:`encode`, in the sandbox): tensors as their dtype, shape and raw
bytes; numbers, strings, tuples, lists and dicts; dtypes, generators by their state; an
exception by its type's name and its message (:mod:`~attnlib.grading.wire.errors`). Anything
else arrives as an :class:`Opaque` that says what it was. :func:`decode`, in the grader, rebuilds
the value trusting nothing, with a limit on depth, so a hostile sandbox can send wrong answers
but nothing that takes the grader over. (The one pickle on the wire goes the other way:
:mod:`attnlib.grading.wire`.)

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np
import torch

from attnlib.grading.wire.errors import (
    WireError,
    decode_error,
    encode_error,
    expect_text,
    expect_type_name,
)

MAX_DEPTH = 64


class Opaque:
    """Stands for a value of a type that does not cross the wire: an instance of a class named
    as the original's type (so a report says "got MyThing"), with its text in ``shown``."""

    def __init__(self, shown: str) -> None:
        self.shown = shown

    def __repr__(self) -> str:
        return self.shown


_NAMED: dict[tuple[type, str], type] = {}


def _named(base: type, name: str) -> type:
    """A class of this process's own, derived from ``base`` and named as the sandbox's value's
    type was: an :class:`Opaque`, a tuple like torch's ``max`` result, or a plain subclass of
    torch.Tensor (which a check refuses by its type, as it refuses the original). No code of
    the answer's class comes along."""
    if (base, name) not in _NAMED:
        _NAMED[base, name] = type(name, (base,), {})
    return _NAMED[base, name]


def _short_repr(value: object) -> str:
    try:
        shown = repr(value)
    except Exception:  # the answer's own __repr__ failed: say what it was instead
        shown = f"<{type(value).__name__}>"
    return shown if len(shown) <= 200 else shown[:197] + "..."


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().cpu().reshape(-1)
    if flat.numel() == 0:
        return b""
    # A fresh tensor: a view's strides (a one-element diagonal's, say) can stop .view(uint8).
    packed = torch.empty(flat.shape, dtype=flat.dtype).copy_(flat)
    return packed.view(torch.uint8).numpy().tobytes()


# -- encoding: any value to JSON-ready data ---------------------------------------------------


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready data; what has no place on the wire becomes ``{"opaque": …}``."""
    if depth > MAX_DEPTH:
        raise WireError("a value nested too deeply to send")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return {"float": value.hex()}
    if isinstance(value, torch.Tensor):
        return {"tensor": _encode_tensor(value)}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, torch.Size):
        return {"size": [int(n) for n in value]}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.Generator):
        return {"generator": base64.b64encode(_tensor_bytes(value.get_state())).decode()}
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        return {"ndarray": _encode_ndarray(value)}
    if isinstance(value, np.generic) and np.asarray(value).dtype.kind in "biufc":
        return {"npscalar": _encode_ndarray(np.asarray(value))}
    if isinstance(value, tuple) and hasattr(type(value), "n_fields"):  # torch.return_types
        items = [encode(v, depth + 1) for v in value]
        return {"structseq": {"type": type(value).__name__, "items": items}}
    if type(value) in (tuple, list):
        kind = "tuple" if type(value) is tuple else "list"
        return {kind: [encode(v, depth + 1) for v in value]}
    if type(value) is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if type(value) is slice:
        return {"slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if isinstance(value, BaseException):
        return {"error": encode_error(value)}
    return {"opaque": {"type": type(value).__name__, "shown": _short_repr(value)}}


def _encode_tensor(tensor: torch.Tensor) -> dict[str, Any]:
    kind = type(tensor)
    plain = kind in (torch.Tensor, torch.nn.Parameter)
    if not plain:
        # Read the numbers past the subclass's own code; they will be refused anyway.
        tensor = torch.Tensor.as_subclass(tensor, torch.Tensor)
    return {
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": [int(n) for n in tensor.shape],
        "data": base64.b64encode(_tensor_bytes(tensor)).decode(),
        "requires_grad": bool(tensor.requires_grad),
        "type": "Parameter" if kind is torch.nn.Parameter else "Tensor" if plain else kind.__name__,
    }


def _encode_ndarray(array: np.ndarray) -> dict[str, Any]:
    array = np.ascontiguousarray(array)
    return {
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "data": base64.b64encode(array.tobytes()).decode(),
    }


# -- decoding: data back to values, trusting nothing -------------------------------------------


def decode(data: Any) -> Any:
    """The value ``encode`` made; a :class:`WireError`, and no other error, for anything it
    could not have made."""
    try:
        return _decode(data, 0)
    except WireError:
        raise
    except Exception as error:  # torch's or numpy's complaint about malformed data
        raise WireError(
            f"a value that cannot be rebuilt: {type(error).__name__}: {error}"
        ) from None


def _decode(data: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("a value nested too deeply")
    if data is None or isinstance(data, (bool, str)):
        return data
    if type(data) is int:
        return data
    if not isinstance(data, dict) or len(data) != 1:
        raise WireError(f"not a value on the wire: {type(data).__name__}")
    ((kind, body),) = data.items()
    if kind == "float":
        return float.fromhex(expect_text(body))
    if kind == "tensor":
        return _decode_tensor(body)
    if kind == "dtype":
        return _dtype(body)
    if kind == "size":
        return torch.Size([_int(n) for n in _list(body)])
    if kind == "device":
        return torch.device(expect_text(body))
    if kind == "generator":
        generator = torch.Generator()
        generator.set_state(_uint8(body))
        return generator
    if kind == "ndarray":
        return _decode_ndarray(body)
    if kind == "npscalar":
        return _decode_ndarray(body)[()]
    if kind == "tuple":
        return tuple(_decode(v, depth + 1) for v in _list(body))
    if kind == "list":
        return [_decode(v, depth + 1) for v in _list(body)]
    if kind == "structseq":
        fields = _dict(body)
        items = tuple(_decode(v, depth + 1) for v in _list(fields.get("items")))
        return _named(tuple, expect_type_name(fields.get("type")))(items)
    if kind == "dict":
        pairs = [_list(pair) for pair in _list(body)]
        if any(len(pair) != 2 for pair in pairs):
            raise WireError("a dict entry is not a (key, value) pair")
        decoded = {}
        for key, value in pairs:
            decoded_key = _decode(key, depth + 1)
            try:
                hash(decoded_key)
            except TypeError as error:
                raise WireError("a dict key that cannot be hashed") from error
            decoded[decoded_key] = _decode(value, depth + 1)
        return decoded
    if kind == "slice":
        start, stop, step = (_decode(v, depth + 1) for v in _list(body))
        return slice(start, stop, step)
    if kind == "error":
        return decode_error(_dict(body))
    if kind == "opaque":
        fields = _dict(body)
        return _named(Opaque, expect_type_name(fields.get("type")))(
            expect_text(fields.get("shown"))
        )
    raise WireError(f"unknown kind of value: {kind!r}")


def _int(value: Any) -> int:
    if type(value) is not int:
        raise WireError(f"expected an int, got {type(value).__name__}")
    return value


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise WireError(f"expected a list, got {type(value).__name__}")
    return value


def _dict(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireError(f"expected an object, got {type(value).__name__}")
    return value


def _dtype(name: Any) -> torch.dtype:
    found = getattr(torch, expect_type_name(name), None)
    if not isinstance(found, torch.dtype):
        raise WireError(f"not a torch dtype: {name!r}")
    return found


def _uint8(data: Any) -> torch.Tensor:
    raw = base64.b64decode(expect_text(data), validate=True)
    return torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0)


def _decode_tensor(body: Any) -> torch.Tensor:
    fields = _dict(body)
    dtype = _dtype(fields.get("dtype"))
    shape = [_int(n) for n in _list(fields.get("shape"))]
    if any(n < 0 for n in shape):
        raise WireError("a negative size in a tensor's shape")
    raw = base64.b64decode(expect_text(fields.get("data")), validate=True)
    count = math.prod(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(raw) != count * itemsize:
        raise WireError(f"a tensor of shape {shape} and dtype {dtype} with {len(raw)} bytes")
    if count == 0:
        tensor = torch.empty(shape, dtype=dtype)
    else:
        tensor = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape)
    kind = expect_type_name(fields.get("type"))
    if kind == "Parameter":
        return torch.nn.Parameter(tensor, requires_grad=bool(fields.get("requires_grad")))
    if fields.get("requires_grad") is True and (tensor.is_floating_point() or tensor.is_complex()):
        tensor.requires_grad_(True)
    if kind != "Tensor":
        return tensor.as_subclass(_named(torch.Tensor, kind))
    return tensor


def _decode_ndarray(body: Any) -> np.ndarray:
    fields = _dict(body)
    dtype = np.dtype(expect_text(fields.get("dtype")))
    if dtype.kind not in "biufc":
        raise WireError(f"not a numeric numpy dtype: {dtype}")
    shape = tuple(_int(n) for n in _list(fields.get("shape")))
    raw = base64.b64decode(expect_text(fields.get("data")), validate=True)
    if len(raw) != math.prod(shape) * dtype.itemsize:
        raise WireError("a numpy array whose bytes do not fit its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
