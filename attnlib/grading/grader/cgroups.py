"""A control group per sandbox: a ceiling on the whole sandbox's memory (its RAM-backed
``/tmp`` and scratch included), its number of processes and threads, and its share of the CPU,
so that one student's load cannot take another's memory or time.

A per-process limit (``prlimit``) does not hold a class together: three children of 8 GiB each
are 24 GiB, and 48 busy processes take 48 shares of the CPU from a classmate graded beside them.
A cgroup counts the sandbox as one: ``memory`` (with no swap) ends it when all of it together is
over its ceiling, ``pids`` stops its forks, and ``cpu`` holds it to one core however many
processes it starts.

Two kernels' interfaces are handled, each where the grader may write:

- cgroup v2 (one unified hierarchy): a delegated subtree, which a grader run as root has and an
  unprivileged one gets from ``systemd-run --user --scope -p Delegate=yes …`` (the guide). The
  processes of the grader's own cgroup move into a leaf, ``attnlib-grader``, so that the
  controllers can be handed down (cgroup v2 lets no cgroup with processes hand them down), and
  each sandbox is a sibling of that leaf.
- cgroup v1 (a hierarchy per controller, as on older hosts and this course's CI): a child of the
  grader's cgroup in each of ``memory``, ``pids`` and ``cpu``.

Where neither can be made, :func:`create` returns None, and the sandbox keeps only the
per-process limits and the sizes of its RAM-backed file systems (the guide, "Grading security",
says what that leaves open).

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu")
_PERIOD_MICROSECONDS = 100_000


@dataclass(frozen=True)
class CgroupLimits:
    memory_bytes: int  # the whole sandbox: its processes and its RAM-backed files
    processes: int  # processes and threads
    cpus: float  # cores' worth of CPU time


@dataclass(frozen=True)
class Cgroup:
    """The cgroup(s) of one sandbox: one directory under v2, one per controller under v1."""

    folders: tuple[Path, ...]
    version: int

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to, to join (every one of them, under v1)."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def oom_kills(self) -> int:
        """How many processes the kernel has killed here for want of memory."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for folder in self.folders:
            path = folder / name
            if path.exists():
                for line in path.read_text(encoding="utf-8").splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def remove(self) -> None:
        """Remove the (emptied) cgroup; the kernel may take a moment to let its last
        processes go."""
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _mounts(mountinfo: str) -> list[tuple[str, str, set[str]]]:
    """(mount point, file system type, super options) of each line of /proc/self/mountinfo."""
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        dash = fields.index("-")
        point, kind, options = fields[4], fields[dash + 1], fields[dash + 3]
        found.append((point.replace("\\040", " "), kind, set(options.split(","))))
    return found


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="utf-8")


def _v2(root: Path, own: str, limits: CgroupLimits, name: str) -> Cgroup | None:
    base = root / own.lstrip("/")
    # Already a leaf that this grader made: hand down from its parent.
    if base.name == "attnlib-grader":
        base = base.parent
    available = set((base / "cgroup.controllers").read_text(encoding="utf-8").split())
    if not set(CONTROLLERS) <= available:
        return None
    enabled = set((base / "cgroup.subtree_control").read_text(encoding="utf-8").split())
    if not set(CONTROLLERS) <= enabled:
        leaf = base / "attnlib-grader"
        leaf.mkdir(exist_ok=True)
        for pid in (base / "cgroup.procs").read_text(encoding="utf-8").split():
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                _write(leaf / "cgroup.procs", pid)
        _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))
    folder = base / name
    folder.mkdir()
    try:
        _write(folder / "memory.max", str(limits.memory_bytes))
        _write(folder / "memory.swap.max", "0")
        _write(folder / "pids.max", str(limits.processes))
        quota = int(limits.cpus * _PERIOD_MICROSECONDS)
        _write(folder / "cpu.max", f"{quota} {_PERIOD_MICROSECONDS}")
    except OSError:
        folder.rmdir()
        raise
    return Cgroup((folder,), 2)


def _v1(hierarchies: dict[str, Path], limits: CgroupLimits, name: str) -> Cgroup | None:
    made: list[Path] = []
    try:
        for controller in CONTROLLERS:
            folder = hierarchies[controller] / name
            folder.mkdir()
            made.append(folder)
        memory, pids, cpu = made
        _write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():  # no swap either
            _write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        _write(pids / "pids.max", str(limits.processes))
        _write(cpu / "cpu.cfs_period_us", str(_PERIOD_MICROSECONDS))
        _write(cpu / "cpu.cfs_quota_us", str(int(limits.cpus * _PERIOD_MICROSECONDS)))
    except OSError:
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return Cgroup(tuple(made), 1)


def create(
    limits: CgroupLimits, *, proc: Path = Path("/proc/self"), prefix: Path = Path("/")
) -> Cgroup | None:
    """A new cgroup with ``limits`` for one sandbox, or None where none can be made here.

    ``proc`` and ``prefix`` (where paths of the mount table are found) are for tests."""
    name = f"attnlib-sandbox-{uuid.uuid4().hex[:12]}"
    try:
        mounts = _mounts((proc / "mountinfo").read_text(encoding="utf-8"))
        membership = (proc / "cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    paths: dict[str, str] = {}
    for line in membership:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    v1 = {}
    for point, kind, options in mounts:
        if kind == "cgroup":
            for controller in CONTROLLERS:
                if controller in options and controller in paths:
                    v1[controller] = prefix / point.lstrip("/") / paths[controller].lstrip("/")
    try:
        if set(v1) == set(CONTROLLERS):
            return _v1(v1, limits, name)
        unified = [point for point, kind, _ in mounts if kind == "cgroup2"]
        if unified and "" in paths:
            return _v2(prefix / unified[0].lstrip("/"), paths[""], limits, name)
    except OSError:
        return None
    return None


# A shell that writes its own pid into each file named before ``--``, then becomes what follows
# it: the sandbox is in its cgroup before it starts anything.
_JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def joining(cgroup: Cgroup | None, command: list[str]) -> list[str]:
    """``command``, started inside ``cgroup`` (as it is when there is none)."""
    if cgroup is None:
        return command
    return ["sh", "-c", _JOIN, "sh", *cgroup.procs_files, "--", *command]
