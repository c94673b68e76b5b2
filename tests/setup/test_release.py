"""A graded term's release of the course (`make release`, instructors/release.py): what students
install from holds no answer key, `checks.solution` says the solutions are withheld while the
hints work, `make publish-solutions` brings the solutions back, and every way in names the
class's repository. Each test reads one release, written once into a scratch folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from script_loader import load_script

from attnlib import checks
from attnlib.checks import _exercise, help
from instructors import editions, release

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY, BRANCH = "A-Teacher/attention-2027", "spring"
UPSTREAM, _ = editions.course_repository()
LEFT_OUT = ("instructors", "tests", "benchmarks", "website", ".github", ".ci", "nbgrader_config.py")
EXERCISE = "ex1_softmax_from_formula"
anchors = load_script(ROOT / "tests" / "docs" / "test_links.py").anchors


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("release") / "attention-2027"
    release.write(folder, REPOSITORY, BRANCH)
    return folder


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None  # the package's tensors and weights


def _worked() -> dict[str, dict[str, str]]:
    return json.loads((ROOT / "attnlib" / "data" / "solutions.json").read_text(encoding="utf-8"))


def test_nothing_of_the_answer_key_or_what_needs_it_is_released(released: Path) -> None:
    for name in LEFT_OUT:
        assert not (released / name).exists(), name
    assert (released / "notebooks").is_dir() and (released / "attnlib" / "grading").is_dir()


def test_no_file_holds_a_line_of_a_solution_region(released: Path) -> None:
    region = re.compile(rb"### BEGIN SOLUTION[^\n]*\n.*?### END SOLUTION", re.DOTALL)
    for path in _files(released):
        assert not region.search(path.read_bytes()), path.relative_to(released)


def test_no_file_holds_a_worked_solution(released: Path) -> None:
    worked = [entry["source"] for entry in _worked().values()]
    for path in _files(released):
        text = _text(path)
        if text is None:
            continue
        if path.suffix == ".ipynb":  # what a learner reads: each cell's source
            text = "\n".join(editions.cell_source(cell) for cell in json.loads(text)["cells"])
        found = [source.splitlines()[0] for source in worked if source in text]
        assert not found, f"{path.relative_to(released)} holds the solutions of {found}"


def test_no_answer_cell_holds_a_line_of_its_solution(released: Path) -> None:
    for source in editions.source_notebooks():
        key = {
            cell["metadata"]["nbgrader"]["grade_id"]: editions.solution_lines(
                editions.cell_source(cell)
            )
            for cell in editions.read(source)["cells"]
            if editions.is_answer_cell(cell)
        }
        for cell in editions.read(released / "notebooks" / source.name)["cells"]:
            if editions.is_answer_cell(cell):
                stub = {
                    editions.normalised(line) for line in editions.cell_source(cell).split("\n")
                }
                grade_id = cell["metadata"]["nbgrader"]["grade_id"]
                assert not stub & set(key[grade_id]), grade_id


def test_the_solutions_file_is_the_withheld_note(released: Path) -> None:
    stored = json.loads((released / "attnlib" / "data" / "solutions.json").read_text("utf-8"))
    assert list(stored) == [help.WITHHELD]


def test_the_notebooks_are_the_learners_edition_installing_from_the_release(
    released: Path,
) -> None:
    colab = editions.colab_install_source(REPOSITORY, BRANCH)
    assert f"git+https://github.com/{REPOSITORY}@{BRANCH}" in colab
    learner = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(p.name for p in (released / "notebooks").iterdir()) == [p.name for p in learner]
    for path in learner:
        expected = editions.with_colab_cell(editions.read(path), colab)
        assert editions.read(released / "notebooks" / path.name) == expected, path.name


def test_pyproject_and_every_link_name_the_release(released: Path) -> None:
    settings = tomllib.loads((released / "pyproject.toml").read_text(encoding="utf-8"))
    assert settings["tool"]["attnlib"]["course"] == {"repository": REPOSITORY, "branch": BRANCH}
    readme = (released / "README.md").read_text(encoding="utf-8")
    for link in (
        f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/notebooks/",
        f"https://mybinder.org/v2/gh/{REPOSITORY}/{BRANCH}",
        f"https://codespaces.new/{REPOSITORY}",
    ):
        assert link in readme, link
    # Nothing leads back to the course's own repository or its website (its guide).
    for path in _files(released):
        text = _text(path)
        assert text is None or UPSTREAM not in text, path.relative_to(released)
        assert text is None or editions.website_url(UPSTREAM) not in text


def test_the_readme_says_it_is_a_graded_terms_copy(released: Path) -> None:
    readme = (released / "README.md").read_text(encoding="utf-8")
    assert release.NOTE_WITHHELD in readme
    for document in [released / "README.md", *(released / "docs").glob("*.md")]:
        assert "course only" not in document.read_text(encoding="utf-8"), document.name


def test_every_link_of_the_released_documents_resolves(released: Path) -> None:
    link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
    for document in [released / "README.md", *sorted((released / "docs").glob("*.md"))]:
        for target in link.findall(document.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (document.parent / path).resolve() if path else document
            assert resolved.exists(), f"{document.name}: {target}"
            if anchor and resolved.suffix == ".md":
                assert anchor in anchors(resolved.read_text(encoding="utf-8")), target


def test_every_make_command_shown_is_a_target_of_the_release(released: Path) -> None:
    targets = release.make_targets((released / "Makefile").read_text(encoding="utf-8"))
    assert targets == {"setup", "$(STAMP)", "lab", "clean"}
    for document in [released / "README.md", *(released / "docs").glob("*.md")]:
        text = document.read_text(encoding="utf-8")
        fenced = re.findall(r"```[^\n]*\n(.*?)```", text, re.DOTALL)
        shown = re.findall(r"^\s*(?:\w+=\S*\s+)*make ([\w-]+)", "".join(fenced), re.M)
        shown += re.findall(r"^\| `make ([\w-]+)", text, re.M)
        assert set(shown) <= targets, document.name
        assert shown or document.name != "setup.md"


def test_withheld_solutions_say_so_and_point_to_the_hints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(help, "_solutions", lambda: None)  # as in a release: quicker here
    exercise = _exercise.find(EXERCISE)
    said = str(checks.solution(EXERCISE))
    assert said.startswith(help.WITHHELD_NOTE) and exercise.hint_call() in said
    last = str(checks.hint(EXERCISE, len(exercise.hints)))
    assert help.WITHHELD_NOTE in last and "checks.solution(" not in last
    assert str(checks.hint(EXERCISE)).startswith(f"Hint 1 of {len(exercise.hints)}")
    with pytest.raises(ValueError, match="Did you mean"):
        checks.solution("ex1_softmax_from_formul")


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MAKEFLAGS": ""}
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.slow
def test_make_lab_sets_up_and_opens_the_course_as_the_courses_own_does(released: Path) -> None:
    venv = "VENV=/nonexistent/venv"  # so that the set-up's recipe is shown too
    ours, theirs = _make(released, "-n", "lab", venv), _make(ROOT, "-n", "lab", venv)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout
    assert "pip install --quiet -r requirements.txt" in ours.stdout
    assert "jupyter lab --ServerApp.root_dir=notebooks" in ours.stdout
    left_out = _make(released, "test")
    assert left_out.returncode == 2
    assert "not part of this copy" in left_out.stdout and "make lab" in left_out.stdout


def _in_the_release(folder: Path) -> subprocess.Popen[str]:
    """A Python that imports attnlib from ``folder``, asks for a solution and the hints."""
    last = len(_exercise.find(EXERCISE).hints)
    script = (
        "import json, attnlib\n"
        "from attnlib import checks\n"
        f"print(json.dumps([attnlib.__file__, str(checks.solution({EXERCISE!r})),"
        f" str(checks.hint({EXERCISE!r})), str(checks.hint({EXERCISE!r}, {last}))]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(folder)}
    return subprocess.Popen(
        [sys.executable, "-c", script], cwd=folder, env=env, stdout=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_solutions_are_withheld_until_published_and_hints_work(
    released: Path, tmp_path: Path
) -> None:
    published = tmp_path / "published"
    shutil.copytree(released, published)
    release.publish_solutions(published)
    withheld_run, published_run = _in_the_release(released), _in_the_release(published)
    withheld_out, _ = withheld_run.communicate(timeout=120)
    published_out, _ = published_run.communicate(timeout=120)
    assert withheld_run.returncode == 0 and published_run.returncode == 0

    where, solution, first, last = json.loads(withheld_out)
    assert Path(where).is_relative_to(released)
    assert solution.startswith(help.WITHHELD_NOTE)
    assert f'checks.hint("{EXERCISE}")' in solution
    assert _worked()[EXERCISE]["source"] not in solution
    assert first == str(checks.hint(EXERCISE))  # the hints are the course's own
    assert help.WITHHELD_NOTE in last and "checks.solution(" not in last

    where, solution, first, last = json.loads(published_out)
    assert Path(where).is_relative_to(published)
    assert solution == str(checks.solution(EXERCISE))
    assert first == str(checks.hint(EXERCISE)) and f'checks.solution("{EXERCISE}")' in last
    stored = (published / "attnlib" / "data" / "solutions.json").read_text(encoding="utf-8")
    assert stored == editions.solutions_text(editions.source_notebooks())
    readme = (published / "README.md").read_text(encoding="utf-8")
    assert release.NOTE_PUBLISHED in readme and release.NOTE_WITHHELD not in readme


def test_git_takes_every_file_of_the_release(released: Path, tmp_path: Path) -> None:
    """The release's .gitignore leaves none of it out of the commit the instructor pushes."""
    clone = tmp_path / "clone"
    shutil.copytree(released, clone)
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(command, cwd=clone, check=True, capture_output=True)
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=clone, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    assert sorted(filter(None, listed)) == [
        p.relative_to(released).as_posix() for p in _files(released)
    ]


def test_a_release_is_written_again_in_place(released: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(released, again)
    (again / ".git").mkdir()
    (again / "SYLLABUS.md").write_text("the class's own file\n", encoding="utf-8")
    (again / "notebooks" / "99_dropped.ipynb").write_text("{}", encoding="utf-8")
    release.write(again, REPOSITORY, "main")
    assert (again / ".git").is_dir() and (again / "SYLLABUS.md").is_file()
    assert not (again / "notebooks" / "99_dropped.ipynb").exists()
    settings = tomllib.loads((again / "pyproject.toml").read_text(encoding="utf-8"))
    assert settings["tool"]["attnlib"]["course"]["branch"] == "main"


def test_it_refuses_the_checkout_and_a_folder_that_is_not_a_release(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="this checkout"):
        release.write(ROOT / "release", REPOSITORY, BRANCH)
    with pytest.raises(SystemExit, match="this checkout"):
        release.write(ROOT.parent, REPOSITORY, BRANCH)
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="not a release"):
        release.write(tmp_path, REPOSITORY, BRANCH)
    with pytest.raises(SystemExit, match="not a release"):
        release.publish_solutions(tmp_path)
    with pytest.raises(SystemExit, match="ORG/NAME"):
        release.write(tmp_path / "new", "attention-2027", BRANCH)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_a_link_to_what_the_release_leaves_out_must_be_marked_course_only() -> None:
    document = "See [the guide](../instructors/README.md).\n"
    assert release.linked_paths("docs/setup.md", document) == ["instructors/README.md"]
    marked = f"<!-- course only: x -->\n{document}<!-- end course only -->\nkept\n"
    assert release.release_document(marked, {"lab"}) == "kept\n"
    with pytest.raises(ValueError, match="not closed"):
        release.release_document("<!-- course only -->\ntext\n", {"lab"})
    shown = (
        "```bash\nmake lab\nmake test\nATTNLIB_DEVICE=cuda make nbval\n```\n| `make unit` | x |\n"
    )
    assert release.release_document(shown, {"lab"}) == "```bash\nmake lab\n```\n"
