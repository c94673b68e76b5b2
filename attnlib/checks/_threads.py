"""Run a check on one CPU thread.

A check's tensors hold a few dozen numbers. On such tensors a second thread saves nothing, and
on a busy machine it costs a great deal: each operation waits for a thread the system has not
scheduled yet (a check of 0.1 s took 5 s beside other jobs on two shared cores). Every check
runs on one thread and gives the notebook its own setting back afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import torch

F = TypeVar("F", bound=Callable[..., object])


@contextmanager
def one_thread() -> Iterator[None]:
    """torch.set_num_threads(1) inside the ``with``; the previous count after it."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def on_one_thread(checker: F) -> F:
    """``checker``, run inside :func:`one_thread`."""

    @functools.wraps(checker)
    def run(*args: object, **kwargs: object) -> object:
        with one_thread():
            return checker(*args, **kwargs)

    return run  # type: ignore[return-value]
