"""Execute notebooks top to bottom with nbclient, as a learner's Run All does, in the kernel of
a simulated platform (tests/colab/, tests/binder/): its Python, its ipykernel, IPython and
ipywidgets, and everything installed beside them.

    python run_notebooks.py RESULTS.json WORKERS KERNEL_PYTHON NOTEBOOK... [--replace OLD NEW]

The kernel runs ``KERNEL_PYTHON -m ipykernel_launcher``; the client driving it is the nbclient
of the Python that runs this script (the platform's front end is not a client of this kind:
Colab's is its own). Each notebook runs in a process and a kernel of its own, WORKERS at a
time, in its own folder (files it writes stay there), with ``--replace`` applied to every
cell's source first (the course's repository becomes a local wheel). A cell that raises
fails its notebook unless it is tagged ``raises-exception`` (an unfinished exercise's check,
which Run All goes on past).

A kernel's reply is now and then never received in a headless run: the kernel is idle and
the client waits out the timeout (seen here with Colab's ipykernel 6.17 in 2 of 6 runs of
notebook 02 beside another notebook, both on a busy machine; requirements.txt notes it for
ipykernel 6.31 too). A notebook whose cell times out is run once
more from the start, and its result says so (``retried``); an error is never retried.
The results (seconds, retried, and the error or None) are written to RESULTS.json.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import nbformat
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError

CELL_TIMEOUT = 600  # seconds: notebook 09's training on one thread of a slow, busy core


def kernel_specs(kernel_python: str) -> KernelSpecManager:
    """A kernel spec, "platform", that starts ``kernel_python``'s ipykernel."""
    folder = Path(tempfile.mkdtemp(prefix="platform-kernel-")) / "platform"
    folder.mkdir()
    spec = {
        "argv": [kernel_python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "the platform's Python",
        "language": "python",
    }
    (folder / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    specs = KernelSpecManager()
    specs.kernel_dirs = [str(folder.parent)]
    return specs


Replacements = list[tuple[str, str]]


def _execute_once(path: Path, kernel_python: str, replacements: Replacements) -> str | None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        for old, new in replacements:
            cell.source = cell.source.replace(old, new)
    kernel = KernelManager(kernel_name="platform", kernel_spec_manager=kernel_specs(kernel_python))
    client = NotebookClient(
        notebook,
        km=kernel,
        timeout=CELL_TIMEOUT,
        kernel_name="platform",
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute()
        return None
    except CellTimeoutError:
        raise
    except CellExecutionError as failure:
        return str(failure)[-4000:]
    except Exception as failure:  # a dead kernel: the notebook did not run through
        return f"{type(failure).__name__}: {failure}"[-4000:]
    finally:
        nbformat.write(notebook, path.with_suffix(".executed.ipynb"))
        # nbclient leaves a kernel it was handed running: without this, every notebook's
        # kernel would live (and hold its memory) until the worker process exits.
        if kernel.has_kernel:
            kernel.shutdown_kernel(now=True)


def run(path: Path, kernel_python: str, replacements: Replacements) -> dict[str, object]:
    start = time.perf_counter()
    retried = None
    try:
        error = _execute_once(path, kernel_python, replacements)
    except CellTimeoutError as timeout:
        retried = str(timeout).splitlines()[0][:300]
        try:
            error = _execute_once(path, kernel_python, replacements)
        except CellTimeoutError as again:
            error = f"a cell timed out twice: {again}"[-4000:]
    seconds = round(time.perf_counter() - start, 1)
    return {"seconds": seconds, "retried": retried, "error": error}


def main(argv: list[str]) -> int:
    replacements = []
    while "--replace" in argv:
        at = argv.index("--replace")
        replacements.append((argv[at + 1], argv[at + 2]))
        del argv[at : at + 3]
    results_path, workers, kernel_python, *notebooks = argv
    paths = [Path(name) for name in notebooks]
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=int(workers), mp_context=spawn) as pool:
        task = partial(run, kernel_python=kernel_python, replacements=replacements)
        outcomes = list(pool.map(task, paths))
    results = {path.name: outcome for path, outcome in zip(paths, outcomes, strict=True)}
    Path(results_path).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
