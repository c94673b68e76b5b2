"""The course on a simulated Colab: every notebook of the learner's edition, opened with no
checkout beside it, installs attnlib in its first cell and runs top to bottom.

The simulation: a fresh venv with Colab's versions of the Jupyter, widget and numeric
packages preinstalled (``colab_runtime.txt``: ipywidgets 7.7.1, ipykernel 6.17.1, IPython
7.34), and a ``google.colab`` module that the kernel imports as it starts, as Colab's does.
Each notebook is copied alone into a scratch folder and executed there in a kernel of that
venv (nbclient drives it from the course's venv, as Colab's own front end would); its first
cell's source is the real one, with the course's repository (a
``git+https://github.com/...`` URL, unreachable here) replaced by a wheel of this checkout.
The outputs are not compared (Colab's versions print differently); an error in a cell not
tagged ``raises-exception`` fails.

What is not simulated: Colab's Python (3.13 in 2026) and its torch (2.11.0+cpu). The only
CPU build of torch these machines can install is 2.13.0 for Python 3.11, so the venv is
Python 3.11 with that torch preinstalled; the test checks that the install leaves it, and
every other preinstalled package, exactly as it was.

Slow (a venv of about 2 GB, then every notebook: about 12 minutes on 2 cores);
``make colab`` runs it, as does ``make test``.
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
from packaging.utils import canonicalize_name
from setup_runs import checkout_files, learner_env

from instructors import editions

REPO = Path(__file__).resolve().parents[2]
RUNTIME = Path(__file__).with_name("colab_runtime.txt")
RUNNER = REPO / "tests" / "support" / "run_notebooks.py"
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WORKERS = 2
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class SimulatedColab:
    venv: Path
    wheel: Path
    before: dict[str, str]  # the preinstalled packages, name -> version
    after: dict[str, str]
    imported_before: subprocess.CompletedProcess
    results: dict[str, dict]
    setup_seconds: float


def _pip(venv: Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        env=learner_env(venv),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _installed(venv: Path) -> dict[str, str]:
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
        env=learner_env(venv),
        capture_output=True,
        text=True,
        check=True,
    )
    listing = json.loads(listed.stdout)
    return {canonicalize_name(entry["name"]): entry["version"] for entry in listing}


def _colab_module(venv: Path, ipython_dir: Path) -> None:
    """A ``google.colab`` module, and an IPython start-up file that imports it."""
    (site_packages,) = (venv / "lib").glob("python3.*/site-packages")
    colab = site_packages / "google" / "colab"
    colab.mkdir(parents=True)
    (colab / "__init__.py").write_text(
        '"""Stand-in for Colab\'s own module."""\n', encoding="utf-8"
    )
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text(
        "import google.colab  # as Colab's kernel does\n", encoding="utf-8"
    )


@pytest.fixture(scope="module")
def colab(tmp_path_factory: pytest.TempPathFactory) -> SimulatedColab:
    root = tmp_path_factory.mktemp("colab")
    checkout = root / "checkout"
    for name in checkout_files():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, checkout / name)
    wheels = root / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), "."],
        cwd=checkout,
        capture_output=True,
        check=True,
    )
    (wheel,) = wheels.glob("attnlib-*.whl")

    start = time.perf_counter()
    venv = root / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    # Colab's torch is a CPU build from PyTorch's index; PyPI's Linux torch is a CUDA build
    # of several GB. (Where that index is out of reach, pip finds the same wheel on disk.)
    # torch alone from there: pip asks an extra index about every package it installs.
    _pip(
        venv,
        "install",
        "--quiet",
        "--no-deps",
        "torch==2.13.0",
        "--extra-index-url",
        TORCH_CPU_INDEX,
    )
    _pip(venv, "install", "--quiet", "torch==2.13.0")  # and its dependencies, from PyPI
    _pip(venv, "install", "--quiet", "-r", str(RUNTIME))
    ipython_dir = root / "ipython"
    _colab_module(venv, ipython_dir)
    setup_seconds = time.perf_counter() - start
    before = _installed(venv)
    env = {**learner_env(venv), "IPYTHONDIR": str(ipython_dir), "OMP_NUM_THREADS": "1"}
    imported_before = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import attnlib"],
        cwd=root,  # not this checkout, whose attnlib/ would be found first
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    repository, branch = editions.course_repository()
    source = f"git+https://github.com/{repository}@{branch}"
    results: dict[str, dict] = {}
    # Notebook 00 alone first: its first cell installs attnlib into the fresh venv. The
    # others then run two at a time; their first cells find attnlib installed.
    for batch, workers in ((NOTEBOOKS[:1], 1), (NOTEBOOKS[1:], WORKERS)):
        copies = []
        for notebook in batch:
            folder = root / "runs" / notebook.stem
            folder.mkdir(parents=True)
            copies.append(shutil.copy(notebook, folder))
        out = root / f"results-{batch[0].stem}.json"
        ran = subprocess.run(
            [
                *(sys.executable, str(RUNNER), str(out), str(workers)),
                *(str(venv / "bin" / "python"), *map(str, copies)),
                *("--replace", source, wheel.as_uri()),
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
        results |= json.loads(out.read_text(encoding="utf-8"))
    seconds = sum(result["seconds"] for result in results.values())
    retried = [name for name, result in results.items() if result["retried"]]
    print(
        f"\nsimulated Colab: set-up {setup_seconds:.0f} s; notebooks {seconds:.0f} s in all"
        f" (run again after a lost kernel reply: {', '.join(retried) or 'none'})"
    )
    return SimulatedColab(
        venv, wheel, before, _installed(venv), imported_before, results, setup_seconds
    )


def test_attnlib_is_not_there_until_the_first_cell_installs_it(colab: SimulatedColab) -> None:
    assert colab.imported_before.returncode != 0
    assert "No module named 'attnlib'" in colab.imported_before.stderr
    assert colab.after["attnlib"] == colab.wheel.name.split("-")[1]


def test_attnlib_is_installed_from_the_course_source_not_editable(colab: SimulatedColab) -> None:
    (site_packages,) = (colab.venv / "lib").glob("python3.*/site-packages")
    (record,) = site_packages.glob("attnlib-*.dist-info")
    origin = json.loads((record / "direct_url.json").read_text(encoding="utf-8"))
    assert origin["url"] == colab.wheel.as_uri()
    assert not origin.get("dir_info", {}).get("editable", False)
    assert (site_packages / "attnlib" / "__init__.py").is_file()  # a copy, not a link


def test_colabs_own_packages_are_left_alone(colab: SimulatedColab) -> None:
    changed = {
        name: f"{version} -> {colab.after.get(name)}"
        for name, version in colab.before.items()
        if colab.after.get(name) != version
    }
    assert not changed
    for name in ("torch", "ipykernel", "ipython", "ipywidgets", "jupyter-client", "notebook"):
        assert name in colab.before, name


@pytest.mark.parametrize("notebook", [path.name for path in NOTEBOOKS])
def test_the_notebook_runs_top_to_bottom(colab: SimulatedColab, notebook: str) -> None:
    result = colab.results[notebook]
    if result["retried"]:
        print(f"\n{notebook}: run again after a lost kernel reply ({result['retried']})")
    assert result["error"] is None, result["error"]


def test_every_notebooks_first_cell_installs_from_the_course_source() -> None:
    repository, branch = editions.course_repository()
    expected = editions.colab_install_source(repository, branch)
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = next(cell for cell in cells if cell["cell_type"] == "code")
        assert "".join(first["source"]) == expected, path.name
    assert f"git+https://github.com/{repository}@{branch}" in expected
