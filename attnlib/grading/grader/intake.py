"""What a class handed in: each student's notebooks, read from the course directory without
trusting anything in the students' folders.

``submitted/STUDENT/notebooks/NN_name.ipynb`` is taken as a submission only when every step of
that path below ``submitted/`` is what it claims to be: the student's folder and its
``notebooks`` folder plain directories, the notebook a regular file, none of them a symbolic
link (each step is opened relative to the one before with ``O_NOFOLLOW``, so a link swapped in
between a check and an open is refused too), the file read through the descriptor that was
checked, within a size limit, and never waited on (``O_NONBLOCK``: a FIFO does not hang the
class). Anything else named like a course notebook (a link to the answer key or to a
classmate's work, a directory, a FIFO, a device, a file too large) is refused with a reason
that goes into that student's grades; files that are not course notebooks are left alone.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from attnlib.grading.grader.course import ASSIGNMENT
from attnlib.grading.grader.submitted_notebook import MAX_NOTEBOOK_BYTES, writable_text

_OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


@dataclass(frozen=True)
class HandedIn:
    """One student's one notebook: its bytes, or why it cannot be graded."""

    student: str
    notebook: str  # the course notebook's file name, "02_softmax_and_scaling.ipynb"
    content: bytes | None
    refused: str = ""  # why it is not graded ("" when content is there)


@dataclass(frozen=True)
class Student:
    """A folder of ``submitted/``: its notebooks, or why none of them can be read."""

    name: str
    handed_in: tuple[HandedIn, ...]
    refused: str = ""  # why the folder itself is not read ("" when it is)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a file" if stat.S_ISREG(mode) else "not a file"


def _lstat_kind(name: str, folder: int) -> str:
    try:
        return _kind(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError as error:
        return f"unreadable ({error.strerror})"


def _read_notebook(name: str, folder: int) -> bytes:
    """The bytes of the regular file ``name`` in ``folder``; an OSError or a ValueError with
    the reason otherwise."""
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=folder)
    except OSError:
        raise ValueError(f"it is {_lstat_kind(name, folder)}, not a notebook file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(f"it is {_kind(mode)}, not a notebook file")
        chunks, size = [], 0
        while chunk := os.read(fd, 2**20):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_NOTEBOOK_BYTES:
                raise ValueError(f"it is over {MAX_NOTEBOOK_BYTES // 2**20} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _open_folder(name: str, parent: int) -> int:
    try:
        return os.open(name, _OPEN_FOLDER, dir_fd=parent)
    except FileNotFoundError:
        raise ValueError(f"there is no folder {name}") from None
    except OSError:
        raise ValueError(f"{name} is {_lstat_kind(name, parent)}, not a folder") from None


def _notebooks(student: str, folder: int, course_notebooks: set[str]) -> list[HandedIn]:
    found = []
    for name in sorted(os.listdir(folder)):
        if name not in course_notebooks:
            continue
        try:
            found.append(HandedIn(student, name, _read_notebook(name, folder)))
        except (OSError, ValueError) as error:
            found.append(HandedIn(student, name, None, f"✗ not graded: {name} {error}"))
    return found


def _student(name: str, submitted: int, course_notebooks: set[str]) -> Student:
    shown = writable_text(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    if shown != name or not name.isprintable() or "/" in name or name in (".", ".."):
        return Student(shown, (), "✗ not graded: the folder's name is not plain printable text")
    try:
        folder = _open_folder(name, submitted)
    except ValueError as error:
        return Student(name, (), f"✗ not graded: in submitted/, {error}")
    try:
        notebooks = _open_folder(ASSIGNMENT, folder)
    except ValueError as error:
        return Student(name, (), f"✗ not graded: in submitted/{name}/, {error}")
    finally:
        os.close(folder)
    try:
        handed_in = _notebooks(name, notebooks, course_notebooks)
    finally:
        os.close(notebooks)
    if not handed_in:
        return Student(name, (), "✗ not graded: no notebook of the course was handed in")
    return Student(name, tuple(handed_in))


def students(
    course: Path, course_notebooks: set[str], only: list[str] | None = None
) -> list[Student]:
    """Every folder of ``course/submitted`` but hidden ones (or only those named in ``only``,
    each of which is listed, handed in or not), with what it handed in."""
    submitted = os.open(course / "submitted", _OPEN_FOLDER)
    try:
        # Hidden entries (.DS_Store, .ipynb_checkpoints) are no one's submission.
        names = sorted(name for name in os.listdir(submitted) if not name.startswith("."))
        if only:
            names = sorted(set(only))
        return [_student(name, submitted, course_notebooks) for name in names]
    finally:
        os.close(submitted)
