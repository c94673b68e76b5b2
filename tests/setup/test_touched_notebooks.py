"""`make check`'s choice of notebooks (.ci/touched_notebooks.py): a change runs every notebook
that could show it, and leaves out the ones it cannot reach; in a scratch repository, the
change is read against the merge-base, the working tree and untracked files included."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from script_loader import load_script

ROOT = Path(__file__).resolve().parents[2]
touched = load_script(ROOT / ".ci" / "touched_notebooks.py")
NOTEBOOKS = sorted((ROOT / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _numbers(changed: set[str] | None) -> list[str]:
    return [path.name[:2] for path in touched.touched_notebooks(changed)]


def _every() -> list[str]:
    return [path.name[:2] for path in NOTEBOOKS]


def test_nothing_changed_runs_no_notebook() -> None:
    assert _numbers(set()) == []


def test_a_change_outside_the_course_code_runs_no_notebook() -> None:
    assert _numbers({"README.md", "docs/setup.md", "tests/core/test_masks.py"}) == []


@pytest.mark.parametrize("edition", ["instructors/notebooks", "notebooks"])
def test_a_changed_notebook_runs_in_either_edition(edition: str) -> None:
    name = NOTEBOOKS[3].name
    assert _numbers({f"{edition}/{name}"}) == [name[:2]]


@pytest.mark.parametrize(
    "changed",
    [
        "attnlib/__init__.py",  # re-exports every name
        "attnlib/data/attention_benchmark.json",  # not a module
        "attnlib/no_longer_there.py",  # deleted
        "requirements.txt",
        "instructors/notebooks/nbval_sanitize.cfg",
    ],
)
def test_what_every_notebook_reads_runs_every_notebook(changed: str) -> None:
    assert _numbers({changed}) == _every()


def test_the_worked_solutions_run_only_what_their_notebooks_run() -> None:
    # make editions writes them from the instructors' notebooks, which changed with them.
    assert _numbers({"attnlib/data/solutions.json"}) == []
    name = NOTEBOOKS[3].name
    assert _numbers({"attnlib/data/solutions.json", f"instructors/notebooks/{name}"}) == [name[:2]]


def test_a_checker_packages_init_runs_its_notebook_not_every_one() -> None:
    # What adding an exercise changes: the notebook package's __init__ exports the checker.
    changed = _numbers({"attnlib/checks/nb03_naive_attention/__init__.py"})
    assert "03" in changed and changed != _every()


def test_a_name_re_exported_by_a_package_reaches_its_importers() -> None:
    # The checkers import check_function from attnlib.checks.engine, whose __init__ takes it
    # from engine/functions.py: a change there runs the notebooks of those checkers.
    assert "03" in _numbers({"attnlib/checks/engine/functions.py"})
    assert "10" in _numbers({"attnlib/checks/engine/classes.py"})


def test_no_merge_base_runs_every_notebook() -> None:
    assert _numbers(None) == _every()


def _code(number: str) -> str:
    (path,) = (p for p in NOTEBOOKS if p.name.startswith(number))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")


def test_a_module_runs_the_notebooks_that_use_it_and_only_those() -> None:
    # tiled attention is notebook 12's alone (its functions named nowhere else).
    names = ("tiled_attention", "online_softmax")
    users = sorted(n for n in _every() if any(re.search(rf"\b{x}\b", _code(n)) for x in names))
    assert users == ["12"]
    assert _numbers({"attnlib/tiled_attention.py"}) == ["12"]


def test_a_module_runs_the_notebooks_that_use_it_through_another() -> None:
    # Notebook 09 never names the feed-forward network; its Transformer builds one.
    assert not re.search(r"\bFeedForward\b|feed_forward", _code("09"))
    assert re.search(r"\battnlib\.Transformer\b", _code("09"))
    assert "09" in _numbers({"attnlib/feed_forward.py"})


def test_a_checker_runs_its_notebook() -> None:
    folders = sorted((ROOT / "attnlib" / "checks").glob("nb[0-9][0-9]_*"))
    assert folders
    for folder in folders:
        module = next(p for p in sorted(folder.rglob("*.py")) if p.name != "__init__.py")
        number = folder.name[2:4]
        assert number in _numbers({module.relative_to(ROOT).as_posix()}), module


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_the_change_is_read_against_the_merge_base_with_the_working_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for name in ("committed", "staged", "edited", "on-main"):
        (repo / name).write_text("1\n", encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "switch", "-qc", "topic")
    (repo / "committed").write_text("2\n", encoding="utf-8")
    _git(repo, "commit", "-qam", "on the branch")
    _git(repo, "switch", "-q", "main")
    (repo / "on-main").write_text("2\n", encoding="utf-8")  # main moved on: not this change
    _git(repo, "commit", "-qam", "on main")
    _git(repo, "switch", "-q", "topic")
    (repo / "staged").write_text("2\n", encoding="utf-8")
    _git(repo, "add", "staged")
    (repo / "edited").write_text("2\n", encoding="utf-8")
    (repo / "untracked").write_text("new\n", encoding="utf-8")
    monkeypatch.setattr(touched, "ROOT", repo)
    assert touched.changed_files("main") == {"committed", "staged", "edited", "untracked"}
    assert touched.changed_files("no-such-branch") is None


def test_make_check_is_lint_the_fast_unit_tests_and_the_touched_notebooks() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^check:.*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert recipe, "no recipe for check"
    assert "$(MAKE) --no-print-directory lint unit-fast" in recipe.group(1)
    assert ".ci/touched_notebooks.py --base $(BASE)" in recipe.group(1)
    assert "$(NBVAL) $$touched" in recipe.group(1)  # strict nbval, as `make nbval` runs it
