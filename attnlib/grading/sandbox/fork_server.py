"""A warm sandbox: the first process of a bubblewrap sandbox imports what the course needs
once, then forks one child per notebook, and wipes the sandbox between two notebooks.

Starting Python and importing torch, IPython, matplotlib and attnlib takes seconds of CPU; a
fork of a process that has done it takes milliseconds. The server runs as process 1 of the
sandbox's own pid namespace, which makes it the one process there that nothing in the sandbox
can kill (the kernel ignores a signal to a namespace's init unless it handles it, and this one
handles none), and lets it kill everything else there (``kill(-1, SIGKILL)``). It is not
dumpable, so no process of the same id can trace it or read its memory; it forks only while it
has one thread and no shared writable memory, so no child can reach back into it.

Between two notebooks it makes the sandbox as it was: every other process killed and reaped,
the scratch directory, ``/tmp`` and ``/dev/shm`` emptied, the System V IPC objects removed.
Emptied around the sandbox's own mounts: the course's software is bound in where it lies, and
in a CI clone that is under ``/tmp``, so the folders that lead to it stay. A
child gets the three descriptors the grader sent with its order
(:mod:`attnlib.grading.grader.runs`): orders in, reports out, and its log (fds 1 and 2), and
nothing else of the server's.

The grader talks to the server over a Unix socket (messages of JSON, descriptors alongside):
``{"run": {...limits}}`` with three descriptors forks a child and answers ``{"started": pid}``;
``{"clean": true}`` wipes and answers ``{"clean": true}``; the end of the socket ends the
server. It first answers ``{"warm": ""}`` when it is ready (or the reason it cannot fork
safely). A notebook's own run is :func:`attnlib.grading.sandbox.notebook.run_notebook`.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import re
import resource
import signal
import socket
import stat
import sys
import traceback
from typing import Any

# What the server wipes between notebooks: every place in the sandbox a notebook can write.
WRITABLE = ("/grading", "/tmp", "/dev/shm")
# What the course's notebooks import besides attnlib (every notebook runs `from attnlib import
# checks`), loaded by name before the first fork so that each run starts with it: the
# notebooks' imports, not this side's (no code of the sandbox's side uses a checker).
NOTEBOOK_PACKAGES = ("attnlib.checks", "attnlib.course", "attnlib.formats")
WALKED = ("attnlib.course", "attnlib.formats")  # with every module under them
_PR_SET_DUMPABLE = 4
_IPC_RMID = 0


def _warm() -> None:
    """Import what the course's notebooks and the grading run use, and run what does its own
    set-up on first use (torch's comparisons, tensor printing, a figure), once."""
    os.environ["MPLBACKEND"] = "Agg"
    import importlib
    import pkgutil

    import torch

    torch.set_num_threads(1)
    import IPython.core.interactiveshell  # noqa: F401
    import IPython.utils.capture  # noqa: F401
    import ipywidgets  # noqa: F401
    import matplotlib.pyplot as plt
    import numpy  # noqa: F401
    import torch.testing
    import torch.utils.flop_counter

    import attnlib
    import attnlib.grading.sandbox.answering  # noqa: F401
    import attnlib.grading.sandbox.notebook  # noqa: F401

    for name in NOTEBOOK_PACKAGES:
        package = importlib.import_module(name)
        if name in WALKED:
            for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                importlib.import_module(module.name)
    x = torch.linspace(-1.0, 1.0, 12, requires_grad=True).reshape(3, 4)
    torch.testing.assert_close(attnlib.softmax(x @ x.T).sum(-1), torch.ones(3))
    (torch.nn.functional.layer_norm(x, (4,)).sum()).backward()
    repr(x)
    figure = plt.figure()
    plt.plot([0, 1], [1, 0])
    figure.canvas.draw()
    plt.close(figure)


def _fork_problem() -> str:
    """Why forking now could let a child reach back into the server, or ''."""
    threads = os.listdir("/proc/self/task")
    if len(threads) != 1:
        return f"the server has {len(threads)} threads, not 1"
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) > 1 and fields[1].startswith("rw") and fields[1].endswith("s"):
                return f"the server has shared writable memory: {line.strip()}"
    return ""


def _send(control: socket.socket, message: dict[str, Any]) -> None:
    control.sendall(json.dumps(message).encode("utf-8"))


def _remove(path: str) -> None:
    """Remove ``path`` and what is under it, making each folder enterable first (a notebook
    may have taken its own permissions away)."""
    info = os.lstat(path)
    if stat.S_ISDIR(info.st_mode):
        os.chmod(path, 0o700)
        for entry in os.scandir(path):
            _remove(entry.path)
        os.rmdir(path)
    else:
        os.unlink(path)


def _remove_ipc_objects() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for kind, remove in (
        ("shm", lambda i: libc.shmctl(i, _IPC_RMID, None)),
        ("sem", lambda i: libc.semctl(i, 0, _IPC_RMID)),
        ("msg", lambda i: libc.msgctl(i, _IPC_RMID, None)),
    ):
        path = f"/proc/sysvipc/{kind}"
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as table:
            for line in list(table)[1:]:
                fields = line.split()
                if len(fields) > 1:
                    remove(int(fields[1]))


def mounts_under(mountinfo: str, folders: tuple[str, ...]) -> frozenset[str]:
    """The mount points, from a ``/proc/PID/mountinfo`` text, that lie below ``folders``.

    Its fifth field is the mount point, with space, tab, newline and backslash written as
    octal escapes (``\\040``).
    """
    points = set()
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if any(point.startswith(folder.rstrip("/") + "/") for folder in folders):
            points.add(point)
    return frozenset(points)


def empty(folder: str, kept: frozenset[str]) -> None:
    """Remove everything in ``folder`` but the mount points in ``kept`` and the folders that
    lead to them (which are emptied around them in turn)."""
    for entry in os.scandir(folder):
        if entry.path in kept:
            continue
        if entry.is_dir(follow_symlinks=False) and any(
            point.startswith(entry.path + "/") for point in kept
        ):
            # A notebook that owns it (a grader not run as root) may have locked it.
            with contextlib.suppress(PermissionError):
                os.chmod(entry.path, 0o755)
            empty(entry.path, kept)
        else:
            _remove(entry.path)


def _wipe(kept: frozenset[str]) -> None:
    """Kill and reap every other process of the sandbox, then empty every writable place
    but the sandbox's own mounts in it (``kept``, read before any notebook ran)."""
    for _ in range(20):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)  # all but process 1: this one
        while True:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
        if [p for p in os.listdir("/proc") if p.isdigit()] == ["1"]:
            break
    else:
        raise RuntimeError("processes of the last notebook outlived SIGKILL")
    for folder in WRITABLE:
        if os.path.isdir(folder):
            with contextlib.suppress(PermissionError):
                os.chmod(folder, 0o777 if folder == "/grading" else 0o1777)
            empty(folder, kept)
    _remove_ipc_objects()


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _child(fds: list[int], limits: dict[str, Any]) -> None:
    """In the forked child: keep only the three descriptors, set the notebook's limits, run
    it, and never return into the server's loop."""
    try:
        # Above every number they go to first, so that no move overwrites another.
        orders, reports, log = (fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(orders, 3)
        os.dup2(reports, 4)
        os.closerange(5, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace")
        sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace")
        signal.signal(signal.SIGINT, signal.default_int_handler)
        seconds = int(limits["cpu_seconds"])
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
        if limits.get("processes"):
            count = int(limits["processes"])
            resource.setrlimit(resource.RLIMIT_NPROC, (count, count))
        # The server is not dumpable; the notebook's own process may be (it holds nothing of
        # anyone else's), which also lets it set its own score for the out-of-memory killer.
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        with open("/proc/self/oom_score_adj", "w", encoding="utf-8") as adjust:
            adjust.write("1000")  # the kernel's first choice, never the server
        os.chdir("/grading")
        from attnlib.grading.sandbox.notebook import run_notebook

        run_notebook(3, 4)
        code = 0
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
    os._exit(code)


def serve(control_fd: int) -> None:
    # Process 1 of its namespace gets only the signals it handles: handle none.
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    control = socket.socket(fileno=control_fd)
    # Read before any notebook runs (none could add a mount: it has no capability).
    with open("/proc/self/mountinfo", encoding="utf-8") as table:
        kept = mounts_under(table.read(), WRITABLE)
    _warm()
    _send(control, {"warm": _fork_problem()})
    control.settimeout(1.0)
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 65536, 3)
        except TimeoutError:
            _reap()
            continue
        if not data:
            return
        order = json.loads(data)
        if "run" in order:
            problem = ""
            try:
                _wipe(kept)
                problem = _fork_problem()
            except Exception as error:
                problem = f"the sandbox could not be wiped: {error}"
            if problem or len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                _send(control, {"refused": problem or "three descriptors were expected"})
                continue
            pid = os.fork()
            if pid == 0:
                control.close()
                _child(fds, order["run"])
            for fd in fds:
                os.close(fd)
            _send(control, {"started": pid})
        elif "clean" in order:
            try:
                _wipe(kept)
                _send(control, {"clean": True})
            except Exception as error:
                _send(control, {"clean": False, "why": str(error)})


if __name__ == "__main__":
    serve(int(sys.argv[1]))
