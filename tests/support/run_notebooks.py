"""Execute notebooks top to bottom with nbclient, as a learner's Run All does, in the Python
that runs this script: a simulated platform's venv (tests/colab/, tests/binder/), whose own
nbclient and ipykernel are the platform's versions.

    python run_notebooks.py RESULTS.json WORKERS NOTEBOOK... [--replace OLD NEW]

Each notebook runs in its own kernel, in its own folder (so that files it writes stay
there), with ``--replace`` applied to every cell's source first (the course's repository
becomes a local wheel). A cell that raises fails its notebook unless it is tagged
``raises-exception`` (an unfinished exercise's check, which Run All goes on past). The
results (seconds, and the error or None) are written to RESULTS.json. Each notebook runs
in a process of its own, WORKERS at a time. This script imports
nothing of attnlib's, nor anything the platform's venv may lack beyond nbclient.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

CELL_TIMEOUT = 900  # seconds: notebook 09's training on one thread of a slow core


def run(path: Path, replacements: list[tuple[str, str]]) -> dict[str, object]:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        for old, new in replacements:
            cell.source = cell.source.replace(old, new)
    start = time.perf_counter()
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    try:
        client.execute()
        error = None
    except CellExecutionError as failure:
        error = str(failure)[-4000:]
    except Exception as failure:  # a dead kernel, a timeout: the notebook did not run through
        error = f"{type(failure).__name__}: {failure}"[-4000:]
    nbformat.write(notebook, path.with_suffix(".executed.ipynb"))
    return {"seconds": round(time.perf_counter() - start, 1), "error": error}


def main(argv: list[str]) -> int:
    replacements = []
    while "--replace" in argv:
        at = argv.index("--replace")
        replacements.append((argv[at + 1], argv[at + 2]))
        del argv[at : at + 3]
    results_path, workers, *notebooks = argv
    paths = [Path(name) for name in notebooks]
    # One process per notebook: two clients in threads of one process (jupyter_client 7, as
    # on Colab) now and then miss a kernel's reply and wait out the timeout.
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=int(workers), mp_context=spawn) as pool:
        outcomes = list(pool.map(partial(run, replacements=replacements), paths))
    results = {path.name: outcome for path, outcome in zip(paths, outcomes, strict=True)}
    Path(results_path).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
