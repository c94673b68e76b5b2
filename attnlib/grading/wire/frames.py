"""Messages between the grader and a sandbox, one frame each: an 8-byte big-endian length,
then that many bytes of UTF-8 JSON.

The grader reads what a hostile sandbox sends, so reading trusts nothing the frame says about
itself: a frame is refused when its length is over the limit the reader sets (before a byte of
it is stored), the body is stored as it arrives (a claimed length allocates nothing), and a body
with more JSON objects and arrays than any honest message has is refused before it is parsed
(parsing a small text of many empty containers builds a large Python structure). Each read and
each write on the grader's side has a deadline: a sandbox that stops reading or writing, or
shrinks its pipe, makes the grader wait no longer than the deadline.

The sandbox's side reads and writes blocking file descriptors without deadlines: the grader
kills it when it is late.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import json
import os
import re
import select
import time
from typing import Any

from attnlib.grading.wire.errors import WireError

# The largest frame an honest run sends is a module's weights in notebook 11 (about 10 MB of
# base64); a notebook's outputs are cut to a few MB in the sandbox (sandbox.notebook.OUTPUT_BYTES).
MAX_FRAME_BYTES = 32 * 2**20
# JSON objects and arrays in one frame: an honest reply has hundreds, a notebook's outputs a
# few thousand.
MAX_CONTAINERS = 200_000
_LENGTH_BYTES = 8
_CHUNK = 2**20
# A JSON string, written so that a long one is matched in one sweep (unrolled, not (a|b)*).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


class FrameTimeoutError(TimeoutError):
    """The other side did not send or take a frame before the deadline."""


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES:
        raise WireError(f"a message of {len(body):,} bytes is over the limit")
    return len(body).to_bytes(_LENGTH_BYTES, "big") + body


def write_frame(fd: int, message: dict[str, Any], *, deadline: float | None = None) -> None:
    """Write one frame to ``fd``; with a ``deadline`` (time.monotonic()), ``fd`` must be
    non-blocking and a :class:`FrameTimeoutError` comes when the reader has not taken it by then."""
    data = memoryview(encode_frame(message))
    while data:
        if deadline is not None:
            _wait(fd, select.POLLOUT, deadline)
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            continue
        data = data[written:]


def read_frame(
    fd: int, *, limit: int = MAX_FRAME_BYTES, deadline: float | None = None
) -> dict[str, Any] | None:
    """The next message from ``fd``, or None at the end of the stream; a :class:`WireError`
    for anything that is not a frame within ``limit``, a :class:`FrameTimeoutError` past the
    ``deadline`` (with which ``fd`` must be non-blocking)."""
    header = _read_exactly(fd, _LENGTH_BYTES, deadline, at_start=True)
    if header is None:
        return None
    length = int.from_bytes(header, "big")
    if length > limit:
        raise WireError(f"a message of {length:,} bytes is over the limit of {limit:,}")
    body = _read_exactly(fd, length, deadline, at_start=False)
    assert body is not None
    containers = _STRING.sub(b"", body)
    if containers.count(b"{") + containers.count(b"[") > MAX_CONTAINERS:
        raise WireError(f"a message of more than {MAX_CONTAINERS:,} objects and arrays")
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise WireError(f"a message that is not JSON: {error}") from error
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message


def _wait(fd: int, event: int, deadline: float) -> None:
    poller = select.poll()
    poller.register(fd, event)
    left = deadline - time.monotonic()
    if left <= 0 or not poller.poll(left * 1000):
        raise FrameTimeoutError("the other side did not answer in time")


def _read_exactly(fd: int, count: int, deadline: float | None, *, at_start: bool) -> bytes | None:
    got = bytearray()
    while len(got) < count:
        if deadline is not None:
            _wait(fd, select.POLLIN, deadline)
        try:
            chunk = os.read(fd, min(count - len(got), _CHUNK))
        except BlockingIOError:
            continue
        if not chunk:
            if at_start and not got:
                return None
            raise WireError("the stream ended inside a message")
        got += chunk
    return bytes(got)
