"""The README is what a newcomer reads in two minutes: what the course is, the ways in (Colab,
Binder, Codespaces, the website, the two commands, the instructors' guide) and the notebook
table; everything else lives in docs/ and the guide, one link away."""

from __future__ import annotations

import re
from pathlib import Path

from instructors import editions

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# Two minutes at 250 words a minute, a newcomer's skim of a project page.
WORDS_IN_TWO_MINUTES = 500


def reading_words(markdown: str) -> list[str]:
    """The words a reader reads: link targets, pictures and comments are not read."""
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.DOTALL)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)
    return [word for word in text.split() if re.search(r"\w", word)]


def test_reading_words_skip_links_pictures_and_comments() -> None:
    markdown = "[the guide](instructors/README.md) ![a plot](figures/x.png) <!-- x y --> two `make`"
    assert reading_words(markdown) == ["[the", "guide]", "two", "`make`"]


def test_the_readme_reads_in_two_minutes() -> None:
    words = len(reading_words(README))
    assert words <= WORDS_IN_TWO_MINUTES, (
        f"the README has {words} words to read; move detail to docs/ or the instructors' guide"
    )


def test_the_two_commands_are_given_in_one_block() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)
    commands = [
        [line.split("#")[0].strip() for line in block.strip().splitlines()] for block in blocks
    ]
    assert ["make lab", "make test"] in commands
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_way_in_is_named_with_its_link() -> None:
    repository, branch = editions.course_repository()
    for link in (
        f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/",
        f"https://mybinder.org/v2/gh/{repository}/{branch}",
        f"https://codespaces.new/{repository}",
        editions.website_url(repository),
        "(instructors/README.md)",
        "(docs/setup.md)",
    ):
        assert link in README, link


def test_the_notebook_table_has_a_row_per_notebook_in_order() -> None:
    rows = re.findall(r"^\| (\d\d) \| \[[^\]]+\]\(notebooks/([^)]+)\)", README, re.MULTILINE)
    learner = sorted(path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert [name for _, name in rows] == learner
    assert [number for number, _ in rows] == [name[:2] for name in learner]


def test_every_document_the_rest_moved_to_is_linked() -> None:
    for document in sorted((ROOT / "docs").glob("*.md")):
        assert f"(docs/{document.name})" in README, f"the README does not link {document.name}"
