"""pytest hooks for nbval runs over the notebooks: report the time each notebook took."""

from __future__ import annotations

from collections import defaultdict

import pytest

_seconds_per_notebook: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Setup, call and teardown of every cell; the kernel starts in the first cell's setup.
    _seconds_per_notebook[report.nodeid.split("::")[0]] += report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _seconds_per_notebook:
        return
    terminalreporter.section("nbval time per notebook")
    for notebook, seconds in sorted(_seconds_per_notebook.items()):
        terminalreporter.write_line(f"{seconds:6.1f} s  {notebook}")
    total = sum(_seconds_per_notebook.values())
    terminalreporter.write_line(f"{total:6.1f} s  all notebooks")
