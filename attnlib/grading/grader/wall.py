"""The wall around a submission: bubblewrap on Linux, a container elsewhere, with limits on
time, memory, processes, CPU and disk.

:class:`Bubblewrap` starts a command (the warm sandbox's server,
:mod:`attnlib.grading.sandbox.fork_server`) with:

- no network (every namespace its own: user, pid, network, IPC, UTS, cgroup), and no way to
  make another user namespace inside;
- no capability and no way to gain one, as an unprivileged id: as the grader's own id, or, when
  the grader runs as root, as an id of its own (:mod:`attnlib.grading.grader.unprivileged`);
- nothing of the grader's environment: bubblewrap itself starts with an empty one, so that not
  even its process 1 holds the grader's variables, and the sandbox gets a fixed few;
- the system and the course's software (Python, the virtual environment, attnlib) read-only,
  and nothing else of the machine: not the course directory with its answer key, gradebook,
  configuration and other students' submissions, not the git checkout, not the home directory;
- attnlib's stored solutions (``attnlib/data/solutions.json``) hidden behind a file that says
  they are withheld (``checks.solution`` says so in the feedback);
- its writable places in RAM, each with a size: the scratch directory ``/grading``, ``/tmp``
  and ``/dev/shm`` (``/dev`` itself read-only), so that nothing it writes reaches the host's
  disk;
- a cgroup of its own (:mod:`attnlib.grading.grader.cgroups`) for its memory as a whole, its
  processes and its CPU, where one can be made; and per-process limits (address space, CPU
  time, file size) in every case.

:class:`Docker` is the same wall for macOS and Windows hosts (and Linux without bubblewrap):
one container per notebook, from the grading image (``instructors/grading/Dockerfile``), with
no network, a read-only file system but for the scratch directory and a private ``/tmp``,
no capabilities, an unprivileged user, and limits on memory, processes, CPUs and file size.
The grader talks to it over the container's standard input and output, and kills the container
at the time limit.

:class:`NoSandbox` runs the same command with the limits but without the wall: for a machine
where the wall is already something else (a throwaway VM), never for submissions on a shared
machine.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import attnlib
from attnlib.grading.grader import cgroups, unprivileged

INSIDE = "/grading"  # the scratch directory, inside the sandbox


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 900.0  # one notebook, all its cells and checks
    call_seconds: float = 120.0  # one call of the learner's code by a checker
    memory_bytes: int = 8 * 2**30  # one process's address space: torch reserves much
    file_bytes: int = 512 * 2**20  # any file it writes
    sandbox_memory_bytes: int = 6 * 2**30  # the whole sandbox, RAM-backed files included
    processes: int = 256  # processes and threads of the whole sandbox
    cpus: float = 1.0  # cores' worth of CPU time for the whole sandbox
    scratch_bytes: int = 512 * 2**20  # /grading
    tmp_bytes: int = 512 * 2**20  # /tmp
    shm_bytes: int = 64 * 2**20  # /dev/shm

    @property
    def cpu_seconds(self) -> int:
        """One notebook's CPU time (a process's, as the kernel counts it)."""
        return int(self.wall_seconds) + 60

    def per_process(self, inner: list[str], cpu_seconds: int | None = None) -> list[str]:
        """``inner`` under the per-process limits, set by util-linux's prlimit before it
        starts (soft and hard alike: the sandboxed run cannot raise them again)."""
        cpu = cpu_seconds or self.cpu_seconds
        return [
            "prlimit",
            f"--as={self.memory_bytes}",
            f"--cpu={cpu}",
            f"--fsize={self.file_bytes}",
            "--",
            *inner,
        ]

    def cgroup(self) -> cgroups.CgroupLimits:
        return cgroups.CgroupLimits(self.sandbox_memory_bytes, self.processes, self.cpus)


def _software() -> list[Path]:
    """The directories the sandbox needs to read: Python, the venv and attnlib's source."""
    found = {Path(sys.base_prefix), Path(sys.prefix), Path(attnlib.__file__).parent}
    return sorted(p.resolve() for p in found)


def _solutions() -> Path:
    return (Path(attnlib.__file__).parent / "data" / "solutions.json").resolve()


SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc")
# What the sandbox reads in place of the solutions: the note of a graded term's release.
WITHHELD_SOLUTIONS = b'{"withheld": "The worked solutions are withheld while grading."}\n'

# What bubblewrap itself is started with: nothing of the grader's environment.
LAUNCH_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def environment(home: str) -> list[tuple[str, str]]:
    """The sandbox's whole environment."""
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    return [
        ("PATH", path),
        ("HOME", home),
        ("TMPDIR", "/tmp"),
        ("MPLCONFIGDIR", f"{home}/.matplotlib"),
        ("MPLBACKEND", "Agg"),
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("PYTHONHASHSEED", "0"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("OMP_NUM_THREADS", "1"),
        ("MKL_NUM_THREADS", "1"),
        ("OPENBLAS_NUM_THREADS", "1"),
        ("LANG", "C.UTF-8"),
    ]


@functools.cache
def _bwrap_supports(option: str, executable: str) -> bool:
    shown = subprocess.run([executable, "--help"], capture_output=True, text=True, check=False)
    return option in shown.stdout + shown.stderr


def _ancestors(paths: list[Path]) -> list[str]:
    """Every folder above ``paths``, outermost first, without the root."""
    found: set[Path] = set()
    for path in paths:
        found.update(p for p in path.parents if p != Path("/"))
    return [str(p) for p in sorted(found, key=lambda p: len(p.parts))]


@dataclass
class Launched:
    """A walled process, and its cgroup, which goes at its end."""

    process: subprocess.Popen[bytes]
    cgroup: cgroups.Cgroup | None = None
    sandbox_uid: int | None = None  # the id it runs as, when the grader chose one (as root)

    def release(self) -> None:
        """After the process has been killed and waited for."""
        if self.cgroup is not None:
            self.cgroup.remove()


@dataclass(frozen=True)
class Bubblewrap:
    """Debian's bubblewrap, ``bwrap``."""

    executable: str = "bwrap"
    python = sys.executable
    warm = True  # notebooks run as children of a warm sandbox (attnlib.grading.sandbox.fork_server)

    def available(self) -> bool:
        return shutil.which(self.executable) is not None

    def arguments(
        self, limits: Limits, *, as_root: bool, pid1: bool, withheld: int | None = None
    ) -> list[str]:
        """bubblewrap's options (without the user namespace's, which :meth:`launch` adds);
        ``withheld``: a descriptor of what the sandbox sees in place of the solutions."""
        args = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        args += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
        args += ["--as-pid-1"] if pid1 else []
        # /tmp first: the course's software may itself lie under /tmp (a CI clone), and a
        # tmpfs mounted after its binds would hide them.
        args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm"]
        args += ["--remount-ro", "/dev"]
        for path in SYSTEM:
            if Path(path).exists():
                args += ["--ro-bind", path, path]
        software = _software()
        for folder in _ancestors(software):  # bubblewrap would make them closed to others
            if folder not in SYSTEM and folder != "/tmp":
                args += ["--perms", "0755", "--dir", folder]
        for path in software:
            args += ["--ro-bind", str(path), str(path)]
        if withheld is not None and _solutions().exists():
            args += ["--perms", "0444", "--ro-bind-data", str(withheld), str(_solutions())]
        scratch = ["--size", str(limits.scratch_bytes), "--tmpfs", INSIDE]
        args += ["--perms", "0777" if as_root else "0700", *scratch, "--chdir", INSIDE]
        args += ["--clearenv"]
        for key, value in environment(INSIDE):
            args += ["--setenv", key, value]
        return args

    def launch(
        self,
        inner: list[str],
        limits: Limits,
        *,
        pid1: bool = False,
        pass_fds: tuple[int, ...] = (),
        cpu_seconds: int | None = None,
        **streams: Any,
    ) -> Launched:
        """Start ``inner`` inside the wall; the caller kills its process group at the end and
        then calls :meth:`Launched.release`."""
        as_root = unprivileged.is_root()
        cgroup = cgroups.create(limits.cgroup())
        namespace, uid = None, None
        withheld = os.memfd_create("attnlib-solutions-withheld")
        os.write(withheld, WITHHELD_SOLUTIONS)
        os.lseek(withheld, 0, os.SEEK_SET)
        try:
            if as_root:
                uid = unprivileged.pick_id()
                namespace = unprivileged.UserNamespace.make(uid)
                users = ["--userns", str(namespace.fd), "--uid", "0", "--gid", "0"]
                users += ["--cap-drop", "ALL"]
                for capability in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"):
                    users += ["--cap-add", capability]
                inner = [*unprivileged.becoming(uid), *inner]
            else:
                users = ["--unshare-user", "--cap-drop", "ALL"]
                if _bwrap_supports("--disable-userns", self.executable):
                    users += ["--disable-userns"]
            options = self.arguments(limits, as_root=as_root, pid1=pid1, withheld=withheld)
            args = [self.executable, *users, *options]
            walled = limits.per_process([*args, "--", *inner], cpu_seconds)
            command = cgroups.joining(cgroup, walled)
            fds = (*pass_fds, withheld, *([namespace.fd] if namespace is not None else []))
            process = subprocess.Popen(
                command,
                pass_fds=fds,
                start_new_session=True,  # its own process group, which the caller kills as one
                env=LAUNCH_ENVIRONMENT,
                **streams,
            )
        except BaseException:
            if namespace is not None:
                namespace.close()
            if cgroup is not None:
                cgroup.remove()
            raise
        finally:
            os.close(withheld)  # bubblewrap has read it
        if namespace is not None:  # bubblewrap holds it now
            namespace.close()
        return Launched(process, cgroup, uid)


@dataclass(frozen=True)
class NoSandbox:
    """The same run without the wall (inside a container that is the wall)."""

    python = sys.executable
    over_stdio = False
    warm = False

    def available(self) -> bool:
        return True

    def command(self, scratch: Path, inner: list[str], limits: Limits) -> list[str]:
        env = ["env", "-i", *(f"{key}={value}" for key, value in environment(str(scratch)))]
        return limits.per_process(["setpriv", "--no-new-privs", "--", *env, *inner])

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
    warm = False

    def available(self) -> bool:
        if shutil.which(self.executable) is None:
            return False
        found = subprocess.run(
            [self.executable, "image", "inspect", self.image], capture_output=True, check=False
        )
        return found.returncode == 0

    def command(self, scratch: Path, inner: list[str], limits: Limits) -> list[str]:
        scratch.chmod(0o777)  # the image's unprivileged user writes there
        memory = f"{limits.sandbox_memory_bytes // 2**20}m"
        args = [self.executable, "run", "--rm", "--interactive", "--init"]
        args += ["--name", f"attnlib-grading-{uuid.uuid4().hex[:12]}"]
        args += ["--network", "none", "--read-only"]
        args += ["--tmpfs", f"/tmp:rw,size={limits.tmp_bytes // 2**20}m"]
        args += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
        args += ["--pids-limit", str(limits.processes), "--cpus", f"{limits.cpus:g}"]
        args += ["--memory", memory, "--memory-swap", memory]
        args += ["--ulimit", f"fsize={limits.file_bytes}"]
        args += ["--volume", f"{scratch}:{INSIDE}:rw", "--workdir", INSIDE]
        for key, value in environment(INSIDE):
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


Sandbox = Bubblewrap | Docker | NoSandbox


def named_sandbox(name: str) -> Sandbox:
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
