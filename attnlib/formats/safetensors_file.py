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
import math
import os
import string
import struct
import sys
from pathlib import Path

import torch

from attnlib._validate import require_text

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


def file_sha256(
    path: str | os.PathLike[str], chunk_bytes: int = 1 << 20, *, text: bool = False
) -> str:
    """The hex SHA-256 digest of a file, read in chunks (constant memory).

    With ``text=True`` the file is hashed as text with ``\n`` line endings: a git checkout
    on Windows may have turned them into ``\r\n``, which changes the bytes but not the
    text Python reads. For a file with ``\n`` endings it is the digest of its bytes.

    Raises:
        TypeError: ``path`` is not a str or a path.
        FileNotFoundError: there is no file at ``path``.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or a pathlib.Path, got {type(path).__name__}")
    digest = hashlib.sha256()
    if text:  # bytes that are not UTF-8 are hashed as they are (surrogateescape)
        with open(path, encoding="utf-8", errors="surrogateescape") as file:
            while chunk := file.read(chunk_bytes):
                digest.update(chunk.encode("utf-8", "surrogateescape"))
        return digest.hexdigest()
    with open(path, "rb") as file:
        while chunk := file.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def verify_sha256(
    path: str | os.PathLike[str],
    expected: str,
    remedy: str = "reinstall the package that provides it",
    *,
    text: bool = False,
) -> None:
    """Raise :class:`ChecksumMismatchError` unless ``path`` has the SHA-256 digest ``expected``.

    Args:
        path: the file to check.
        expected: its published digest, 64 hex digits (either case).
        remedy: what the error message tells the reader to do about a mismatch.
        text: hash it as text, whatever its line endings (see :func:`file_sha256`).

    Raises:
        TypeError: ``expected`` is not a str, or ``path`` not a str or a path.
        ValueError: ``expected`` is not 64 hex digits (checked before the file is read).
        ChecksumMismatchError: the file's digest differs; the message names the file.
    """
    require_text("expected", expected)
    if len(expected) != 64 or not set(expected) <= set(string.hexdigits):
        raise ValueError(
            f"expected must be a SHA-256 digest of 64 hex digits, got {expected!r} "
            f"({len(expected)} characters)"
        )
    actual = file_sha256(path, text=text)
    if actual != expected.lower():
        raise ChecksumMismatchError(
            f"{path} has SHA-256 {actual}, expected {expected}: the file is corrupt or is "
            f"not the one attnlib was tested with; {remedy}"
        )


def _is_size(value: object) -> bool:
    # JSON's true and false arrive as bool, a subclass of int; the format wants integers.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _fits_torch(shape: list[int]) -> bool:
    # Only an empty tensor can have such a shape (its bytes must fit in the file), and
    # torch still refuses it when the element count, multiplied out left to right, passes
    # 2**64 (the format's reference library refuses that too) or a stride passes 2**63.
    count = 1
    for n in shape:
        count *= n
        if count >= 2**64:
            return False
    stride = 1
    for n in reversed(shape[1:]):
        stride *= max(n, 1)
        if stride >= 2**63:
            return False
    return all(n < 2**63 for n in shape)


def _check_metadata(path: Path, metadata: object) -> None:
    # null is what the reference library reads as "no metadata"; anything else must be
    # a map of strings, as the format says.
    if metadata is None:
        return
    if not isinstance(metadata, dict) or not all(
        isinstance(value, str) for value in metadata.values()
    ):
        raise SafetensorsError(
            f"{path}: the __metadata__ entry must map strings to strings, got {metadata!r:.200}"
        )


def _check_entry(path: Path, name: str, entry: object) -> tuple[int, int]:
    """The ``(begin, end)`` of one tensor's entry, after checking dtype, shape and size."""
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise SafetensorsError(
            f"{path}: tensor {name!r} has a malformed entry {entry!r:.200}: it needs a dtype, "
            f"a shape and data_offsets"
        )
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPES:
        raise SafetensorsError(
            f"{path}: tensor {name!r} has dtype {dtype!r:.50}, which attnlib does not read "
            f"(it reads {', '.join(DTYPES)})"
        )
    if not isinstance(shape, list) or not all(_is_size(n) for n in shape):
        raise SafetensorsError(
            f"{path}: tensor {name!r} has shape {shape!r:.200}: a shape is a list of "
            f"non-negative integers"
        )
    if not _fits_torch(shape):
        raise SafetensorsError(f"{path}: tensor {name!r} has shape {shape}, too large for torch")
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(map(_is_size, offsets)):
        raise SafetensorsError(
            f"{path}: tensor {name!r} has data_offsets {offsets!r:.200}: they must be "
            f"[begin, end], two non-negative integers"
        )
    begin, end = offsets
    needed = math.prod(shape) * torch.empty((), dtype=DTYPES[dtype]).element_size()
    if end - begin != needed:
        raise SafetensorsError(
            f"{path}: tensor {name!r} of shape {shape} and dtype {dtype} needs {needed} bytes, "
            f"its data_offsets [{begin}, {end}] hold {end - begin}"
        )
    return begin, end


def _check_layout(path: Path, spans: dict[str, tuple[int, int]], data_bytes: int) -> None:
    # The tensors, in the order of their offsets, must tile the data exactly: the first
    # at 0, each where the one before ended, the last at the end. That rules out
    # overlapping tensors (two names for the same bytes) and bytes no tensor owns.
    position, before = 0, None
    for name, (begin, end) in sorted(spans.items(), key=lambda item: item[1]):
        if begin != position:
            after = "the data begin at 0" if before is None else f"{before!r} ends at {position}"
            raise SafetensorsError(
                f"{path}: tensor {name!r} begins at byte {begin} of the data but {after}: "
                f"tensors must follow one another without gaps or overlaps"
            )
        position, before = end, name
    if position != data_bytes:
        raise SafetensorsError(
            f"{path}: the tensors cover {position} bytes of data, but the file holds "
            f"{data_bytes} bytes after its header"
        )


def read_safetensors_header(path: str | os.PathLike[str]) -> tuple[dict[str, dict], int]:
    """The JSON header of a ``.safetensors`` file and the byte offset where its data begins.

    The header is checked as the format requires: every tensor has a known dtype, a shape
    of non-negative integers, and ``data_offsets`` ``[begin, end]`` that hold exactly its
    bytes, the tensors together covering the data without gap or overlap; a
    ``"__metadata__"`` entry maps strings to strings. That entry, if any, is left out of
    the returned mapping.

    Raises:
        SafetensorsError: the file breaks the format; the message names the file and,
            where one is at fault, the tensor.
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
        try:  # the format's header is UTF-8; json.loads would also guess UTF-16 or -32
            header = json.loads(file.read(header_bytes).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise SafetensorsError(f"{path} has a header that is not JSON: {error}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"{path} has a header that is not a JSON object")
    _check_metadata(path, header.pop("__metadata__", None))
    spans = {name: _check_entry(path, name, entry) for name, entry in header.items()}
    _check_layout(path, spans, size - 8 - header_bytes)
    return header, 8 + header_bytes


def read_safetensors(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    """Every tensor in a ``.safetensors`` file, by name, as CPU tensors that own their memory.

    Raises:
        SafetensorsError: the file breaks the format (see :func:`read_safetensors_header`).
    """
    path = Path(path)
    if sys.byteorder != "little":
        raise SafetensorsError("reading .safetensors files needs a little-endian machine")
    header, data_start = read_safetensors_header(path)
    with open(path, "rb") as file:
        file.seek(data_start)
        data = bytearray(file.read())  # writable, so torch may share it
    expected_bytes = max((entry["data_offsets"][1] for entry in header.values()), default=0)
    if len(data) != expected_bytes:
        raise SafetensorsError(f"{path} changed while it was being read")
    tensors: dict[str, torch.Tensor] = {}
    for name, entry in header.items():
        dtype, shape = DTYPES[entry["dtype"]], entry["shape"]
        begin, end = entry["data_offsets"]
        if begin == end:  # no elements: frombuffer refuses an empty range
            tensors[name] = torch.empty(shape, dtype=dtype)
            continue
        flat = torch.frombuffer(data, dtype=dtype, count=math.prod(shape), offset=begin)
        tensors[name] = flat.reshape(shape).clone()  # own the memory; `data` can then go
    return tensors
