"""Frames between the grader and a sandbox (attnlib.grading.wire.frames), read and written as a
hostile sandbox would make them: no length is believed before the bytes arrive, no frame
is parsed that would build a huge structure, and no wait outlasts its deadline."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import tracemalloc
from collections.abc import Iterator

import pytest

from attnlib.grading.wire.errors import WireError
from attnlib.grading.wire.frames import (
    MAX_CONTAINERS,
    FrameTimeoutError,
    encode_frame,
    read_frame,
    write_frame,
)

F_SETPIPE_SZ = 1031


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    for fd in (read, write):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_a_frame_goes_through(pipe: tuple[int, int]) -> None:
    read, write = pipe
    write_frame(write, {"reply": {"value": [1, "two", None]}}, deadline=time.monotonic() + 5)
    assert read_frame(read, deadline=time.monotonic() + 5) == {"reply": {"value": [1, "two", None]}}
    os.close(write)
    assert read_frame(read, deadline=time.monotonic() + 5) is None  # the end of the stream


def test_a_claimed_length_over_the_limit_is_refused_before_anything_is_stored(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    os.write(write, (2**40).to_bytes(8, "big") + b"{}")
    tracemalloc.start()
    with pytest.raises(WireError, match="over the limit"):
        read_frame(read, deadline=time.monotonic() + 5)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2**20


def test_a_claimed_length_allocates_only_what_arrives(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, (30 * 2**20).to_bytes(8, "big") + b"{" * 1000)
    tracemalloc.start()
    with pytest.raises(FrameTimeoutError):
        read_frame(read, deadline=time.monotonic() + 0.5)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 * 2**20


def test_a_small_frame_of_many_empty_containers_is_refused_unparsed(pipe: tuple[int, int]) -> None:
    read, write = pipe
    body = b'{"done": [' + b",".join([b"[]"] * (MAX_CONTAINERS + 1)) + b"]}"
    os.write(write, len(body).to_bytes(8, "big"))
    writer = os.fork()
    if writer == 0:  # the body is larger than the pipe: write it from another process
        os.set_blocking(write, True)
        os.write(write, body)
        os._exit(0)
    with pytest.raises(WireError, match="objects and arrays"):
        read_frame(read, deadline=time.monotonic() + 10)
    os.waitpid(writer, 0)


def test_brackets_inside_strings_are_not_containers(pipe: tuple[int, int]) -> None:
    read, write = pipe
    text = "[{" * (MAX_CONTAINERS // 2 + 10) + '\\"' + "]}"
    message = {"done": {"0": [{"output_type": "stream", "name": "stdout", "text": text}]}}
    frame = encode_frame(message)
    writer = os.fork()
    if writer == 0:
        os.set_blocking(write, True)
        os.write(write, frame)
        os._exit(0)
    assert read_frame(read, deadline=time.monotonic() + 10) == message
    os.waitpid(writer, 0)


def test_malformed_frames_are_wire_errors(pipe: tuple[int, int]) -> None:
    read, write = pipe
    for body in (b"not json", b"[1, 2]", b"\xff\xfe", b'{"a": ' + b"[" * 20_000):
        os.write(write, len(body).to_bytes(8, "big") + body)
        with pytest.raises(WireError):
            read_frame(read, deadline=time.monotonic() + 5)
    os.write(write, (10).to_bytes(8, "big") + b"{}")
    os.close(write)
    with pytest.raises(WireError, match="ended inside a message"):
        read_frame(read, deadline=time.monotonic() + 5)


def test_a_reader_that_shrinks_its_pipe_and_stops_reading_cannot_hold_the_writer(
    pipe: tuple[int, int],
) -> None:
    read, write = pipe
    fcntl.fcntl(read, F_SETPIPE_SZ, 4096)
    start = time.monotonic()
    with pytest.raises(FrameTimeoutError):
        write_frame(write, {"call": {"pickled": "x" * 20_000}}, deadline=start + 1.0)
    assert time.monotonic() - start < 3


def test_a_silent_writer_cannot_hold_the_reader(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, (100).to_bytes(8, "big") + b'{"half": ')
    start = time.monotonic()
    with pytest.raises(FrameTimeoutError):
        read_frame(read, deadline=start + 1.0)
    assert time.monotonic() - start < 3
