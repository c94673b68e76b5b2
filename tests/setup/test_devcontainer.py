"""Codespaces and VS Code's dev containers: `.devcontainer/devcontainer.json` is valid against
the Development Containers schema, and its post-create command is the course's set-up, the
one `make lab` runs before it opens JupyterLab (Python 3.11 in the image, as CI uses)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".devcontainer" / "devcontainer.json"
SCHEMA = Path(__file__).with_name("schemas") / "devContainer.base.schema.json"


def config() -> dict:
    return json.loads(CONFIG.read_text(encoding="utf-8"))


def errors_in(document: dict) -> list[str]:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft201909Validator(schema)
    return [error.message for error in validator.iter_errors(document)]


def test_the_config_is_valid_against_the_schema() -> None:
    assert errors_in(config()) == []


def test_the_schema_catches_a_broken_config() -> None:
    broken = {**config(), "forwardPorts": "8888", "postCreateCommand": 7}
    assert len(errors_in(broken)) >= 2


def test_post_create_is_the_set_up_that_make_lab_runs() -> None:
    assert config()["postCreateCommand"] == "make setup"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^lab: setup$", makefile, flags=re.MULTILINE)
    assert re.search(r"^setup: \$\(STAMP\)$", makefile, flags=re.MULTILINE)


def test_the_image_has_the_python_ci_uses() -> None:
    workflow = (ROOT / ".github" / "workflows" / "course.yml").read_text(encoding="utf-8")
    assert 'python-version: "3.11"' in workflow
    assert re.fullmatch(r"mcr\.microsoft\.com/devcontainers/python:3\.11-\w+", config()["image"])
