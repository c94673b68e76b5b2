"""The grading package's sides, read from its imports (ast), as attnlib.grading's docstring
draws them: the grader (the instructor's process) imports nothing of the sandbox's code; the
sandbox (beside the learner's code) imports nothing of the grader's and no checker; the wire
between them imports neither side; and only the sandbox loads a pickle.

Imports are followed through attnlib's own modules (a package's ``__init__`` included, as
Python runs it), so a rule cannot be got round through a third module. Every import counts:
inside a function, or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

import attnlib

ROOT = Path(attnlib.__file__).parent
GRADING = "attnlib.grading"
GRADER, SANDBOX, WIRE = f"{GRADING}.grader", f"{GRADING}.sandbox", f"{GRADING}.wire"
CHECKS = "attnlib.checks"
# Modules whose loading runs what it reads: none of them on the grader's side.
UNPICKLERS = ("pickle", "_pickle", "marshal", "shelve", "dill", "joblib", "cloudpickle")
LOADER = f"{WIRE}.calls.unpickled"  # the one function of attnlib's that loads a pickle


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _file_of(name: str) -> Path | None:
    """The file of attnlib's module ``name``, or None when it is not one (a function's name)."""
    if not _under(name, "attnlib"):
        return None
    path = ROOT.parent.joinpath(*name.split("."))
    for found in (path / "__init__.py", path.with_suffix(".py")):
        if found.is_file():
            return found
    return None


def _name_of(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every name an import statement of ``source`` (module ``module``) names: ``import a.b``
    gives ``a.b``; ``from a import b`` gives ``a`` and ``a.b``; relative imports resolved."""
    names: set[str] = set()
    here = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _parents(name: str) -> list[str]:
    """``a.b.c`` → ``a``, ``a.b``: the packages Python imports first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imports(name: str) -> set[str]:
    path = _file_of(name)
    if path is None:
        return set()
    source = path.read_text(encoding="utf-8")
    return imported_names(source, name, is_package=path.name == "__init__.py")


def reached(start: Iterable[str]) -> dict[str, str]:
    """Every attnlib module and name that importing ``start`` imports, each with the module
    whose import statement named it first."""
    found: dict[str, str] = {}
    todo = list(start)
    while todo:
        module = todo.pop()
        for name in sorted(_imports(module)):
            for target in [*_parents(name), name]:
                if target not in found and target != module:
                    found[target] = module
                    if _file_of(target) is not None:
                        todo.append(target)
    return found


def modules_of(package: str) -> list[str]:
    folder = ROOT.parent.joinpath(*package.split("."))
    return sorted(_name_of(path) for path in folder.rglob("*.py"))


SIDES = {
    GRADER: [*modules_of(GRADER), f"{GRADING}.__main__"],
    SANDBOX: modules_of(SANDBOX),
    WIRE: modules_of(WIRE),
}


def broken(side: str, forbidden: tuple[str, ...]) -> list[str]:
    """``module → name (imported by module)`` for each module of ``side`` that reaches a name
    under one of the ``forbidden`` packages."""
    found = []
    for module in SIDES[side]:
        for name, by in sorted(reached([module]).items()):
            if any(_under(name, package) for package in forbidden):
                found.append(f"{module} → {name} (imported by {by})")
    return found


def test_every_module_of_the_package_is_on_one_side() -> None:
    placed = {m for modules in SIDES.values() for m in modules}
    assert set(modules_of(GRADING)) - placed == {GRADING}  # its docstring alone
    assert all(len(modules) >= 4 for modules in SIDES.values())


def test_the_grader_imports_nothing_of_the_sandbox() -> None:
    assert broken(GRADER, (SANDBOX,)) == []


def test_the_sandbox_imports_nothing_of_the_grader_and_no_checker() -> None:
    assert broken(SANDBOX, (GRADER, CHECKS)) == []


def test_the_wire_imports_neither_side_and_no_checker() -> None:
    assert broken(WIRE, (GRADER, SANDBOX, CHECKS)) == []


def test_only_the_sandbox_loads_a_pickle() -> None:
    """The rule attnlib.grading.wire states: pickles go from the grader to the sandbox only."""
    everything = [m for modules in SIDES.values() for m in modules]
    unpickling = {
        m for m in everything for n in _imports(m) if any(_under(n, p) for p in UNPICKLERS)
    }
    assert unpickling == {f"{WIRE}.calls"}
    loading = {m for m in everything if LOADER in _imports(m)}
    assert loading and all(_under(m, SANDBOX) for m in loading), loading


@pytest.mark.parametrize(
    ("side", "added", "forbidden"),
    [
        (GRADER, "from attnlib.grading.sandbox import answering\n", (SANDBOX,)),
        (SANDBOX, "if TYPE_CHECKING:\n    from attnlib.checks import check_softmax\n", (CHECKS,)),
        (SANDBOX, "def f():\n    import attnlib.grading.grader.judge\n", (GRADER,)),
        (WIRE, "from ..sandbox.built_modules import Built\n", (SANDBOX,)),
    ],
)
def test_an_added_import_is_seen(side: str, added: str, forbidden: tuple[str, ...]) -> None:
    """The rules read what an import added to a module of that side would name."""
    module = SIDES[side][-1]
    names = imported_names(added, module)
    assert any(_under(n, package) for n in names for package in forbidden), names


GUIDE = ROOT.parent / "instructors" / "README.md"
GUARDS = "*Where each guard is in the code.*"


def _defined(path: Path) -> set[str]:
    """The module's top-level functions and classes, and ``Class.method`` for their methods."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}.{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    return names


def test_the_guide_points_at_each_guard_where_it_is() -> None:
    """In "Grading security", each name after a module's path is defined in that module."""
    guide = GUIDE.read_text(encoding="utf-8")
    section = guide[guide.index(GUARDS) : guide.index("## Changing or adding a notebook")]
    module, pointed = None, []
    for token in re.findall(r"`([^`]+)`", section):
        if "/" in token:
            where = ROOT / "grading" / token
            assert where.exists() or (ROOT.parent / token).exists(), token
            module = where if where.suffix == ".py" else None
        else:
            assert module is not None, f"`{token}` follows no module's path"
            assert token in _defined(module), f"{token} is not in {module}"
            pointed.append(token)
    assert len(pointed) >= 20
