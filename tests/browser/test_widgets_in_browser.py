"""The notebooks' widgets work as a learner uses them, in JupyterLab in headless Chromium.

nbval runs the notebooks but cannot see a widget work: an `interact` callback draws into an
Output widget, which only a front end fills. Here each notebook of the learner's edition
(notebooks/, what `make lab` opens) with an `interact(` cell or a playground is opened in a
real JupyterLab, untouched, and run with Run → Run All Cells. Every code cell must run: the
checks of the unfinished exercises say "not done yet" (in cells tagged `raises-exception`,
so Run All goes on), one per graded exercise, and nothing else fails. In each
`interact` widget every slider is moved with the keyboard (every dropdown and toggle button
changed with the mouse), and the plot or text below it must change each time. In each
playground every text box is emptied and then given the example its placeholder suggests,
each followed by Enter, every control is moved and every button pressed, and what the
playground shows must change each time. No traceback, error dialog or page error may appear.
Each playground's screenshot is taken for the instructors' guide (`make screenshots`). A
slider behind a predict-first question must stay hidden until the question is answered: the
check is pressed once with nothing chosen (a message, still no slider), then with the first
choice (the slider appears).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lab_page import (
    POLL,
    WIDGET_TIMEOUT,
    Look,
    NotebookPage,
    Shown,
    assert_changes,
    move_slider,
    output_shows,
    playground_shows,
    run_all_cells,
    settle,
)

from attnlib.course.playgrounds import SHOW_CALL as PLAYGROUND_CALL

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# The notebooks known to have widgets and playgrounds; what is tested is read from the
# notebooks, these only make sure nothing disappears unnoticed.
EXPECTED_WIDGET_NOTEBOOKS = {"01", "02", "03", "04", "05", "06", "07", "09", "10", "11", "12"}
EXPECTED_PLAYGROUNDS = {
    ("04", "toy_views"),
    ("05", "toy_views"),
    ("09", "dates"),
    ("10", "sampler"),
    ("10", "gpt_views"),
    ("11", "minilm_views"),
}
# `playgrounds.<kind>.show_…(` in a code cell shows a playground: a box of the CSS class
# `attnlib-playground`, one for each such call, in the order of the calls.
PLAYGROUND = "attnlib-playground"
# attnlib.course.playgrounds.predict_first.CSS_CLASS: the gate's box; its parts add a suffix.
PREDICT_FIRST = "attnlib-predict-first"


@dataclass(frozen=True)
class InteractCell:
    code_index: int  # position among the notebook's code cells (= the DOM's .jp-CodeCell)
    cell_id: str
    plots: bool  # the callback calls plt.show(): its output must hold a PNG


@dataclass(frozen=True)
class PlaygroundCell:
    code_index: int
    cell_id: str
    kinds: tuple[str, ...]  # the playgrounds' modules, in order: "sampler", "gpt_views", ...


def _graded_checks(path: Path) -> int:
    """The graded check cells: each fails with "not done yet" in the untouched edition."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum(1 for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("grade"))


def _code_sources(path: Path) -> list[str]:
    return [source for _, source in _code_cells(path)]


def _code_cells(path: Path) -> list[tuple[str, str]]:
    """Each code cell's id and source, in order."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    return [(c["id"], "".join(c["source"])) for c in cells if c["cell_type"] == "code"]


def _interact_cells(path: Path) -> list[InteractCell]:
    return [
        InteractCell(code_index=index, cell_id=cell_id, plots="plt.show()" in source)
        for index, (cell_id, source) in enumerate(_code_cells(path))
        if "interact(" in source
    ]


def _playground_cells(path: Path) -> list[PlaygroundCell]:
    return [
        PlaygroundCell(
            code_index=index, cell_id=cell_id, kinds=tuple(PLAYGROUND_CALL.findall(source))
        )
        for index, (cell_id, source) in enumerate(_code_cells(path))
        if PLAYGROUND_CALL.search(source)
    ]


# The notebooks that train a model take minutes where the others take seconds: they go
# first, one to each worker, and the short ones fill in around them.
TRAINING_NOTEBOOKS = ("09", "10")


def _widget_notebooks() -> list[str]:
    found = [
        path.name
        for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
        if _interact_cells(path) or _playground_cells(path)
    ]
    return sorted(found, key=lambda name: name[:2] not in TRAINING_NOTEBOOKS)


WIDGET_NOTEBOOKS = _widget_notebooks()


def test_widget_notebooks_and_playgrounds_are_found() -> None:
    found = {name[:2] for name in WIDGET_NOTEBOOKS}
    assert WIDGET_NOTEBOOKS, f"no notebook in {NOTEBOOKS} has an `interact(` cell"
    missing = EXPECTED_WIDGET_NOTEBOOKS - found
    assert not missing, f"notebooks {sorted(missing)} no longer have a widget or a playground"
    playgrounds = {
        (path.name[:2], kind)
        for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
        for cell in _playground_cells(path)
        for kind in cell.kinds
    }
    assert not EXPECTED_PLAYGROUNDS - playgrounds, (
        f"playgrounds no longer shown: {sorted(EXPECTED_PLAYGROUNDS - playgrounds)}"
    )


# -- moving the widgets ----------------------------------------------------------------------


def _move_controls(
    notebook: NotebookPage, box: Any, look: Look, before: Shown
) -> tuple[list[str], Shown]:
    """Moves every slider, dropdown and toggle in `box`; what `look` sees must change each time."""
    moved = []

    sliders = box.locator(".widget-slider").filter(has=box.page.locator(".noUi-handle"))
    for index in range(sliders.count()):
        handle = sliders.nth(index).locator(".noUi-handle").first
        label = sliders.nth(index).locator(".widget-label").first
        what = f"slider {label.inner_text().strip()!r}"
        readout = sliders.nth(index).locator(".widget-readout")
        value, shown_value = handle.get_attribute("aria-valuenow"), readout.inner_text()
        before = assert_changes(notebook, look, before, move_slider(handle), what)
        assert handle.get_attribute("aria-valuenow") != value, f"{what} did not move"
        moved.append(f"{what} {shown_value} → {readout.inner_text()}")

    selects = box.locator(".widget-dropdown select")
    for index in range(selects.count()):
        select = selects.nth(index)
        label = box.locator(".widget-dropdown").nth(index).locator(".widget-label").first
        what = f"dropdown {label.inner_text().strip()!r}"
        options = [o.replace("\xa0", " ") for o in select.locator("option").all_inner_texts()]
        assert len(options) > 1, f"{notebook.name}: {what} has nothing else to choose"
        current = select.evaluate("(s) => s.selectedIndex")
        # A learner would see an empty box. ipywidgets leaves a Dropdown's index at None
        # when an option's value is None, for some hash seeds: give such a Dropdown index=0.
        assert current >= 0, f"{notebook.name}: {what} shows no selection (its index is None)"
        choice = (current + 1) % len(options)
        before = assert_changes(
            notebook, look, before, lambda s=select, c=choice: s.select_option(index=c), what
        )
        moved.append(f"{what} {options[current]!r} → {options[choice]!r}")

    toggles = box.locator(".widget-toggle-buttons")
    for index in range(toggles.count()):
        buttons = toggles.nth(index).locator("button:not(.mod-active)")
        label = toggles.nth(index).locator(".widget-label").first
        what = f"toggle buttons {label.inner_text().strip()!r}"
        assert buttons.count() > 0, f"{notebook.name}: {what} has nothing else to choose"
        button = buttons.first
        choice = button.inner_text().strip()
        before = assert_changes(notebook, look, before, button.click, what)
        moved.append(f"{what} → {choice!r}")
    return moved, before


def _wait_until(notebook: NotebookPage, condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WIDGET_TIMEOUT
    while not condition():
        notebook.check()
        if time.monotonic() > deadline:
            pytest.fail(
                f"{notebook.name}: {what} did not happen within {WIDGET_TIMEOUT:.0f} s",
                pytrace=False,
            )
        time.sleep(POLL)


def _answer_predict_first(notebook: NotebookPage, code_cell: Any) -> list[str]:
    """Answers the cell's predict-first question, if it asks one, so that its slider shows."""
    gate = code_cell.locator(f".{PREDICT_FIRST}")
    if gate.count() == 0:
        return []
    shown = code_cell.locator(".widget-interact")
    assert shown.count() == 0, f"{notebook.name}: a slider shows before its question is answered"
    check = gate.locator(f".{PREDICT_FIRST}-check")
    verdict = gate.locator(f".{PREDICT_FIRST}-verdict")
    check.click()  # nothing chosen yet
    _wait_until(notebook, lambda: "Choose one of" in verdict.inner_text(), "the no-answer message")
    assert shown.count() == 0, f"{notebook.name}: the slider shows without an answer"
    gate.locator(f".{PREDICT_FIRST}-choices input[type='radio']").first.check()
    check.click()
    _wait_until(notebook, lambda: shown.count() >= 1, "the slider appearing after an answer")
    first_line = verdict.inner_text().strip().splitlines()[0]
    return [f"predict-first answered (a): {first_line[:80]}"]


def _check_interact(
    notebook: NotebookPage,
    container: Any,
    cell: InteractCell,
    first_drawn: Callable[[], None] = lambda: None,
) -> list[str]:
    """Moves each control of one interact widget; returns what was moved. ``first_drawn`` is
    called once the widget has drawn its first output, before any control moves."""
    output = container.locator(":scope > .widget-output")
    assert output.count() == 1, f"{notebook.name}: no Output widget in the interact widget"
    look = output_shows(output)
    before = settle(notebook, look, "the widget's first drawing")
    if cell.plots:
        assert before.pngs, (
            f"{notebook.name}: the widget's callback calls plt.show() but its output holds "
            f"no PNG (it shows {before.text!r})"
        )
    first_drawn()
    moved, _ = _move_controls(notebook, container, look, before)
    assert moved, f"{notebook.name}: the interact widget has no slider, dropdown or toggle"
    return moved


def _type(box: Any, text: str) -> Callable[[], None]:
    """Types `text` into the text box `box` (replacing what was there) and presses Enter."""

    def act() -> None:
        box.fill(text)
        box.press("Enter")

    return act


def _check_playground(notebook: NotebookPage, box: Any, kind: str) -> list[str]:
    """Types into each text box, moves each control, presses each button; returns what it did."""
    look = playground_shows(box)
    before = settle(notebook, look, f"the {kind} playground's first drawing")
    done = []

    texts = box.locator(".widget-text input")
    assert texts.count(), f"{notebook.name}: the {kind} playground has no text box"
    for index in range(texts.count()):
        text = texts.nth(index)
        example = text.get_attribute("placeholder") or ""
        assert example and example != text.input_value(), (
            f"{notebook.name}: the {kind} playground's text box {index} needs a placeholder "
            "with an example other than its starting text (the test types it)"
        )
        # Empty first: the playground must answer with a note, not a traceback or nothing.
        for typed in ("", example):
            what = f"{kind}: typed {typed!r} + Enter"
            before = assert_changes(notebook, look, before, _type(text, typed), what)
            done.append(what)

    moved, before = _move_controls(notebook, box, look, before)
    done += [f"{kind}: {what}" for what in moved]

    buttons = box.locator(".widget-button")
    for index in range(buttons.count()):
        button = buttons.nth(index)
        what = f"{kind}: pressed {button.inner_text().strip()!r}"
        before = assert_changes(notebook, look, before, button.click, what)
        done.append(what)
    return done


def _save_screenshot(box: Any, screenshot_dir: Path, name: str, *copies: tuple[str, str]) -> None:
    """Into the screenshot folder, and for each (environment variable, name) of ``copies``,
    into the folder that variable names when it is set: `make screenshots` sets
    `ATTNLIB_PLAYGROUND_SCREENSHOTS` (figures/playgrounds, for the instructors' guide) and
    `ATTNLIB_WIDGET_PICTURES` (figures/widgets: the site shows each widget as a picture)."""
    # JupyterLab scrolls the notebook inside a panel the height of the window: a window
    # taller than the playground lets the screenshot hold all of it.
    page = box.page
    viewport = page.viewport_size
    height = int(box.evaluate("(e) => e.getBoundingClientRect().height"))
    page.set_viewport_size(
        {"width": viewport["width"], "height": max(viewport["height"], height + 400)}
    )
    try:
        box.scroll_into_view_if_needed()
        path = screenshot_dir / name
        box.screenshot(path=str(path))
    finally:
        page.set_viewport_size(viewport)
    for variable, copy_name in copies:
        folder = os.environ.get(variable)
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(folder) / copy_name)


@pytest.mark.parametrize("name", WIDGET_NOTEBOOKS, ids=[n[:-6] for n in WIDGET_NOTEBOOKS])
def test_widgets_and_playgrounds_respond_in_jupyterlab(
    name: str,
    notebook_page: Callable[[str], NotebookPage],
    screenshot_dir: Path,
    record_notebook: Callable[..., None],
) -> None:
    path = NOTEBOOKS / name
    code_cells = len(_code_sources(path))
    start = time.monotonic()
    done: list[str] = []

    notebook = notebook_page(name)
    try:
        run_all_cells(notebook, code_cells)
        not_done = [text for text in notebook.state()["stderr"] if "not done yet" in text]
        assert len(not_done) == _graded_checks(path), (
            f"{name}: {len(not_done)} checks say 'not done yet', the notebook has "
            f"{_graded_checks(path)} graded exercises"
        )
        shots = 0
        for cell in _interact_cells(path):
            code_cell = notebook.page.locator(".jp-CodeCell").nth(cell.code_index)
            answered = _answer_predict_first(notebook, code_cell)
            if answered:
                done += answered
                gate = code_cell.locator(f".{PREDICT_FIRST}")
                gate.screenshot(path=str(screenshot_dir / f"{name[:-6]}-predict-first.png"))
            container = code_cell.locator(".widget-interact")
            assert container.count() >= 1, (
                f"{name}: code cell {cell.code_index} calls interact( but shows no interact widget"
            )
            for index in range(container.count()):
                widget = container.nth(index)
                shots += 1
                # The website's picture shows the widget as a first run draws it, next to
                # the prose about its starting values, not where the test left its controls.
                picture = functools.partial(
                    _save_screenshot,
                    widget,
                    screenshot_dir,
                    f"{name[:-6]}-widget{shots}.png",
                    ("ATTNLIB_WIDGET_PICTURES", f"{name[:2]}-{cell.cell_id}-{index + 1}.png"),
                )
                done += _check_interact(notebook, widget, cell, first_drawn=picture)
        for cell in _playground_cells(path):
            code_cell = notebook.page.locator(".jp-CodeCell").nth(cell.code_index)
            boxes = code_cell.locator(f".{PLAYGROUND}")
            assert boxes.count() == len(cell.kinds), (
                f"{name}: code cell {cell.code_index} shows {boxes.count()} playgrounds "
                f"(elements of class {PLAYGROUND}), it calls {len(cell.kinds)}: {cell.kinds}"
            )
            for index, kind in enumerate(cell.kinds):
                box = boxes.nth(index)
                done += _check_playground(notebook, box, kind)
                _save_screenshot(
                    box,
                    screenshot_dir,
                    f"{name[:2]}-{kind}.png",
                    ("ATTNLIB_PLAYGROUND_SCREENSHOTS", f"{name[:2]}-{kind}.png"),
                    ("ATTNLIB_WIDGET_PICTURES", f"{name[:2]}-{cell.cell_id}-{index + 1}.png"),
                )
        notebook.check()
    except BaseException:  # pytest.fail raises a BaseException
        with contextlib.suppress(Exception):  # the page may be gone; keep the first error
            notebook.page.screenshot(path=str(screenshot_dir / f"{name[:-6]}-FAILED.png"))
        raise
    record_notebook(name[:-6], time.monotonic() - start, done, notebook.console_errors)
