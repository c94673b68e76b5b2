"""A course directory for grading, outside the git checkout, in nbgrader's layout.

``python -m attnlib.grading course-dir DIR`` (``make course-dir DIR=…``) makes::

    DIR/nbgrader_config.py           nbgrader's settings for this course
    DIR/source/notebooks/            the instructors' edition (or the learner's, from a
                                     graded term's release): nbgrader's source
    DIR/release/notebooks/           what students get: the learner's edition, by nbgrader
    DIR/gradebook.db                 nbgrader's gradebook, with the assignment's cells
    DIR/submitted/STUDENT/notebooks/ where each student's notebooks go (copied in by you,
                                     by `nbgrader collect`, or by a Classroom export)

``autograde`` then writes ``DIR/autograded/STUDENT/notebooks/``, the gradebook's scores and
``DIR/grades.csv``. The grader reads the exercises and their points from the released
notebooks; submissions are only ever read as data here.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ASSIGNMENT = "notebooks"
CHECKOUT = Path(__file__).resolve().parents[3]

CONFIG = '''"""nbgrader settings of a course graded with attnlib (python -m attnlib.grading)."""

c = get_config()  # noqa: F821 -- nbgrader's config loader provides get_config

c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "README.md",
                            "conftest.py", "nbval_sanitize.cfg"]
c.ClearSolutions.code_stub = {
    "python": "# Your code here: replace the line below.\\nraise NotImplementedError()"
}
c.Execute.timeout = 300
'''


def inside_checkout(path: Path) -> bool:
    """Whether ``path`` lies in a git checkout (the course's own, or any other)."""
    resolved = path.resolve()
    return any((folder / ".git").exists() for folder in [resolved, *resolved.parents])


def unusable(path: Path) -> str:
    """Why ``path`` cannot be a course directory, or ''."""
    if inside_checkout(path):
        return (
            f"{path} is inside a git checkout: make the course directory outside it, where no "
            "commit can pick up students' work or the gradebook."
        )
    if any(mark in str(path.resolve()) for mark in "?#"):
        # The gradebook is opened by a URL (sqlite:///PATH), which would end at either mark.
        return f"{path}: a course directory's path may not hold '?' or '#'"
    return ""


def released(course: Path) -> Path:
    return course / "release" / ASSIGNMENT


def make_course_dir(course: Path, answer_key: Path) -> None:
    """Make ``course`` from the notebooks in ``answer_key``: the instructors' edition, or the
    learner's edition (all a graded term's release holds), which gives the same release and
    gradebook: nbgrader keeps no solution in either, and the grader never reads one."""
    problem = unusable(course)
    if problem:
        raise SystemExit(problem)
    notebooks = sorted(answer_key.glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise SystemExit(
            f"no notebooks NN_*.ipynb in {answer_key}: in a graded term's release, make the "
            "course directory from its learner's edition (--answer-key notebooks)"
        )
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True, exist_ok=True)
    for notebook in notebooks:
        (source / notebook.name).write_bytes(nbgrader_source(notebook.read_bytes()))
    (course / "nbgrader_config.py").write_text(CONFIG, encoding="utf-8")
    (course / "submitted").mkdir(exist_ok=True)
    try:
        run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    except RuntimeError as error:
        raise SystemExit(str(error)) from None


# A stub of the learner's edition: nbgrader's code stub (CONFIG) at an answer's indentation;
# and the marks of a solution region, which nbgrader replaces with the stub.
_BEGIN, _END = "### BEGIN SOLUTION", "### END SOLUTION"
_STUB = re.compile(
    r"^([ \t]*)# Your code here: replace the line below\.\n[ \t]*raise NotImplementedError\(\)$",
    re.MULTILINE,
)


def nbgrader_source(content: bytes) -> bytes:
    """The notebook ``content`` as nbgrader's source: the cells only the instructors' edition
    has (the asserts of the predict-first answers) left out, as the learner's edition leaves
    them, and each stub of the learner's edition marked (:func:`_stubs_marked`)."""
    # Imported here: the class report imports this module and must load no course code.
    from attnlib.course.predictions import INSTRUCTORS_ONLY_TAG

    notebook = json.loads(content)
    kept = [
        cell
        for cell in notebook["cells"]
        if INSTRUCTORS_ONLY_TAG not in cell.get("metadata", {}).get("tags", [])
    ]
    if len(kept) != len(notebook["cells"]):
        notebook["cells"] = kept
        content = json.dumps(notebook, indent=1, ensure_ascii=False).encode()
    return _stubs_marked(content)


def _stubs_marked(content: bytes) -> bytes:
    """The notebook ``content``, with each stub in an answer cell of the learner's edition marked
    as that cell's solution region: nbgrader then puts the same stub back and keeps the rest of
    the cell (the signature and the task), where it would replace a cell without a region
    whole. The instructors' edition has its regions, and comes back as it was."""
    notebook = json.loads(content)
    changed = False
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        is_answer = cell.get("metadata", {}).get("nbgrader", {}).get("solution")
        if cell["cell_type"] == "code" and is_answer and _BEGIN not in source:
            cell["source"] = _STUB.sub(
                lambda stub: f"{stub[1]}{_BEGIN}\n{stub[0]}\n{stub[1]}{_END}", source
            )
            changed = True
    return json.dumps(notebook, indent=1, ensure_ascii=False).encode() if changed else content


def path_with_venv() -> str:
    """PATH with this interpreter's bin first, as in an activated venv: nbgrader runs
    `alembic` (its database migrations) from PATH whenever it opens a gradebook."""
    venv_bin = str(Path(sys.executable).parent)
    return os.pathsep.join([venv_bin, os.environ.get("PATH", "")])


@contextlib.contextmanager
def venv_on_path() -> Iterator[None]:
    """For opening nbgrader's Gradebook in this process: PATH as :func:`path_with_venv`."""
    before = os.environ.get("PATH")
    os.environ["PATH"] = path_with_venv()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = before


def run_nbgrader(course: Path, *args: str) -> float:
    """Run ``nbgrader ARGS`` in ``course`` with this interpreter; the seconds it took."""
    env = {**os.environ, "PATH": path_with_venv()}
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    log = completed.stdout + completed.stderr
    # nbgrader logs a broken nbgrader_config.py and carries on with its defaults.
    if completed.returncode != 0 or "Exception while loading config file" in log:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed:\n{log[-6000:]}")
    return time.perf_counter() - start
