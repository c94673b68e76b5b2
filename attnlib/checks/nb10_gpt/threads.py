"""Run a check on one CPU thread: notebook 10's checkers work on tensors of a few dozen numbers.

On such small tensors a second thread saves nothing, and on a busy machine it costs a great deal:
each operation then waits for a thread the system has not scheduled yet (a check that takes 0.1 s
alone took 5 s beside other jobs). :func:`one_thread` sets torch's thread count to 1 for the
duration of a check and gives the notebook its own setting back afterwards.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def one_thread() -> Iterator[None]:
    """torch.set_num_threads(1) inside the ``with``; the previous count after it."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
