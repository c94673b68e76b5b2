"""A graded term's copy of the course, for students to install from: no answer key in it.

During a graded term, students should not find the worked solutions where they work: not in
what they install (``checks.solution``), not in the repository they clone or that Colab,
Binder and Codespaces open. This script writes such a copy, the *release*, into a folder of
its own (a clone of the class's repository, say), and publishes the solutions there later:

    python instructors/release.py write DIR --repository ORG/NAME [--branch main]  # make release
    python instructors/release.py publish-solutions DIR                  # make publish-solutions

``write`` makes ``DIR`` (outside this checkout; empty but for ``.git``, or an earlier release,
whose own folders it replaces) hold:

- what a learner runs: ``attnlib/`` with its data, ``notebooks/`` (the learner's edition),
  ``requirements.txt``, ``constraints.txt``, ``pyproject.toml``, ``binder/``, ``.devcontainer/``,
  and the licence, citation, changelog and ``.gitignore``;
- what a learner reads: ``README.md`` (a note on the graded term at its top) and ``docs/``,
  without their course-only parts (between ``<!-- course only …-->`` and ``<!-- end course
  only -->``) and without the lines that run a ``make`` target the release does not have, and
  the pictures they show (``figures/``);
- a ``Makefile`` with the course's own ``make setup`` and ``make lab`` (and ``make clean``);
  its other targets say that they check or build the course itself, which the release leaves
  out;
- the class's repository everywhere the course names its own: ``[tool.attnlib.course]`` in
  ``pyproject.toml``, each notebook's Colab install cell, the README's Colab, Binder and
  Codespaces links (``editions.py`` writes them, as for a fork);
- ``attnlib/data/solutions.json`` holding only a "withheld" note: ``checks.solution(id)`` then
  says that the worked solutions are withheld until the term ends, and points to the hints,
  which work as ever.

It leaves out the answer key (``instructors/``: the instructors' edition and this guide), and
what checks or builds the course itself from it (``tests/``, ``benchmarks/``, ``website/``,
``.github/``, ``.ci/``, ``nbgrader_config.py``). Before it returns it checks that no file holds
a solution region or the worked solutions. ``publish-solutions`` writes the worked solutions
into the release once the term is over (``checks.solution`` works there from then on) and
turns the README's note. Commit and push the release after each.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from instructors import editions

REPO = editions.REPO
SOLUTIONS = "attnlib/data/solutions.json"
# The stand-in for the worked solutions (attnlib.checks.help.WITHHELD is its key).
WITHHELD = (
    '{\n "withheld": "The worked solutions are withheld during this graded term: '
    '`make publish-solutions` writes them here when it ends."\n}\n'
)

# Copied as they are: files, and folders whole (but for caches).
FILES = (
    "LICENSE",
    "CITATION.cff",
    "CHANGELOG.md",
    "requirements.txt",
    "constraints.txt",
    ".gitignore",
)
FOLDERS = ("attnlib", "binder", ".devcontainer")
# The release's own folders: replaced whole when a release is written again.
OWN_FOLDERS = (*FOLDERS, "notebooks", "docs", "figures")
SKIPPED = ("__pycache__", ".ipynb_checkpoints", ".pytest_cache")

# The Makefile's parts that a learner's `make lab` needs, in the release's Makefile.
MAKE_VARIABLES = (
    "PYTHON",
    "VENV",
    "BIN",
    "STAMP",
    "PYTHONHASHSEED",
    "TORCH_CPU_INDEX",
    "LAB_FLAGS",
)
MAKE_TARGETS = ("setup", "$(STAMP)", "lab", "clean")

COURSE_ONLY = re.compile(
    r"^[ \t]*<!-- course only\b.*?^[ \t]*<!-- end course only -->[ \t]*\n", re.M | re.S
)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")

# The README's note on top, during the term and once the solutions are published.
NOTE_WITHHELD = (
    "> **A graded term's copy of the course.** The worked solutions (`checks.solution`) are\n"
    "> withheld until the term ends; the hints (`checks.hint`) help as ever. The course's own\n"
    "> tests, benchmarks, website and instructors' edition are not part of this copy.\n"
)
NOTE_PUBLISHED = (
    "> **A graded term's copy of the course.** The term is over: `checks.solution` shows the\n"
    "> worked solutions. The course's own tests, benchmarks, website and instructors' edition\n"
    "> are not part of this copy.\n"
)

Files = dict[str, bytes]


# -- the Makefile ----------------------------------------------------------------------------


def _block(lines: list[str], start: int) -> list[str]:
    """The definition at ``lines[start]`` with the comment lines directly above it and what
    continues it: lines ending in a backslash, or a rule's recipe (tab-indented lines)."""
    first = start
    while first > 0 and lines[first - 1].startswith("#"):
        first -= 1
    end = start + 1
    while end < len(lines) and (lines[end - 1].endswith("\\") or lines[end].startswith("\t")):
        end += 1
    return lines[first:end]


def release_makefile(text: str) -> str:
    """The release's Makefile: the course Makefile's ``setup``, ``lab`` and ``clean`` with the
    variables they use, as they are; every other target of the course says it is left out."""
    lines = text.splitlines()
    definitions = ""
    for name in MAKE_VARIABLES:
        pattern = re.compile(rf"(export )?{re.escape(name)} *[?:]?= ")
        (start,) = [i for i, line in enumerate(lines) if pattern.match(line)]
        block = _block(lines, start)
        # A variable without a comment of its own stays beside the one before it.
        definitions += ("\n" if block[0].startswith("#") else "") + "\n".join(block) + "\n"
    for target in MAKE_TARGETS:
        (start,) = [i for i, line in enumerate(lines) if line.startswith(f"{target}:")]
        definitions += "\n" + "\n".join(_block(lines, start)) + "\n"
    (phony,) = [line for line in lines if line.startswith(".PHONY:")]
    others = [t for t in phony.split(":", 1)[1].split() if t not in MAKE_TARGETS]
    parts = [
        "# A graded term's copy of the course, written by the course's `make release`.\n"
        "# `make lab` sets up .venv on first use (and again when requirements change), then\n"
        "# opens JupyterLab on the notebooks.",
        f".PHONY: {' '.join([t for t in MAKE_TARGETS if t.isalpha()] + others)}",
        definitions.strip("\n"),
        "# The course's other targets check or build the course itself: not in this copy.\n"
        f"{' '.join(others)}:\n"
        "\t@echo 'make $@ checks or builds the course itself, which is not part of this copy"
        " of it: `make lab` opens the notebooks.'; exit 2",
    ]
    return "\n\n".join(parts) + "\n"


def make_targets(makefile: str) -> set[str]:
    """The targets a Makefile's rules carry out (not those that only say they are left out)."""
    return {t for t in MAKE_TARGETS if re.search(rf"^{re.escape(t)}:", makefile, re.M)}


# -- what a learner reads -------------------------------------------------------------------


def _without_missing_targets(text: str, targets: set[str]) -> str:
    """``text`` without the lines that run a make target not in ``targets``: a command in a
    fenced code block, or a table row that starts with one."""
    kept, fenced = [], False
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        command = re.match(r"\s*(?:\w+=\S*\s+)*make\s+([\w-]+)", line) if fenced else None
        row = None if fenced else re.match(r"\|\s*`make ([\w-]+)", line)
        found = command or row
        if found and found.group(1) not in targets:
            continue
        kept.append(line)
    return "".join(kept)


def release_document(text: str, targets: set[str]) -> str:
    """A document of the course as the release shows it: its course-only passages and the
    lines that run a missing make target left out."""
    text = COURSE_ONLY.sub("", text)
    if "<!-- course only" in text or "<!-- end course only -->" in text:
        raise ValueError("a course-only passage is not closed, or closed twice")
    return _without_missing_targets(text, targets)


def linked_paths(document: str, text: str) -> list[str]:
    """The repository paths that ``text``, the document at ``document`` (relative to the
    checkout's root), links to or shows."""
    found = []
    for target in LINK.findall(text):
        path = target.partition("#")[0]
        if path and not re.match(r"[a-z]+:", path):
            found.append((Path(document).parent / path).as_posix())
    return [_normal(path) for path in found]


def _normal(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _readme(text: str, repository: str, branch: str) -> str:
    """The release's README: its platform links naming ``repository``, the note on top."""
    text = editions.readme_with_links(text, repository, branch)
    title, _, rest = text.partition("\n\n")
    return f"{title}\n\n{NOTE_WITHHELD}\n{rest}"


def _pyproject(text: str, repository: str, branch: str) -> str:
    """``pyproject.toml`` with ``[tool.attnlib.course]`` naming ``repository`` and ``branch``."""
    text = re.sub(r'^repository = ".*"$', f'repository = "{repository}"', text, count=1, flags=re.M)
    text = re.sub(r'^branch = ".*"$', f'branch = "{branch}"', text, count=1, flags=re.M)
    course = tomllib.loads(text)["tool"]["attnlib"]["course"]
    assert course == {"repository": repository, "branch": branch}, course
    return text


# -- the release ----------------------------------------------------------------------------


def _folder(name: str) -> Files:
    files = {}
    for path in sorted((REPO / name).rglob("*")):
        relative = path.relative_to(REPO)
        if path.is_file() and not set(relative.parts) & set(SKIPPED) and path.suffix != ".pyc":
            files[relative.as_posix()] = path.read_bytes()
    return files


def release_files(repository: str, branch: str) -> Files:
    """Every file of the release, by its path in it."""
    files: Files = {name: (REPO / name).read_bytes() for name in FILES}
    for name in FOLDERS:
        files |= _folder(name)
    files[SOLUTIONS] = WITHHELD.encode()
    for path in editions.source_notebooks():
        notebook = editions.learner_notebook(path, repository, branch)
        files[f"notebooks/{path.name}"] = editions.dumps(notebook).encode()
    files["pyproject.toml"] = _pyproject(
        (REPO / "pyproject.toml").read_text(encoding="utf-8"), repository, branch
    ).encode()
    makefile = release_makefile((REPO / "Makefile").read_text(encoding="utf-8"))
    files["Makefile"] = makefile.encode()
    documents = ["README.md", *(f"docs/{p.name}" for p in sorted((REPO / "docs").glob("*.md")))]
    texts = {}
    for name in documents:
        text = release_document((REPO / name).read_text(encoding="utf-8"), make_targets(makefile))
        texts[name] = _readme(text, repository, branch) if name == "README.md" else text
        files[name] = texts[name].encode()
    for name, text in texts.items():
        for path in linked_paths(name, text):
            if path.startswith("figures/") and (REPO / path).is_file():
                files[path] = (REPO / path).read_bytes()
            elif path not in files and not any(f.startswith(f"{path}/") for f in files):
                raise ValueError(
                    f"{name} links to {path}, which a graded term's release leaves out: put the "
                    "passage between <!-- course only --> and <!-- end course only -->"
                )
    return files


def solution_regions(content: bytes) -> int:
    """How many lines of ``content`` stand between a ``### BEGIN SOLUTION`` line and the next
    ``### END SOLUTION`` line (or the end, if none follows)."""
    begin, end = editions.BEGIN.encode(), editions.END.encode()
    inside, count = False, 0
    for line in content.split(b"\n"):
        if begin in line:
            inside = end not in line.split(begin, 1)[1]
        elif end in line:
            inside = False
        elif inside:
            count += 1
    return count


def answer_key_in(release: Path) -> list[str]:
    """What of the answer key ``release`` holds: each problem in a line (none: nothing)."""
    problems = []
    if (release / "instructors").exists():
        problems.append("instructors/ (the instructors' edition)")
    for path in sorted(release.rglob("*")):
        relative = path.relative_to(release)
        if path.is_file() and relative.parts[0] not in (".git", ".venv"):
            lines = solution_regions(path.read_bytes())
            if lines:
                problems.append(f"{relative.as_posix()}: {lines} lines of solution regions")
    if (release / SOLUTIONS).read_text(encoding="utf-8") != WITHHELD:
        problems.append(f"{SOLUTIONS}: not the withheld note")
    return problems


def is_release(folder: Path) -> bool:
    """Whether ``folder`` holds a release of the course (written by ``write``)."""
    pyproject = folder / "pyproject.toml"
    return (
        pyproject.is_file()
        and "[tool.attnlib.course]" in pyproject.read_text(encoding="utf-8")
        and (folder / "notebooks").is_dir()
        and not (folder / "instructors").exists()
    )


def write(release: Path, repository: str, branch: str) -> None:
    """Write the release of the course into ``release`` (see the module's docstring)."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        raise SystemExit(f"the repository should be GitHub's ORG/NAME, got {repository!r}")
    if not re.fullmatch(r"[\w./-]+", branch):
        raise SystemExit(f"not a branch name: {branch!r}")
    release = release.expanduser().resolve()
    if release.is_relative_to(REPO) or REPO.is_relative_to(release):
        raise SystemExit(f"{release} holds or is inside this checkout: release it elsewhere.")
    if release.exists() and not release.is_dir():
        raise SystemExit(f"{release} is not a folder")
    occupied = release.is_dir() and {p.name for p in release.iterdir()} - {".git"}
    if occupied and not is_release(release):
        raise SystemExit(
            f"{release} holds files and is not a release of the course: give an empty "
            "folder (a clone of an empty repository will do) or an earlier release."
        )
    try:
        files = release_files(repository, branch)
    except ValueError as error:
        raise SystemExit(str(error)) from None
    for name in OWN_FOLDERS:
        if (release / name).is_dir():
            shutil.rmtree(release / name)
    for name, content in files.items():
        path = release / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    problems = answer_key_in(release)
    if problems:
        raise SystemExit("the release holds the answer key:\n  " + "\n  ".join(problems))
    notebooks = len(editions.source_notebooks())
    print(
        f"released the course into {release} for {repository}@{branch}: {notebooks} notebooks,"
        f" worked solutions withheld.\nCommit it and push it to {repository}; when the term "
        f"is over, `make publish-solutions DIR={release}`."
    )


def publish_solutions(release: Path) -> None:
    """Write the worked solutions into ``release``, and say so in its README."""
    release = release.expanduser().resolve()
    if not is_release(release):
        raise SystemExit(f"{release} is not a release of the course (`make release`)")
    released = {
        cell["metadata"]["nbgrader"]["grade_id"]
        for path in sorted((release / "notebooks").glob("[0-9][0-9]_*.ipynb"))
        for cell in editions.read(path)["cells"]
        if editions.is_answer_cell(cell)
    }
    sources = editions.source_notebooks()
    missing = sorted(released - set(editions.solutions(sources)))
    if missing:
        raise SystemExit(f"no worked solution in this checkout for {', '.join(missing)}")
    (release / SOLUTIONS).write_text(editions.solutions_text(sources), encoding="utf-8")
    readme = release / "README.md"
    text = readme.read_text(encoding="utf-8")
    readme.write_text(text.replace(NOTE_WITHHELD, NOTE_PUBLISHED), encoding="utf-8")
    print(
        f"wrote the worked solutions of {len(released)} exercises into {release}. Commit them "
        "and push: `checks.solution` shows them in every copy pulled or installed from then on."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("write", help="write a release (make release)")
    make.add_argument("release", type=Path)
    make.add_argument("--repository", required=True, help="the class's GitHub repository, ORG/NAME")
    make.add_argument("--branch", default="main")
    publish = commands.add_parser("publish-solutions", help="publish the worked solutions")
    publish.add_argument("release", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.release, args.repository, args.branch)
    else:
        publish_solutions(args.release)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
