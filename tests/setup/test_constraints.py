"""constraints.txt holds the course's exact versions and pyproject.toml attnlib's ranges: the
venv the tests run in has every pinned version, each pin lies inside attnlib's own range for
that package, and every set-up file applies the constraints."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def constraint_pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{line!r} is not an exact pin"
        pins[canonicalize_name(requirement.name)] = Version(specifier.version)
    return pins


def attnlib_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"].values()
    listed = [*project["dependencies"], *(entry for extra in extras for entry in extra)]
    return [Requirement(entry) for entry in listed if not entry.startswith("attnlib[")]


PINS = constraint_pins()


@pytest.mark.parametrize("name", sorted(PINS))
def test_the_course_venv_has_the_pinned_version(name: str) -> None:
    installed = Version(metadata.version(name))
    # torch's CPU build is 2.13.0+cpu: the pin names the release, not the build.
    assert installed.public == str(PINS[name]), f"{name} {installed} is installed"


def test_every_pin_lies_inside_attnlibs_own_range() -> None:
    outside = [
        f"{requirement} does not admit the pinned {PINS[canonicalize_name(requirement.name)]}"
        for requirement in attnlib_requirements()
        if canonicalize_name(requirement.name) in PINS
        and PINS[canonicalize_name(requirement.name)] not in requirement.specifier
    ]
    assert not outside


def test_every_attnlib_dependency_is_pinned_for_the_course() -> None:
    unpinned = {
        requirement.name
        for requirement in attnlib_requirements()
        if canonicalize_name(requirement.name) not in PINS
    }
    assert not unpinned


def test_torch_is_a_range_for_attnlib_and_exact_for_the_course() -> None:
    (torch,) = [r for r in attnlib_requirements() if r.name == "torch"]
    assert Version("2.11.0") in torch.specifier, "Colab's torch (2.11) must be left in place"
    assert Version("3.0") not in torch.specifier
    assert PINS["torch"] == Version("2.13.0")


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("requirements.txt", "-c constraints.txt"),
        ("binder/requirements.txt", "-c ../constraints.txt"),
        ("Makefile", "pip install --quiet -c constraints.txt -e '.[instructor]'"),
    ],
)
def test_every_setup_applies_the_constraints(path: str, line: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert re.search(rf"^\s*.*{re.escape(line)}", text, flags=re.MULTILINE), (path, line)
