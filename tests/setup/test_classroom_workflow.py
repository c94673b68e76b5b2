"""The GitHub Classroom workflow (instructors/classroom/autograde.yml): what it installs, the
rights it asks for, the grader it runs and the course it grades with, read from the file; and
that it grades from a graded term's release (`make release`) as from the course itself."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

from instructors import release

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "instructors" / "classroom" / "autograde.yml"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps() -> list[dict]:
    (job,) = _workflow()["jobs"].values()
    return job["steps"]


def _commands() -> list[str]:
    """Every shell command of the workflow, one per line, continuation lines joined."""
    scripts = [s["run"] for s in _steps() if "run" in s and s.get("shell", "bash") == "bash"]
    lines = "\n".join(scripts).replace("\\\n", " ").splitlines()
    return [" ".join(line.split()) for line in lines if line.strip()]


def test_it_runs_on_push_and_by_hand() -> None:
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert {"push", "workflow_dispatch"} <= set(triggers)


def test_torch_is_the_pinned_cpu_build_and_never_unpinned() -> None:
    installs = [c for c in _commands() if re.search(r"\bpip install\b", c)]
    assert installs, "no pip install in the workflow"
    torch_installs = [c for c in installs if re.search(r"\btorch\b", c)]
    assert torch_installs == [f"python -m pip install torch==2.13.0 --index-url {TORCH_CPU_INDEX}"]
    assert installs.index(torch_installs[0]) == 0, "torch must come first, from the CPU index"
    course = [c for c in installs if "./course[" in c]
    # attnlib's own dependencies are ranges: the course's exact versions come from its
    # constraints file, torch's among them.
    assert course == [
        'python -m pip install -c course/constraints.txt -e "./course[instructor,pretrained,glove]"'
    ]
    # No -U/--upgrade, which could replace the pinned build with PyPI's.
    for command in installs:
        assert not re.search(r"(^|\s)(-U|--upgrade)\b", command), command


def test_it_asks_for_read_rights_only() -> None:
    permissions = _workflow()["permissions"]
    assert isinstance(permissions, dict), "permissions must be listed, not read-all/write-all"
    assert permissions["contents"] == "read"
    assert set(permissions.values()) == {"read"}, permissions
    for job in _workflow()["jobs"].values():
        assert "permissions" not in job, "a job must not widen the workflow's permissions"


def test_bubblewrap_is_installed_and_tried_before_grading() -> None:
    commands = _commands()
    install = next(i for i, c in enumerate(commands) if "apt-get install" in c)
    assert commands[install].split()[-1] == "bubblewrap"
    preflight = next(i for i, c in enumerate(commands) if c.startswith("bwrap "))
    grade = next(i for i, c in enumerate(commands) if "attnlib.grading autograde" in c)
    assert install < preflight < grade


def test_the_grader_is_attnlibs_offline_and_the_course_dir_outside_the_checkout() -> None:
    commands = _commands()
    (make,) = [c for c in commands if "-m attnlib.grading course-dir" in c]
    assert make.startswith('python -m attnlib.grading course-dir "$course_dir"')
    # The learner's edition: the same release and gradebook, and a graded term's release has
    # no other (tests/grading/test_course_dir_from_learners_edition.py).
    assert "--answer-key course/notebooks" in make
    assert any(c.startswith('course_dir="$RUNNER_TEMP/') for c in commands)
    (grade_step,) = [s for s in _steps() if "attnlib.grading autograde" in s.get("run", "")]
    assert "python -m attnlib.grading autograde" in grade_step["run"]
    assert grade_step["env"]["HF_HUB_OFFLINE"] == "1"
    assert "--sandbox" not in grade_step["run"], "bubblewrap, the default, is the sandbox"
    # Exit 1 (a notebook not graded, its rows saying why) still reaches the summary; 2 stops.
    assert "status=${PIPESTATUS[0]}" in grade_step["run"]
    assert 'if [ "$status" -gt 1 ]; then' in grade_step["run"]


def test_the_course_is_checked_out_at_the_ref_pinned_in_env() -> None:
    env = _workflow()["env"]
    assert env["COURSE_REPOSITORY"] and env["COURSE_REF"]
    assert env["COURSE_REF"] not in {"main", "master", "HEAD"}, "pin a tag or a commit"
    (course,) = [s for s in _steps() if s.get("with", {}).get("path") == "course"]
    assert course["uses"].startswith("actions/checkout@v")
    assert course["with"]["repository"] == "${{ env.COURSE_REPOSITORY }}"
    assert course["with"]["ref"] == "${{ env.COURSE_REF }}"


def test_the_result_reaches_the_summary_the_artifact_and_classroom() -> None:
    steps = _steps()
    (score,) = [s for s in steps if "GITHUB_STEP_SUMMARY" in s.get("run", "")]
    assert "grades.csv" in score["run"] and "result=" in score["run"]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@v")]
    assert "autograded/" in upload["with"]["path"] and "grades.csv" in upload["with"]["path"]
    (reporter,) = [s for s in steps if "autograding-grading-reporter" in s.get("uses", "")]
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    runner = reporter["with"]["runners"]
    assert reporter["env"][f"{runner.upper()}_RESULTS"] == (
        f"${{{{ steps.{runner}.outputs.result }}}}"
    )
    assert score["id"] == runner
    assert steps[-1] is reporter, "the reporter fails the run short of full marks: it goes last"


def test_every_action_is_pinned_to_a_version() -> None:
    for step in _steps():
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"]), step["uses"]


def test_it_grades_from_a_release_which_holds_no_answer_key() -> None:
    """Every file of the course the workflow reads is in a graded term's release, and none is
    of the instructors' edition."""
    text = WORKFLOW.read_text(encoding="utf-8")
    read = set(re.findall(r"\bcourse/([\w./-]*[\w-])", text))
    assert {"pyproject.toml", "constraints.txt", "notebooks"} <= read
    assert not [path for path in read if path.startswith("instructors")]
    released = release.release_files("A-Teacher/attention-2027", "main")
    for path in read:
        assert path in released or any(name.startswith(f"{path}/") for name in released), path
    assert '"./course[instructor,pretrained,glove]"' in text
    assert (
        "instructor"
        in tomllib.loads(released["pyproject.toml"].decode())["project"]["optional-dependencies"]
    )
