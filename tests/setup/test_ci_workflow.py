"""The GitHub Actions workflow: actionlint accepts it and catches a broken one, and its jobs
are `make test`'s stages, each a job of its own, side by side, each set up from a cache."""

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
        .replace("timeout-minutes: 15", "timeout: 15")
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
            words = re.sub(r"\$\{\{.*?\}\}", "", line).split()  # no ${{ expression }}
            if words[:1] == ["make"]:
                targets += [word for word in words[1:] if "=" not in word]
    return targets


def _makefile_recipe(target: str) -> str:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n|.*\\\n)+)", makefile, re.MULTILINE)
    assert match, f"no recipe for {target}"
    return match.group(1)


def _make_test_stages() -> list[str]:
    """Each `$(MAKE) --no-print-directory [flags] targets &&` of `make test`, flags dropped
    (`-j2` runs two targets side by side)."""
    calls = re.findall(r"\$\(MAKE\) --no-print-directory ([^&]+?) &&", _makefile_recipe("test"))
    return [word for call in calls for word in call.split() if not word.startswith("-")]


# Set-up targets: each job installs what its stage needs before it runs the stage.
SET_UP = {"setup", "instructor", "browser-deps", "grading-deps"}
LAPTOP_JOB = "pip-setup"  # macOS and Windows, without make: the last test


def _jobs() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]


def _runs(job: dict) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def _stages(job: dict) -> list[str]:
    return [target for target in _make_targets(_runs(job)) if target not in SET_UP]


def test_every_stage_of_make_test_is_a_job_and_every_job_a_stage() -> None:
    stages = {name: _stages(job) for name, job in _jobs().items() if name != LAPTOP_JOB}
    # One stage a job, so that a red job names what broke; the same stage in no two jobs.
    assert all(len(found) == 1 for found in stages.values()), stages
    in_workflow = sorted(stage for found in stages.values() for stage in found)
    assert in_workflow == sorted(_make_test_stages())
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    phony = re.search(r"^\.PHONY: (.*)$", makefile, re.MULTILINE)
    every_target = {t for job in _jobs().values() for t in _make_targets(_runs(job))}
    assert phony and every_target <= set(phony.group(1).split())


def test_the_jobs_run_side_by_side() -> None:
    waiting = {name: job["needs"] for name, job in _jobs().items() if "needs" in job}
    assert not waiting


def test_the_portability_jobs_are_the_passes_of_make_portability() -> None:
    job = _jobs()["portability"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    default = re.search(r"^ROUNDING \?= (.*)$", makefile, re.MULTILINE)
    assert default and job["strategy"]["matrix"]["rounding"] == default.group(1).split()
    assert "make portability ROUNDING=${{ matrix.rounding }}" in _runs(job)
    assert job["strategy"]["fail-fast"] is False  # a red pass does not cancel the other


def test_every_job_sets_itself_up_from_pips_cache_keyed_on_the_set_up_files() -> None:
    for name, job in _jobs().items():
        (python,) = (
            s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python")
        )
        assert python["with"]["python-version"] == "3.11", name
        assert python["with"]["cache"] == "pip", name
        keyed_on = python["with"]["cache-dependency-path"].split()
        assert keyed_on == ["requirements.txt", "constraints.txt", "pyproject.toml"], name


def test_the_grading_job_caches_what_grading_deps_downloads() -> None:
    steps = _jobs()["grading"]["steps"]
    (cache,) = (s for s in steps if s.get("uses", "").startswith("actions/cache"))
    (install,) = (s for s in steps if "grading-deps" in s.get("run", ""))
    folder = cache["with"]["path"].replace("~", "$HOME")
    assert f'DEBS="{folder}"' in install["run"]
    assert steps.index(cache) < steps.index(install)


def test_the_laptop_job_installs_with_pip_alone_on_macos_and_windows() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    job = workflow["jobs"][LAPTOP_JOB]
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
