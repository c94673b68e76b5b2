"""The grading image (instructors/grading/Dockerfile), read from the file: it builds from a
graded term's release (`make release`) as from the checkout, and no layer of it ever holds
the worked solutions, whichever builder reads it. (tests/grading/test_docker_sandbox.py runs
the grader against a container.)"""

from __future__ import annotations

import re
from pathlib import Path

from instructors import release

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "instructors" / "grading" / "Dockerfile"
DOCKERIGNORE = ROOT / "instructors" / "grading" / "Dockerfile.dockerignore"
SOLUTIONS = "attnlib/data/solutions.json"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of each instruction, continuation lines joined."""
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split()[0].upper(), " ".join(line.split()[1:]))
        for line in lines
        if line and not line.startswith("#")
    ]


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in _instructions():
        if instruction[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def _copied_from_the_context() -> list[str]:
    sources = []
    for name, arguments in _instructions():
        if name in ("COPY", "ADD") and "--from=" not in arguments:
            sources += arguments.split()[:-1]
    return sources


def test_the_image_copies_nothing_from_the_context_into_its_last_stage() -> None:
    *build, image = _stages()
    assert build, "attnlib's wheel is built in a stage of its own"
    copies = [arguments for name, arguments in image if name in ("COPY", "ADD")]
    assert copies and all(arguments.startswith("--from=") for arguments in copies), copies


def test_the_wheel_is_built_without_the_solutions() -> None:
    (build, _) = _stages()
    (run,) = [arguments for name, arguments in build if name == "RUN"]
    assert run.startswith(f"rm -f /src/{SOLUTIONS} && pip wheel")
    (_, image) = _stages()
    checks = [
        arguments for name, arguments in image if name == "RUN" and "solutions.json" in arguments
    ]
    assert len(checks) == 1 and "assert not" in checks[0]


def test_it_builds_from_a_release_as_from_the_checkout() -> None:
    released = release.release_files("A-Teacher/attention-2027", "main")
    sources = _copied_from_the_context()
    assert "attnlib" in sources and not [s for s in sources if s.startswith("instructors")]
    for source in sources:
        assert (ROOT / source).exists(), source
        assert source in released or any(name.startswith(f"{source}/") for name in released)
    assert released[SOLUTIONS] == release.WITHHELD.encode()  # removed before the wheel too


def test_the_build_context_lets_in_what_is_copied_and_never_the_solutions() -> None:
    rules = [
        line
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert rules[0] == "*"
    allowed = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    assert set(_copied_from_the_context()) <= allowed
    assert SOLUTIONS in rules
    assert re.search(r"^ARG PYTHON=3\.\d+$", DOCKERFILE.read_text(encoding="utf-8"), re.M)
