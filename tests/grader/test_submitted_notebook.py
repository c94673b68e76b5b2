"""A submitted notebook as data (attnlib.grading.grader.submitted_notebook): odd text is made
writable, what has the wrong type is refused with the cell and the field named, and nothing nests
deep enough to overflow the grader."""

from __future__ import annotations

import json

import pytest

from attnlib.grading.grader.submitted_notebook import MAX_DEPTH, parse_notebook, writable


def _notebook(*cells: dict) -> bytes:
    return json.dumps({"cells": list(cells), "metadata": {}}).encode()


def _code(source: object = "x = 1", **metadata: object) -> dict:
    return {"cell_type": "code", "source": source, "metadata": metadata, "outputs": []}


def test_lone_surrogates_and_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    text = (
        b'{"cells": [{"cell_type": "markdown", "source": "\\ud800 and \\udfff", "metadata": {}}]}'
    )
    cell = parse_notebook(text.replace(b" and ", b" \xff "), "nb.ipynb")["cells"][0]
    assert cell["source"] == "\ufffd \ufffd \ufffd"
    json.dumps(cell, ensure_ascii=False).encode("utf-8")  # writable as it is


def test_keys_are_made_writable_too() -> None:
    assert writable({"\ud800": ["\udc00"]}) == {"\ufffd": ["\ufffd"]}


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        (
            _code(nbgrader={"grade_id": ["ex1"]}),
            "metadata.nbgrader.grade_id that is a list, not text",
        ),
        (_code(nbgrader={"points": "1"}), "metadata.nbgrader.points that is text, not a number"),
        (_code(nbgrader={"points": True}), "metadata.nbgrader.points that is true or false"),
        (_code(nbgrader={"grade": 1}), "metadata.nbgrader.grade that is a number, not true or"),
        (_code(nbgrader=["x"]), "metadata.nbgrader that is a list, not an object"),
        (_code(tags="grading-may-skip"), "metadata.tags that are not a list of text"),
        (_code(source=["a", 1]), "a source that is neither text nor a list of text"),
        ({"cell_type": 3, "source": "", "metadata": {}}, "a cell_type that is a number"),
        ({"cell_type": "code", "source": "", "metadata": []}, "metadata that is a list"),
        ("a cell", "is text, not an object"),
    ],
)
def test_what_the_grader_reads_must_have_its_type(cell: object, problem: str) -> None:
    with pytest.raises(ValueError, match="cell 1 ") as raised:
        parse_notebook(_notebook(_code(), cell), "02.ipynb")
    assert problem in str(raised.value) and str(raised.value).startswith("02.ipynb cannot be read")


def test_not_a_notebook_at_all() -> None:
    nan = b'{"cells": [], "metadata": {"x": NaN}}'
    cases = [(b"[1, 2]", "no list of cells"), (b"{", "not JSON"), (b"", "not JSON")]
    for data, words in [*cases, (nan, "holds NaN, which JSON does not have")]:
        with pytest.raises(ValueError, match=words):
            parse_notebook(data, "x.ipynb")


def test_deep_nesting_is_refused_without_recursion() -> None:
    deep = "[" * 5000 + "]" * 5000
    text = f'{{"cells": [], "metadata": {{"x": {deep}}}}}'.encode()
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_DEPTH}|not JSON"):
        parse_notebook(text, "x.ipynb")
    shallow = "[" * (MAX_DEPTH - 3) + "]" * (MAX_DEPTH - 3)
    parse_notebook(f'{{"cells": [], "metadata": {{"x": {shallow}}}}}'.encode(), "x.ipynb")


def test_a_right_notebook_reads_as_it_is() -> None:
    cell = _code("print('ok')", nbgrader={"grade_id": "ex1", "points": 1, "grade": True})
    assert parse_notebook(_notebook(cell), "x.ipynb")["cells"] == [cell]
