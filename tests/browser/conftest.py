"""Fixtures for the browser tests: a throwaway JupyterLab server and Debian's headless Chromium.

The server serves copies of the notebooks from a temporary directory (JupyterLab autosaves a
notebook after running it; the repository's notebooks/ is never written). Its settings,
workspaces, runtime files and IPython profile live in that directory too, so nothing on the
machine (a saved workspace, a password, a startup script) changes what the tests see.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS
from lab_page import NotebookPage

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SERVER_START_TIMEOUT = 60.0
SERVER_STOP_TIMEOUT = 15.0
INSTALL_HINT = (
    "install the browser test's dependencies with `make browser-deps` "
    "(apt-get install chromium; playwright comes from requirements.txt), "
    "or set ATTNLIB_SKIP_BROWSER=1 to skip the browser tests"
)


@dataclass
class NotebookReport:
    """What one notebook's test did, for the terminal summary."""

    seconds: float = 0.0
    moved: list[str] = field(default_factory=list)  # "slider 'scale' 1.00 → 1.30", ...
    console_errors: list[str] = field(default_factory=list)


# Filled in by the tests, printed by pytest_terminal_summary.
_reports: dict[str, NotebookReport] = {}
_screenshot_dirs: list[str] = []

# JupyterLab user settings: no news or update checks (they would fetch from the internet and
# show a toast over the notebook), and every cell rendered (no virtual scrolling), so the DOM
# holds every cell's prompt and output.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def _browser_problem() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"playwright is not importable ({exc})"
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"Chromium is not installed ({CHROMIUM} is missing)"
    return None


@pytest.fixture(scope="session")
def browser_prerequisites() -> None:
    """Fail (never skip silently) when Chromium or playwright is missing."""
    if os.environ.get("ATTNLIB_SKIP_BROWSER") == "1":
        pytest.skip("ATTNLIB_SKIP_BROWSER=1 is set")
    problem = _browser_problem()
    if problem:
        pytest.fail(f"{problem}: {INSTALL_HINT}", pytrace=False)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class LabServer:
    url: str  # http://127.0.0.1:PORT, no trailing slash
    root: Path  # the directory it serves: copies of notebooks/*.ipynb
    log: Path

    def log_tail(self, chars: int = 6000) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
        return text[-chars:]

    def shut_down_kernels(self) -> None:
        """Delete every session (and with it its kernel) so notebooks do not pile up."""
        with urllib.request.urlopen(f"{self.url}/api/sessions", timeout=10) as response:
            sessions = json.load(response)
        for session in sessions:
            request = urllib.request.Request(
                f"{self.url}/api/sessions/{session['id']}", method="DELETE"
            )
            urllib.request.urlopen(request, timeout=30).close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server shuts its kernels down), then SIGKILL what is left of its group.

    Kernels run in sessions of their own; if the server has to be killed, ipykernel's parent
    poller ends them when their parent goes.
    """
    if process.poll() is None:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=SERVER_STOP_TIMEOUT)
    # The server runs in a process group of its own (start_new_session).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=SERVER_STOP_TIMEOUT)


def _wait_until_answering(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    last_error = "no attempt"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"JupyterLab exited with code {process.returncode} before answering; "
                f"its log:\n{log.read_text(encoding='utf-8', errors='replace')[-6000:]}",
                pytrace=False,
            )
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=5) as response:
                if response.status == 200:
                    return
                last_error = f"HTTP {response.status}"
        except (urllib.error.URLError, OSError) as exc:
            last_error = repr(exc)
        time.sleep(0.25)
    pytest.fail(
        f"JupyterLab did not answer {url} within {SERVER_START_TIMEOUT:.0f} s "
        f"(last error: {last_error}); its log:\n"
        + log.read_text(encoding="utf-8", errors="replace")[-6000:],
        pytrace=False,
    )


@pytest.fixture(scope="session")
def lab_server(
    browser_prerequisites: None,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> LabServer:
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "notebooks"
    root.mkdir()
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        shutil.copy2(notebook, root / notebook.name)
    settings = base / "lab-settings"
    for relative, values in LAB_SETTINGS.items():
        path = settings / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")

    env = dict(os.environ)  # inherits OMP_NUM_THREADS=1 and the rest from `make`
    # As `make lab` and `make test` run the notebooks (the Makefile exports it), also when
    # pytest is started by hand: some widgets' initial state depends on the hash seed.
    env.setdefault("PYTHONHASHSEED", "0")
    env.update(
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
        JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
        IPYTHONDIR=str(base / "ipython"),
    )
    # ipykernel picks the inline backend only when MPLBACKEND is unset; an inherited
    # MPLBACKEND=Agg would leave every plot (and so every slider's output) empty.
    env.pop("MPLBACKEND", None)

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        # Only so that the tests' own DELETE /api/sessions needs no XSRF cookie; the server
        # listens on 127.0.0.1 only and lives for one test session.
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:
        command.append("--ServerApp.allow_root=True")

    log = base / "jupyterlab.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    request.addfinalizer(lambda: _stop(process))
    _wait_until_answering(process, url, log)
    return LabServer(url=url, root=root, log=log)


@pytest.fixture(scope="session")
def browser(browser_prerequisites: None) -> Iterator[object]:
    """Debian's Chromium, headless; playwright gives it a fresh, empty user-data-dir."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


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


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("ATTNLIB_BROWSER_SCREENSHOTS")
    if configured:
        folder = Path(configured).resolve()
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("browser-screenshots")
    return folder


@pytest.fixture
def record_notebook(request: pytest.FixtureRequest, screenshot_dir: Path) -> Callable[..., None]:
    """Records one notebook's wall time, what was moved and any browser console errors.

    They travel in the test's report (``user_properties``), so that the summary is printed
    by the process that prints it: the only one, or pytest-xdist's controller when each
    worker drives its own JupyterLab (`make browser` runs one per core)."""
    request.node.user_properties.append(("screenshot_dir", str(screenshot_dir)))

    def record(name: str, seconds: float, moved: list[str], console_errors: list[str]) -> None:
        report = {"seconds": seconds, "moved": list(moved), "console_errors": list(console_errors)}
        request.node.user_properties.append(("notebook_report", json.dumps([name, report])))

    return record


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for key, value in report.user_properties:
        if key == "screenshot_dir" and value not in _screenshot_dirs:
            _screenshot_dirs.append(value)
        elif key == "notebook_report":
            name, fields = json.loads(value)
            _reports[name] = NotebookReport(**fields)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not (_screenshot_dirs or _reports):
        return
    write = terminalreporter.write_line
    terminalreporter.section("browser tests")
    for folder in _screenshot_dirs:
        write(f"browser screenshots: {folder}")
    for notebook, report in sorted(_reports.items()):
        write(f"{report.seconds:6.1f} s  {notebook}")
        for moved in report.moved:
            write(f"          {moved}")
        for error in report.console_errors:
            write(f"          browser console error: {error[:300]}")
    if _reports:
        total = sum(report.seconds for report in _reports.values())
        write(f"{total:6.1f} s  all notebooks in the browser")
