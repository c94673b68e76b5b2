"""The GitHub Actions workflow: actionlint accepts it and catches a broken one, and its
steps are `make test`'s steps."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "course.yml"
LINT = ["node", str(ROOT / ".ci" / "actionlint" / "lint.cjs")]  # `make lint` installs it


def _actionlint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*LINT, str(path)], capture_output=True, text=True, check=False)


def test_actionlint_accepts_the_workflow() -> None:
    result = _actionlint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 finding(s)" in result.stdout


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = (
        WORKFLOW.read_text(encoding="utf-8")
        .replace("timeout-minutes: 90", "timeout: 90")
        .replace("${{ github.workflow }}", "${{ github.no_such_context }}")
    )
    path = tmp_path / "broken.yml"
    path.write_text(broken, encoding="utf-8")
    result = _actionlint(path)
    assert result.returncode == 1
    assert 'unexpected key "timeout"' in result.stdout
    assert "no_such_context" in result.stdout


def _make_targets(commands: list[str]) -> list[str]:
    targets = []
    for command in commands:
        for line in command.splitlines():
            words = line.split()
            if words[:1] == ["make"]:
                targets += [word for word in words[1:] if "=" not in word]
    return targets


def _makefile_recipe(target: str) -> str:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n|.*\\\n)+)", makefile, re.MULTILINE)
    assert match, f"no recipe for {target}"
    return match.group(1)


def test_the_test_job_runs_every_step_of_make_test_in_order() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    steps = workflow["jobs"]["test"]["steps"]
    commands = [step["run"] for step in steps if "run" in step]
    in_workflow = [t for t in _make_targets(commands) if t not in {"setup", "instructor"}]
    recipe = _makefile_recipe("test")
    # Each `$(MAKE) --no-print-directory [flags] targets &&` of the recipe, flags dropped
    # (`-j2` runs two targets side by side; the workflow runs them one step after the other).
    calls = re.findall(r"\$\(MAKE\) --no-print-directory ([^&]+?) &&", recipe)
    in_make_test = [word for call in calls for word in call.split() if not word.startswith("-")]
    assert in_workflow == in_make_test
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY: (.*)$", makefile, re.MULTILINE)
    assert phony and set(_make_targets(commands)) <= set(phony.group(1).split())


def test_the_laptop_job_installs_with_pip_alone_on_macos_and_windows() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"]["pip-setup"]
    assert set(job["strategy"]["matrix"]["os"]) == {"macos-latest", "windows-latest"}
    commands = "\n".join(step["run"] for step in job["steps"] if "run" in step)
    assert "make" not in commands.split()
    assert "-m pip install -r requirements.txt" in commands
    # Every notebook of the learner's edition: nbconvert expands the pattern itself, the same
    # on Windows' PowerShell as in bash.
    execute = next(step for step in job["steps"] if "nbconvert" in step.get("run", ""))
    assert execute["working-directory"] == "notebooks"
    pattern = '"[0-9][0-9]_*.ipynb"'
    assert execute["run"].split()[-1] == pattern
    learner = sorted(p.name for p in (ROOT / "notebooks").glob(pattern.strip('"')))
    assert learner == sorted(p.name for p in (ROOT / "instructors" / "notebooks").glob("*_*.ipynb"))
