"""Write the student edition of the course: `make student`.

For every notebook, each exercise's worked solution (a code cell tagged ``solution``,
holding one function) keeps its signature and docstring, and its body becomes

    raise NotImplementedError("<the docstring: what the function must do>")

so that the check cell after it reports "not done yet" instead of a traceback until the
learner fills it in. Every output and execution count is cleared; everything else,
check cells included, is kept. The result goes to ``student/NN_*.ipynb``
(`python notebooks/student_edition.py --output DIR` writes elsewhere).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import sys
from pathlib import Path

NOTEBOOK_DIR = Path(__file__).resolve().parent
DEFAULT_OUTPUT = NOTEBOOK_DIR.parent / "student"
SOLUTION_TAG = "solution"


def is_solution(cell: dict) -> bool:
    """Whether a cell holds an exercise's worked solution."""
    return cell["cell_type"] == "code" and SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def stub_source(source: str) -> str:
    """The solution's function with its body replaced by a ``NotImplementedError`` stub.

    The signature (decorators, parameters, annotations) and the docstring stay as written;
    the docstring, which states the task, becomes the error's message.
    """
    tree = ast.parse(source)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if len(functions) != 1 or len(tree.body) != 1:
        raise ValueError(f"a solution cell must hold exactly one function, got:\n{source}")
    function = functions[0]
    docstring = ast.get_docstring(function)
    if not docstring:
        raise ValueError(f"solution {function.name} needs a docstring stating the task")
    lines = source.splitlines()
    body_start = function.body[1].lineno if len(function.body) > 1 else function.end_lineno + 1
    header = lines[: body_start - 1]  # decorators, def line(s) and the docstring
    indent = " " * (function.body[0].col_offset)
    message = " ".join(docstring.split())
    stub = [
        f"{indent}# Your code here: replace the line below.",
        f"{indent}raise NotImplementedError({message!r})",
    ]
    return "\n".join(header + stub)


def student_notebook(notebook: dict) -> dict:
    """A copy of ``notebook`` with solutions stubbed and every output cleared."""
    student = copy.deepcopy(notebook)
    for cell in student["cells"]:
        if cell["cell_type"] != "code":
            continue
        if is_solution(cell):
            cell["source"] = stub_source("".join(cell["source"])).splitlines(keepends=True)
        cell["outputs"] = []
        cell["execution_count"] = None
    return student


def write_student_edition(
    source_dir: Path = NOTEBOOK_DIR, output_dir: Path = DEFAULT_OUTPUT
) -> list[Path]:
    """Write the student edition of every ``NN_*.ipynb`` in ``source_dir``; return the paths."""
    notebooks = sorted(source_dir.glob("[0-9][0-9]_*.ipynb"))
    if not notebooks:
        raise FileNotFoundError(f"no NN_*.ipynb notebooks in {source_dir}")
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        target = output_dir / path.name
        target.write_text(
            json.dumps(student_notebook(notebook), indent=1, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="folder to write")
    args = parser.parse_args(argv)
    written = write_student_edition(NOTEBOOK_DIR, args.output)
    solutions = sum(
        is_solution(cell)
        for path in written
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
    )
    print(f"wrote {len(written)} notebooks, {solutions} exercises stubbed, to {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
