"""Notebook 08: run a checker on one thread.

The checkers' tensors are tiny. On a machine whose cores are busy, a second thread for each
LayerNorm or matrix product of a few numbers costs far more than it saves (a hundred times
more, measured on two shared cores), so each checker runs on one thread and restores the
learner's setting afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import torch

F = TypeVar("F", bound=Callable[..., object])


def on_one_thread(checker: F) -> F:
    @functools.wraps(checker)
    def run(*args: object, **kwargs: object) -> object:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return checker(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)

    return run  # type: ignore[return-value]
