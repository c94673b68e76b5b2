"""The student edition: no solution survives, every check says "not done yet" kindly, and
putting the solutions back makes every check pass."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from script_loader import load_script

from attnlib import CheckResult

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
SCRIPT = NOTEBOOK_DIR / "student_edition.py"


student_edition = load_script(SCRIPT)
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("student")
    written = student_edition.write_student_edition(NOTEBOOK_DIR, output)
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    return output


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _exercises(notebook: dict) -> list[tuple[dict, dict]]:
    """(solution cell, check cell) pairs: a check cell directly follows each solution."""
    cells = notebook["cells"]
    return [
        (cell, cells[i + 1]) for i, cell in enumerate(cells) if student_edition.is_solution(cell)
    ]


def _body_lines(source: str) -> set[str]:
    """The solution's own lines: everything in the function after its docstring."""
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    lines = source.splitlines()
    body = lines[function.body[1].lineno - 1 : function.end_lineno]
    return {line.strip() for line in body if line.strip() and not line.strip().startswith("#")}


def _run(notebook: dict, solution: dict, check: dict) -> CheckResult:
    """Run the notebook's set-up cell, the (stub or) solution, then the check expression."""
    namespace: dict[str, Any] = {}
    first_code = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    exec(compile(_source(first_code), "setup", "exec"), namespace)
    exec(compile(_source(solution), "solution", "exec"), namespace)
    *statements, last = _source(check).strip().splitlines()
    exec("\n".join(statements), namespace)
    return eval(last, namespace)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_solution_code_survives_and_outputs_are_cleared(path: Path, student_dir: Path) -> None:
    original = json.loads(path.read_text(encoding="utf-8"))
    student = json.loads((student_dir / path.name).read_text(encoding="utf-8"))
    assert len(student["cells"]) == len(original["cells"])
    exercises = _exercises(original)
    assert 2 <= len(exercises) <= 4, f"{path.name} has {len(exercises)} exercises"
    for (solution, check), (stub, student_check) in zip(
        exercises, _exercises(student), strict=True
    ):
        stub_text = _source(stub)
        ast.parse(stub_text)  # still valid Python
        assert "raise NotImplementedError(" in stub_text
        surviving = _body_lines(_source(solution)) & {
            line.strip() for line in stub_text.splitlines()
        }
        assert not surviving, f"solution lines left in the student edition: {surviving}"
        assert _source(student_check) == _source(check)  # the check cell is kept as it is
    for cell in student["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_checks_say_not_done_yet_then_pass_with_the_solutions(
    path: Path, student_dir: Path
) -> None:
    original = json.loads(path.read_text(encoding="utf-8"))
    student = json.loads((student_dir / path.name).read_text(encoding="utf-8"))
    for (solution, check), (stub, student_check) in zip(
        _exercises(original), _exercises(student), strict=True
    ):
        result = _run(student, stub, student_check)
        assert isinstance(result, CheckResult) and not result.done and not result.passed
        assert "not done yet" in result.message and "Traceback" not in result.message
        docstring = ast.get_docstring(ast.parse(_source(solution)).body[0])
        assert " ".join(docstring.split()) in result.message  # the task is repeated
        assert _run(original, solution, check).passed, _source(solution)


def test_stub_keeps_the_signature_and_docstring() -> None:
    source = 'def f(x: int, *, y=2) -> int:\n    """Return x + y."""\n    z = x + y\n    return z\n'
    stub = student_edition.stub_source(source)
    assert stub.startswith('def f(x: int, *, y=2) -> int:\n    """Return x + y."""\n')
    assert "z = x + y" not in stub and "raise NotImplementedError('Return x + y.')" in stub
    with pytest.raises(ValueError, match="exactly one function"):
        student_edition.stub_source("x = 1\n")
    with pytest.raises(ValueError, match="docstring"):
        student_edition.stub_source("def f():\n    return 1\n")
