"""Run one submitted notebook inside the sandbox, and answer the grader's checks on the way.

``python -m attnlib.grading.in_sandbox IN_FD OUT_FD`` reads its orders from the grader on file
descriptor IN_FD and writes to it on OUT_FD (:mod:`attnlib.grading.wire` frames). It runs the
notebook's code cells in order in an IPython shell, as a kernel would, capturing each cell's
output for the feedback. Where a graded check cell stands it does not run that cell: it tells
the grader the check is due, describes the learner's answer, then serves the grader's calls of
that answer (:mod:`attnlib.grading.answering`) until the grader sends its verdict, which becomes
the cell's output. Widgets have no front end to talk to here, so a slider cell cannot leave a
kernel waiting for a reply (there is no kernel), and figures are drawn off-screen.

Everything in this process shares it with the learner's code: the grader believes nothing it
says except what the learner's answer returned.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import IO, Any


def _outputs_of(captured: Any, result: Any, shell: Any) -> list[dict[str, Any]]:
    outputs: list[dict[str, Any]] = []
    if captured.stdout:
        outputs.append({"output_type": "stream", "name": "stdout", "text": captured.stdout})
    if captured.stderr:
        outputs.append({"output_type": "stream", "name": "stderr", "text": captured.stderr})
    for shown in captured.outputs:
        data = {k: v for k, v in shown.data.items() if isinstance(v, str)}
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
    return {
        "output_type": "error",
        "ename": type(error).__name__,
        "evalue": str(error)[:20_000],
        "traceback": [str(line) for line in lines][-200:],
    }


def _verdict_outputs(verdict: dict[str, Any]) -> list[dict[str, Any]]:
    """The check cell's output: the report, printed when it passed, raised when it failed."""
    if verdict["passed"]:
        return [{"output_type": "stream", "name": "stdout", "text": verdict["report"]}]
    lines = str(verdict["report"]).splitlines()
    return [
        {
            "output_type": "error",
            "ename": "CheckFailedError",
            "evalue": verdict["report"],
            "traceback": lines,
        }
    ]


# What a cell left out of a graded run shows in the feedback (attnlib.grading.leave_out).
LEFT_OUT_NOTE = "(not run while grading: nothing graded needs it)"


def _left_out() -> list[dict[str, Any]]:
    return [{"output_type": "stream", "name": "stdout", "text": LEFT_OUT_NOTE + "\n"}]


class _Grader:
    """The grader as this process sees it: orders in, reports out, one check at a time."""

    def __init__(self, orders_in: IO[bytes], reports_out: IO[bytes], call_seconds: float) -> None:
        self.orders_in = orders_in
        self.reports_out = reports_out
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
        from attnlib.grading.answering import answer_request, describe
        from attnlib.grading.frames import read_frame, write_frame

        answer = names.get(answer_name)
        described = describe(answer) if answer_name in names else None
        write_frame(self.reports_out, {"check": exercise_id, "answer": described})
        while True:
            order = read_frame(self.orders_in)
            if order is None:
                sys.exit(0)
            if "call" in order:
                reply = answer_request(answer, order["call"], self.call_seconds)
                write_frame(self.reports_out, {"reply": reply})
            elif "verdict" in order:
                return _verdict_outputs(order["verdict"])


def main(in_fd: int, out_fd: int) -> None:
    os.environ["MPLBACKEND"] = "Agg"
    import torch

    torch.set_num_threads(1)
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from attnlib.grading.frames import read_frame, write_frame
    from attnlib.grading.plan import code_cells, read_submission

    # Private copies of the two descriptors: when they are standard input and output (in a
    # container), what the notebook's code writes to fd 1 goes to stderr, not into a frame.
    orders_in: IO[bytes] = os.fdopen(os.dup(in_fd), "rb", buffering=0)
    reports_out: IO[bytes] = os.fdopen(os.dup(out_fd), "wb", buffering=0)
    os.dup2(os.open(os.devnull, os.O_RDONLY), in_fd)
    os.dup2(2, out_fd)
    orders = read_frame(orders_in)
    assert orders is not None and "run" in orders
    run = orders["run"]
    notebook = read_submission(Path(run["notebook"]))
    checks_at = {int(k): list(v) for k, v in run["checks"].items()}
    skip = set(run.get("skip", []))
    grader = _Grader(orders_in, reports_out, float(run["call_seconds"]))
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
        elif index in skip:
            outputs[index] = _left_out()
        else:
            with capture_output() as captured:
                result = shell.run_cell(source, store_history=True)
            outputs[index] = _outputs_of(captured, result, shell)
            ran.append(index)
    for exercise_id, name in run.get("at_end", []):
        outputs.setdefault(-1, []).extend(grader.check(shell.user_ns, exercise_id, name))
    write_frame(reports_out, {"done": {str(k): v for k, v in outputs.items()}, "ran": ran})


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
