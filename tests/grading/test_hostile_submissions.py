"""Autograding a class with hostile students in it: no trick scores a point, nothing of the
course changes, and a fair answer is not marked down for its warnings.

One course directory (``python -m attnlib.grading course-dir``), notebook 02's three exercises,
a submission per kind of attack that issue 26 found working against nbgrader: patching the
check's result, reading the expected values from the checker's frames, a tensor subclass that
makes every comparison true, reading the answer key, calling attnlib's own softmax, and writing
into the grader's configuration, the checkers and the gradebook. Each is graded in its own
sandbox; then the whole class again on a local two-worker Dask cluster, which must give exactly
the same grades. Needs bubblewrap (`make grading-deps`) and the `instructor` extra.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "02_softmax_and_scaling.ipynb"
EXERCISES = ("ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward")

RIGHT = {
    "ex1_softmax_from_formula": (
        "def softmax_from_formula(x):\n"
        "    e = torch.exp(x)\n"
        "    return e / e.sum(dim=-1, keepdim=True)\n"
    ),
    "ex2_stable_softmax": (
        "def stable_softmax(x, dim=-1):\n"
        "    e = torch.exp(x - x.amax(dim=dim, keepdim=True))\n"
        "    return e / e.sum(dim=dim, keepdim=True)\n"
    ),
    "ex3_softmax_backward": (
        "def softmax_backward(p, g):\n    return p * (g - (p * g).sum(dim=-1, keepdim=True))\n"
    ),
}

# Each hostile answer replaces every answer cell of the notebook (its name fixed per exercise).
PATCH_THE_RESULT = """
import attnlib.checks
from attnlib.checks import _framework, _run
_framework.CheckResult.assert_passed = lambda self: self
_framework.CheckResult.__bool__ = lambda self: True
_framework.compare_outputs = lambda *args, **kwargs: None
_run._problem = lambda *args, **kwargs: None
for _name in dir(attnlib.checks):
    if _name.startswith("check_"):
        setattr(attnlib.checks, _name, lambda *a, **k: _framework.CheckResult("x", True, "ok"))
def {name}(*args, **kwargs):
    return args[0]
"""

READ_THE_FRAMES = """
import gc, sys
def {name}(*args, **kwargs):
    frame = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            expected = getattr(value, "expected", None)
            if expected is not None:
                return expected
        frame = frame.f_back
    for thing in gc.get_objects():
        if type(thing).__name__ == "Case":
            return thing.expected
    return args[0]
"""

TENSOR_SUBCLASS = """
import torch
class Agreeable(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.isclose:
            return torch.ones(args[0].shape, dtype=torch.bool)
        if func in (torch.allclose, torch.equal, torch.Tensor.all):
            return True
        return super().__torch_function__(func, types, args, kwargs or {{}})
def {name}(*args, **kwargs):
    return args[0].clone().as_subclass(Agreeable)
"""

READ_THE_ANSWER_KEY = """
import json, pathlib, attnlib
_found = {{}}
_places = [pathlib.Path(attnlib.__file__).parent / "data" / "solutions.json"]
for _root in ("/work", "/tmp", "/root", "/home", str(pathlib.Path(attnlib.__file__).parents[1])):
    _places += list(pathlib.Path(_root).glob("**/instructors/notebooks/02_*.ipynb"))
    _places += list(pathlib.Path(_root).glob("**/source/notebooks/02_*.ipynb"))
for _place in _places:
    try:
        _text = _place.read_text(encoding="utf-8")
    except OSError:
        continue
    if "BEGIN SOLUTION" in _text or "stable_softmax" in _text:
        _found["key"] = _text
for _cell in json.loads(_found.get("key", '{{"cells": []}}')).get("cells", []):
    if "BEGIN SOLUTION" in "".join(_cell.get("source", [])):
        exec("".join(_cell["source"]))
if "{name}" not in globals():
    def {name}(*args, **kwargs):
        raise NotImplementedError()
"""

CALL_ATTNLIB = """
import attnlib
def {name}(*args, **kwargs):
    if "{name}" == "softmax_backward":
        p, g = args
        z = p.log().detach().requires_grad_(True)
        attnlib.softmax(z, dim=-1).backward(g)
        return z.grad
    return attnlib.softmax(args[0], dim=kwargs.get("dim", args[1] if len(args) > 1 else -1))
"""

WRITE_THE_COURSE = """
import pathlib, sqlite3, attnlib
_wrote = []
_targets = [pathlib.Path(attnlib.__file__).parent / "checks" / "__init__.py"]
for _root in ("/tmp", "/work", "/root", "/home"):
    _targets += list(pathlib.Path(_root).glob("**/nbgrader_config.py"))
for _target in _targets:
    try:
        with open(_target, "a") as _file:
            _file.write("\\nraise SystemExit('taken over')\\n")
        _wrote.append(str(_target))
    except OSError:
        pass
for _db in [p for r in ("/tmp", "/work", "/root") for p in pathlib.Path(r).glob("**/gradebook.db")]:
    try:
        _connection = sqlite3.connect(_db)
        _connection.execute("UPDATE grade SET manual_score = 1")
        _connection.commit()
        _wrote.append(str(_db))
    except Exception:
        pass
def {name}(*args, **kwargs):
    raise NotImplementedError()
"""

NOISY_BUT_RIGHT = {
    exercise: "import sys, warnings\n"
    + source.replace(
        "):\n",
        "):\n    print('debugging', file=sys.stderr)\n"
        "    warnings.warn('a warning from a right answer')\n",
        1,
    )
    for exercise, source in RIGHT.items()
}

# Not an attack on the scores: what the sandbox lets a notebook reach, printed for the feedback.
PROBE_THE_WALLS = """
import json, os, pathlib, socket, attnlib
_walls = {{}}
try:
    socket.create_connection(("1.1.1.1", 53), timeout=5).close()
    _walls["network"] = "open"
except OSError:
    _walls["network"] = "closed"
_places = {{"attnlib": pathlib.Path(attnlib.__file__).parent, "usr": pathlib.Path("/usr"),
           "course": pathlib.Path({course!r}), "scratch": pathlib.Path.cwd()}}
for _label, _place in _places.items():
    try:
        (_place / "probe.txt").write_text("x")
        _walls[_label] = "written"
    except OSError:
        _walls[_label] = "read-only" if _place.exists() else "absent"
print("WALLS " + json.dumps(_walls))
"""

# A call of the learner's code that never returns: stopped at the call's time limit.
HANG_IN_A_CALL = "def stable_softmax(x, dim=-1):\n    while True:\n        pass\n"
CALL_SECONDS = 10
# Each notebook's limit: under the dozen calls a check makes times CALL_SECONDS, so the
# exercise after the hanging one is graded only if what ran over once is not called again.
NOTEBOOK_SECONDS = 90

HOSTILE = {
    "patches_the_result": PATCH_THE_RESULT,
    "reads_the_frames": READ_THE_FRAMES,
    "returns_a_tensor_subclass": TENSOR_SUBCLASS,
    "reads_the_answer_key": READ_THE_ANSWER_KEY,
    "calls_attnlib": CALL_ATTNLIB,
    "writes_the_course": WRITE_THE_COURSE,
}
NAMES = {
    "ex1_softmax_from_formula": "softmax_from_formula",
    "ex2_stable_softmax": "stable_softmax",
    "ex3_softmax_backward": "softmax_backward",
}


def _submission(answers: dict[str, str]) -> dict[str, Any]:
    notebook = json.loads((REPO / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    return notebook


def _students(course: Path) -> dict[str, dict[str, Any]]:
    probe = PROBE_THE_WALLS.format(course=str(course))
    students = {
        "honest": _submission(RIGHT),
        "untouched": _submission({}),
        "noisy_but_right": _submission(NOISY_BUT_RIGHT),
        "probes_the_walls": _submission({**RIGHT, EXERCISES[0]: probe + RIGHT[EXERCISES[0]]}),
        "hangs_in_a_call": _submission({**RIGHT, EXERCISES[1]: HANG_IN_A_CALL}),
    }
    for student, template in HOSTILE.items():
        students[student] = _submission({e: template.format(name=NAMES[e]) for e in EXERCISES})
    return students


EXPECTED = {
    "honest": 3,
    "untouched": 0,
    "noisy_but_right": 3,
    "probes_the_walls": 3,
    "hangs_in_a_call": 2,
    **{student: 0 for student in HOSTILE},
}


def _grading(*args: str) -> subprocess.CompletedProcess[str]:
    venv_bin = str(Path(sys.executable).parent)
    env = {"PATH": f"{venv_bin}:/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": "/tmp"}
    return subprocess.run(
        [sys.executable, "-m", "attnlib.grading", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def _digests(course: Path) -> dict[str, str]:
    """A digest of every file of the course that grading must leave alone."""
    kept = [course / "nbgrader_config.py", *sorted((course / "source").rglob("*.ipynb"))]
    kept += sorted((course / "release").rglob("*.ipynb"))
    kept += sorted((course / "submitted").rglob("*.ipynb"))
    kept += sorted((REPO / "attnlib" / "checks").rglob("*.py"))
    kept += [REPO / "attnlib" / "data" / "solutions.json", REPO / "nbgrader_config.py"]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in kept if p.is_file()}


def _grades(course: Path) -> dict[tuple[str, str], tuple[str, str]]:
    with (course / "grades.csv").open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    return {(r["student"], r["exercise"]): (r["score"], r["reason"]) for r in rows}


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: `make grading-deps`")
    root = tmp_path_factory.mktemp("hostile") / "course"
    made = _grading("course-dir", str(root))
    assert made.returncode == 0, made.stdout + made.stderr
    for student, notebook in _students(root).items():
        folder = root / "submitted" / student / "notebooks"
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(notebook), encoding="utf-8")
    before = _digests(root)
    graded = _grading(
        "autograde",
        str(root),
        "--workers",
        "2",
        "--call-time-limit",
        str(CALL_SECONDS),
        "--time-limit",
        str(NOTEBOOK_SECONDS),
    )
    print(graded.stdout[-3000:])
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert _digests(root) == before, "grading changed a file of the course"
    return root


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_student_scores_what_they_solved(course: Path, student: str) -> None:
    grades = _grades(course)
    scores = [float(grades[(student, e)][0]) for e in EXERCISES]
    assert sum(scores) == EXPECTED[student], {e: grades[(student, e)] for e in EXERCISES}


def test_calling_attnlib_scores_0_and_says_why(course: Path) -> None:
    grades = _grades(course)
    for exercise in EXERCISES[:2]:
        score, reason = grades[("calls_attnlib", exercise)]
        assert float(score) == 0 and "calls attnlib.softmax" in reason, reason


def test_a_tensor_subclass_is_refused_by_name(course: Path) -> None:
    score, reason = _grades(course)[("returns_a_tensor_subclass", EXERCISES[0])]
    assert float(score) == 0 and "Agreeable, a subclass of torch.Tensor" in reason, reason


def test_the_gradebook_holds_the_grades_and_no_manual_score(course: Path) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, expected in EXPECTED.items():
            submission = gradebook.find_submission("notebooks", student)
            notebook = next(nb for nb in submission.notebooks if nb.name == NOTEBOOK[:-6])
            assert notebook.score == expected, student
            assert all(grade.manual_score is None for grade in notebook.grades), student


def test_warnings_and_stderr_show_in_the_feedback(course: Path) -> None:
    feedback = course / "autograded" / "noisy_but_right" / "notebooks" / NOTEBOOK
    shown = json.dumps(json.loads(feedback.read_text(encoding="utf-8")))
    assert "a warning from a right answer" in shown or "debugging" in shown


def test_the_sandbox_has_no_network_and_writes_only_its_scratch(course: Path) -> None:
    feedback = course / "autograded" / "probes_the_walls" / "notebooks" / NOTEBOOK
    printed = [
        line.removeprefix("WALLS ")
        for cell in json.loads(feedback.read_text(encoding="utf-8"))["cells"]
        for output in cell.get("outputs", [])
        for line in "".join(output.get("text", "")).splitlines()
        if line.startswith("WALLS ")
    ]
    assert len(printed) == 1, printed
    assert json.loads(printed[0]) == {
        "network": "closed",
        "attnlib": "read-only",
        "usr": "read-only",
        "course": "absent",
        "scratch": "written",
    }


def test_a_call_that_never_returns_is_stopped_and_fails_its_check_alone(course: Path) -> None:
    grades = _grades(course)
    score, reason = grades[("hangs_in_a_call", EXERCISES[1])]
    assert float(score) == 0 and f"over {CALL_SECONDS} s" in reason, reason
    assert all(float(grades[("hangs_in_a_call", e)][0]) == 1 for e in (EXERCISES[0], EXERCISES[2]))


def test_a_two_worker_dask_cluster_gives_the_same_grades(course: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    serial = _grades(course)
    again = tmp_path / "course"
    shutil.copytree(course, again)
    (again / "grades.csv").unlink()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:
        graded = _grading(
            "autograde",
            str(again),
            "--scheduler",
            cluster.scheduler_address,
            "--call-time-limit",
            str(CALL_SECONDS),
            "--time-limit",
            str(NOTEBOOK_SECONDS),
        )
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert _grades(again) == serial
