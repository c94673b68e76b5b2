"""Run a check on one thread (notebook 00's checks use tiny tensors).

On a tensor of a few dozen numbers a second thread does no work but can make each operation
wait for it, tens of milliseconds on a busy machine. The thread count is restored afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
