"""Every Colab, Binder, Codespaces and GitHub link of the README names the course's one
repository setting (`[tool.attnlib.course]` in pyproject.toml), and every notebook of the
table has its Colab link."""

from __future__ import annotations

import re
from pathlib import Path

from instructors import editions

ROOT = Path(__file__).resolve().parents[2]

README = (ROOT / "README.md").read_text(encoding="utf-8")
PLATFORM_LINK = re.compile(
    r"https://(?:colab\.research\.google\.com/github|mybinder\.org/v2/gh|codespaces\.new)"
    r"/([\w.-]+/[\w.-]+)"
)


def test_every_platform_link_names_the_course_repository() -> None:
    repository, _ = editions.course_repository()
    named = PLATFORM_LINK.findall(README)
    assert len(named) >= 3
    assert set(named) == {repository}


def test_every_notebook_has_a_colab_link_to_the_learners_edition() -> None:
    repository, branch = editions.course_repository()
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        link = f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/"
        assert link + path.name in README, path.name
