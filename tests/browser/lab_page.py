"""A JupyterLab page in headless Chromium, as the browser tests drive it.

:class:`NotebookPage` is one notebook's tab and what went wrong in it; :func:`run_all_cells`
runs it as a learner would (Run → Run All Cells); :func:`assert_changes` does one thing to a
widget and waits until what a :data:`Look` sees has changed and settled.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

KERNEL_TIMEOUT = 60.0  # page opened → kernel idle
# Run All Cells is watched for progress, not raced against a clock: it fails when one cell
# runs for CELL_TIMEOUT or the whole notebook for RUN_ALL_TIMEOUT. The longest cells, 09's
# and 10's training, take about 100 s on a quiet core and over 300 s on a runner shared three
# ways (seen in a fresh clone's browser test beside the pip set-up test and an nbval run);
# a run that keeps finishing cells is slow, not hung.
CELL_TIMEOUT = 600.0
RUN_ALL_TIMEOUT = 1500.0
WIDGET_TIMEOUT = 20.0  # control moved → output changed
SETTLED_POLLS = 3  # consecutive equal polls with the kernel idle
POLL = 0.2
# While Run All works through a notebook (training in 09 and 10 takes minutes), the page is
# read once a second: each read walks every cell of the page, and on a long notebook reading
# it five times a second takes the CPU from the kernel it waits for.
RUN_ALL_POLL = 1.0
SETTLE = 3.0  # how long Run All's end must look the same before it counts as the end
ARROW_PRESSES = 3

# An exception's output (and a traceback printed to stderr); tqdm's progress text is not one.
ERROR_TEXT = re.compile(r"Traceback|\b[A-Za-z_.]*(?:Error|Exception)\b")


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

# What a playground shows: the PNGs in it and the text of its Output and HTML widgets (its
# text boxes, labels and slider readouts are what the test changes, not what it checks).
PLAYGROUND_JS = """(box) => ({
  images: Array.from(box.querySelectorAll('img'), (img) => img.getAttribute('src') || ''),
  text: Array.from(box.querySelectorAll('.widget-output, .widget-html'),
                   (e) => e.innerText.trim()).join('\\n'),
})"""

NUMBERED = re.compile(r"^\[\d+\]:$")


@dataclass(frozen=True)
class Shown:
    """A digest of what an Output widget shows."""

    pngs: tuple[str, ...]  # sha256 of each PNG's bytes
    text: str

    @property
    def empty(self) -> bool:
        return not self.pngs and not self.text


Look = Callable[[], Shown]  # reads what a widget shows now


def digest(raw: dict[str, Any]) -> Shown:
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
        self,
        condition: Callable[[dict[str, Any]], bool],
        timeout: float,
        what: str,
        poll: float = POLL,
        stall_timeout: float | None = None,
    ) -> dict[str, Any]:
        """Poll the page until `condition(state)`; fail early on any error in the page.

        With `stall_timeout`, it also fails when the prompts stay the same that long (no cell
        started or finished): a hung cell is found long before `timeout`.
        """
        start = time.monotonic()
        last_prompts, last_change = None, start
        while True:
            state = self.state()
            self.check(state)
            if condition(state):
                return state
            now = time.monotonic()
            if state["prompts"] != last_prompts:
                last_prompts, last_change = state["prompts"], now
            if now - start > timeout:
                failure = f"{what} did not happen within {timeout:.0f} s"
            elif stall_timeout is not None and now - last_change > stall_timeout:
                failure = f"{what}: no cell started or finished for {stall_timeout:.0f} s"
            else:
                time.sleep(poll)
                continue
            prompts = " ".join(state["prompts"])
            pytest.fail(
                f"{self.name}: {failure} (kernel: {state['kernel']!r}; prompts: {prompts})",
                pytrace=False,
            )

    def menu(self, menu: str, command: str) -> None:
        self.page.get_by_role("menuitem", name=menu, exact=True).click()
        self.page.locator(f"li.lm-Menu-item[data-command='{command}']").click()


def kernel_idle(state: dict[str, Any]) -> bool:
    return state["kernel"].endswith("| Idle")


# -- running the notebook --------------------------------------------------------------------


def run_all_cells(notebook: NotebookPage, code_cells: int) -> None:
    notebook.wait_for(kernel_idle, KERNEL_TIMEOUT, "the kernel becoming idle")
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

    def settled(state: dict[str, Any]) -> bool:
        prompts = state["prompts"]
        return kernel_idle(state) and not any("*" in prompt for prompt in prompts)

    def finished(state: dict[str, Any]) -> bool:
        if not settled(state):
            return False
        prompts = state["prompts"]
        not_run = [i for i, prompt in enumerate(prompts) if not NUMBERED.match(prompt)]
        if not_run:
            # Between a cell that raised (tagged `raises-exception`) and the next one, the page
            # can show for a moment an idle kernel and nothing queued (seen in 09 after its
            # beam-search check, the kernel busy again a moment later): only a state that
            # stays so means Run All stopped.
            time.sleep(SETTLE)
            later = notebook.state()
            if not settled(later) or later["prompts"] != prompts:
                return False
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
    notebook.wait_for(
        finished,
        RUN_ALL_TIMEOUT,
        "running all cells",
        poll=RUN_ALL_POLL,
        stall_timeout=CELL_TIMEOUT,
    )


# -- moving the widgets ----------------------------------------------------------------------


def output_shows(output: Any) -> Look:
    """How to look at what an Output widget (an `interact` callback's) shows."""
    return lambda: digest(output.evaluate(OUTPUT_JS))


def playground_shows(box: Any) -> Look:
    """How to look at what a playground shows: its Output and HTML widgets, not its controls."""
    return lambda: digest(box.evaluate(PLAYGROUND_JS))


def settle(notebook: NotebookPage, look: Look, what: str) -> Shown:
    """What `look` sees once the kernel is idle and it stops changing."""
    deadline = time.monotonic() + WIDGET_TIMEOUT
    last, same = None, 0
    while True:
        state = notebook.state()
        notebook.check(state)
        shown = look()
        same = same + 1 if shown == last and not shown.empty and kernel_idle(state) else 0
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


def assert_changes(
    notebook: NotebookPage, look: Look, before: Shown, act: Callable[[], None], what: str
) -> Shown:
    """Does `act` and waits until what `look` sees differs from `before`, and settles."""
    act()
    deadline = time.monotonic() + WIDGET_TIMEOUT
    while True:
        notebook.check()
        shown = look()
        if not shown.empty and shown != before:
            break
        if time.monotonic() > deadline:
            pytest.fail(
                f"{notebook.name}: {what}: the output did not change within "
                f"{WIDGET_TIMEOUT:.0f} s (it shows {shown})",
                pytrace=False,
            )
        time.sleep(POLL)
    after = settle(notebook, look, what)
    assert after != before, f"{notebook.name}: {what}: the output changed, then went back"
    return after


def move_slider(handle: Any) -> Callable[[], None]:
    def act() -> None:
        at_max = float(handle.get_attribute("aria-valuenow")) >= float(
            handle.get_attribute("aria-valuemax")
        )
        key = "ArrowLeft" if at_max else "ArrowRight"
        handle.focus()
        for _ in range(ARROW_PRESSES):
            handle.press(key)

    return act
