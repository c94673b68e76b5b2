"""The wall around a submission: bubblewrap on Linux, with limits on time, memory and files.

:class:`Bubblewrap` runs the sandboxed side of grading (:mod:`attnlib.grading.in_sandbox`) with:

- no network (every namespace unshared, the network's included);
- the system and the course's software (Python, the virtual environment, attnlib) read-only,
  and nothing else of the machine: not the course directory with its answer key, gradebook,
  configuration and other students' submissions, not the git checkout, not the home directory;
- attnlib's stored solutions (``attnlib/data/solutions.json``) hidden behind an empty file;
- one writable directory, the submission's scratch copy, and a private ``/tmp``;
- a memory limit (the address space), a CPU-time limit and a limit on the size of any file it
  writes; the grader adds a wall-clock limit and kills the whole process group at it.

:class:`NoSandbox` runs the same command with the limits but without the wall: for a machine
where the wall is already the container (the Dockerfile of the instructors' guide), never for
submissions on a shared machine.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import attnlib

INSIDE = "/grading"  # where the scratch directory appears inside the sandbox


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 900.0  # one notebook, all its cells and checks
    memory_bytes: int = 8 * 2**30  # address space: torch reserves much it never touches
    file_bytes: int = 512 * 2**20

    def command(self, inner: list[str]) -> list[str]:
        """``inner`` under these limits, set by util-linux's prlimit before it starts (soft and
        hard alike: the sandboxed run cannot raise them again)."""
        cpu = int(self.wall_seconds) + 60
        return [
            "prlimit",
            f"--as={self.memory_bytes}",
            f"--cpu={cpu}",
            f"--fsize={self.file_bytes}",
            "--",
            *inner,
        ]


def _software() -> list[Path]:
    """The directories the sandbox needs to read: Python, the venv and attnlib's source."""
    found = {Path(sys.base_prefix), Path(sys.prefix), Path(attnlib.__file__).parent}
    return sorted(p.resolve() for p in found)


SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc")


@dataclass(frozen=True)
class Bubblewrap:
    """Debian's bubblewrap, ``bwrap``."""

    executable: str = "bwrap"

    def available(self) -> bool:
        return shutil.which(self.executable) is not None

    def command(self, scratch: Path, inner: list[str]) -> list[str]:
        args = [self.executable, "--unshare-all", "--die-with-parent", "--new-session"]
        # /tmp first: the course's software may itself lie under /tmp (a CI clone), and a
        # tmpfs mounted after its binds would hide them.
        args += ["--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
        for path in SYSTEM:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        for path in _software():
            args += ["--ro-bind", str(path), str(path)]
        solutions = Path(attnlib.__file__).parent / "data" / "solutions.json"
        if solutions.exists():
            args += ["--ro-bind", "/dev/null", str(solutions.resolve())]
        args += ["--bind", str(scratch), INSIDE, "--chdir", INSIDE]
        args += ["--clearenv", *_environment(INSIDE)]
        return [*args, "--", *inner]

    def where(self, scratch: Path) -> str:
        return INSIDE


@dataclass(frozen=True)
class NoSandbox:
    """The same run without the wall (inside a container that is the wall)."""

    def available(self) -> bool:
        return True

    def command(self, scratch: Path, inner: list[str]) -> list[str]:
        env = ["env", "-i", *(a for pair in _pairs(str(scratch)) for a in [f"{pair[0]}={pair[1]}"])]
        return [*env, *inner]

    def where(self, scratch: Path) -> str:
        return str(scratch)


def _pairs(home: str) -> list[tuple[str, str]]:
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return [
        ("PATH", path),
        ("HOME", home),
        ("TMPDIR", "/tmp"),
        ("MPLCONFIGDIR", f"{home}/.matplotlib"),
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("OMP_NUM_THREADS", "1"),
        ("MKL_NUM_THREADS", "1"),
        ("LANG", "C.UTF-8"),
    ]


def _environment(home: str) -> list[str]:
    args: list[str] = []
    for key, value in _pairs(home):
        args += ["--setenv", key, value]
    return args
