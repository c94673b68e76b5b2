"""Autograding a class with hostile students in it: no trick scores a point, nothing of the
course changes, no file or run stops, stalls or slows the class, and a fair answer is not marked
down for its warnings.

One course directory (``python -m attnlib.grading course-dir``), notebook 02's three exercises,
graded on two workers, a submission per kind of attack: those issue 26 found working against
nbgrader (patching the check's result, reading the expected values from the checker's frames, a
tensor subclass that makes every comparison true, reading the answer key, calling attnlib's own
softmax, writing into the grader's configuration, the checkers and the gradebook), and those
issue 39 found against this grader: files that are not notebooks (links to the answer key and to
a classmate, a FIFO, a folder, ``/dev/zero``), odd text and metadata, a run that shrinks its
pipe and stops reading, cancels its call timer, forges frames, prints 88 MB, fills its memory
and its disk, reads the grader's environment, loads the CPU with 48 processes beside an honest
CPU-bound classmate, and, as root, tries to take the walls down. Every student gets a row in
``grades.csv`` and the gradebook, with the reason when not graded. Then part of the class again
on a local two-worker Dask cluster, which must give the same grades. Needs bubblewrap (`make
grading-deps`) and the `instructor` extra.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
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

# -- issue 39: what a run can do to the grader and to its classmates ----------------------------

# Shrinks the orders pipe to 4 KiB and stops reading it: the grader's next message (a call,
# with the random generator's state) no longer fits, and the old grader waited forever.
STALLS_THE_ORDERS_PIPE = """
import fcntl, time
import attnlib.grading.sandbox.notebook as _run
fcntl.fcntl(3, 1031, 4096)  # F_SETPIPE_SZ on the orders pipe
def _never_read(self, names, exercise_id, answer_name):
    from attnlib.grading.sandbox.answering import describe
    from attnlib.grading.wire.frames import write_frame
    write_frame(self.reports_fd, {"check": exercise_id, "answer": describe(names[answer_name])})
    time.sleep(10**6)
_run._Grader._serve = _never_read
"""

# Cancels the per-call timer from inside the call, then never returns.
CANCELS_THE_CALL_TIMER = (
    "import signal\n"
    "def stable_softmax(x, dim=-1):\n"
    "    signal.setitimer(signal.ITIMER_REAL, 0)\n"
    "    while True:\n"
    "        pass\n"
)

# A frame whose header claims a terabyte.
FORGES_A_HUGE_FRAME = "import os\nos.write(4, (2**40).to_bytes(8, 'big'))\n"
# A well-formed frame that says the run is done, with nonsense in it.
FORGES_DONE = (
    "import os\nfrom attnlib.grading.wire.frames import encode_frame\n"
    "os.write(4, encode_frame({'done': 5, 'ran': 'x'}))\n"
)

PRINTS_88_MB = "print('x' * 88_000_000)\n"
PRINTS_A_SURROGATE = "print('\\ud800 a lone surrogate')\n"

SECRET = "s3cret-token-of-the-grader"
READS_THE_ENVIRONMENT = """
import glob
_environs = []
for _path in glob.glob("/proc/*/environ"):
    try:
        _environs.append(open(_path, "rb").read().decode("utf-8", "replace"))
    except OSError:
        pass
print("ENVIRONS", _environs)
"""

# What a run as root could do before: unmount what hides the solutions, remount the venv
# writable, change the grader's own code, become root, make a user namespace with every
# capability in it.
BREAKS_THE_WALLS = """
import ctypes, json, os, pathlib, subprocess, sys, attnlib, nbgrader
_libc = ctypes.CDLL(None, use_errno=True)
_solutions = str(pathlib.Path(attnlib.__file__).parent / "data" / "solutions.json")
_api = str(pathlib.Path(nbgrader.__file__).parent / "api.py")
_tried = {"umount": _libc.umount2(_solutions.encode(), 2)}
_tried["remount"] = subprocess.run(
    ["mount", "-o", "remount,rw", sys.prefix], capture_output=True).returncode
try:
    with open(_api, "a") as _file:
        _file.write("\\n# taken over\\n")
    _tried["append"] = 0
except OSError as _error:
    _tried["append"] = _error.errno
try:
    os.setuid(0)
    _tried["setuid"] = 0
except OSError as _error:
    _tried["setuid"] = _error.errno
_tried["unshare"] = _libc.unshare(0x10000000)
_tried["uid"] = os.getuid()
_tried["caps"] = [l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap")]
with open(_solutions) as _file:
    _tried["solutions"] = json.load(_file)
from attnlib import checks
_tried["solution"] = str(checks.solution("ex1_softmax_from_formula"))
print("TRIED " + json.dumps(_tried))
"""

# Fills every writable place: each is in RAM, with a size.
FILLS_THE_DISK = """
import json, os
def _fill(path, megabytes):
    try:
        with open(path, "wb") as file:
            for _ in range(megabytes):
                file.write(b"\\0" * 2**20)
    except OSError:
        pass
    return os.path.getsize(path) // 2**20
_sizes = {p: _fill(p, 1024) for p in ("/tmp/fill", "fill", "/dev/shm/fill")}
for _i in range(50_000):
    open(f"empty-{_i}", "w").close()
print("FILLED " + json.dumps(_sizes))
"""

# Children that together want more memory than the sandbox has (the class runs with
# --memory-limit 2), each far under the per-process limit.
FILLS_THE_MEMORY = """
import json, subprocess, sys, time
_hog = "x = b'1' * (1024 * 2**20); import time; time.sleep(30)"
_children = [subprocess.Popen([sys.executable, "-c", _hog]) for _ in range(3)]
time.sleep(10)
print("CHILDREN " + json.dumps([child.poll() for child in _children]))
for _child in _children:
    _child.kill()
"""

# 48 busy processes in sessions of their own, for 30 s, while the notebook waits.
BUSY_LOOPS = """
import os, time
_end = time.monotonic() + 30
for _ in range(48):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while time.monotonic() < _end:
                pass
        os._exit(0)
time.sleep(30)
"""
BURN = (
    "import time\n"
    "def _burn(seconds=0.5):\n"
    "    end = time.process_time() + seconds\n"
    "    while time.process_time() < end:\n"
    "        pass\n"
)
CPU_BOUND_BUT_RIGHT = {
    exercise: BURN + source.replace("):\n", "):\n    _burn()\n", 1)
    for exercise, source in RIGHT.items()
}

# The implementation an exercise asks for, reached through another name (issue 39): torch's
# aliases and operators, scipy, attnlib's other helpers, and autograd's other routes.
ALIASES = {
    "alias_torch_special": {
        "ex1_softmax_from_formula": "def softmax_from_formula(x):\n"
        "    return torch.special.softmax(x, dim=-1)\n",
        "ex2_stable_softmax": "def stable_softmax(x, dim=-1):\n"
        "    return torch.special.log_softmax(x, dim=dim).exp()\n",
        "ex3_softmax_backward": "def softmax_backward(p, g):\n"
        "    return torch.ops.aten._softmax_backward_data.default(g, p, -1, p.dtype)\n",
    },
    "alias_aten_operators": {
        "ex1_softmax_from_formula": "def softmax_from_formula(x):\n"
        "    return torch.ops.aten._softmax.default(x, -1, False)\n",
        "ex2_stable_softmax": "def stable_softmax(x, dim=-1):\n"
        "    return torch.exp(x - torch.special.logsumexp(x, dim=dim, keepdim=True))\n",
        "ex3_softmax_backward": "def softmax_backward(p, g):\n"
        "    return torch._log_softmax_backward_data(g * p, p.log(), -1, p.dtype)\n",
    },
    "alias_scipy": {
        "ex1_softmax_from_formula": "import scipy.special\n"
        "def softmax_from_formula(x):\n"
        "    return torch.from_numpy(scipy.special.softmax(x.numpy(), axis=-1))\n",
        "ex2_stable_softmax": "import scipy.special\n"
        "def stable_softmax(x, dim=-1):\n"
        "    return torch.from_numpy(scipy.special.softmax(x.numpy(), axis=dim))\n",
        "ex3_softmax_backward": "def softmax_backward(p, g):\n"
        "    def softmax(z):\n"
        "        e = torch.exp(z - z.amax(dim=-1, keepdim=True))\n"
        "        return e / e.sum(dim=-1, keepdim=True)\n"
        "    return torch.func.jvp(softmax, (p.log(),), (g,))[1]\n",
    },
    "alias_attnlib_helpers": {
        "ex1_softmax_from_formula": "def softmax_from_formula(x):\n"
        "    return attnlib.online_softmax(x, tile_size=max(x.shape[-1], 1))\n",
        "ex2_stable_softmax": "from attnlib.softmax import softmax_unchecked\n"
        "def stable_softmax(x, dim=-1):\n"
        "    return softmax_unchecked(x, dim=dim)\n",
        "ex3_softmax_backward": "import torch.autograd.forward_ad as fwAD\n"
        "def softmax_backward(p, g):\n"
        "    with fwAD.dual_level():\n"
        "        z = fwAD.make_dual(p.log(), g)\n"
        "        e = torch.exp(z - z.amax(dim=-1, keepdim=True))\n"
        "        return fwAD.unpack_dual(e / e.sum(dim=-1, keepdim=True)).tangent\n",
    },
}

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
# Not notebooks: each is put in place of the student's notebook by the fixture.
NOT_NOTEBOOKS = {
    "a_folder": lambda path, course: path.mkdir(),
    "a_broken_link": lambda path, course: path.symlink_to(path.parent / "gone.ipynb"),
    "a_fifo": lambda path, course: os.mkfifo(path),
    "links_dev_zero": lambda path, course: path.symlink_to("/dev/zero"),
    "links_the_answer_key": lambda path, course: path.symlink_to(
        course / "source" / "notebooks" / NOTEBOOK
    ),
    "links_a_classmate": lambda path, course: path.symlink_to(
        course / "submitted" / "honest" / "notebooks" / NOTEBOOK
    ),
}
SPREADSHEET_IDS = ('=HYPERLINK("x")', "+1", "-1", "@SUM(A1)")
# Handed out first (their names sort first), so that they are graded side by side.
BUSY, CPU_BOUND = "!busy_loops", "!cpu_bound_beside_them"


def _submission(answers: dict[str, str], *, first: str = "") -> dict[str, Any]:
    """The learner's edition with these answers, and ``first`` as a cell of its own after the
    notebook's first code cell (its imports)."""
    notebook = json.loads((REPO / "notebooks" / NOTEBOOK).read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell["source"] = answers[grade_id]
    if first:
        at = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code") + 1
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
        notebook["cells"].insert(at, {**cell, "source": first})
    return notebook


def _pasted_check_above() -> dict[str, Any]:
    notebook = _submission(RIGHT)
    cells = notebook["cells"]
    answer = next(i for i, c in enumerate(cells) if _grade_id(c) == "ex2_stable_softmax")
    check = next(c for c in cells if _grade_id(c) == "ex2_stable_softmax_check")
    cells.insert(answer, json.loads(json.dumps(check)))
    return notebook


def _grade_id(cell: dict[str, Any]) -> Any:
    return cell["metadata"].get("nbgrader", {}).get("grade_id")


def _with_odd_text() -> dict[str, Any]:
    notebook = _submission(RIGHT, first=PRINTS_A_SURROGATE)
    markdown = {"cell_type": "markdown", "metadata": {}, "source": "\ud800 in markdown"}
    notebook["cells"].insert(1, markdown)
    return notebook


def _grade_id_as_a_list() -> dict[str, Any]:
    notebook = _submission(RIGHT)
    for cell in notebook["cells"]:
        if _grade_id(cell) == "ex1_softmax_from_formula":
            cell["metadata"]["nbgrader"]["grade_id"] = ["ex1_softmax_from_formula"]
    return notebook


def _students(course: Path) -> dict[str, dict[str, Any]]:
    probe = PROBE_THE_WALLS.format(course=str(course))
    students = {
        "honest": _submission(RIGHT),
        "untouched": _submission({}),
        "noisy_but_right": _submission(NOISY_BUT_RIGHT),
        "probes_the_walls": _submission({**RIGHT, EXERCISES[0]: probe + RIGHT[EXERCISES[0]]}),
        "hangs_in_a_call": _submission({**RIGHT, EXERCISES[1]: HANG_IN_A_CALL}),
        "stalls_the_orders_pipe": _submission(RIGHT, first=STALLS_THE_ORDERS_PIPE),
        "cancels_the_call_timer": _submission({**RIGHT, EXERCISES[1]: CANCELS_THE_CALL_TIMER}),
        "forges_a_huge_frame": _submission(RIGHT, first=FORGES_A_HUGE_FRAME),
        "forges_done": _submission(RIGHT, first=FORGES_DONE),
        "prints_88_mb": _submission(RIGHT, first=PRINTS_88_MB),
        "pastes_a_check_above_its_answer": _pasted_check_above(),
        "writes_odd_text": _with_odd_text(),
        "grade_id_is_a_list": _grade_id_as_a_list(),
        "reads_the_environment": _submission(RIGHT, first=READS_THE_ENVIRONMENT),
        "breaks_the_walls": _submission(RIGHT, first=BREAKS_THE_WALLS),
        "fills_the_disk": _submission(RIGHT, first=FILLS_THE_DISK),
        "fills_the_memory": _submission(RIGHT, first=FILLS_THE_MEMORY),
        BUSY: _submission(RIGHT, first=BUSY_LOOPS),
        CPU_BOUND: _submission(CPU_BOUND_BUT_RIGHT),
    }
    for student in SPREADSHEET_IDS:
        students[student] = _submission(RIGHT)
    for student, answers in ALIASES.items():
        students[student] = _submission(answers)
    for student, template in HOSTILE.items():
        students[student] = _submission({e: template.format(name=NAMES[e]) for e in EXERCISES})
    return students


EXPECTED = {
    "honest": 3,
    "untouched": 0,
    "noisy_but_right": 3,
    "probes_the_walls": 3,
    "hangs_in_a_call": 2,
    "stalls_the_orders_pipe": 0,
    "cancels_the_call_timer": 1,
    "forges_a_huge_frame": 0,
    "forges_done": 0,
    "prints_88_mb": 3,
    "pastes_a_check_above_its_answer": 3,
    "writes_odd_text": 3,
    "grade_id_is_a_list": 0,
    "reads_the_environment": 3,
    "breaks_the_walls": 3,
    "fills_the_disk": 3,
    "fills_the_memory": 3,
    CPU_BOUND: 3,
    **dict.fromkeys(SPREADSHEET_IDS, 3),
    **dict.fromkeys(HOSTILE, 0),
    **dict.fromkeys(ALIASES, 0),
    **dict.fromkeys(NOT_NOTEBOOKS, 0),
    "links_the_source_folder": 0,
}
NOT_GRADED = {*NOT_NOTEBOOKS, "links_the_source_folder", "grade_id_is_a_list"}
# Graded, but what they score is their own load's business.
SCORE_NOT_ASSERTED = {BUSY}
CALL_SECONDS_ARG = str(CALL_SECONDS)


def _grading(*args: str) -> subprocess.CompletedProcess[str]:
    venv_bin = str(Path(sys.executable).parent)
    env = {"PATH": f"{venv_bin}:/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": "/tmp"}
    env["ATTNLIB_GRADING_SECRET"] = SECRET  # no run may see it
    return subprocess.run(
        [sys.executable, "-m", "attnlib.grading", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=1200,  # a stalled class fails the test instead of hanging it
    )


def _digests(course: Path) -> dict[str, str]:
    """A digest of every file of the course that grading must leave alone."""
    import nbgrader

    kept = [course / "nbgrader_config.py", *sorted((course / "source").rglob("*.ipynb"))]
    kept += sorted((course / "release").rglob("*.ipynb"))
    kept += [p for p in sorted((course / "submitted").rglob("*.ipynb")) if _plain_file(p)]
    kept += sorted((REPO / "attnlib" / "checks").rglob("*.py"))
    kept += [REPO / "attnlib" / "data" / "solutions.json", REPO / "nbgrader_config.py"]
    kept += [Path(nbgrader.__file__).parent / "api.py"]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in kept if p.is_file()}


def _plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _grades(course: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (course / "grades.csv").open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    return {(r["student"], r["exercise"]): r for r in rows}


def _csv_id(student: str) -> str:
    return "'" + student if student[0] in "=+-@" else student


def _feedback(course: Path, student: str) -> dict[str, Any]:
    path = course / "autograded" / student / "notebooks" / NOTEBOOK
    return json.loads(path.read_text(encoding="utf-8"))


def _printed(course: Path, student: str, prefix: str) -> list[str]:
    return [
        line.removeprefix(prefix)
        for cell in _feedback(course, student)["cells"]
        for output in cell.get("outputs", [])
        for line in "".join(output.get("text", "")).splitlines()
        if line.startswith(prefix)
    ]


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: `make grading-deps`")
    root = tmp_path_factory.mktemp("hostile") / "course"
    made = _grading("course-dir", str(root))
    assert made.returncode == 0, made.stdout + made.stderr
    for student, notebook in _students(root).items():
        folder = root / "submitted" / student / "notebooks"
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_text(json.dumps(notebook), encoding="utf-8")
    for student, make in NOT_NOTEBOOKS.items():
        folder = root / "submitted" / student / "notebooks"
        folder.mkdir(parents=True)
        make(folder / NOTEBOOK, root)
    (root / "submitted" / "links_the_source_folder").mkdir()
    (root / "submitted" / "links_the_source_folder" / "notebooks").symlink_to(
        root / "source" / "notebooks"
    )
    before = _digests(root)
    start = time.monotonic()
    graded = _grading(
        "autograde",
        str(root),
        "--workers",
        "2",
        "--call-time-limit",
        CALL_SECONDS_ARG,
        "--time-limit",
        str(NOTEBOOK_SECONDS),
        "--memory-limit",
        "2",
    )
    print(graded.stdout[-6000:], f"\n(the class took {time.monotonic() - start:.0f} s)")
    assert _digests(root) == before, "grading changed a file of the course"
    return root, graded.stdout + graded.stderr


@pytest.fixture(scope="module")
def course(graded_class: tuple[Path, str]) -> Path:
    return graded_class[0]


def test_every_student_has_rows_and_the_run_says_who_was_not_graded(
    graded_class: tuple[Path, str],
) -> None:
    course, printed = graded_class
    grades = _grades(course)
    everyone = {*EXPECTED, *SCORE_NOT_ASSERTED}
    assert {student for student, _ in grades} == {_csv_id(s) for s in everyone}
    statuses = {s: grades[(_csv_id(s), EXERCISES[0])]["status"] for s in everyone}
    assert {s for s, status in statuses.items() if status == "not graded"} == NOT_GRADED
    for student in NOT_GRADED:
        assert f"not graded: {student}/{NOTEBOOK}:" in printed, student


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_student_scores_what_they_solved(course: Path, student: str) -> None:
    grades = _grades(course)
    rows = [grades[(_csv_id(student), e)] for e in EXERCISES]
    assert sum(float(row["score"]) for row in rows) == EXPECTED[student], rows


def test_files_that_are_not_notebooks_are_refused_for_their_student_alone(course: Path) -> None:
    grades = _grades(course)
    for student in NOT_NOTEBOOKS:
        reason = grades[(student, EXERCISES[0])]["reason"]
        assert reason.startswith(f"✗ not graded: {NOTEBOOK} it is a"), reason
        assert "not a notebook file" in reason
    reason = grades[("links_the_source_folder", EXERCISES[0])]["reason"]
    assert "notebooks is a symbolic link, not a folder" in reason
    assert (
        "metadata.nbgrader.grade_id that is a list"
        in (grades[("grade_id_is_a_list", EXERCISES[0])]["reason"])
    )
    shown = json.dumps(_feedback(course, "links_the_answer_key"))
    assert "BEGIN SOLUTION" not in shown and "not graded" in shown


def test_a_stalled_pipe_a_cancelled_timer_and_forged_frames_end_their_own_run(
    course: Path,
) -> None:
    grades = _grades(course)
    stalled = grades[("stalls_the_orders_pipe", EXERCISES[0])]
    assert "stopped reading the grader's messages" in stalled["reason"], stalled
    cancelled = grades[("cancels_the_call_timer", EXERCISES[1])]
    assert f"past its limit of {CALL_SECONDS} s" in cancelled["reason"], cancelled
    assert cancelled["status"] == "not checked"
    huge = grades[("forges_a_huge_frame", EXERCISES[0])]
    assert "sent what is not a message" in huge["reason"], huge
    assert all(grades[("forges_done", e)]["status"] == "not checked" for e in EXERCISES)


def test_a_check_pasted_above_its_answer_checks_the_answer(course: Path) -> None:
    shown = json.dumps(_feedback(course, "pastes_a_check_above_its_answer"))
    assert "a copy of the check of ex2_stable_softmax" in shown


def test_a_huge_output_keeps_the_feedback_cut_with_a_note(course: Path) -> None:
    feedback = course / "autograded" / "prints_88_mb" / "notebooks" / NOTEBOOK
    assert feedback.stat().st_size < 5 * 2**20
    assert "characters cut by the grader" in feedback.read_text(encoding="utf-8")


def test_odd_text_is_written_as_replacement_characters(course: Path) -> None:
    shown = json.dumps(_feedback(course, "writes_odd_text"), ensure_ascii=False)
    assert "\ufffd a lone surrogate" in shown and "\ufffd in markdown" in shown


def test_spreadsheet_formulas_are_escaped_in_the_csv_and_kept_in_the_gradebook(
    course: Path,
) -> None:
    from nbgrader.api import Gradebook

    text = (course / "grades.csv").read_text(encoding="utf-8")
    for student in SPREADSHEET_IDS:
        assert f"\n{student}," not in text and f'\n"{student}' not in text
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        ids = {student.id for student in gradebook.students}
    assert set(SPREADSHEET_IDS) <= ids


def test_no_run_sees_the_graders_environment(course: Path) -> None:
    shown = json.dumps(_feedback(course, "reads_the_environment"))
    assert "ENVIRONS" in shown and SECRET not in shown
    for student in EXPECTED:
        path = course / "autograded" / student / "notebooks" / NOTEBOOK
        assert SECRET not in path.read_text(encoding="utf-8"), student


def test_the_walls_hold_against_a_run_that_tries_to_take_them_down(course: Path) -> None:
    (tried,) = _printed(course, "breaks_the_walls", "TRIED ")
    tried = json.loads(tried)
    assert tried["umount"] == -1 and tried["unshare"] == -1
    assert tried["remount"] != 0 and tried["append"] != 0 and tried["setuid"] != 0
    assert tried["uid"] != 0 and all(set(c) == {"0"} for c in tried["caps"]), tried
    assert list(tried["solutions"]) == ["withheld"], tried  # hidden behind a note
    assert tried["solution"].startswith("Worked solutions are withheld"), tried


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root only where the test does")
def test_as_root_the_run_is_an_unprivileged_id_of_its_own(course: Path) -> None:
    (tried,) = _printed(course, "breaks_the_walls", "TRIED ")
    assert 1_500_000_000 <= json.loads(tried)["uid"] < 1_900_000_000


def test_writing_fills_only_the_sandboxs_own_ram_backed_places(course: Path) -> None:
    (filled,) = _printed(course, "fills_the_disk", "FILLED ")
    sizes = json.loads(filled)
    assert sizes["/tmp/fill"] <= 512 and sizes["fill"] <= 512 and sizes["/dev/shm/fill"] <= 64
    assert not list(Path("/tmp").glob("fill")), "a file reached the host's /tmp"


@pytest.mark.skipif(
    os.geteuid() != 0 and not os.access("/sys/fs/cgroup", os.W_OK),
    reason="no cgroup can be made here: the guide names what the sandbox keeps instead",
)
def test_the_sandboxs_memory_is_limited_as_a_whole(course: Path) -> None:
    (children,) = _printed(course, "fills_the_memory", "CHILDREN ")
    assert json.loads(children).count(-9) >= 2  # 3 GiB of children in 2 GiB: killed


def test_a_cpu_bound_classmate_keeps_full_marks_beside_48_busy_processes(course: Path) -> None:
    grades = _grades(course)
    assert all(float(grades[(CPU_BOUND, e)]["score"]) == 1 for e in EXERCISES)


def test_calling_attnlib_scores_0_and_says_why(course: Path) -> None:
    grades = _grades(course)
    for exercise in EXERCISES[:2]:
        row = grades[("calls_attnlib", exercise)]
        assert float(row["score"]) == 0 and "calls attnlib.softmax" in row["reason"], row
        assert row["mistake"].startswith("calls ")


@pytest.mark.parametrize("student", sorted(ALIASES))
def test_an_alias_of_the_implementation_is_refused_and_named(course: Path, student: str) -> None:
    grades = _grades(course)
    for exercise in EXERCISES:
        row = grades[(student, exercise)]
        assert float(row["score"]) == 0 and row["status"] == "failed", row
        assert "which already does what this exercise asks" in row["reason"], row
        assert row["mistake"].startswith("calls "), row


def test_a_tensor_subclass_is_refused_by_name(course: Path) -> None:
    row = _grades(course)[("returns_a_tensor_subclass", EXERCISES[0])]
    assert float(row["score"]) == 0, row
    assert "Agreeable, a subclass of torch.Tensor" in row["reason"], row


def test_the_gradebook_holds_the_grades_and_no_manual_score(course: Path) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, expected in EXPECTED.items():
            submission = gradebook.find_submission("notebooks", student)
            notebook = next(nb for nb in submission.notebooks if nb.name == NOTEBOOK[:-6])
            assert notebook.score == expected, student
            assert all(grade.manual_score is None for grade in notebook.grades), student


def test_warnings_and_stderr_show_in_the_feedback(course: Path) -> None:
    shown = json.dumps(_feedback(course, "noisy_but_right"))
    assert "a warning from a right answer" in shown or "debugging" in shown


def test_the_sandbox_has_no_network_and_writes_only_its_scratch(course: Path) -> None:
    printed = _printed(course, "probes_the_walls", "WALLS ")
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
    row = grades[("hangs_in_a_call", EXERCISES[1])]
    assert float(row["score"]) == 0 and f"over {CALL_SECONDS} s" in row["reason"], row
    assert all(float(grades[("hangs_in_a_call", e)]["score"]) == 1 for e in EXERCISES[::2])


# The Dask run regrades these: the attacks on the scores and the refused files.
ON_DASK = ["honest", "untouched", "noisy_but_right", *HOSTILE, "links_a_classmate", "+1"]


def test_a_two_worker_dask_cluster_gives_the_same_grades(course: Path, tmp_path: Path) -> None:
    from distributed import LocalCluster

    serial = _grades(course)
    again = tmp_path / "course"
    # Not the submitted folder: copying a FIFO waits on it.
    shutil.copytree(course, again, ignore=shutil.ignore_patterns("submitted", "autograded"))
    for student in ON_DASK:
        source = course / "submitted" / student / "notebooks" / NOTEBOOK
        target = again / "submitted" / student / "notebooks" / NOTEBOOK
        target.parent.mkdir(parents=True)
        if source.is_symlink():
            target.symlink_to(str(source.readlink()).replace(str(course), str(again)))
        else:
            shutil.copy(source, target)
    (again / "grades.csv").unlink()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster:
        graded = _grading(
            "autograde",
            str(again),
            "--scheduler",
            cluster.scheduler_address,
            "--call-time-limit",
            CALL_SECONDS_ARG,
            "--time-limit",
            str(NOTEBOOK_SECONDS),
        )
    assert graded.returncode == 1, graded.stdout[-3000:] + graded.stderr[-3000:]
    on_dask = _grades(again)
    assert on_dask == {key: row for key, row in serial.items() if key[0] in map(_csv_id, ON_DASK)}


def _workers(pid: int) -> list[int]:
    """The grading workers among the children of the process ``pid``."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="utf-8").split()
    found = []
    for child in children:
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in command:
            found.append(int(child))
    return found


def test_a_dead_worker_is_replaced_and_its_notebook_graded_again(
    course: Path, tmp_path: Path
) -> None:
    """A worker killed (as the out-of-memory killer would) takes nobody's grade with it."""
    again = tmp_path / "course"
    shutil.copytree(course, again, ignore=shutil.ignore_patterns("submitted", "autograded"))
    (again / "grades.csv").unlink()
    slow = _submission(RIGHT, first="import time\ntime.sleep(12)")
    students = {"a_slow": slow, "b_slow": slow, "honest": _submission(RIGHT), "untouched": None}
    for student, notebook in students.items():
        folder = again / "submitted" / student / "notebooks"
        folder.mkdir(parents=True)
        notebook = notebook or _submission({})
        (folder / NOTEBOOK).write_text(json.dumps(notebook), encoding="utf-8")
    venv_bin = str(Path(sys.executable).parent)
    env = {"PATH": f"{venv_bin}:/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": "/tmp"}
    command = [sys.executable, "-m", "attnlib.grading", "autograde", str(again), "--workers", "2"]
    grading = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and grading.poll() is None:
        time.sleep(1)
        workers = _workers(grading.pid)
        if len(workers) == 2:  # both busy with the slow notebooks, a few seconds from now
            time.sleep(8)
            killed = workers[0]
            os.kill(killed, signal.SIGKILL)
    printed, _ = grading.communicate(timeout=600)
    assert killed is not None, printed
    assert grading.returncode == 0, printed
    assert "grader failed" not in printed
    grades = _grades(again)
    expected = {"a_slow": 3, "b_slow": 3, "honest": 3, "untouched": 0}
    for student, score in expected.items():
        assert sum(float(grades[(student, e)]["score"]) for e in EXERCISES) == score, printed
