"""The grader's end of the wire to one notebook's run: frames out and in, every wait bounded.

A :class:`Channel` is the one way the grader talks to a run: the judge
(:func:`~attnlib.grading.grader.judge.grade_notebook`) sends the run its order and receives its
reports through it, and the stand-ins for the learner's answer
(:mod:`~attnlib.grading.grader.across`) make each call of the answer with :meth:`Channel.request`.
Every frame from the run is read with a size limit (:mod:`~attnlib.grading.wire.frames`), and
every write and read waits at most until a deadline: the run's wall time, or, for a call, the
call's own limit and a margin. A run that misses one, sends what is not a frame or answers a
call with anything but a reply is killed, and the check in progress ends with
:class:`RunEnded`.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import time
from typing import Any

from attnlib.grading.grader import runs
from attnlib.grading.wire.errors import WireError
from attnlib.grading.wire.frames import MAX_FRAME_BYTES, FrameTimeoutError, read_frame, write_frame

# A call's reply may come this long after the call's own limit (its timer in the sandbox, the
# reply's encoding), a quarter of the limit and at least 5 s, before the grader ends the run.
CALL_GRACE_FRACTION, CALL_GRACE_SECONDS = 0.25, 5.0
# The frames a run sends when no call is pending: a check's description, the end.
SMALL_FRAME_BYTES = 8 * 2**20


class RunEnded(BaseException):
    """The sandboxed run stopped answering properly: it ended, ran out of time, or sent what
    the grader cannot read. A BaseException, so that no checker takes it for an error the
    learner's answer raised (checkers catch those as ``Exception``)."""


class Channel:
    """Frames to and from one sandboxed run, each wait bounded by a deadline."""

    def __init__(self, run: runs.Run, deadline: float, call_seconds: float) -> None:
        self._run = run
        self._deadline = deadline
        self._call_seconds = call_seconds

    def _ended(self, what: str) -> RunEnded:
        if self._run.killed:
            return RunEnded(self._run.killed)
        if self._run.out_of_memory():
            limit = self._run.limits.sandbox_memory_bytes / 2**30
            return RunEnded(f"the notebook's run ran out of memory (its limit is {limit:g} GiB)")
        return RunEnded(what)

    def send(self, message: dict[str, Any], *, deadline: float | None = None) -> None:
        try:
            write_frame(self._run.to_run, message, deadline=deadline or self._deadline)
        except FrameTimeoutError:
            self._run.kill("the notebook's run stopped reading the grader's messages")
            raise self._ended(self._run.killed) from None
        except (OSError, ValueError) as error:
            raise self._ended(f"the notebook's run ended ({error})") from None

    def receive(self, *, limit: int = SMALL_FRAME_BYTES, deadline: float | None = None) -> dict:
        try:
            frame = read_frame(self._run.from_run, limit=limit, deadline=deadline or self._deadline)
        except FrameTimeoutError:
            if deadline is not None and deadline < self._deadline:
                seconds = self._call_seconds
                why = f"a call of the answer went on past its limit of {seconds:g} s"
                why += ": the run was ended"
            else:
                why = "the notebook's run went over its time limit"
            self._run.kill(why)
            raise self._ended(why) from None
        except WireError as error:
            self._run.kill(f"the notebook's run sent what is not a message ({error})")
            raise self._ended(self._run.killed) from None
        except OSError as error:
            raise self._ended(f"the notebook's run ended ({error})") from None
        if frame is None:
            raise self._ended("the notebook's run ended before its checks were done")
        return frame

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one call (:mod:`~attnlib.grading.wire.calls`) and return the run's reply to it."""
        grace = max(CALL_GRACE_SECONDS, CALL_GRACE_FRACTION * self._call_seconds)
        call_deadline = time.monotonic() + self._call_seconds + grace
        self.send(message, deadline=min(call_deadline, self._deadline))
        frame = self.receive(limit=MAX_FRAME_BYTES, deadline=min(call_deadline, self._deadline))
        reply = frame.get("reply")
        if set(frame) != {"reply"} or not isinstance(reply, dict):
            self._run.kill("the notebook's run answered a call with something else")
            raise self._ended(self._run.killed)
        return reply
