"""Messages between the grader and a sandbox, one frame each: an 8-byte big-endian length,
then that many bytes of UTF-8 JSON, read with a limit on the size.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import json
from typing import IO, Any

from attnlib.grading.raised import WireError

# A reply holds a few small tensors; the feedback of a notebook with its figures, some MB.
MAX_FRAME_BYTES = 64 * 1024 * 1024
_LENGTH_BYTES = 8


def write_frame(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES:
        raise WireError(f"a message of {len(body):,} bytes is over the limit")
    stream.write(len(body).to_bytes(_LENGTH_BYTES, "big") + body)
    stream.flush()


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream."""
    header = _read_exactly(stream, _LENGTH_BYTES)
    if header is None:
        return None
    length = int.from_bytes(header, "big")
    if length > MAX_FRAME_BYTES:
        raise WireError(f"a message of {length:,} bytes is over the limit")
    body = _read_exactly(stream, length)
    if body is None:
        raise WireError("the stream ended inside a message")
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise WireError(f"a message that is not JSON: {error}") from error
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message


def _read_exactly(stream: IO[bytes], count: int) -> bytes | None:
    chunks, left = [], count
    while left:
        chunk = stream.read(left)
        if not chunk:
            if left == count:
                return None
            raise WireError("the stream ended inside a message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
