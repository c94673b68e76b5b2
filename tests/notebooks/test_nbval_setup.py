"""The notebook check really compares outputs: a wrong stored output fails it.

Runs nbval with the flags `make nbval` uses on tiny generated notebooks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "instructors" / "notebooks" / "nbval_sanitize.cfg"


def _notebook(source: str, stored_text: str) -> dict:
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "c1",
        "metadata": {},
        "source": source,
        "outputs": [{"output_type": "stream", "name": "stdout", "text": stored_text}],
    }
    return {
        "cells": [cell],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _run_nbval(tmp_path: Path, notebook: dict) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "probe.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env"]
    command += ["--nbval-sanitize-with", str(SANITIZE), "-p", "no:cacheprovider", str(path)]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )


def test_makefile_runs_strict_nbval_with_the_sanitize_file() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"pytest --nbval --nbval-current-env", makefile)
    assert "--nbval-lax" not in makefile
    assert "--nbval-sanitize-with instructors/notebooks/nbval_sanitize.cfg" in makefile


@pytest.mark.parametrize(
    ("source", "stored", "passes"),
    [
        ("print(1 + 1)", "2\n", True),
        ("print(1 + 1)", "3\n", False),
        # Object addresses differ on every run; the sanitize file makes them compare equal.
        ("print(hex(id(object())))", "0x7f0000001234\n", True),
    ],
    ids=["same output", "changed output", "address sanitized"],
)
def test_nbval_compares_stored_outputs(
    tmp_path: Path, source: str, stored: str, passes: bool
) -> None:
    result = _run_nbval(tmp_path, _notebook(source, stored))
    assert (result.returncode == 0) is passes, result.stdout[-2000:]
