"""The notebooks' widgets work as a learner uses them, in JupyterLab in headless Chromium.

nbval runs the notebooks but cannot see a widget work: an `interact` callback draws into an
Output widget, which only a front end fills. Here each notebook with an `interact(` cell is
opened in a real JupyterLab, run with Run → Run All Cells, and every slider is moved with the
keyboard (every dropdown and toggle button changed with the mouse); the plot or text below the
widget must change each time, and no traceback, error dialog or page error may appear. A
slider behind a predict-first question must be hidden until the question is answered: the
check is clicked once with nothing chosen (a message, still no slider), then with the first
choice (the slider appears).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# The notebooks known to have widgets; the list under test is read from the notebooks.
EXPECTED_WIDGET_NOTEBOOKS = {"01", "02", "03", "06", "07", "10", "11", "12"}

KERNEL_TIMEOUT = 60.0  # page opened → kernel idle
RUN_ALL_TIMEOUT = 300.0  # Run All Cells → every cell numbered; notebook 10 trains for ~100 s
WIDGET_TIMEOUT = 20.0  # control moved → output changed
SETTLED_POLLS = 3  # consecutive equal polls with the kernel idle
POLL = 0.2
ARROW_PRESSES = 3

# An exception's output (and a traceback printed to stderr); tqdm's progress text is not one.
ERROR_TEXT = re.compile(r"Traceback|\b[A-Za-z_.]*(?:Error|Exception)\b")


@dataclass(frozen=True)
class InteractCell:
    code_index: int  # position among the notebook's code cells (= the DOM's .jp-CodeCell)
    plots: bool  # the callback calls plt.show(): its output must hold a PNG


def _interact_cells(path: Path) -> list[InteractCell]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    found = []
    for index, cell in enumerate(code_cells):
        source = "".join(cell["source"])
        if "interact(" in source:
            found.append(InteractCell(code_index=index, plots="plt.show()" in source))
    return found


def _widget_notebooks() -> list[str]:
    return [
        path.name for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) if _interact_cells(path)
    ]


WIDGET_NOTEBOOKS = _widget_notebooks()


def test_widget_notebooks_are_found() -> None:
    found = {name[:2] for name in WIDGET_NOTEBOOKS}
    assert WIDGET_NOTEBOOKS, f"no notebook in {NOTEBOOKS} has an `interact(` cell"
    missing = EXPECTED_WIDGET_NOTEBOOKS - found
    assert not missing, f"notebooks {sorted(missing)} no longer have an `interact(` cell"


# -- the page ------------------------------------------------------------------------------

# One round trip: execution prompts, kernel status, stderr/error outputs and open dialogs.
PAGE_STATE_JS = """() => ({
  prompts: Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt'),
                      (e) => e.textContent.trim()),
  kernel: (document.querySelector(".jp-StatusBar-TextItem[title^='Change kernel for']")
           || {textContent: ''}).textContent.trim(),
  stderr: Array.from(document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'),
            (e) => e.innerText),
  dialogs: Array.from(document.querySelectorAll('.jp-Dialog'), (e) => e.innerText),
})"""

# What a widget drives: the PNGs and the text in its Output widget.
OUTPUT_JS = """(output) => ({
  images: Array.from(output.querySelectorAll('img'), (img) => img.getAttribute('src') || ''),
  text: output.innerText.trim(),
})"""

NUMBERED = re.compile(r"^\[\d+\]:$")

# attnlib.course.playgrounds.predict_first.CSS_CLASS: the gate's box; its parts add a suffix.
PREDICT_FIRST = "attnlib-predict-first"


@dataclass(frozen=True)
class Shown:
    """A digest of what an Output widget shows."""

    pngs: tuple[str, ...]  # sha256 of each PNG's bytes
    text: str

    @property
    def empty(self) -> bool:
        return not self.pngs and not self.text


def _digest(raw: dict[str, Any]) -> Shown:
    pngs = []
    for src in raw["images"]:
        prefix = "data:image/png;base64,"
        data = base64.b64decode(src[len(prefix) :]) if src.startswith(prefix) else src.encode()
        pngs.append(hashlib.sha256(data).hexdigest()[:16])
    return Shown(pngs=tuple(pngs), text=raw["text"])


@dataclass
class NotebookPage:
    """A JupyterLab tab with one notebook, and what went wrong in it."""

    page: Any
    name: str
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def state(self) -> dict[str, Any]:
        return self.page.evaluate(PAGE_STATE_JS)

    def problems(self, state: dict[str, Any] | None = None) -> list[str]:
        state = state or self.state()
        found = [f"page error: {error}" for error in self.page_errors]
        found += [f"dialog: {text.strip()}" for text in state["dialogs"]]
        found += [f"error output:\n{text}" for text in state["stderr"] if ERROR_TEXT.search(text)]
        if re.search(r"\b(Dead|Restarting)\b", state["kernel"]):
            found.append(f"kernel status: {state['kernel']}")
        return found

    def check(self, state: dict[str, Any] | None = None) -> None:
        problems = self.problems(state)
        if problems:
            pytest.fail(f"{self.name}: " + "\n\n".join(problems), pytrace=False)

    def wait_for(
        self, condition: Callable[[dict[str, Any]], bool], timeout: float, what: str
    ) -> dict[str, Any]:
        """Poll the page until `condition(state)`; fail early on any error in the page."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state()
            self.check(state)
            if condition(state):
                return state
            if time.monotonic() > deadline:
                prompts = " ".join(state["prompts"])
                pytest.fail(
                    f"{self.name}: {what} did not happen within {timeout:.0f} s "
                    f"(kernel: {state['kernel']!r}; prompts: {prompts})",
                    pytrace=False,
                )
            time.sleep(POLL)

    def menu(self, menu: str, command: str) -> None:
        self.page.get_by_role("menuitem", name=menu, exact=True).click()
        self.page.locator(f"li.lm-Menu-item[data-command='{command}']").click()


def _kernel_idle(state: dict[str, Any]) -> bool:
    return state["kernel"].endswith("| Idle")


@pytest.fixture
def notebook_page(browser: Any, lab_server: Any) -> Iterator[Callable[[str], NotebookPage]]:
    """Opens a notebook in a fresh browser context and a fresh JupyterLab workspace."""
    contexts = []

    def open_notebook(name: str) -> NotebookPage:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        context.set_default_timeout(30_000)
        page = context.new_page()
        opened = NotebookPage(page=page, name=name)
        page.on("pageerror", lambda error: opened.page_errors.append(str(error)))
        page.on(
            "console",
            lambda message: (
                opened.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        # A workspace of its own: JupyterLab would otherwise reopen the notebooks of the
        # previous test (and start their kernels) from the default workspace.
        workspace = f"browser-test-{uuid.uuid4().hex[:12]}"
        page.goto(f"{lab_server.url}/lab/workspaces/{workspace}/tree/{name}")
        return opened

    yield open_notebook
    for context in contexts:
        context.close()
    lab_server.shut_down_kernels()


# -- running the notebook --------------------------------------------------------------------


def _run_all_cells(notebook: NotebookPage, code_cells: int) -> None:
    notebook.wait_for(_kernel_idle, KERNEL_TIMEOUT, "the kernel becoming idle")
    state = notebook.state()
    assert len(state["prompts"]) == code_cells, (
        f"{notebook.name}: the page shows {len(state['prompts'])} code cells, "
        f"the notebook has {code_cells}"
    )
    # The stored outputs already carry execution counts: clear them, so that a numbered
    # prompt means "ran in this kernel".
    notebook.menu("Edit", "editmenu:clear-all")
    notebook.wait_for(
        lambda s: not any(NUMBERED.match(p) for p in s["prompts"]), 10, "clearing all outputs"
    )
    notebook.menu("Run", "runmenu:run-all")

    def finished(state: dict[str, Any]) -> bool:
        prompts = state["prompts"]
        if any("*" in prompt for prompt in prompts) or not _kernel_idle(state):
            return False
        not_run = [i for i, prompt in enumerate(prompts) if not NUMBERED.match(prompt)]
        if not_run:
            # Run All stops at an exception; `check` reports the traceback if it shows one.
            pytest.fail(
                f"{notebook.name}: Run All Cells finished with code cells {not_run} not run "
                f"(prompts: {' '.join(prompts)})",
                pytrace=False,
            )
        return True

    # Nothing runs yet right after the click: wait for the first execution to start.
    notebook.wait_for(
        lambda s: any("*" in p or NUMBERED.match(p) for p in s["prompts"]),
        KERNEL_TIMEOUT,
        "Run All Cells starting",
    )
    notebook.wait_for(finished, RUN_ALL_TIMEOUT, "running all cells")


# -- moving the widgets ----------------------------------------------------------------------


def _shown(output: Any) -> Shown:
    return _digest(output.evaluate(OUTPUT_JS))


def _settle(notebook: NotebookPage, output: Any, what: str) -> Shown:
    """What the output shows once the kernel is idle and it stops changing."""
    deadline = time.monotonic() + WIDGET_TIMEOUT
    last, same = None, 0
    while True:
        state = notebook.state()
        notebook.check(state)
        shown = _shown(output)
        same = same + 1 if shown == last and not shown.empty and _kernel_idle(state) else 0
        if same >= SETTLED_POLLS:
            return shown
        if time.monotonic() > deadline:
            pytest.fail(
                f"{notebook.name}: {what}: the widget's output did not settle within "
                f"{WIDGET_TIMEOUT:.0f} s (kernel: {state['kernel']!r}, output: {shown})",
                pytrace=False,
            )
        last = shown
        time.sleep(POLL)


def _assert_changes(
    notebook: NotebookPage, output: Any, before: Shown, act: Callable[[], None], what: str
) -> Shown:
    act()
    deadline = time.monotonic() + WIDGET_TIMEOUT
    while True:
        notebook.check()
        shown = _shown(output)
        if not shown.empty and shown != before:
            break
        if time.monotonic() > deadline:
            pytest.fail(
                f"{notebook.name}: {what}: the output did not change within "
                f"{WIDGET_TIMEOUT:.0f} s (it shows {shown})",
                pytrace=False,
            )
        time.sleep(POLL)
    after = _settle(notebook, output, what)
    assert after != before, f"{notebook.name}: {what}: the output changed, then went back"
    return after


def _move_slider(handle: Any) -> Callable[[], None]:
    def act() -> None:
        at_max = float(handle.get_attribute("aria-valuenow")) >= float(
            handle.get_attribute("aria-valuemax")
        )
        key = "ArrowLeft" if at_max else "ArrowRight"
        handle.focus()
        for _ in range(ARROW_PRESSES):
            handle.press(key)

    return act


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


def _check_widget(notebook: NotebookPage, container: Any, cell: InteractCell) -> list[str]:
    """Moves each control of one interact widget; returns what was moved."""
    output = container.locator(":scope > .widget-output")
    assert output.count() == 1, f"{notebook.name}: no Output widget in the interact widget"
    before = _settle(notebook, output, "the widget's first drawing")
    if cell.plots:
        assert before.pngs, (
            f"{notebook.name}: the widget's callback calls plt.show() but its output holds "
            f"no PNG (it shows {before.text!r})"
        )
    moved = []

    sliders = container.locator(".widget-slider").filter(has=container.page.locator(".noUi-handle"))
    for index in range(sliders.count()):
        handle = sliders.nth(index).locator(".noUi-handle").first
        label = sliders.nth(index).locator(".widget-label").first
        what = f"slider {label.inner_text().strip()!r}"
        readout = sliders.nth(index).locator(".widget-readout")
        value, shown_value = handle.get_attribute("aria-valuenow"), readout.inner_text()
        before = _assert_changes(notebook, output, before, _move_slider(handle), what)
        assert handle.get_attribute("aria-valuenow") != value, f"{what} did not move"
        moved.append(f"{what} {shown_value} → {readout.inner_text()}")

    selects = container.locator(".widget-dropdown select")
    for index in range(selects.count()):
        select = selects.nth(index)
        label = container.locator(".widget-dropdown").nth(index).locator(".widget-label").first
        what = f"dropdown {label.inner_text().strip()!r}"
        options = [o.replace("\xa0", " ") for o in select.locator("option").all_inner_texts()]
        assert len(options) > 1, f"{notebook.name}: {what} has nothing else to choose"
        current = select.evaluate("(s) => s.selectedIndex")
        # A learner would see an empty box. ipywidgets leaves a Dropdown's index at None
        # when an option's value is None, for some hash seeds: give such a Dropdown index=0.
        assert current >= 0, f"{notebook.name}: {what} shows no selection (its index is None)"
        choice = (current + 1) % len(options)
        before = _assert_changes(
            notebook, output, before, lambda s=select, c=choice: s.select_option(index=c), what
        )
        moved.append(f"{what} {options[current]!r} → {options[choice]!r}")

    toggles = container.locator(".widget-toggle-buttons")
    for index in range(toggles.count()):
        buttons = toggles.nth(index).locator("button:not(.mod-active)")
        label = toggles.nth(index).locator(".widget-label").first
        what = f"toggle buttons {label.inner_text().strip()!r}"
        assert buttons.count() > 0, f"{notebook.name}: {what} has nothing else to choose"
        button = buttons.first
        choice = button.inner_text().strip()
        before = _assert_changes(notebook, output, before, button.click, what)
        moved.append(f"{what} → {choice!r}")

    assert moved, f"{notebook.name}: the interact widget has no slider, dropdown or toggle"
    return moved


@pytest.mark.parametrize("name", WIDGET_NOTEBOOKS, ids=[n[:-6] for n in WIDGET_NOTEBOOKS])
def test_widgets_respond_in_jupyterlab(
    name: str,
    notebook_page: Callable[[str], NotebookPage],
    screenshot_dir: Path,
    record_notebook: Callable[..., None],
) -> None:
    cells = _interact_cells(NOTEBOOKS / name)
    notebook_json = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    code_cells = sum(cell["cell_type"] == "code" for cell in notebook_json["cells"])
    start = time.monotonic()
    moved: list[str] = []

    notebook = notebook_page(name)
    try:
        _run_all_cells(notebook, code_cells)
        sliders = shots = 0
        for cell in cells:
            code_cell = notebook.page.locator(".jp-CodeCell").nth(cell.code_index)
            answered = _answer_predict_first(notebook, code_cell)
            if answered:
                moved += answered
                gate = code_cell.locator(f".{PREDICT_FIRST}")
                gate.screenshot(path=str(screenshot_dir / f"{name[:-6]}-predict-first.png"))
            container = code_cell.locator(".widget-interact")
            assert container.count() >= 1, (
                f"{name}: code cell {cell.code_index} calls interact( but shows no interact widget"
            )
            for index in range(container.count()):
                widget = container.nth(index)
                moved += _check_widget(notebook, widget, cell)
                sliders += widget.locator(".widget-slider .noUi-handle").count()
                shots += 1
                widget.scroll_into_view_if_needed()
                widget.screenshot(path=str(screenshot_dir / f"{name[:-6]}-widget{shots}.png"))
        assert sliders, f"{name}: no slider in any interact widget"
        notebook.check()
    except BaseException:  # pytest.fail raises a BaseException
        with contextlib.suppress(Exception):  # the page may be gone; keep the first error
            notebook.page.screenshot(path=str(screenshot_dir / f"{name[:-6]}-FAILED.png"))
        raise
    record_notebook(name[:-6], time.monotonic() - start, moved, notebook.console_errors)
