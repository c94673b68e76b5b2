"""A notebook's code cells as both sides number them: the grader's order names cells by their
index among all the notebook's cells, and the sandbox runs them by the same index.

The notebook is a submission, read as JSON and checked for its form by the grader
(:mod:`~attnlib.grading.grader.submitted_notebook`); what is read here still takes whatever a
field holds as nothing rather than fail on it.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

from typing import Any


def nbgrader_of(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell's nbgrader metadata, or {} (whatever a submission put there)."""
    meta = cell.get("metadata")
    found = meta.get("nbgrader") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def cell_source(cell: dict[str, Any]) -> str:
    """A cell's source as one text (nbformat allows a list of lines)."""
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def code_cells(notebook: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(index, source, grade id) of every code cell, in order."""
    found = []
    for index, cell in enumerate(notebook["cells"]):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            found.append((index, cell_source(cell), str(nbgrader_of(cell).get("grade_id", ""))))
    return found
