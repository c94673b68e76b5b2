"""The course's set-up without make, and grading the course, in scratch directories.

`build_pip_setup` copies this checkout and sets it up the plain-pip way of docs/setup.md (a new
venv, then `pip install -r requirements.txt`); `grade_course` makes nbgrader's student edition with
this checkout's `nbgrader_config.py` (`make student`) and a course directory (`make
course-dir`) in which `python -m attnlib.grading autograde --whole` grades two submissions (the
notebooks with their solutions, and the student edition as handed out), every cell run.
`tests/pip_path/` and `tests/grading/` check what they produce; `python -m
benchmarks.setup_paths` prints how long they take.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from attnlib.grading.grader.course import make_course_dir, nbgrader_source, run_nbgrader

REPO = Path(__file__).resolve().parents[2]
# The instructors' edition is the source of nbgrader's one assignment, `notebooks`
# (nbgrader_config.py); the learner's edition, notebooks/, is what nbgrader releases.
SOURCE_NOTEBOOKS = REPO / "instructors" / "notebooks"
LEARNER_NOTEBOOKS = REPO / "notebooks"
COURSE_NOTEBOOKS = sorted(SOURCE_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
ASSIGNMENT = "notebooks"


@dataclass(frozen=True)
class PipSetup:
    """A copy of the checkout whose ``.venv`` was built with pip alone."""

    checkout: Path
    seconds: float
    megabytes: float

    @property
    def python(self) -> Path:
        return self.checkout / ".venv" / "bin" / "python"


@dataclass(frozen=True)
class GradingRun:
    """nbgrader's student edition (``make student``) and a graded course directory."""

    root: Path
    generate_seconds: float
    autograde_seconds: float

    @property
    def released(self) -> Path:
        return self.root / "student" / ASSIGNMENT

    @property
    def course_dir(self) -> Path:
        return self.root / "course"

    def autograded(self, student: str) -> Path:
        return self.course_dir / "autograded" / student / ASSIGNMENT

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.course_dir / 'gradebook.db'}"


def checkout_files() -> list[str]:
    """What a fresh clone holds: tracked files, plus new ones not yet committed."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (REPO / name).is_file()]


def learner_env(venv: Path) -> dict[str, str]:
    """A learner's shell with ``venv`` activated, and nothing of the course's own ``.venv``
    or of make's exported settings (the tests run inside both)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"VIRTUAL_ENV", "PYTHONHASHSEED", "PYTHONPATH", "IPYTHONDIR"}
        and not key.startswith(("PYTEST", "MAKE", "MFLAGS", "ATTNLIB_"))
    }
    ours = str(Path(sys.executable).parent)
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry != ours]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = str(venv)
    env["HF_HUB_OFFLINE"] = "1"  # the model's files come from pip; nothing else is fetched
    return env


def _megabytes(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def build_pip_setup(destination: Path) -> PipSetup:
    """Copy the checkout to ``destination`` and set it up the plain-pip way of docs/setup.md."""
    for name in checkout_files():
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination / name)
    venv = destination / ".venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    start = time.perf_counter()
    subprocess.run([base_python, "-m", "venv", str(venv)], cwd=destination, check=True)
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-r", "requirements.txt"],
        cwd=destination,
        env=learner_env(venv),
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if install.returncode != 0:
        raise RuntimeError(
            f"pip install -r requirements.txt failed:\n{install.stdout[-3000:]}"
            f"{install.stderr[-3000:]}"
        )
    return PipSetup(destination, seconds, _megabytes(venv))


def grade_course(root: Path) -> GradingRun:
    """In ``root``: the student edition as ``make student`` makes it, and a course directory
    (``make course-dir``) in which two submissions are autograded: ``solutions`` (the
    instructors' edition without its instructors-only cells, as a student who solved every
    exercise hands it in) as ``make autograde`` grades a class, the cells that only
    train left out, and ``untouched`` (the learner's edition, ``notebooks/``, as a learner
    first opens it) with every cell run (``--whole``)."""
    shutil.copy(REPO / "nbgrader_config.py", root)
    # The answer key as `make student` gives it to nbgrader and as a student who solved every
    # exercise hands it in: without the cells only the instructors' edition has.
    answer_key = root / "instructors" / ASSIGNMENT
    answer_key.mkdir(parents=True)
    for notebook in COURSE_NOTEBOOKS:
        source = SOURCE_NOTEBOOKS / notebook.name
        (answer_key / notebook.name).write_bytes(nbgrader_source(source.read_bytes()))
    generate_seconds = run_nbgrader(root, "generate_assignment", ASSIGNMENT)
    course = root / "course"
    make_course_dir(course, SOURCE_NOTEBOOKS)
    for student, handed_in in (("solutions", answer_key), ("untouched", LEARNER_NOTEBOOKS)):
        submission = course / "submitted" / student / ASSIGNMENT
        submission.mkdir(parents=True)
        for notebook in COURSE_NOTEBOOKS:
            shutil.copy(handed_in / notebook.name, submission)
    start = time.perf_counter()
    # The solutions as an instructor grades a class (cells that only train are left out),
    # the untouched edition with every cell run, as a learner's Run All runs it.
    for student, flags in (("solutions", []), ("untouched", ["--whole"])):
        command = ["autograde", str(course), "--student", student, *flags]
        graded = subprocess.run(
            [sys.executable, "-m", "attnlib.grading", *command],
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
            capture_output=True,
            text=True,
            check=False,
        )
        if graded.returncode != 0:
            raise RuntimeError(
                f"autograde of {student} failed:\n{graded.stdout[-4000:]}{graded.stderr[-4000:]}"
            )
    return GradingRun(root, generate_seconds, time.perf_counter() - start)


def describe_pip_setup(setup: PipSetup) -> str:
    return f"pip-only set-up: {setup.seconds:.0f} s, .venv {setup.megabytes:,.0f} MB"


def describe_grading(run: GradingRun) -> str:
    return (
        f"nbgrader generate_assignment {run.generate_seconds:.1f} s; attnlib's autograde of "
        f"2 submissions x {len(COURSE_NOTEBOOKS)} notebooks (the untouched one --whole) "
        f"{run.autograde_seconds:.0f} s"
    )
