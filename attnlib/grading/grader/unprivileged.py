"""How a grader that runs as root starts a sandbox that has no privilege at all.

bubblewrap started by root keeps root's capabilities inside the sandbox: the sandbox could
unmount what hides the solutions, remount the virtual environment writable and change the
grader's own code. So as root the grader makes the sandbox's user namespace itself, with two ids
in it: root, mapped to root, only so that bubblewrap can set up the mounts (the course's
software may lie under a directory only root may enter, such as ``/root``); and one
unprivileged id, chosen at random for the sandbox, which maps to the same unprivileged id
outside. In that namespace no process may make another user namespace. bubblewrap then keeps
only the capabilities to change ids, and the sandbox's first command, ``setpriv``, becomes the
unprivileged id with no capabilities, an empty bounding set and ``no_new_privs`` before
anything of the course runs. The run checks and reports what it ended up with (its first
frame, :func:`attnlib.grading.sandbox.notebook.privileges`), and the grader refuses a sandbox with
any capability (:func:`attnlib.grading.grader.runs.refusal`).

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import dataclass

# Far above the ids of people and system accounts: no file outside the sandbox belongs to it.
FIRST_ID, LAST_ID = 1_500_000_000, 1_900_000_000

# Run by the grader's Python as root: a new user namespace, which waits for its id maps, then
# sets that no user namespace can be made inside it, and waits to be killed.
_KEEPER = """
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:
    sys.exit("unshare(CLONE_NEWUSER): " + os.strerror(ctypes.get_errno()))
print("made", flush=True)
sys.stdin.readline()
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
with open("/proc/sys/user/max_user_namespaces", "w") as limit:
    limit.write("0")
print("ready", flush=True)
sys.stdin.read()
"""


def is_root() -> bool:
    return os.geteuid() == 0


def pick_id() -> int:
    return random.SystemRandom().randrange(FIRST_ID, LAST_ID)


def becoming(uid: int) -> list[str]:
    """The prefix that makes the sandbox's command run as ``uid`` with no way back."""
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


@dataclass
class UserNamespace:
    """A user namespace for one sandbox (root maps to root, ``uid`` to itself), held open by
    ``fd`` until :meth:`close`: pass the descriptor to bubblewrap's ``--userns``."""

    fd: int
    uid: int

    @classmethod
    def make(cls, uid: int) -> UserNamespace:
        keeper = subprocess.Popen(
            [sys.executable, "-c", _KEEPER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
        )
        try:
            if keeper.stdout is None or keeper.stdin is None:
                raise RuntimeError("no pipe to the user namespace's keeper")
            if keeper.stdout.readline().strip() != "made":
                raise RuntimeError("could not make a user namespace for the sandbox")
            mapping = f"0 0 1\n{uid} {uid} 1\n".encode()
            for name in ("uid_map", "gid_map"):
                fd = os.open(f"/proc/{keeper.pid}/{name}", os.O_WRONLY)
                try:
                    os.write(fd, mapping)  # one write: the kernel takes a map whole
                finally:
                    os.close(fd)
            keeper.stdin.write("mapped\n")
            keeper.stdin.flush()
            if keeper.stdout.readline().strip() != "ready":
                raise RuntimeError("could not close the sandbox's user namespace to new ones")
            return cls(os.open(f"/proc/{keeper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC), uid)
        finally:
            keeper.kill()  # the namespace lives on while its descriptor is open
            keeper.wait()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
