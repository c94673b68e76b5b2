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

:class:`Docker` is the same wall for macOS and Windows hosts (and Linux without bubblewrap):
one container per notebook, from the grading image (``instructors/grading/Dockerfile``), with
no network, a read-only file system but for the scratch directory and a private ``/tmp``,
no capabilities, and limits on memory, processes, CPUs and file size. The grader talks to it
over the container's standard input and output, and kills the container at the time limit.

:class:`NoSandbox` runs the same command with the limits but without the wall: for a machine
where the wall is already something else (a throwaway VM), never for submissions on a shared
machine.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import attnlib

INSIDE = "/grading"  # where the scratch directory appears inside the sandbox


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 900.0  # one notebook, all its cells and checks
    call_seconds: float = 120.0  # one call of the learner's code by a checker
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

    python = sys.executable
    over_stdio = False  # the run's frames go over two pipes it inherits

    def command(self, scratch: Path, inner: list[str], limits: Limits) -> list[str]:
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
        return limits.command([*args, "--", *inner])

    def where(self, scratch: Path) -> str:
        return INSIDE

    def stop(self, command: list[str]) -> None:
        """Nothing outlives the process group the grader kills."""


@dataclass(frozen=True)
class NoSandbox:
    """The same run without the wall (inside a container that is the wall)."""

    def available(self) -> bool:
        return True

    python = sys.executable
    over_stdio = False

    def command(self, scratch: Path, inner: list[str], limits: Limits) -> list[str]:
        env = ["env", "-i", *(a for pair in _pairs(str(scratch)) for a in [f"{pair[0]}={pair[1]}"])]
        return limits.command([*env, *inner])

    def where(self, scratch: Path) -> str:
        return str(scratch)

    def stop(self, command: list[str]) -> None:
        """Nothing outlives the process group the grader kills."""


@dataclass(frozen=True)
class Docker:
    """A container per notebook, from the grading image (``instructors/grading/Dockerfile``):
    the wall on macOS and Windows, where bubblewrap does not run. The image holds the course's
    software and not its solutions; it must be built from the same checkout as the grader's."""

    image: str = "attnlib-grader"
    executable: str = "docker"
    python = "python"  # the image's
    over_stdio = True  # frames over the container's standard input and output

    def available(self) -> bool:
        if shutil.which(self.executable) is None:
            return False
        found = subprocess.run(
            [self.executable, "image", "inspect", self.image], capture_output=True, check=False
        )
        return found.returncode == 0

    def command(self, scratch: Path, inner: list[str], limits: Limits) -> list[str]:
        scratch.chmod(0o777)  # the image's unprivileged user writes there
        memory = f"{limits.memory_bytes // 2**20}m"
        args = [self.executable, "run", "--rm", "--interactive", "--init"]
        args += ["--name", f"attnlib-grading-{uuid.uuid4().hex[:12]}"]
        args += ["--network", "none", "--read-only", "--tmpfs", "/tmp:rw,size=1g"]
        args += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
        args += ["--pids-limit", "256", "--cpus", "1", "--memory", memory]
        args += ["--memory-swap", memory, "--ulimit", f"fsize={limits.file_bytes}"]
        args += ["--volume", f"{scratch}:{INSIDE}:rw", "--workdir", INSIDE]
        for key, value in _pairs(INSIDE):
            if key != "PATH":  # the image's own
                args += ["--env", f"{key}={value}"]
        return [*args, self.image, *inner]

    def where(self, scratch: Path) -> str:
        return INSIDE

    def stop(self, command: list[str]) -> None:
        """Kill the container: stopping the ``docker run`` client leaves it running."""
        name = command[command.index("--name") + 1]
        subprocess.run(
            [self.executable, "kill", name], capture_output=True, check=False, timeout=60
        )


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


def named_sandbox(name: str) -> Bubblewrap | Docker | NoSandbox:
    """The sandbox ``--sandbox`` names: ``bubblewrap``, ``docker`` or ``docker:IMAGE``, or
    ``none``."""
    kind, _, image = name.partition(":")
    if kind == "bubblewrap":
        return Bubblewrap()
    if kind == "docker":
        return Docker(image) if image else Docker()
    if kind == "none":
        return NoSandbox()
    raise ValueError(f"no sandbox {name!r}: bubblewrap, docker[:IMAGE] or none")
