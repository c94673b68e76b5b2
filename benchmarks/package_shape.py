"""How readable the package is, in numbers: ``python -m benchmarks.package_shape [ROOT]``.

Prints the lines of every module of ``attnlib/`` (under ROOT, default this checkout),
the largest module, how many names ``attnlib`` exports, and for every core module (the
model's: ``attnlib/*.py`` and ``attnlib/formats/``) how many code lines check arguments
and how many compute, then their totals. A line counts as validation when
it belongs to a ``raise`` (with the ``if`` that guards it), to a call of a ``require_*``
or ``_check*`` function, or to a function whose name starts with ``_require``,
``require_`` or ``_check``; every other line of code inside a function body (docstrings,
comments and blank lines left out) counts as logic.
"""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks import command_line

CORE = ("*.py", "formats/*.py")  # the model and its file formats, not the course around them
CHECKER_PREFIXES = ("_require", "require_", "_check", "check_")


def _is_check_call(node: ast.AST) -> bool:
    call = node.value if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.startswith(CHECKER_PREFIXES)


def _only_raises(body: list[ast.stmt]) -> bool:
    return all(isinstance(s, ast.Raise) or _is_check_call(s) for s in body)


def _is_validation(node: ast.stmt) -> bool:
    if isinstance(node, ast.Raise) or _is_check_call(node):
        return True
    if isinstance(node, ast.If) and _only_raises(node.body):
        return not node.orelse or _only_raises(node.orelse) or _is_validation(node.orelse[0])
    return False


def _lines(node: ast.AST) -> set[int]:
    return set(range(node.lineno, node.end_lineno + 1))


def _classify(body: list[ast.stmt], validation: set[int], logic: set[int]) -> None:
    for i, node in enumerate(body):
        is_docstring = (
            i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        )
        if is_docstring:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith(CHECKER_PREFIXES[:3]):
                validation.update(_lines(node))
            else:
                _classify(node.body, validation, logic)
        elif isinstance(node, ast.ClassDef):
            _classify(node.body, validation, logic)
        elif _is_validation(node):
            validation.update(_lines(node))
        elif isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            first_child = min(child.lineno for child in node.body)
            logic.update(range(node.lineno, first_child))
            for block in ("body", "orelse", "finalbody"):
                _classify(getattr(node, block, []), validation, logic)
            for handler in getattr(node, "handlers", []):
                _classify(handler.body, validation, logic)
        else:
            logic.update(_lines(node))


def validation_and_logic(path: Path) -> tuple[int, int]:
    """Code lines that check arguments, and code lines that compute, in one module."""
    source = path.read_text(encoding="utf-8")
    text_lines = source.splitlines()
    tree = ast.parse(source)
    validation: set[int] = set()
    logic: set[int] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _classify([node], validation, logic)
    logic -= validation

    def code(lines: set[int]) -> int:
        return sum(
            1
            for n in lines
            if text_lines[n - 1].strip() and not text_lines[n - 1].strip().startswith("#")
        )

    return code(validation), code(logic)


def core_modules(package: Path) -> list[Path]:
    """Every core module of ``package``, in path order."""
    return sorted(path for pattern in CORE for path in package.glob(pattern))


def core_shape(package: Path) -> list[tuple[str, int, int]]:
    """``(module, validation lines, logic lines)`` for every core module, then ``"total"``."""
    rows = [
        (str(path.relative_to(package)), *validation_and_logic(path))
        for path in core_modules(package)
    ]
    total = ("total", sum(row[1] for row in rows), sum(row[2] for row in rows))
    return [*rows, total]


def main(root: Path) -> None:
    package = root / "attnlib"
    modules = sorted(p for p in package.rglob("*.py") if "data" not in p.relative_to(package).parts)
    sizes = {
        str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines()) for p in modules
    }
    for name, size in sorted(sizes.items(), key=lambda item: -item[1]):
        print(f"{size:5d}  {name}")
    largest = max(sizes, key=sizes.__getitem__)
    print(
        f"modules: {len(sizes)}; largest: {largest} ({sizes[largest]} lines); "
        f"over 300 lines: {sum(size > 300 for size in sizes.values())}"
    )
    init = ast.parse((package / "__init__.py").read_text(encoding="utf-8"))
    exported = next(
        len(node.value.elts)
        for node in init.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    print(f"names exported by attnlib: {exported}")
    for name, validation, logic in core_shape(package):
        print(f"{name}: {validation} lines of validation, {logic} lines of logic")


if __name__ == "__main__":
    parser = command_line.benchmark_parser("package_shape", __doc__, writes=None)
    parser.add_argument(
        "root",
        nargs="?",
        type=Path,
        default=Path(__file__).resolve().parents[1],
        metavar="ROOT",
        help="the checkout whose attnlib/ is measured (default: this one)",
    )
    main(parser.parse_args().root)
