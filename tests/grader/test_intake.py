"""What a class handed in (attnlib.grading.grader.intake): every odd thing a student's folder can
hold in place of a notebook is refused with a reason for that student alone, and nothing is
followed, waited on or read past its limit."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from attnlib.grading.grader import intake
from attnlib.grading.grader.submitted_notebook import MAX_NOTEBOOK_BYTES

NOTEBOOK = "02_softmax_and_scaling.ipynb"
OTHER = "03_naive_self_attention.ipynb"
COURSE = {NOTEBOOK, OTHER}


@pytest.fixture
def course(tmp_path: Path) -> Path:
    (tmp_path / "submitted").mkdir()
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / NOTEBOOK).write_text('{"the": "answer key"}', encoding="utf-8")
    return tmp_path


def _folder(course: Path, student: str) -> Path:
    folder = course / "submitted" / student / "notebooks"
    folder.mkdir(parents=True)
    return folder


def _by_name(course: Path, only: list[str] | None = None) -> dict[str, intake.Student]:
    return {s.name: s for s in intake.students(course, COURSE, only)}


def test_a_plain_notebook_is_read_and_other_files_are_left_alone(course: Path) -> None:
    folder = _folder(course, "ada")
    (folder / NOTEBOOK).write_bytes(b'{"cells": []}')
    (folder / "notes.txt").write_text("not a course notebook", encoding="utf-8")
    (ada,) = intake.students(course, COURSE)
    assert ada.refused == ""
    assert [(h.notebook, h.content, h.refused) for h in ada.handed_in] == [
        (NOTEBOOK, b'{"cells": []}', "")
    ]


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda f, c: (f / NOTEBOOK).mkdir(), "a folder"),
        (lambda f, c: (f / NOTEBOOK).symlink_to(f / "nowhere.ipynb"), "a symbolic link"),
        (lambda f, c: (f / NOTEBOOK).symlink_to("/dev/zero"), "a symbolic link"),
        (lambda f, c: (f / NOTEBOOK).symlink_to(c / "source" / NOTEBOOK), "a symbolic link"),
        (lambda f, c: os.mkfifo(f / NOTEBOOK), "a FIFO (named pipe)"),
    ],
    ids=["folder", "broken link", "link to /dev/zero", "link to the answer key", "FIFO"],
)
def test_what_is_not_a_notebook_file_is_refused_with_its_kind(
    make, kind: str, course: Path
) -> None:
    folder = _folder(course, "eve")
    make(folder, course)
    (folder / OTHER).write_bytes(b"{}")
    start = time.monotonic()
    (eve,) = intake.students(course, COURSE)
    assert time.monotonic() - start < 5  # a FIFO is not waited on
    refused, kept = eve.handed_in
    assert refused.notebook == NOTEBOOK and refused.content is None
    assert refused.refused == f"✗ not graded: {NOTEBOOK} it is {kind}, not a notebook file"
    assert (kept.notebook, kept.content, kept.refused) == (OTHER, b"{}", "")


def test_a_link_to_a_classmates_notebook_takes_nothing_of_theirs(course: Path) -> None:
    (_folder(course, "ada") / NOTEBOOK).write_bytes(b'{"cells": ["ada\'s work"]}')
    (_folder(course, "eve") / NOTEBOOK).symlink_to(course / "submitted/ada/notebooks" / NOTEBOOK)
    students = _by_name(course)
    assert students["ada"].handed_in[0].content == b'{"cells": ["ada\'s work"]}'
    assert students["eve"].handed_in[0].content is None
    assert "symbolic link" in students["eve"].handed_in[0].refused


def test_linked_folders_are_refused_for_that_student_alone(course: Path) -> None:
    (_folder(course, "ada") / NOTEBOOK).write_bytes(b"{}")
    (course / "submitted" / "eve").mkdir()
    (course / "submitted" / "eve" / "notebooks").symlink_to(course / "source")
    (course / "submitted" / "mallory").symlink_to(course / "submitted" / "ada")
    (course / "submitted" / "trent").write_text("a file, not a folder", encoding="utf-8")
    students = _by_name(course)
    assert students["ada"].refused == "" and students["ada"].handed_in[0].content == b"{}"
    assert students["eve"].refused == (
        "✗ not graded: in submitted/eve/, notebooks is a symbolic link, not a folder"
    )
    assert students["mallory"].refused == (
        "✗ not graded: in submitted/, mallory is a symbolic link, not a folder"
    )
    assert students["trent"].refused == "✗ not graded: in submitted/, trent is a file, not a folder"
    assert all(not s.handed_in for name, s in students.items() if name != "ada")


def test_a_notebook_over_the_limit_is_refused_without_being_read_whole(course: Path) -> None:
    big = _folder(course, "eve") / NOTEBOOK
    with big.open("wb") as file:
        file.truncate(MAX_NOTEBOOK_BYTES + 1)
    (eve,) = intake.students(course, COURSE)
    assert eve.handed_in[0].refused == f"✗ not graded: {NOTEBOOK} it is over 20 MB"


def test_odd_folder_names_and_missing_students(course: Path) -> None:
    (_folder(course, '=1+2*HYPERLINK("x")') / NOTEBOOK).write_bytes(b"{}")
    (course / "submitted" / "tab\there").mkdir()
    (course / "submitted" / "empty").mkdir()
    students = _by_name(course)
    assert students['=1+2*HYPERLINK("x")'].handed_in[0].content == b"{}"  # kept as it is
    assert "not plain printable text" in students["tab\there"].refused
    assert students["empty"].refused == (
        "✗ not graded: in submitted/empty/, there is no folder notebooks"
    )
    named = _by_name(course, ["nobody", "../source"])
    assert named["nobody"].refused == "✗ not graded: in submitted/, there is no folder nobody"
    assert "not plain printable text" in named["../source"].refused


def test_hidden_entries_are_no_ones_submission(course: Path) -> None:
    (course / "submitted" / ".DS_Store").write_bytes(b"")
    (course / "submitted" / ".ipynb_checkpoints").mkdir()
    assert intake.students(course, COURSE) == []


def test_a_name_that_is_not_utf8_is_refused_not_crashed_on(course: Path) -> None:
    os.mkdir(os.path.join(os.fsencode(course / "submitted"), b"caf\xe9"))
    (student,) = intake.students(course, COURSE)
    assert student.name == "caf\ufffd" and "not plain printable text" in student.refused
