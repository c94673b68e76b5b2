"""Every benchmark has a real command line (benchmarks/command_line.py): `python -m
benchmarks.NAME --help` prints its usage, its docstring and every flag, runs nothing and writes
nothing; `--no-save` measures and prints but writes no file."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import equivalence, results

ROOT = Path(__file__).resolve().parents[2]
# A benchmark is a module of benchmarks/ that runs as a program; the helpers beside them
# (command_line.py, results/) do not.
BENCHMARKS = sorted(
    path.stem
    for path in (ROOT / "benchmarks").glob("*.py")
    if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
)
# A --help that parses its arguments first answers in the time the module takes to import;
# one that runs its benchmark instead takes minutes, and is stopped here.
HELP_SECONDS = 30
# The cheapest benchmark that writes a file: measurements rewrites docs/measurements.md.
NO_SAVE = ["measurements", "--no-save"]

# Command lines `python -m benchmarks.NAME ARGS…`, each run as `python -m` runs it (runpy, as
# `__main__`), all in one process so that torch and attnlib are imported once, not once each.
COMMAND_LINES = """
import contextlib, io, json, runpy, signal, sys, time

def too_long(signum, frame):
    raise TimeoutError(f"still running after {limit} s")

limit, command_lines = int(sys.argv[1]), json.loads(sys.argv[2])
signal.signal(signal.SIGALRM, too_long)
found = []
for name, *arguments in command_lines:
    out, err = io.StringIO(), io.StringIO()
    sys.argv = [name, *arguments]
    start = time.perf_counter()
    signal.alarm(limit)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=True)
        code = "ran to its end without exiting"
    except SystemExit as stop:
        code = stop.code or 0
    except BaseException as error:
        code = repr(error)
    finally:
        signal.alarm(0)
    found.append({
        "code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
        "seconds": time.perf_counter() - start,
    })
sys.__stdout__.write(json.dumps(found))
"""


def checkout_files() -> dict[str, tuple[int, int] | None]:
    """Every file of the checkout that git does not ignore, with its modification time and
    size (None: listed by git but gone)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    files: dict[str, tuple[int, int] | None] = {}
    for name in filter(None, listed):
        try:
            status = os.stat(ROOT / name)
        except FileNotFoundError:
            files[name] = None
        else:
            files[name] = (status.st_mtime_ns, status.st_size)
    return files


def changed_files(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )


def undocumented_arguments(help_text: str) -> list[str]:
    """The arguments that --help lists without a word of help: an entry of the argument
    sections (two spaces in) with no text after it on its line or on an indented next line."""
    lines = help_text.splitlines()
    bare = []
    in_arguments = False
    for i, line in enumerate(lines):
        if line and not line.startswith(" "):
            in_arguments = line.endswith(("arguments:", "options:"))
            continue
        if not in_arguments or not re.match(r"  \S", line):
            continue
        described_here = re.match(r"  \S.*?\s{2,}\S", line)
        described_below = i + 1 < len(lines) and lines[i + 1].startswith("   ")
        if not (described_here or described_below):
            bare.append(line.strip())
    return bare


def first_docstring_line(name: str) -> str:
    source = (ROOT / "benchmarks" / f"{name}.py").read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source), clean=False)
    assert docstring, f"benchmarks/{name}.py has no docstring to describe it"
    return docstring.splitlines()[0]


@pytest.fixture(scope="module")
def every_run() -> dict[str, Any]:
    """What each benchmark's --help did, then ``NO_SAVE``, and the files of the checkout they
    changed."""
    command_lines = [[name, "--help"] for name in BENCHMARKS] + [NO_SAVE]
    before = checkout_files()
    ran = subprocess.run(
        [sys.executable, "-c", COMMAND_LINES, str(HELP_SECONDS), json.dumps(command_lines)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HELP_SECONDS * len(command_lines),
    )
    assert ran.returncode == 0, ran.stderr
    *helps, no_save = json.loads(ran.stdout)
    return {
        "help": dict(zip(BENCHMARKS, helps, strict=True)),
        "no save": no_save,
        "changed": changed_files(before, checkout_files()),
    }


def test_the_benchmarks_are_found() -> None:
    assert {"attention", "gpt", "measurements", "package_shape"} <= set(BENCHMARKS)
    assert "command_line" not in BENCHMARKS


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_help_prints_the_usage_and_runs_nothing(name: str, every_run: dict[str, Any]) -> None:
    run = every_run["help"][name]
    assert run["code"] == 0, f"--help: {run['code']}\n{run['stderr'][-2000:]}"
    assert run["stdout"].startswith(f"usage: python -m benchmarks.{name} "), run["stdout"][:500]
    assert first_docstring_line(name) in run["stdout"], "the docstring is not the description"
    assert "--no-save" in run["stdout"]
    assert undocumented_arguments(run["stdout"]) == []
    assert run["seconds"] < HELP_SECONDS


@pytest.mark.slow
def test_no_save_prints_but_writes_no_file(every_run: dict[str, Any]) -> None:
    run = every_run["no save"]
    assert run["code"] == 0, run["stderr"][-2000:]
    assert "<!-- generated: minilm -->" in run["stdout"], "it printed no page"
    # No --help wrote a file either.
    assert every_run["changed"] == []


def test_a_bare_argument_is_found_in_a_help_text() -> None:
    help_text = (
        "usage: x [-h] [--set SET] [NN ...]\n\n"
        "positional arguments:\n  NN          the notebooks\n\n"
        "options:\n  -h, --help  show this help message and exit\n  --set SET\n"
        "  --long-name-of-an-option LONG_NAME_OF_AN_OPTION\n                        its help\n"
    )
    assert undocumented_arguments(help_text) == ["--set SET"]


@pytest.mark.slow
def test_no_save_stores_no_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A benchmark that stores its figures in benchmarks/results/ (here in a scratch folder,
    on one small shape) stores them without --no-save, and prints them but stores nothing
    with it."""
    monkeypatch.setattr(results, "RESULTS", tmp_path / "benchmarks" / "results")
    monkeypatch.setattr(equivalence, "SHAPES", equivalence.SHAPES[:1])
    results.RESULTS.mkdir(parents=True)
    equivalence.main(["--no-save"])
    assert "max |diff|" in capsys.readouterr().out
    assert list(results.RESULTS.iterdir()) == []
    equivalence.main([])
    assert [path.name for path in results.RESULTS.iterdir()] == ["equivalence.json"]
