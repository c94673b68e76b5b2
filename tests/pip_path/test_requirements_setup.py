"""A learner's set-up without make, exactly as docs/setup.md gives it, from a copy of this
checkout: ``python -m venv .venv``, ``.venv/bin/python -m pip install -r requirements.txt``,
then the instructors' notebooks 01, 02 and 11 (``instructors/notebooks/``, whose outputs are
stored) run under strict nbval in that venv.

Slow (a whole venv is built: about two minutes); `make pip-path` runs it, as does `make test`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from setup_runs import PipSetup, build_pip_setup, describe_pip_setup, learner_env

NOTEBOOKS = [
    "01_dot_products_and_embeddings.ipynb",
    "02_softmax_and_scaling.ipynb",
    "11_pretrained_model.ipynb",
]


@pytest.fixture(scope="module")
def learner_setup(tmp_path_factory: pytest.TempPathFactory) -> PipSetup:
    """A copy of the checkout with .venv built the plain-pip way of docs/setup.md."""
    setup = build_pip_setup(tmp_path_factory.mktemp("clone") / "attention-course")
    print(f"\n{describe_pip_setup(setup)}")
    return setup


def _run(setup: PipSetup, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(setup.python), *args],
        cwd=cwd or setup.checkout,
        env=learner_env(setup.checkout / ".venv"),
        capture_output=True,
        text=True,
        check=False,
    )


def test_attnlib_is_this_checkout_installed_editable(learner_setup: PipSetup) -> None:
    probe = _run(
        learner_setup,
        "-c",
        "import attnlib, torch; print(attnlib.__file__); print(torch.__version__)",
        cwd=learner_setup.checkout.parent,  # not the checkout: the import must not rely on the cwd
    )
    assert probe.returncode == 0, probe.stderr
    module_file, torch_version = probe.stdout.split()
    assert Path(module_file) == learner_setup.checkout / "attnlib" / "__init__.py"
    assert torch_version.split("+")[0] == "2.13.0"


def test_the_notebooks_models_and_data_are_installed(learner_setup: PipSetup) -> None:
    probe = _run(
        learner_setup,
        "-c",
        "import attnlib; from attnlib.course import word_vectors; "
        "word_vectors.load_glove(); attnlib.load_minilm(); print('ok')",
    )
    assert probe.returncode == 0 and probe.stdout.strip() == "ok", probe.stderr[-2000:]


def test_notebooks_01_02_and_11_pass_strict_nbval(learner_setup: PipSetup) -> None:
    completed = _run(
        learner_setup,
        "-m",
        "pytest",
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        "nbval_sanitize.cfg",
        "-p",
        "no:cacheprovider",
        *NOTEBOOKS,
        cwd=learner_setup.checkout / "instructors" / "notebooks",
    )
    assert completed.returncode == 0, completed.stdout[-5000:] + completed.stderr[-2000:]
    assert "passed" in completed.stdout
