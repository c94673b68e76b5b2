"""Write the learner's edition of the course from the instructors' edition.

The instructors' edition, ``instructors/notebooks/``, is the course's source: every exercise
solved between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, every cell executed and its
output stored (strict nbval compares them). The learner's edition, ``notebooks/``, is what
``make lab`` and the pip set-up of docs/setup.md open. It is made from the source by this script and
nothing else:

- each solution region becomes the stub nbgrader writes (``nbgrader_config.py``), so an
  unfinished exercise's check says "not done yet";
- every output and execution count is cleared, so no answer to a prediction and no result
  of an exercise can be read before the learner runs it;
- cells tagged ``instructors-only`` are left out: after each predict-first reveal, the
  instructors' edition asserts that the run shows the course's answer, and a learner must
  not read that answer ahead;
- markdown and every other line of code stay as they are.

It also writes ``attnlib/data/solutions.json``, the worked solutions that
``attnlib.checks.solution(exercise_id)`` shows when a learner asks for one, and the first
code cell of every notebook in both editions: on Colab only, it installs attnlib from the
course's repository, which ``[tool.attnlib.course]`` in ``pyproject.toml`` names (a course's
fork sets its own there and runs ``make editions``); the README's Colab, Binder, Codespaces
and website links are rewritten to name it too.

    python instructors/editions.py             # write both (make editions)
    python instructors/editions.py --check     # exit 1 if either is out of date
    python instructors/editions.py --visible   # solution lines a learner sees before each exercise

``tests/notebooks/test_editions.py`` runs the check, so the two editions cannot drift apart.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The tag of a cell only the instructors' edition has (the asserts after each reveal).
from attnlib.course.predictions import INSTRUCTORS_ONLY_TAG

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "instructors" / "notebooks"
LEARNER = REPO / "notebooks"
SOLUTIONS = REPO / "attnlib" / "data" / "solutions.json"
README = REPO / "README.md"

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
# The same stub as nbgrader's (c.ClearSolutions.code_stub in nbgrader_config.py): the
# learner's edition and nbgrader's student edition are the same notebooks.
STUB = "# Your code here: replace the line below.\nraise NotImplementedError()"

Notebook = dict[str, Any]

# The tag of each notebook's first code cell, which installs attnlib on Colab.
COLAB_TAG = "colab-install"


def course_repository() -> tuple[str, str]:
    """The course's GitHub repository ("owner/name") and branch, from ``pyproject.toml``."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    course = settings["tool"]["attnlib"]["course"]
    return course["repository"], course["branch"]


def website_url(repository: str) -> str:
    """Where GitHub Pages serves the course's website (``.github/workflows/website.yml``)."""
    owner, name = repository.split("/")
    return f"https://{owner.lower()}.github.io/{name}/"


# The README's links to the course on each platform: what finds one, and what it should say
# for a repository and branch.
_PLATFORM_LINKS: tuple[tuple[re.Pattern[str], Callable[[str, str], str]], ...] = (
    (
        re.compile(r"https://colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/[^/\s)]+/"),
        lambda repository, branch: (
            f"https://colab.research.google.com/github/{repository}/blob/{branch}/"
        ),
    ),
    (
        re.compile(r"https://mybinder\.org/v2/gh/[\w.-]+/[\w.-]+/[^?\s)]+"),
        lambda repository, branch: f"https://mybinder.org/v2/gh/{repository}/{branch}",
    ),
    (
        re.compile(r"https://codespaces\.new/[\w.-]+/[\w.-]+"),
        lambda repository, _: f"https://codespaces.new/{repository}",
    ),
    (
        re.compile(r"https://[\w-]+\.github\.io/[\w.-]+/"),
        lambda repository, _: website_url(repository),
    ),
)


def readme_with_links(text: str, repository: str, branch: str) -> str:
    """The README with its Colab, Binder, Codespaces and website links naming ``repository``."""
    for pattern, link in _PLATFORM_LINKS:
        filled = link(repository, branch)
        text = pattern.sub(lambda _, filled=filled: filled, text)
    return text


def colab_install_source(repository: str, branch: str) -> str:
    """The first code cell's source: on Colab (whose kernel imports ``google.colab`` as it
    starts) it installs attnlib, not editable, so that it imports without a restart, with
    the ``colab`` extra, which leaves Colab's torch, ipykernel and Jupyter alone."""
    requirement = f"attnlib[colab] @ git+https://github.com/{repository}@{branch}"
    return (
        "# On Colab, this installs attnlib, the course's package (pip's note about a restart\n"
        "# does not apply: attnlib was not imported before). Anywhere else it does nothing.\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install --quiet "{requirement}"'
    )


def with_colab_cell(notebook: Notebook, source: str) -> Notebook:
    """``notebook`` (a new object) whose first code cell is the Colab install cell holding
    ``source``: the tagged cell is rewritten, or a new one put before the first code cell."""
    notebook = copy.deepcopy(notebook)
    cells = notebook["cells"]
    first_code = next(i for i, cell in enumerate(cells) if cell["cell_type"] == "code")
    cell = cells[first_code]
    if COLAB_TAG not in cell.get("metadata", {}).get("tags", []):
        cell = {
            "cell_type": "code",
            "execution_count": None,
            "id": "colab-install",
            "metadata": {"tags": [COLAB_TAG]},
            "outputs": [],
            "source": [],
        }
        cells.insert(first_code, cell)
    cell["source"] = _as_lines(source)
    return notebook


def source_notebooks() -> list[Path]:
    return sorted(SOURCE.glob("[0-9][0-9]_*.ipynb"))


def read(path: Path) -> Notebook:
    return json.loads(path.read_text(encoding="utf-8"))


def dumps(notebook: Notebook) -> str:
    """The notebook as nbformat writes it (sorted keys, one-space indent, UTF-8)."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def cell_source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _as_lines(text: str) -> list[str]:
    """``text`` in nbformat's stored form: a list of lines, each but the last with its newline."""
    return text.splitlines(keepends=True)


def is_answer_cell(cell: dict[str, Any]) -> bool:
    return cell["cell_type"] == "code" and bool(
        cell.get("metadata", {}).get("nbgrader", {}).get("solution")
    )


def stub_solutions(source: str) -> str:
    """``source`` with each solution region replaced by the stub, as nbgrader's ClearSolutions
    does it: the stub takes the indentation of the ``### BEGIN SOLUTION`` line."""
    lines, inside = [], False
    for line in source.split("\n"):
        if BEGIN in line:
            if inside:
                raise ValueError("a solution region starts inside another")
            inside = True
            indent = re.match(r"\s*", line).group(0)  # type: ignore[union-attr]
            lines.extend(indent + stub for stub in STUB.split("\n"))
        elif END in line:
            inside = False
        elif not inside:
            lines.append(line)
    if inside:
        raise ValueError("a solution region is never closed")
    return "\n".join(lines)


def without_markers(source: str) -> str:
    """The worked solution: the answer cell with the two marker lines removed."""
    return "\n".join(line for line in source.split("\n") if BEGIN not in line and END not in line)


def learner_edition(notebook: Notebook) -> Notebook:
    """The learner's edition of one instructors' notebook (a new object; the input is kept)."""
    learner = copy.deepcopy(notebook)
    instructors_only = [
        cell
        for cell in learner["cells"]
        if INSTRUCTORS_ONLY_TAG in cell.get("metadata", {}).get("tags", [])
    ]
    if any(is_answer_cell(cell) or "nbgrader" in cell["metadata"] for cell in instructors_only):
        raise ValueError("an instructors-only cell cannot be one of nbgrader's cells")
    left_out = {id(cell) for cell in instructors_only}
    learner["cells"] = [cell for cell in learner["cells"] if id(cell) not in left_out]
    for cell in learner["cells"]:
        if cell["cell_type"] != "code":
            continue
        cell["outputs"] = []
        cell["execution_count"] = None
        if is_answer_cell(cell):
            cell["source"] = _as_lines(stub_solutions(cell_source(cell)))
        elif BEGIN in cell_source(cell):
            raise ValueError(f"a solution region outside an answer cell: {cell_source(cell)}")
    return learner


def solutions(paths: list[Path]) -> dict[str, dict[str, str]]:
    """Every exercise's worked solution, keyed by its answer cell's grade id."""
    found: dict[str, dict[str, str]] = {}
    for path in paths:
        for cell in read(path)["cells"]:
            if not is_answer_cell(cell):
                continue
            grade_id = cell["metadata"]["nbgrader"]["grade_id"]
            if grade_id in found:
                raise ValueError(f"grade id {grade_id} is used twice: ids are unique in the course")
            found[grade_id] = {
                "notebook": path.stem,
                "source": without_markers(cell_source(cell)).strip("\n"),
            }
    return dict(sorted(found.items()))


def solutions_text(paths: list[Path]) -> str:
    """``attnlib/data/solutions.json`` as this script writes it (``make publish-solutions``
    writes the same into a graded term's release)."""
    return json.dumps(solutions(paths), indent=1, ensure_ascii=False) + "\n"


def learner_notebook(path: Path, repository: str, branch: str) -> Notebook:
    """The learner's edition of the instructors' notebook at ``path``, whose Colab cell
    installs attnlib from ``repository`` at ``branch``."""
    return learner_edition(with_colab_cell(read(path), colab_install_source(repository, branch)))


# -- what a learner can read before solving ---------------------------------------------------

# A line too short or too plain to give anything away (`return out`, `else:`, `)`).
_PLAIN_LINE = re.compile(r"(return|yield)[\w,.]*|pass|.*:|[\])}]*|super\(\).+")
# What a line computes: the expression after `return` or after an assignment's `=`.
_TARGET = re.compile(r"^(return|[\w.,\[\]()]+(?<![=!<>])=(?!=))")


def normalised(line: str) -> str:
    """A line without its comment and without whitespace, for comparing code with code."""
    code = line.split("  #")[0] if "  #" in line else line
    if code.lstrip().startswith("#"):
        return ""
    return re.sub(r"\s+", "", code)


def solution_lines(source: str) -> list[str]:
    """The normalised lines inside the solution regions that could give something away."""
    lines, inside = [], False
    for line in source.split("\n"):
        if BEGIN in line or END in line:
            inside = BEGIN in line
            continue
        normal = normalised(line)
        if inside and len(normal) >= 10 and not _PLAIN_LINE.fullmatch(normal):
            lines.append(normal)
    return lines


def _shown(line: str, page: str) -> bool:
    """Whether ``line``, or what it computes (at least 10 characters of it), is on ``page``."""
    expression = _TARGET.sub("", line, count=1)
    return line in page or (len(expression) >= 10 and expression in page)


def visible_solution_lines(
    notebook: Notebook, extra_text: dict[str, str] | None = None
) -> dict[str, tuple[int, list[str]]]:
    """For each exercise (by grade id): how many solution lines it has, and those a learner can
    read before solving it: in an earlier cell, in the task, in the answer cell outside the
    solution region (its docstring), or in ``extra_text[grade_id]``, what its check prints
    unasked (the first hint, the mistakes' explanations)."""
    seen: list[str] = []
    found: dict[str, tuple[int, list[str]]] = {}
    for cell in notebook["cells"]:
        source = cell_source(cell)
        if is_answer_cell(cell):
            grade_id = cell["metadata"]["nbgrader"]["grade_id"]
            page = re.sub(r"\s+", "", "".join(seen) + stub_solutions(source))
            page += re.sub(r"\s+", "", (extra_text or {}).get(grade_id, ""))
            lines = solution_lines(source)
            found[grade_id] = (len(lines), [line for line in lines if _shown(line, page)])
        seen.append(stub_solutions(source) if is_answer_cell(cell) else source)
    return found


def expected_files() -> dict[Path, str]:
    """Every file this script writes, with the text it should hold."""
    paths = source_notebooks()
    colab_source = colab_install_source(*course_repository())
    sources = {path: with_colab_cell(read(path), colab_source) for path in paths}
    files = {path: dumps(notebook) for path, notebook in sources.items()}
    files |= {LEARNER / path.name: dumps(learner_edition(sources[path])) for path in paths}
    files[SOLUTIONS] = solutions_text(paths)
    files[README] = readme_with_links(README.read_text(encoding="utf-8"), *course_repository())
    return files


def stale_files() -> list[Path]:
    """The files that differ from what this script would write, and learner notebooks that no
    instructors' notebook makes."""
    expected = expected_files()
    stale = [
        path
        for path, text in expected.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    stale += [p for p in sorted(LEARNER.glob("*.ipynb")) if p not in expected]
    return stale


def report_texts() -> dict[str, str]:
    """What each exercise's check can print without being asked: its first hint, and the name
    and explanation of every mistake it knows (attnlib.checks' registry)."""
    from attnlib.checks import _exercise  # importing attnlib.checks registers every exercise

    texts = {}
    for exercise_id, exercise in _exercise.all_exercises().items():
        known = _exercise.known_mistakes(exercise_id)
        texts[exercise_id] = " ".join([exercise.hints[0], *(m.name + m.why for m in known)])
    return texts


def print_visible() -> None:
    extra = report_texts()
    total = shown = 0
    for path in source_notebooks():
        for grade_id, (count, lines) in visible_solution_lines(read(path), extra).items():
            total, shown = total + count, shown + len(lines)
            print(f"{path.name[:2]}  {grade_id:40s} {len(lines):2d} of {count:2d} visible")
            for line in lines:
                print(f"      {line}")
    print(f"{shown} of {total} solution lines visible before their exercise")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    parser.add_argument(
        "--visible", action="store_true", help="print the solution lines a learner can see"
    )
    args = parser.parse_args(argv)
    if args.visible:
        print_visible()
        return 0
    if args.check:
        stale = stale_files()
        for path in stale:
            print(f"out of date: {path.relative_to(REPO)} (run `make editions`)")
        return 1 if stale else 0
    LEARNER.mkdir(exist_ok=True)
    paths = source_notebooks()
    expected = expected_files()
    for path in sorted(LEARNER.glob("*.ipynb")):
        if path not in expected:
            path.unlink()
    for path, text in expected.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(paths)} learner notebooks to notebooks/ and {SOLUTIONS.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
