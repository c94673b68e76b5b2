"""The instructors' notebooks a change touches: what `make check` runs under strict nbval.

The rule, erring toward running more: a notebook runs when it changed (in either edition),
or when the notebook imports a changed attnlib module, or any module that imports one, or
uses a name one of them defines (as an attribute, ``attnlib.causal_mask``, or imported); a
checker of notebook NN (attnlib/checks/nbNN_*, its ``__init__.py`` too) runs notebook NN; a
package's ``__init__.py`` is a module like the others (``attnlib/__init__.py``, which every
notebook imports, runs every notebook); a change to what every notebook reads (an attnlib file
that is not a module, a deleted module, the nbval set-up, the dependencies) runs every
notebook. The worked solutions (``attnlib/data/solutions.json``) are written from the
instructors' notebooks by ``make editions`` and checked against them by the unit tests: the
notebooks they come from changed too, and run for that.

"A change" is every file that differs between the working tree (untracked files included)
and the merge-base of HEAD with ``--base`` (``main`` unless told). Prints one notebook path a
line, in course order.

Usage: python .ci/touched_notebooks.py [--base REF]
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "attnlib"
SOURCE = ROOT / "instructors" / "notebooks"
# Files outside attnlib/ that every notebook's strict nbval run reads.
READ_BY_EVERY_NOTEBOOK = {
    "instructors/notebooks/conftest.py",
    "instructors/notebooks/nbval_sanitize.cfg",
    "requirements.txt",
    "constraints.txt",
    "pyproject.toml",
    "Makefile",
}
# attnlib files written from the notebooks (make editions), which the notebooks' own change runs.
WRITTEN_FROM_THE_NOTEBOOKS = {f"{PACKAGE}/data/solutions.json"}
NOTEBOOK_NAME = re.compile(r"(?:instructors/)?notebooks/(\d\d)_[^/]*\.ipynb")
CHECKER_FOLDER = re.compile(rf"{PACKAGE}/checks/nb(\d\d)_")


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def changed_files(base: str) -> set[str] | None:
    """Paths that differ from the merge-base with ``base``; None when there is no such base."""
    try:
        merge_base = _git("merge-base", "HEAD", base).strip()
    except subprocess.CalledProcessError:
        return None
    changed = _git("diff", "--name-only", merge_base).split()
    untracked = _git("ls-files", "--others", "--exclude-standard").split()
    return set(changed) | set(untracked)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / PACKAGE).rglob("*.py"))}


def _statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement, nested ones too (an import may sit in a function or an ``if``);
    expressions are not entered, which is where most of a module's nodes are."""
    found, stack = [], list(tree.body)
    while stack:
        node = stack.pop()
        found.append(node)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(child for child in getattr(node, field, ()) if isinstance(child, ast.AST))
    return found


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imported(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The attnlib modules ``module`` imports, anywhere in it (TYPE_CHECKING too). A name
    imported from a package counts as the submodule of that name when there is one, and as
    the package's ``__init__`` otherwise (whose own imports say where the name is from)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in _statements(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            for alias in node.names:
                submodule = f"{origin}.{alias.name}"
                if submodule in modules:
                    found.add(submodule)
                else:
                    found.add(_origin_of(origin, alias.name, modules))
    return {name for name in found if name in modules}


def _origin_of(module: str, name: str, modules: dict[str, Path], depth: int = 0) -> str:
    """Where ``name``, imported from ``module``, is defined: a package's ``__init__`` that
    re-exports it (``from attnlib.checks.engine import check_function``) passes the import on
    to the submodule it takes it from, so a change there reaches the importer."""
    path = modules.get(module)
    if path is None or path.name != "__init__.py" or depth > 5:
        return module
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom) and any(
            (alias.asname or alias.name) == name for alias in node.names
        ):
            anchor = module.split(".")[: len(module.split(".")) - node.level + 1]
            origin = (
                ".".join([*anchor, *([node.module] if node.module else [])])
                if node.level
                else node.module or ""
            )
            return _origin_of(origin, name, modules, depth + 1)
    return module


def _defined_names(path: Path) -> set[str]:
    """The public names the module defines at its top level (its ``__all__`` if it has one)."""
    names = set()
    for node in _tree(path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return set(ast.literal_eval(node.value))
    return {name for name in names if not name.startswith("_")}


def _reachable_names(path: Path) -> set[str]:
    """The names of a module a notebook can reach. A notebook reaches a checker's module only
    through what its notebook's package exports (``checks.check_…``): its other names (a
    ``Tensor`` alias, a ``MISTAKES`` table) would match any notebook's ``torch.Tensor``."""
    names = _defined_names(path)
    relative = path.relative_to(ROOT)
    if not CHECKER_FOLDER.match(relative.as_posix()) or path.name == "__init__.py":
        return names
    package_init = ROOT.joinpath(*relative.parts[:3], "__init__.py")  # attnlib/checks/nbNN_…
    return names & _defined_names(package_init)


def _affected_modules(changed: set[str], modules: dict[str, Path]) -> set[str]:
    """The changed modules and every module that imports one of them, directly or not.
    A package's ``__init__`` passes nothing on: what it re-exports is counted where it is
    defined (otherwise attnlib/__init__.py, which imports everything, would tie every module
    to every notebook)."""
    importers: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for imported in _imported(name, path, modules):
            importers[imported].add(name)
    affected = set(changed)
    frontier = list(changed)
    while frontier:
        for importer in importers[frontier.pop()]:
            if importer not in affected and modules[importer].name != "__init__.py":
                affected.add(importer)
                frontier.append(importer)
    return affected


@functools.cache
def _used(notebook: Path) -> tuple[set[str], set[str]]:
    """What the notebook's code takes from attnlib: the modules it imports, and the names it
    imports from them or reads as an attribute (``attnlib.causal_mask``, ``plots.show``)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    imported, names = set(), set()
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        # IPython's magics and shell lines are not Python; they name no attnlib code.
        python = "\n".join(line for line in source.splitlines() if line.lstrip()[:1] not in "%!")
        try:
            tree = ast.parse(python)
        except SyntaxError:
            names.update(re.findall(r"\.\s*([A-Za-z_]\w*)", python))  # err toward more
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    imported.add(f"{node.module}.{alias.name}")
                    names.add(alias.name)
    return {name for name in imported if name in _modules()}, names


def touched_notebooks(changed: set[str] | None) -> list[Path]:
    notebooks = sorted(SOURCE.glob("[0-9][0-9]_*.ipynb"))
    if changed is None:
        return notebooks
    by_number = {path.name[:2]: path for path in notebooks}
    modules = _modules()
    module_of = {path.relative_to(ROOT).as_posix(): name for name, path in modules.items()}
    chosen: set[Path] = set()
    changed_modules = set()
    for file in changed:
        if file in READ_BY_EVERY_NOTEBOOK:
            return notebooks
        if match := NOTEBOOK_NAME.fullmatch(file):
            chosen.update({by_number[match.group(1)]} if match.group(1) in by_number else ())
        if not file.startswith(f"{PACKAGE}/"):
            continue
        if file in WRITTEN_FROM_THE_NOTEBOOKS:
            continue
        module = module_of.get(file)
        if module is None:  # data, or a deleted module
            return notebooks
        changed_modules.add(module)
        if (match := CHECKER_FOLDER.match(file)) and match.group(1) in by_number:
            chosen.add(by_number[match.group(1)])
    affected = _affected_modules(changed_modules, modules)
    names = set().union(set(), *(_reachable_names(modules[name]) for name in affected))
    for notebook in notebooks:
        imported, used = _used(notebook)
        if imported & affected or used & names:
            chosen.add(notebook)
    return sorted(chosen)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="the branch the change is made against")
    args = parser.parse_args(argv)
    changed = changed_files(args.base)
    if changed is None:
        print(f"no merge-base with {args.base}: every notebook runs", file=sys.stderr)
    for notebook in touched_notebooks(changed):
        print(notebook.relative_to(ROOT).as_posix())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
