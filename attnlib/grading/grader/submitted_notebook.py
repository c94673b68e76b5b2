"""A submitted notebook as data: its bytes read as JSON, its text made writable, its structure
checked, before anything of the grader's looks inside.

A submission is hostile data. Text that is not UTF-8, and JSON escapes of lone surrogates
(``"\\ud800"``, which no file can hold), become U+FFFD, so that nothing the grader writes later
(feedback, the gradebook, ``grades.csv``) fails on them. What the grader reads of a notebook
must have the type nbformat and nbgrader give it (cells a list of objects, a cell's source
text, its nbgrader metadata an object with a text ``grade_id`` …); a notebook with anything
else there is not graded, and the reason names the cell and the field. Nesting deeper than any
notebook needs is refused too.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_DEPTH = 64  # nbformat's own schema is a few levels deep; outputs and metadata a few more

# The types of what the grader reads, by field of a cell's nbgrader metadata.
_NBGRADER_FIELDS: dict[str, tuple[type, ...]] = {
    "grade_id": (str,),
    "grade": (bool,),
    "solution": (bool,),
    "locked": (bool,),
    "task": (bool,),
    "points": (int, float),
    "schema_version": (int,),
}


def writable_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD: writable as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def writable(value: Any) -> Any:
    """``value`` (JSON data) with every string, keys included, made writable; a ValueError
    when it is nested deeper than :data:`MAX_DEPTH`."""
    return _rebuilt(value)


def parse_notebook(data: bytes, name: str) -> dict[str, Any]:
    """The notebook in ``data``, or a ValueError that says why it cannot be graded."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"{name} is over {MAX_NOTEBOOK_BYTES // 2**20} MB")
    try:
        notebook = json.loads(data.decode("utf-8", "replace"), parse_constant=_not_json)
    except (json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"{name} is not a notebook (not JSON: {error})") from None
    except ValueError as error:
        raise ValueError(f"{name} is not a notebook ({error})") from None
    notebook = _rebuilt(notebook, name)
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError(f"{name} is not a notebook: no list of cells")
    for index, cell in enumerate(notebook["cells"]):
        problem = _cell_problem(cell)
        if problem:
            raise ValueError(f"{name} cannot be read: cell {index} {problem}")
    return notebook


def _not_json(constant: str) -> Any:
    """Python's JSON reader takes NaN and Infinity, which JSON (and Jupyter) does not have."""
    raise ValueError(f"it holds {constant}, which JSON does not have")


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true or false"}
    names |= {int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _cell_problem(cell: Any) -> str:
    """What is wrong with a cell's structure, or ''."""
    if not isinstance(cell, dict):
        return f"is {_type_name(cell)}, not an object"
    if not isinstance(cell.get("cell_type"), str):
        return f"has a cell_type that is {_type_name(cell.get('cell_type'))}, not text"
    source = cell.get("source", "")
    if not (isinstance(source, str) or (isinstance(source, list) and _all_text(source))):
        return "has a source that is neither text nor a list of text"
    metadata = cell.get("metadata", {})
    if not isinstance(metadata, dict):
        return f"has metadata that is {_type_name(metadata)}, not an object"
    tags = metadata.get("tags", [])
    if not (isinstance(tags, list) and _all_text(tags)):
        return "has metadata.tags that are not a list of text"
    nbgrader = metadata.get("nbgrader", {})
    if not isinstance(nbgrader, dict):
        return f"has metadata.nbgrader that is {_type_name(nbgrader)}, not an object"
    for field, types in _NBGRADER_FIELDS.items():
        value = nbgrader.get(field)
        wrong = value is not None and (
            not isinstance(value, types) or (bool not in types and isinstance(value, bool))
        )
        if wrong:
            wanted = " or ".join(sorted({_type_name(t()) for t in types}))
            return f"has metadata.nbgrader.{field} that is {_type_name(value)}, not {wanted}"
    return ""


def _all_text(items: list[Any]) -> bool:
    return all(isinstance(item, str) for item in items)


def _rebuilt(root: Any, name: str = "the data") -> Any:
    """A copy of ``root`` with writable strings, made without recursion (a deep value cannot
    overflow the grader's stack)."""
    if not isinstance(root, (dict, list)):
        return writable_text(root) if isinstance(root, str) else root
    top: Any = {} if isinstance(root, dict) else []
    stack: list[tuple[Any, Any, int]] = [(root, top, 1)]
    while stack:
        source, target, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{name} is nested deeper than {MAX_DEPTH} levels")
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(value, (dict, list)):
                copy: Any = {} if isinstance(value, dict) else []
                stack.append((value, copy, depth + 1))
            else:
                copy = writable_text(value) if isinstance(value, str) else value
            if isinstance(target, dict):
                target[writable_text(key)] = copy
            else:
                target.append(copy)
    return top
