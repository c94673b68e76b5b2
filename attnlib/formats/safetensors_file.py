"""Reading ``.safetensors`` weight files with nothing but the standard library and torch.

The format is simple enough to read by hand, which is why pretrained models ship in it:

* 8 bytes: the header's length ``N`` as a little-endian unsigned 64-bit integer;
* ``N`` bytes: a JSON header mapping each tensor's name to its ``dtype``, ``shape`` and
  ``data_offsets`` ``[begin, end)`` (byte offsets into the data that follows), plus an
  optional ``"__metadata__"`` entry of strings;
* the raw little-endian tensor data, each tensor contiguous and row-major.

No code runs when such a file is read (unlike a pickled ``.pt`` file), and a file can
be checked against a published SHA-256 digest before it is trusted.

Notebook 11.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from pathlib import Path

import torch

DTYPES: dict[str, torch.dtype] = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
_MAX_HEADER_BYTES = 100_000_000  # the format's own limit; guards against a garbage length


class SafetensorsError(ValueError):
    """A file is not a well-formed ``.safetensors`` file."""


class ChecksumMismatchError(ValueError):
    """A file's SHA-256 digest is not the one it was published with."""


def file_sha256(path: str | os.PathLike[str], chunk_bytes: int = 1 << 20) -> str:
    """The hex SHA-256 digest of a file, read in chunks (constant memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def verify_sha256(path: str | os.PathLike[str], expected: str) -> None:
    """Raise :class:`ChecksumMismatchError` unless ``path`` has the SHA-256 digest ``expected``."""
    actual = file_sha256(path)
    if actual != expected.lower():
        raise ChecksumMismatchError(
            f"{path} has SHA-256 {actual}, expected {expected}: the file is corrupt or is "
            f"not the one attnlib was tested with; reinstall the package that provides it"
        )


def read_safetensors_header(path: str | os.PathLike[str]) -> tuple[dict[str, dict], int]:
    """The JSON header of a ``.safetensors`` file and the byte offset where its data begins.

    The ``"__metadata__"`` entry, if any, is left out of the returned mapping.
    """
    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as file:
        prefix = file.read(8)
        if len(prefix) != 8:
            raise SafetensorsError(f"{path} is too short to be a .safetensors file")
        (header_bytes,) = struct.unpack("<Q", prefix)
        if header_bytes > min(_MAX_HEADER_BYTES, size - 8):
            raise SafetensorsError(
                f"{path} declares a {header_bytes}-byte header in a {size}-byte file"
            )
        try:
            header = json.loads(file.read(header_bytes))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise SafetensorsError(f"{path} has a header that is not JSON: {error}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path} has a header that is not a JSON object")
    header.pop("__metadata__", None)
    return header, 8 + header_bytes


def read_safetensors(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    """Every tensor in a ``.safetensors`` file, by name, as CPU tensors that own their memory.

    Raises:
        SafetensorsError: the header is malformed, a dtype is unknown, or a tensor's
            byte range does not match its shape or lies outside the file.
    """
    path = Path(path)
    if sys.byteorder != "little":
        raise SafetensorsError("reading .safetensors files needs a little-endian machine")
    header, data_start = read_safetensors_header(path)
    data = bytearray(path.read_bytes()[data_start:])  # writable, so torch may share it
    tensors: dict[str, torch.Tensor] = {}
    for name, entry in header.items():
        try:
            dtype = DTYPES[entry["dtype"]]
            shape = [int(n) for n in entry["shape"]]
            begin, end = (int(n) for n in entry["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise SafetensorsError(
                f"{path}: tensor {name!r} has a malformed entry {entry}"
            ) from None
        count = 1
        for n in shape:
            count *= n
        expected_bytes = count * torch.empty((), dtype=dtype).element_size()
        if not 0 <= begin <= end <= len(data) or end - begin != expected_bytes:
            raise SafetensorsError(
                f"{path}: tensor {name!r} of shape {shape} and dtype {entry['dtype']} needs "
                f"{expected_bytes} bytes, its offsets are [{begin}, {end}) of {len(data)}"
            )
        if count == 0:
            tensors[name] = torch.empty(shape, dtype=dtype)
            continue
        flat = torch.frombuffer(data, dtype=dtype, count=count, offset=begin)
        tensors[name] = flat.reshape(shape).clone()  # own the memory; `data` can then go
    return tensors
