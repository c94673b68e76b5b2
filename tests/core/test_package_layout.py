"""The package's file list reads as the course's table of contents, and stays readable."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import attnlib

PACKAGE = Path(attnlib.__file__).parent
NOTEBOOKS = sorted((PACKAGE.parent / "instructors" / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "data" not in p.parts)
# The concept modules, in the order the notebooks meet them.
CONCEPTS = [
    "similarity",
    "softmax",
    "naive_attention",
    "attention",
    "single_head",
    "multi_head",
    "positional",
    "masks",
    "feed_forward",
    "residual",
    "layer_stack",
    "encoder",
    "decoder",
    "transformer",
    "tokenizer",
    "training",
    "decoding",
    "checkpoints",
    "gpt",
    "kv_cache",
    "sampling",
    "bert",
    "sentence_encoder",
    "tiled_attention",
]


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_the_top_level_holds_the_concepts_and_four_sub_packages() -> None:
    public = {p.stem for p in PACKAGE.glob("*.py") if not p.stem.startswith("_")}
    assert public == set(CONCEPTS)
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == {"checks", "course", "formats", "grading"}


# A function is read whole: at most this many lines, its docstring not counted. (Modules are
# cut by idea, not by length: a checker with a long table of mistakes is one idea.)
MAX_FUNCTION_LINES = 60


def _body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = function.body
    first = body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    if docstring and isinstance(first.value.value, str):
        if len(body) == 1:
            return 0
        first = body[1]
    return (function.end_lineno or first.lineno) - first.lineno + 1


def _long_functions(source: str) -> list[str]:
    return [
        f"{node.name} (line {node.lineno}): {_body_lines(node)} lines"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _body_lines(node) > MAX_FUNCTION_LINES
    ]


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_function_is_over_the_line_limit(path: Path) -> None:
    assert not _long_functions(path.read_text(encoding="utf-8"))


def test_the_function_length_rule_counts_the_body_without_the_docstring() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    at_limit = f'def f():\n    """Doc\n    string."""\n{body}\n'
    assert _long_functions(at_limit) == []
    one_over = at_limit + "    return x0\n"
    assert _long_functions(one_over) == [f"f (line 1): {MAX_FUNCTION_LINES + 1} lines"]
    nested = "class A:\n    " + one_over.replace("\n", "\n    ").rstrip() + "\n"
    assert _long_functions(nested) == [f"f (line 2): {MAX_FUNCTION_LINES + 1} lines"]


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if p.name != "__init__.py" and not p.stem.startswith("_")],
    ids=_name,
)
def test_each_module_docstring_names_its_notebook(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert re.search(r"[Nn]otebooks? \d\d", doc), f"{_name(path)}: say which notebook it serves"


def test_import_attnlib_does_not_load_matplotlib_or_the_course_support() -> None:
    probe = (
        "import sys, attnlib; print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in {'matplotlib', 'ipywidgets'}"
        " or m.startswith(('attnlib.course', 'attnlib.checks'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_top_level_exports_the_core_and_model_api_only() -> None:
    assert 50 <= len(attnlib.__all__) <= 70
    for name in attnlib.__all__:
        module = getattr(attnlib, name).__module__
        assert not module.startswith(("attnlib.course", "attnlib.checks")), name


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_module_imports_another_modules_private_names(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attnlib"):
            private = [a.name for a in node.names if a.name.startswith("_")]
            assert not private, f"{_name(path)} imports {private} from {node.module}"


# The floors of the package, lowest first: a module imports from its own floor or below.
# The model (the top-level modules) knows nothing of file formats; formats know nothing of
# the course; the course nothing of its checkers; the checkers nothing of the grader.
FLOORS = ("model", "formats", "course", "checks", "grading")


def _floor(module: str) -> int:
    parts = module.split(".")
    return FLOORS.index(parts[1]) if len(parts) > 1 and parts[1] in FLOORS else 0


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _attnlib_imports(path: Path) -> list[tuple[str, list[str]]]:
    """Each import of an attnlib module: ``(module, names imported from it)``."""
    imported = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            imported.extend((alias.name, []) for alias in node.names)
    return [(module, names) for module, names in imported if module.split(".")[0] == "attnlib"]


def _is_submodule(package: str, name: str) -> bool:
    folder = PACKAGE.parent / package.replace(".", "/") / name
    return folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file()


@pytest.mark.parametrize("path", [p for p in MODULES if p != PACKAGE / "__init__.py"], ids=_name)
def test_imports_run_down_the_floors_only(path: Path) -> None:
    own = _module_name(path)
    package = ".".join(own.split(".")[:2])
    for imported, names in _attnlib_imports(path):
        assert _floor(imported) <= _floor(own), (
            f"{own} ({FLOORS[_floor(own)]}) imports {imported} ({FLOORS[_floor(imported)]})"
        )
        # A module of a sub-package takes nothing from that sub-package's __init__, which
        # imports it (the arrow would run back up); naming a sibling module through it is fine.
        if imported == package and own != package:
            taken = [name for name in names if not _is_submodule(package, name)]
            assert not taken, f"{own} takes {taken} from its package's __init__"


# The model's modules (the top level and its file formats), whose imports form no circle.
CORE_MODULES = sorted(
    p for p in [*PACKAGE.glob("*.py"), *PACKAGE.glob("formats/*.py")] if p.name != "__init__.py"
)


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of imports in ``graph`` (module -> modules it imports), or ``[]``."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return []
        for imported in sorted(graph.get(module, ())):
            found = visit(imported, [*path, module])
            if found:
                return found
        done.add(module)
        return []

    for module in sorted(graph):
        found = visit(module, [])
        if found:
            return found
    return []


def test_the_circle_finder_finds_a_circle_and_only_a_circle() -> None:
    assert _circle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_core_imports_run_one_way_with_no_circle_not_even_for_type_checking() -> None:
    # _attnlib_imports reads every import of the file, those under TYPE_CHECKING included.
    names = {_module_name(path) for path in CORE_MODULES}
    graph = {
        _module_name(path): {module for module, _ in _attnlib_imports(path) if module in names}
        for path in CORE_MODULES
    }
    assert _circle(graph) == []


def _code(notebook: Path) -> str:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebooks_import_one_way(notebook: Path) -> None:
    code = _code(notebook)
    # Modules are imported by name (`from attnlib.course import plots`) and called through.
    for line in re.findall(r"^\s*from attnlib[\w.]* import .+$", code, re.M):
        assert re.fullmatch(r"\s*from attnlib(\.course|\.formats)? import [a-z_, ]+", line), line
        modules = [m.strip() for m in line.split(" import ")[1].split(",")]
        package = line.split(" import ")[0].split()[-1]
        for module in modules:
            assert (PACKAGE.parent / package.replace(".", "/") / module).with_suffix(
                ".py"
            ).exists() or (PACKAGE.parent / package.replace(".", "/") / module).is_dir(), line
    calls = re.sub(r"^\s*(from|import) attnlib.*$", "", code, flags=re.M)
    for name in set(re.findall(r"\battnlib\.(\w+)", calls)):
        assert name in attnlib.__all__, f"attnlib.{name} is not part of the core API"


def test_the_version_is_the_installed_one() -> None:
    from importlib.metadata import version

    assert version("attnlib") == attnlib.__version__


# The modules a notebook imports by name and then cites in its prose as `module.name`.
CITED_MODULES = {
    "checks": "attnlib.checks",
    **{
        m: f"attnlib.course.{m}"
        for m in (
            "attention_cost",
            "char_data",
            "char_gpt",
            "date_tokenizer",
            "date_translator",
            "dates",
            "hand_set",
            "inspection",
            "own_encoder",
            "playgrounds",
            "plots",
            "sliders",
            "tensor_log",
            "toy_tasks",
            "word_vectors",
        )
    },
    **{m: f"attnlib.formats.{m}" for m in ("minilm", "safetensors_file", "wordpiece")},
}


def _resolves(dotted: str) -> bool:
    """Whether ``attnlib.x.y`` (a module, then attributes) names something that exists."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_every_name_the_prose_cites_exists(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    cited = set(re.findall(r"`(attnlib(?:\.\w+)+)", prose))
    for module, path in CITED_MODULES.items():
        cited |= {path + name for name in re.findall(rf"`{module}((?:\.\w+)+)", prose)}
    missing = sorted(name for name in cited if not _resolves(name))
    assert not missing, f"{notebook.name} cites names that do not exist: {missing}"
