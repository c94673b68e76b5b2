"""Every Colab, Binder, Codespaces and website link of the README names the course's one
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


def test_a_forks_setting_rewrites_every_platform_link() -> None:
    repository, branch = editions.course_repository()
    forked = editions.readme_with_links(README, "A-Teacher/attention-2027", "spring")
    assert set(PLATFORM_LINK.findall(forked)) == {"A-Teacher/attention-2027"}
    assert (
        "/blob/spring/notebooks/" in forked and "/v2/gh/A-Teacher/attention-2027/spring" in forked
    )
    assert editions.website_url("A-Teacher/attention-2027") in forked
    assert editions.readme_with_links(forked, repository, branch) == README


def test_make_editions_keeps_the_readme_naming_the_setting() -> None:
    assert editions.expected_files()[editions.README] == README
