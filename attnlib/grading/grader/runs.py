"""Where one notebook's run happens, seen from the grader: a child of a warm sandbox
(bubblewrap), or a process of its own (a container, or no wall).

A :class:`Run` is what :mod:`attnlib.grading.grader.judge` needs of either: two non-blocking pipes
to talk over (orders to the run, reports from it), the tail of what the run wrote outside its
cells, a :meth:`Run.kill` that any thread may call at any time (the watchdog calls it at the
wall time, whatever the protocol is doing), whether it ran out of memory, and
:meth:`Run.finish` for a run that ended well. Nothing here reads what the run sends beyond
its log, which is kept to its last bytes in memory and never written to disk.

A warm sandbox (:class:`WarmSandbox`) lives as long as the grading process that started it and
serves one notebook at a time: its server (:mod:`attnlib.grading.sandbox.fork_server`) forks each
run and wipes the sandbox after it. A run that has to be killed takes the whole sandbox with it;
the next run starts a new one.

:func:`refusal` is the grader's judgment of what a run says it runs as, before any of the
submission's code has run: any capability, no ``no_new_privs``, or an id that is root outside,
and the sandbox is refused.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from attnlib.grading.grader.wall import Bubblewrap, Docker, Launched, Limits, NoSandbox, Sandbox

LOG_BYTES = 64 * 1024  # the end of a run's log kept for its feedback
STARTUP_SECONDS = 300.0  # a warm sandbox's imports, on a slow and busy machine
ANSWER_SECONDS = 60.0  # the server's answer to an order


class SandboxStartError(RuntimeError):
    """The sandbox could not start or serve a run: the grader's problem, not the student's."""


class UnsafeSandboxError(RuntimeError):
    """The sandbox would run the submission with privileges: no one is graded in it."""


def _nonblocking(fd: int) -> int:
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return fd


class _Tail:
    """Drains a pipe in a thread and keeps its last LOG_BYTES."""

    def __init__(self, fd: int) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, args=(fd,), daemon=True)
        self._thread.start()

    def _drain(self, fd: int) -> None:
        try:
            while chunk := os.read(fd, 65536):
                with self._lock:
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    while self._size - len(self._chunks[0]) >= LOG_BYTES:
                        self._size -= len(self._chunks.popleft())
        except OSError:
            pass
        finally:
            os.close(fd)

    def text(self, wait: float = 0.0) -> str:
        self._thread.join(wait)
        with self._lock:
            data = b"".join(self._chunks)[-LOG_BYTES:]
        return data.decode("utf-8", errors="replace")


def refusal(hello: Any) -> str:
    """Why a run that reports ``hello`` (:func:`attnlib.grading.sandbox.notebook.privileges`) must
    not go on, or ''."""
    if not isinstance(hello, dict):
        return "the run did not say what it runs as"
    capabilities = hello.get("capabilities")
    if not isinstance(capabilities, dict) or len(capabilities) != 5:
        return "the run did not report its capabilities"
    held = {k: v for k, v in capabilities.items() if not (isinstance(v, str) and set(v) <= {"0"})}
    if held:
        return f"the sandbox holds capabilities ({', '.join(f'{k} {v}' for k, v in held.items())})"
    if hello.get("no_new_privs") != "1":
        return "the sandbox could gain privileges (no_new_privs is not set)"
    uid, uid_map = hello.get("uid"), hello.get("uid_map")
    if type(uid) is not int or not isinstance(uid, int) or not isinstance(uid_map, str):
        return "the run did not report its user id"
    for line in uid_map.splitlines():
        inside, outside, count = (int(n) for n in line.split())
        if inside <= uid < inside + count:
            if outside + (uid - inside) == 0:
                return "the sandbox runs as root"
            return ""
    return "the sandbox's user id maps to no user outside"


class Run:
    """One notebook's run: pipes to talk over, its log, and a way to end it."""

    def __init__(self, to_run: int, from_run: int, log: _Tail, limits: Limits) -> None:
        self.to_run = _nonblocking(to_run)
        self.from_run = _nonblocking(from_run)
        self._log = log
        self.limits = limits
        self._lock = threading.Lock()
        self.killed = ""  # why, once killed

    def log_tail(self) -> str:
        return self._log.text(wait=1.0)

    def kill(self, why: str) -> None:
        with self._lock:
            if not self.killed:
                self.killed = why
                self._kill()

    def _kill(self) -> None:
        raise NotImplementedError

    def out_of_memory(self) -> bool:
        return False

    def finish(self) -> None:
        """After a run that ended well, or after :meth:`kill`: release everything."""
        for fd in (self.to_run, self.from_run):
            with contextlib.suppress(OSError):
                os.close(fd)


# -- warm sandboxes (bubblewrap) ----------------------------------------------------------------


class WarmSandbox:
    """A bubblewrap sandbox whose server has imported the course's software, forking runs."""

    def __init__(self, sandbox: Bubblewrap, limits: Limits) -> None:
        self.limits = limits
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_read, log_write = os.pipe()
        inner = [sandbox.python, "-m", "attnlib.grading.sandbox.fork_server", str(theirs.fileno())]
        try:
            self.launched: Launched = sandbox.launch(
                inner,
                limits,
                pid1=True,
                pass_fds=(theirs.fileno(),),
                cpu_seconds=24 * 3600,  # the server's own; each run sets its notebook's
                stdin=subprocess.DEVNULL,
                stdout=log_write,
                stderr=log_write,
            )
        finally:
            theirs.close()
            os.close(log_write)
        self.log = _Tail(log_read)
        self.control = ours
        self.oom_kills = 0
        try:
            answer = self._answer(STARTUP_SECONDS)
        except SandboxStartError:
            self.stop()
            raise
        if answer.get("warm") != "":
            self.stop()
            raise SandboxStartError(f"the warm sandbox cannot fork safely: {answer.get('warm')}")

    def _answer(self, seconds: float) -> dict[str, Any]:
        self.control.settimeout(seconds)
        try:
            data = self.control.recv(65536)
        except (TimeoutError, OSError) as error:
            raise SandboxStartError(f"the warm sandbox did not answer ({error})") from None
        if not data:
            raise SandboxStartError(f"the warm sandbox ended:\n{self.log.text(wait=1.0)[-3000:]}")
        return json.loads(data)

    def alive(self) -> bool:
        return self.launched.process.poll() is None

    def fork(self) -> Run:
        """A new run, forked from the server (which wipes the sandbox first)."""
        orders_read, orders_write = os.pipe()
        reports_read, reports_write = os.pipe()
        log_read, log_write = os.pipe()
        order = {
            "run": {
                "cpu_seconds": self.limits.cpu_seconds,
                "processes": self.limits.processes if self.launched.sandbox_uid else 0,
            }
        }
        try:
            if self.launched.cgroup is not None:
                self.oom_kills = self.launched.cgroup.oom_kills()
            fds = [orders_read, reports_write, log_write]
            socket.send_fds(self.control, [json.dumps(order).encode()], fds)
        finally:
            for fd in (orders_read, reports_write, log_write):
                os.close(fd)
        try:
            answer = self._answer(ANSWER_SECONDS)
        except SandboxStartError:
            for fd in (orders_write, reports_read, log_read):
                os.close(fd)
            raise
        if "started" not in answer:
            for fd in (orders_write, reports_read, log_read):
                os.close(fd)
            raise SandboxStartError(f"the warm sandbox refused to start a run: {answer}")
        return _WarmRun(self, orders_write, reports_read, _Tail(log_read))

    def clean(self) -> bool:
        """Wipe the sandbox after a run; False when it could not be (then stop it)."""
        try:
            self.control.sendall(json.dumps({"clean": True}).encode())
            return self._answer(ANSWER_SECONDS).get("clean") is True
        except (OSError, SandboxStartError):
            return False

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.launched.process.pid, signal.SIGKILL)
        self.launched.process.wait()
        self.control.close()
        self.launched.release()


class _WarmRun(Run):
    def __init__(self, warm: WarmSandbox, to_run: int, from_run: int, log: _Tail) -> None:
        super().__init__(to_run, from_run, log, warm.limits)
        self.warm = warm

    def _kill(self) -> None:
        # The run's processes are in the warm sandbox's pid namespace: end it all.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.warm.launched.process.pid, signal.SIGKILL)

    def out_of_memory(self) -> bool:
        cgroup = self.warm.launched.cgroup
        return cgroup is not None and cgroup.oom_kills() > self.warm.oom_kills

    def finish(self) -> None:
        super().finish()
        if self.killed or not self.warm.clean():
            _drop_warm(self.warm)


_WARM: dict[tuple[Bubblewrap, Limits], WarmSandbox] = {}
_WARM_LOCK = threading.Lock()


def _drop_warm(warm: WarmSandbox) -> None:
    with _WARM_LOCK:
        for key, value in list(_WARM.items()):
            if value is warm:
                del _WARM[key]
    warm.stop()


def warm_sandbox(sandbox: Bubblewrap, limits: Limits) -> WarmSandbox:
    """This process's warm sandbox for ``limits``, started on first use."""
    key = (sandbox, limits)
    with _WARM_LOCK:
        warm = _WARM.get(key)
        if warm is not None and not warm.alive():
            del _WARM[key]
            warm.stop()
            warm = None
        if warm is None:
            warm = _WARM[key] = WarmSandbox(sandbox, limits)
        return warm


def stop_warm_sandboxes() -> None:
    with _WARM_LOCK:
        warms = list(_WARM.values())
        _WARM.clear()
    for warm in warms:
        warm.stop()


# -- runs of their own (a container, or no wall) -----------------------------------------------


class _OwnRun(Run):
    """A process of its own: a container talking over its standard input and output, or a
    process with the two pipes as its fds 3 and 4."""

    def __init__(
        self, sandbox: Docker | NoSandbox, limits: Limits, scratch: Path, cleanup: Any
    ) -> None:
        orders_read, orders_write = os.pipe()
        reports_read, reports_write = os.pipe()
        log_read, log_write = os.pipe()
        fds = ("0", "1") if sandbox.over_stdio else ("3", "4")
        inner = [sandbox.python, "-m", "attnlib.grading.sandbox.notebook", *fds]
        self.command = sandbox.command(scratch, inner, limits)
        self.sandbox = sandbox
        self._cleanup = cleanup
        try:
            if sandbox.over_stdio:
                self.process = subprocess.Popen(
                    self.command,
                    stdin=orders_read,
                    stdout=reports_write,
                    stderr=log_write,
                    start_new_session=True,  # its own process group, killed as one
                )
            else:
                self.process = _popen_with_fds(self.command, orders_read, reports_write, log_write)
        finally:
            for fd in (orders_read, reports_write, log_write):
                os.close(fd)
        super().__init__(orders_write, reports_read, _Tail(log_read), limits)

    def _kill(self) -> None:
        if self.process.poll() is None:
            self.sandbox.stop(self.command)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)

    def finish(self) -> None:
        self._kill()
        self.process.wait()
        super().finish()
        self._cleanup()


def _popen_with_fds(
    command: list[str], orders: int, reports: int, log: int
) -> subprocess.Popen[bytes]:
    """``command`` with ``orders`` as its fd 3 and ``reports`` as its fd 4, in a process group
    of its own."""
    shell = 'exec 3<&"$1" 4>&"$2"; shift 2; exec "$@"'
    return subprocess.Popen(
        ["sh", "-c", shell, "sh", str(orders), str(reports), *command],
        pass_fds=(orders, reports),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )


def start(sandbox: Sandbox, limits: Limits) -> Run:
    """A new run of one notebook, in ``sandbox``."""
    if isinstance(sandbox, Bubblewrap):
        warm = warm_sandbox(sandbox, limits)
        try:
            return warm.fork()
        except SandboxStartError:
            _drop_warm(warm)  # one more try, in a new sandbox
            return warm_sandbox(sandbox, limits).fork()
    scratch_dir = tempfile.TemporaryDirectory(prefix="attnlib-grading-")
    return _OwnRun(sandbox, limits, Path(scratch_dir.name), scratch_dir.cleanup)


_PRIVILEGES = (
    "import json; from attnlib.grading.sandbox.notebook import privileges; "
    "print(json.dumps(privileges()))"
)


def preflight(sandbox: Sandbox, limits: Limits) -> str:
    """Why no submission may be graded in ``sandbox`` on this machine (it could not start, or
    would run with privileges), or ''."""
    inner = [sandbox.python, "-c", _PRIVILEGES]
    try:
        if isinstance(sandbox, Bubblewrap):
            launched = sandbox.launch(inner, limits, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                out, err = launched.process.communicate(timeout=STARTUP_SECONDS)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(launched.process.pid, signal.SIGKILL)
                launched.process.wait()
                launched.release()
        else:
            with tempfile.TemporaryDirectory(prefix="attnlib-grading-") as scratch:
                command = sandbox.command(Path(scratch), inner, limits)
                done = subprocess.run(
                    command, capture_output=True, timeout=STARTUP_SECONDS, check=False
                )
                out, err = done.stdout, done.stderr
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        return f"the sandbox could not start ({error})"
    try:
        hello = json.loads(out.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        shown = err.decode("utf-8", "replace")[-2000:]
        return f"the sandbox could not start:\n{shown}"
    return refusal(hello)
