"""Run one submitted notebook inside the sandbox, and answer the grader's checks on the way.

:func:`run_notebook` talks to the grader over two file descriptors
(:mod:`attnlib.grading.wire.frames`). It first says what it runs as (:func:`privileges`: its ids
and capabilities, before any of the submission's code has run, so the grader can refuse a sandbox
with privileges), then takes its order: the notebook (as data the grader has read and checked),
which cells to leave out, where each graded check stands. It runs the notebook's code cells in
order in an IPython shell, as a kernel would, capturing each cell's output for the feedback, cut to
a size that keeps the feedback readable. Where a graded check stands it does not run that cell: it
tells the grader the check is due, describes the learner's answer, then serves the grader's calls
of that answer (:mod:`attnlib.grading.sandbox.answering`) until the grader sends its verdict, which
becomes the cell's output. A copy of a check cell (pasted elsewhere, keeping its grade id) is not
run. Widgets have no front end to talk to here, so a slider cell cannot leave a kernel waiting for
a reply (there is no kernel), and figures are drawn off-screen.

A warm sandbox (:mod:`attnlib.grading.sandbox.fork_server`) forks this process from one that has
imported what the course needs; ``python -m attnlib.grading.sandbox.notebook IN_FD OUT_FD`` runs one
notebook from a cold start (in a container).

Everything in this process shares it with the learner's code: the grader believes nothing it
says except what the learner's answer returned.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

# A cell's stream (stdout or stderr) keeps this many characters of its text, a figure or
# other display value this many; the notebook's outputs together at most OUTPUT_BYTES as they
# travel (JSON, non-ASCII escaped), after which a cell's outputs are replaced by a note. The
# grader refuses a final message over 8 MB (grader.channel.SMALL_FRAME_BYTES).
STREAM_CHARS = 100_000
DATA_CHARS = 2_000_000
OUTPUT_BYTES = 4_000_000
_SHOWN_KINDS = ("text/plain", "text/html", "text/markdown", "image/png", "image/jpeg")

# What a cell left out of a graded run shows in the feedback (attnlib.grading.grader.leave_out).
LEFT_OUT_NOTE = "(not run while grading: nothing graded needs it)"


def privileges() -> dict[str, Any]:
    """What this process runs as: its capabilities, ``no_new_privs``, its uid and how the
    uid maps outside (the grader refuses a run with any capability, or run as root)."""
    status: dict[str, str] = {}
    with open("/proc/self/status", encoding="utf-8") as file:
        for line in file:
            key, _, value = line.partition(":")
            status[key] = value.strip()
    with open("/proc/self/uid_map", encoding="utf-8") as file:
        uid_map = file.read()
    kinds = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
    capabilities = {kind: status.get(kind, "") for kind in kinds}
    return {
        "capabilities": capabilities,
        "no_new_privs": status.get("NoNewPrivs", ""),
        "uid": os.getuid(),
        "uid_map": uid_map,
    }


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[… {len(text) - limit:,} more characters cut by the grader]\n"


class _Budget:
    """What is left of the notebook's OUTPUT_BYTES."""

    def __init__(self) -> None:
        self.left = OUTPUT_BYTES

    def take(self, outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        size = len(json.dumps(outputs))
        if size > self.left:
            self.left = 0
            note = "[this cell's output was not kept: the notebook's outputs are over the limit]\n"
            return [{"output_type": "stream", "name": "stdout", "text": note}]
        self.left -= size
        return outputs


def _outputs_of(captured: Any, result: Any, shell: Any) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    if captured.stdout:
        text = _cut(captured.stdout, STREAM_CHARS)
        outputs.append({"output_type": "stream", "name": "stdout", "text": text})
    if captured.stderr:
        text = _cut(captured.stderr, STREAM_CHARS)
        outputs.append({"output_type": "stream", "name": "stderr", "text": text})
    for shown in captured.outputs:
        data = {
            kind: _cut(value, DATA_CHARS)
            for kind, value in shown.data.items()
            if kind in _SHOWN_KINDS and isinstance(value, str)
        }
        outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
    error = result.error_before_exec or result.error_in_exec
    if error is not None:
        outputs.append(_error_output(error, shell))
    return outputs


def _error_output(error: BaseException, shell: Any) -> dict[str, Any]:
    render = getattr(error, "_render_traceback_", None)
    try:
        lines = render() if callable(render) else None
    except Exception:
        lines = None
    if lines is None:
        lines = traceback.format_exception(type(error), error, error.__traceback__)
    try:
        message = str(error)
    except Exception:  # an exception whose __str__ fails
        message = ""
    return {
        "output_type": "error",
        "ename": type(error).__name__,
        "evalue": message[:20_000],
        "traceback": [str(line)[:5_000] for line in lines][-200:],
    }


def _verdict_outputs(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """The check cell's output: the report, printed when it passed, raised when it failed."""
    report = str(verdict.get("report", ""))
    if verdict.get("passed"):
        return [{"output_type": "stream", "name": "stdout", "text": report}]
    return [
        {
            "output_type": "error",
            "ename": "CheckFailedError",
            "evalue": report,
            "traceback": report.splitlines(),
        }
    ]


def _note(text: str) -> list[dict[str, Any]]:
    return [{"output_type": "stream", "name": "stdout", "text": text + "\n"}]


class _Grader:
    """The grader as this process sees it: orders in, reports out, one check at a time."""

    def __init__(self, orders_fd: int, reports_fd: int, call_seconds: float) -> None:
        self.orders_fd = orders_fd
        self.reports_fd = reports_fd
        self.call_seconds = call_seconds

    def check(
        self, names: dict[str, Any], exercise_id: str, answer_name: str
    ) -> list[dict[str, Any]]:
        """Tell the grader the check is due, serve its calls of the answer (the name
        ``answer_name`` in ``names``, the shell's namespace), and return its verdict as the
        check cell's outputs."""
        import torch

        # The check's calls draw from the grader's random numbers; the notebook keeps its own.
        with torch.random.fork_rng(devices=[]):
            return self._serve(names, exercise_id, answer_name)

    def _serve(
        self, names: dict[str, Any], exercise_id: str, answer_name: str
    ) -> list[dict[str, Any]]:
        from attnlib.grading.sandbox.answering import answer_request, describe
        from attnlib.grading.wire.frames import read_frame, write_frame

        answer = names.get(answer_name)
        described = describe(answer) if answer_name in names else None
        write_frame(self.reports_fd, {"check": exercise_id, "answer": described})
        while True:
            order = read_frame(self.orders_fd)
            if order is None:
                os._exit(0)
            if "call" in order:
                reply = answer_request(answer, order["call"], self.call_seconds)
                write_frame(self.reports_fd, {"reply": reply})
            elif "verdict" in order:
                return _verdict_outputs(order["verdict"])


def run_notebook(orders_fd: int, reports_fd: int) -> None:
    """Say what this process runs as, take the grader's order, run the notebook it holds and
    report each cell's outputs at the end."""
    os.environ["MPLBACKEND"] = "Agg"
    import torch

    torch.set_num_threads(1)
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from attnlib.grading.wire.cells import code_cells
    from attnlib.grading.wire.frames import read_frame, write_frame

    write_frame(reports_fd, {"hello": privileges()})
    orders = read_frame(orders_fd)
    if orders is None or "run" not in orders:
        os._exit(0)
    run = orders["run"]
    notebook = run["notebook"]
    checks_at = {int(k): list(v) for k, v in run["checks"].items()}
    copies = {int(k): str(v) for k, v in run.get("copies", {}).items()}
    skip = set(run.get("skip", []))
    grader = _Grader(orders_fd, reports_fd, float(run["call_seconds"]))
    budget = _Budget()
    ran: list[int] = []  # the cells run or checked, in order: their execution counts

    shell = InteractiveShell.instance(colors="NoColor")
    shell.showtraceback = lambda *args, **kwargs: None  # errors become outputs below
    outputs: dict[int, list[dict[str, Any]]] = {}
    for index, source, _ in code_cells(notebook):
        if index in checks_at:
            due = checks_at[index]
            outputs[index] = [
                out for e, name in due for out in grader.check(shell.user_ns, e, name)
            ]
            ran.append(index)
        elif index in copies:
            outputs[index] = _note(copies[index])
        elif index in skip:
            outputs[index] = _note(LEFT_OUT_NOTE)
        else:
            with capture_output() as captured:
                result = shell.run_cell(source, store_history=True)
            outputs[index] = budget.take(_outputs_of(captured, result, shell))
            ran.append(index)
    for exercise_id, name in run.get("at_end", []):
        outputs.setdefault(-1, []).extend(grader.check(shell.user_ns, exercise_id, name))
    write_frame(reports_fd, {"done": {str(k): v for k, v in outputs.items()}, "ran": ran})


def main(in_fd: int, out_fd: int) -> None:
    """One notebook from a cold start, talking over ``in_fd`` and ``out_fd`` (a container's
    standard input and output)."""
    # Private copies of the two descriptors: when they are standard input and output, what the
    # notebook's code writes to fd 1 goes to stderr, not into a frame.
    orders_fd, reports_fd = os.dup(in_fd), os.dup(out_fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), in_fd)
    os.dup2(2, out_fd)
    run_notebook(orders_fd, reports_fd)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
