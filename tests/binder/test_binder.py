"""The course as Binder builds it: a venv made from exactly the files of ``binder/``, in the
order repo2docker uses them, then notebook 01 of the learner's edition run with its GloVe
vectors.

repo2docker, for a repository with a ``binder/`` folder: it reads the Python version from
``binder/runtime.txt``; it copies the whole repository first (``binder/requirements.txt``
names a local file, the constraints), then runs ``pip install -r binder/requirements.txt``
from the repository's root; it does not run ``pip install .`` (the folder exists); then it
runs ``binder/postBuild``. Its own environment brings JupyterLab and ipykernel; here
ipykernel, at the course's version, stands in for them, and nbclient from the course's venv
drives the notebook in a kernel of the built environment.

Not tried: Binder itself and repo2docker's Docker build (no Docker engine runs here), and
PyTorch's CPU index named in ``binder/requirements.txt`` (unreachable here: pip takes the
same torch 2.13.0+cpu from this machine's wheel folder).

Slow (a venv built with no pip cache, as repo2docker builds it: about 6 minutes); ``make binder``
runs it, as does ``make test``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from setup_runs import checkout_files, learner_env

REPO = Path(__file__).resolve().parents[2]
BINDER = REPO / "binder"
RUNNER = REPO / "tests" / "support" / "run_notebooks.py"
NOTEBOOK = "01_dot_products_and_embeddings.ipynb"


@dataclass(frozen=True)
class BinderBuild:
    checkout: Path
    python: Path
    env: dict[str, str]
    seconds: float


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def binder(tmp_path_factory: pytest.TempPathFactory) -> BinderBuild:
    checkout = tmp_path_factory.mktemp("binder") / "repo"
    for name in checkout_files():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, checkout / name)
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    wanted = tuple(int(part) for part in runtime.removeprefix("python-").split("."))
    assert sys.version_info[: len(wanted)] == wanted, f"these tests need the {runtime} of Binder"

    start = time.perf_counter()
    venv = checkout.parent / "srv-env"
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    env = learner_env(venv)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--no-cache-dir"]
    _run([*pip, "-r", "binder/requirements.txt"], checkout, env)
    _run(["bash", "binder/postBuild"], checkout, env)
    seconds = time.perf_counter() - start
    _run([*pip, "--quiet", "-c", "constraints.txt", "ipykernel"], checkout, env)
    print(f"\nBinder's environment: {seconds:.0f} s")
    return BinderBuild(checkout, venv / "bin" / "python", env, seconds)


def test_runtime_is_python_3_11() -> None:
    # The GloVe wheel needs Python >= 3.11; repo2docker's default is 3.10.
    assert (BINDER / "runtime.txt").read_text(encoding="utf-8") == "python-3.11\n"


def test_torch_is_the_cpu_build_and_attnlib_is_the_checkout_editable(binder: BinderBuild) -> None:
    probe = _run(
        [
            str(binder.python),
            "-c",
            "import attnlib, torch; print(attnlib.__file__, torch.__version__)",
        ],
        binder.checkout.parent,
        binder.env,
    )
    module, torch_version = probe.stdout.split()
    assert Path(module) == binder.checkout / "attnlib" / "__init__.py"
    assert torch_version == "2.13.0+cpu"


def test_notebook_01_runs_with_its_glove_vectors(binder: BinderBuild, tmp_path: Path) -> None:
    copy = Path(shutil.copy(binder.checkout / "notebooks" / NOTEBOOK, tmp_path))
    results = tmp_path / "results.json"
    runner = [sys.executable, str(RUNNER), str(results), "1", str(binder.python), str(copy)]
    _run(runner, tmp_path, binder.env)
    outcome = json.loads(results.read_text(encoding="utf-8"))[NOTEBOOK]
    assert outcome["error"] is None, outcome["error"]
    executed = json.loads(copy.with_suffix(".executed.ipynb").read_text(encoding="utf-8"))
    printed = "".join(
        "".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", ""))
        for cell in executed["cells"]
        if "word_vectors.analogy(glove" in "".join(cell["source"])
        for output in cell.get("outputs", [])
    )
    assert "queen" in printed  # king - man + woman, from the real vectors
