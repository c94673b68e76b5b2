"""Which cells of a submission a graded run may leave out, and still check what a full run does.

Training a model (notebooks 09 and 10) takes most of a whole-course run and is graded nowhere:
the course tags such cells ``grading-may-skip``. A submitted cell is left out only when it is
the course's own, word for word (the learner did not touch it), and tagged so, and when no
cell the learner wrote needs it: a cell the learner wrote or changed reads no name that a
left-out cell binds or reads (its model, its data, its loss history). A course cell that reads
a name a left-out cell binds or reads is left out with it: it would only fail, or show what
an untrained model does as if it were trained (a left-out cell may change what it reads, as
training changes a model in place). Where the learner's
code might depend on a left-out cell, or a cell cannot be read as Python, nothing is left out:
the notebook runs whole.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import ast
import builtins
import functools
from dataclasses import dataclass
from typing import Any

from attnlib.grading.wire.cells import code_cells, nbgrader_of

TAG = "grading-may-skip"


def _python(source: str) -> ast.Module | None:
    """The cell as Python, IPython's magics and shell lines turned into calls; None when it
    cannot be read."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return None


def _bound(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _stored(nodes: list[ast.stmt]) -> set[str]:
    return {
        node.id
        for statement in nodes
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


def _read(tree: ast.Module) -> set[str]:
    """The names the cell reads from the notebook: a function's parameters and locals are its
    own, so ``def f(config): return config.d`` reads no ``config``."""
    found: set[str] = set()

    def visit(node: ast.AST, local: frozenset[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            outside: list[ast.AST] = [*arguments.defaults]
            outside += [d for d in arguments.kw_defaults if d is not None]
            if not isinstance(node, ast.Lambda):
                outside += node.decorator_list
            for expression in outside:
                visit(expression, local)
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
            every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
            body = node.body if isinstance(node.body, list) else [ast.Expr(node.body)]
            inner = local | {a.arg for a in every} | _stored(body)
            for statement in body:
                visit(statement, frozenset(inner))
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            targets = {
                n.id
                for generator in node.generators
                for n in ast.walk(generator.target)
                if isinstance(n, ast.Name)
            }
            local = local | targets
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            found.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    visit(tree, frozenset())
    return found


def _imported(tree: ast.Module) -> set[str]:
    return {
        (a.asname or a.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for a in node.names
    }


@dataclass(frozen=True)
class _Names:
    """What one cell binds, reads from the notebook, and imports."""

    bound: frozenset[str]
    read: frozenset[str]
    imported: frozenset[str]


@functools.lru_cache(maxsize=4096)
def _names(source: str) -> _Names | None:
    """A cell's names, or None when it cannot be read as Python. Cached: most cells of a class's
    submissions are the course's own, word for word."""
    tree = _python(source)
    if tree is None:
        return None
    return _Names(frozenset(_bound(tree)), frozenset(_read(tree)), frozenset(_imported(tree)))


def cells_to_leave_out(
    course: dict[str, Any],
    submission: dict[str, Any],
    checked: set[int],
    *,
    checks_at_end: bool = True,
) -> list[int]:
    """Indices of the submission's code cells that its graded run may leave out. ``checked``:
    the cells where a check runs instead (the grader's checker, on the answer alone).
    ``checks_at_end``: whether some check runs after the last cell (its cell is gone); when
    none does, every cell after the last check is left out too, as no check comes after it."""
    tail: list[int] = []
    if checked and not checks_at_end:
        last = max(checked)
        tail = [index for index, _, _ in code_cells(submission) if index > last]
    own: set[str] = set()  # the course's cells that are neither answers nor checks
    tagged: set[str] = set()
    for index, source, _ in code_cells(course):
        meta = nbgrader_of(course["cells"][index])
        if meta.get("solution") or meta.get("grade"):
            continue
        own.add(source)
        tags = course["cells"][index].get("metadata", {}).get("tags", [])
        if TAG in tags:
            tagged.add(source)
    cells = []
    for index, source, _ in code_cells(submission):
        if index in checked or index in tail:
            continue
        names = _names(source)
        if names is None:
            return tail
        cells.append((index, source in own, source in tagged, names))
    modules = set(dir(builtins)).union(*(names.imported for *_, names in cells))
    left_out: list[int] = []
    bound: set[str] = set()  # what the left-out cells bind
    read: set[str] = set()  # the notebook's own names that they read
    for index, is_own, is_tagged, names in cells:
        # What a left-out cell reads it may have changed in place (a model it trained), so a
        # course cell that reads it is left out as well as one that reads what it binds.
        needs_left_out = bool(names.read & (bound | read))
        if is_own and (is_tagged or needs_left_out):
            left_out.append(index)
            bound |= names.bound - modules
            read |= names.read - modules
    for _, is_own, _, names in cells:
        if not is_own and names.read & (bound | read):
            return tail  # the learner's code may need what a left-out cell does
    return sorted(left_out + tail)
