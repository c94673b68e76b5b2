"""The container route of the grader (``--sandbox docker``), without a Docker engine.

This machine has no Docker engine, so a stand-in ``docker`` executable plays it: ``docker run``
records its options, mounts the scratch directory where the container would (with bubblewrap)
and runs the grading image's command; ``docker kill`` kills it. What is tested is the grader's
side: the options that make the wall (no network, read-only, no capabilities, limits), the
frames over the container's standard input and output (which a notebook that writes to fd 1
cannot corrupt), and the container killed, not just its client, when a run runs out of time.
Needs bubblewrap (`make grading-deps`).
"""

from __future__ import annotations

import itertools
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from attnlib.grading.grader.judge import grade_notebook
from attnlib.grading.grader.wall import Docker, Limits

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "02_softmax_and_scaling.ipynb"

STAND_IN = """#!{python}
import json, os, pathlib, signal, sys
from attnlib.grading.grader.wall import Bubblewrap, Limits

state = pathlib.Path({state!r})
args = sys.argv[1:]
if args[0] == "image":
    sys.exit(0)
if args[0] == "kill":
    (state / "killed").write_text(args[1], encoding="utf-8")
    os.killpg(int((state / args[1]).read_text(encoding="utf-8")), signal.SIGKILL)
    sys.exit(0)
assert args[0] == "run", args
(state / "run.json").write_text(json.dumps(args), encoding="utf-8")
with_value = {{"--name", "--network", "--tmpfs", "--cap-drop", "--security-opt", "--pids-limit",
              "--cpus", "--memory", "--memory-swap", "--ulimit", "--volume", "--workdir", "--env"}}
options, i = {{}}, 1
while args[i].startswith("--"):
    if args[i] in with_value:
        options.setdefault(args[i], []).append(args[i + 1])
        i += 2
    else:
        i += 1
image, inner = args[i], args[i + 1:]
# The "container": the image's command behind the bubblewrap wall, over this process's
# standard input and output, as an unprivileged user with no capabilities.
launched = Bubblewrap().launch([{python!r}, *inner[1:]], Limits(), stdin=0, stdout=1, stderr=2)
(state / options["--name"][0]).write_text(str(launched.process.pid), encoding="utf-8")
code = launched.process.wait()
launched.release()
sys.exit(code)
"""


def _answer_key(extra_first_cell: str | None = None) -> dict[str, Any]:
    notebook = json.loads((REPO / "instructors" / "notebooks" / NOTEBOOK).read_text("utf-8"))
    if extra_first_cell is not None:
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
        notebook["cells"].insert(0, {**cell, "source": extra_first_cell})
    return notebook


@pytest.fixture
def docker(tmp_path: Path) -> tuple[Docker, Path]:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is not installed: `make grading-deps`")
    state = tmp_path / "docker-state"
    state.mkdir()
    executable = tmp_path / "docker"
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    executable.write_text(
        STAND_IN.format(python=sys.executable, state=str(state), path=path), encoding="utf-8"
    )
    executable.chmod(0o755)
    return Docker(image="attnlib-grader", executable=str(executable)), state


def _grade(sandbox: Docker, notebook: dict[str, Any], seconds: float = 300):
    course = (REPO / "notebooks" / NOTEBOOK).read_bytes()
    submission = json.dumps(notebook).encode()
    limits = Limits(wall_seconds=seconds)
    return grade_notebook(course, submission, name=NOTEBOOK, sandbox=sandbox, limits=limits)


def test_the_container_is_walled_in(docker: tuple[Docker, Path], tmp_path: Path) -> None:
    sandbox, state = docker
    assert sandbox.available()
    grade = _grade(sandbox, _answer_key())
    assert grade.score == 3, [e.report for e in grade.exercises]
    run = json.loads((state / "run.json").read_text(encoding="utf-8"))
    pairs = set(itertools.pairwise(run))
    for pair in [
        ("--network", "none"),
        ("--cap-drop", "ALL"),
        ("--security-opt", "no-new-privileges"),
        ("--memory", f"{Limits().sandbox_memory_bytes // 2**20}m"),
        ("--memory-swap", f"{Limits().sandbox_memory_bytes // 2**20}m"),
        ("--pids-limit", str(Limits().processes)),
        ("--cpus", "1"),
        ("--ulimit", f"fsize={Limits().file_bytes}"),
    ]:
        assert pair in pairs, pair
    (volume,) = [b for a, b in pairs if a == "--volume"]
    assert volume.endswith(":/grading:rw"), volume
    assert {"--rm", "--read-only", "--interactive", "--init"} <= set(run)
    assert run[run.index("attnlib-grader") + 1 :][:3] == [
        "python",
        "-m",
        "attnlib.grading.sandbox.notebook",
    ]
    assert not any(arg.startswith("PATH=") for arg in run)  # the image's own PATH


def test_writing_to_fd_1_does_not_break_the_frames(
    docker: tuple[Docker, Path], tmp_path: Path
) -> None:
    sandbox, _ = docker
    noise = "import os\nos.write(1, b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x10{not a frame}')"
    grade = _grade(sandbox, _answer_key(noise))
    assert grade.score == 3, (grade.problem, [e.report for e in grade.exercises])


def test_a_run_out_of_time_has_its_container_killed(
    docker: tuple[Docker, Path], tmp_path: Path
) -> None:
    sandbox, state = docker
    grade = _grade(sandbox, _answer_key("while True:\n    pass"), seconds=20)
    assert grade.score == 0
    assert "time limit" in grade.problem
    name = json.loads((state / "run.json").read_text(encoding="utf-8"))
    assert (state / "killed").read_text(encoding="utf-8") == name[name.index("--name") + 1]
