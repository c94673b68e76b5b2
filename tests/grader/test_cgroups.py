"""A cgroup per sandbox (attnlib.grading.grader.cgroups): the limits it writes under cgroup v2 (on a
fake hierarchy laid out here) and v1 (on this machine's, where the test may write it), and
None where none can be made."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from attnlib.grading.grader import cgroups

LIMITS = cgroups.CgroupLimits(memory_bytes=2 * 2**30, processes=64, cpus=1.0)


def _fake_v2(root: Path, own: str, delegated: str, enabled: str = "") -> Path:
    proc = root / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text(
        "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", encoding="utf-8"
    )
    (proc / "cgroup").write_text(f"0::{own}\n", encoding="utf-8")
    base = root / "sys/fs/cgroup" / own.lstrip("/")
    base.mkdir(parents=True)
    (base / "cgroup.controllers").write_text(delegated, encoding="utf-8")
    (base / "cgroup.subtree_control").write_text(enabled, encoding="utf-8")
    (base / "cgroup.procs").write_text("101\n202\n", encoding="utf-8")
    return base


def test_v2_moves_the_graders_processes_to_a_leaf_and_limits_a_sibling(tmp_path: Path) -> None:
    base = _fake_v2(tmp_path, "/grading.scope", "cpuset cpu io memory pids")
    made = cgroups.create(LIMITS, proc=tmp_path / "proc", prefix=tmp_path)
    assert made is not None and made.version == 2
    (folder,) = made.folders
    assert folder.parent == base and folder.name.startswith("attnlib-sandbox-")
    assert (base / "attnlib-grader" / "cgroup.procs").read_text(encoding="utf-8") == "202"
    assert (base / "cgroup.subtree_control").read_text(encoding="utf-8") == "+memory +pids +cpu"
    written = {f.name: f.read_text(encoding="utf-8") for f in folder.iterdir()}
    assert written == {
        "memory.max": str(2 * 2**30),
        "memory.swap.max": "0",
        "pids.max": "64",
        "cpu.max": "100000 100000",
    }
    assert made.procs_files == [str(folder / "cgroup.procs")]


def test_v2_without_the_controllers_delegated_makes_none(tmp_path: Path) -> None:
    _fake_v2(tmp_path, "/user.slice/app.scope", "cpu io")
    assert cgroups.create(LIMITS, proc=tmp_path / "proc", prefix=tmp_path) is None


def test_no_cgroup_file_system_makes_none(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    assert cgroups.create(LIMITS, proc=tmp_path / "proc", prefix=tmp_path) is None


def test_joining_runs_the_command_inside(tmp_path: Path) -> None:
    procs = tmp_path / "cgroup.procs"
    command = cgroups.joining(cgroups.Cgroup((tmp_path,), 2), ["sh", "-c", "echo $$"])
    shown = subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()
    assert procs.read_text(encoding="utf-8").strip() == shown  # the same process, joined first
    assert cgroups.joining(None, ["true"]) == ["true"]


@pytest.mark.skipif(
    not os.access("/sys/fs/cgroup/pids", os.W_OK), reason="no writable cgroup v1 here"
)
def test_v1_on_this_machine_limits_processes_and_is_removed() -> None:
    made = cgroups.create(cgroups.CgroupLimits(2**30, 8, 1.0))
    assert made is not None and made.version == 1
    try:
        forks = "for i in $(seq 20); do sleep 1 & done; wait"
        subprocess.run(cgroups.joining(made, ["sh", "-c", forks]), capture_output=True, check=False)
        pids = next(f for f in made.folders if "pids" in str(f))
        assert int((pids / "pids.events").read_text(encoding="utf-8").split()[1]) > 0
    finally:
        made.remove()
    assert not any(folder.exists() for folder in made.folders)
