"""The warm sandbox's wipe between two notebooks (attnlib.grading.sandbox.fork_server): everything a
notebook wrote goes, the sandbox's own mounts stay.

A CI runner clones the course under /tmp, and the sandbox binds the course's software in where
it lies: /tmp/clone/.venv inside the sandbox's /tmp. A wipe that removed all of /tmp failed on
that mount ("Operation not permitted") and refused every notebook of the class.
"""

from __future__ import annotations

from pathlib import Path

from attnlib.grading.sandbox.fork_server import empty, mounts_under

# Three lines of a real /proc/self/mountinfo inside a sandbox: /tmp, a bind of the venv under
# it, and one whose path has a space (written \040).
MOUNTINFO = """\
101 100 0:52 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=262144k
102 101 8:1 /tmp/clone/.venv /tmp/clone/.venv ro,nosuid,nodev - ext4 /dev/sda1 rw
103 101 8:1 /tmp/my\\040course /tmp/my\\040course ro,nosuid,nodev - ext4 /dev/sda1 rw
104 100 8:1 /usr /usr ro,nosuid,nodev - ext4 /dev/sda1 rw
105 100 0:53 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k
106 100 0:54 / /grading rw,nosuid,nodev - tmpfs tmpfs rw,size=65536k
"""


def test_mounts_under_the_writable_places_are_kept_with_their_escapes_read() -> None:
    kept = mounts_under(MOUNTINFO, ("/grading", "/tmp", "/dev/shm"))
    # /tmp itself, /dev/shm and /grading are emptied, not kept; /usr is not below them.
    assert kept == {"/tmp/clone/.venv", "/tmp/my course"}


def test_a_folder_named_like_a_prefix_is_not_below_it() -> None:
    assert mounts_under("1 0 0:1 / /tmpfoo rw - tmpfs tmpfs rw\n", ("/tmp",)) == set()


def test_empty_removes_what_a_notebook_wrote_and_keeps_the_mounts(tmp_path: Path) -> None:
    venv = tmp_path / "clone" / ".venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "lib" / "torch.py").write_text("the software")
    (tmp_path / "clone" / "dropped.txt").write_text("beside the mount")
    (tmp_path / "clone" / "junk").mkdir()
    (tmp_path / "a.txt").write_text("a notebook's file")
    locked = tmp_path / "locked" / "deep"
    locked.mkdir(parents=True)
    (locked / "b").write_text("b")
    locked.parent.chmod(0o000)  # a notebook may take its own permissions away
    (tmp_path / "link").symlink_to(venv)  # a link to the mount goes, the mount stays
    (tmp_path / "clone").chmod(0o000)  # the folder that leads to the mount, locked too

    empty(str(tmp_path), frozenset({str(venv)}))

    assert sorted(p.name for p in tmp_path.iterdir()) == ["clone"]
    assert (tmp_path / "clone").stat().st_mode & 0o777 == 0o755  # enterable again
    assert sorted(p.name for p in (tmp_path / "clone").iterdir()) == [".venv"]
    assert (venv / "lib" / "torch.py").read_text() == "the software"


def test_empty_with_nothing_kept_leaves_the_folder_empty(tmp_path: Path) -> None:
    (tmp_path / "x" / "y").mkdir(parents=True)
    (tmp_path / "z").write_text("z")
    empty(str(tmp_path), frozenset())
    assert list(tmp_path.iterdir()) == []
