"""Shared test set-up: a headless matplotlib backend, no figure left open, the MiniLM model."""

from __future__ import annotations

import os
from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
from hypothesis import settings

import attnlib

# Property tests draw the same examples on every run (reproducible CI), keep no example
# database in the work tree, and have no per-example deadline (timing varies on CI).
settings.register_profile("attnlib", derandomize=True, database=None, deadline=None)
settings.load_profile("attnlib")

# Under pytest-xdist (`make unit` runs one worker per core) each worker gets its share of
# the cores: torch's default of one thread per core in every worker would oversubscribe
# them, and its spinning threads then wait on each other.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    workers = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


@pytest.fixture
def generator() -> torch.Generator:
    return torch.Generator().manual_seed(0)


@pytest.fixture(scope="session")
def minilm() -> attnlib.SentenceEncoder:
    """all-MiniLM-L6-v2 in attnlib's layers, loaded once (its files are a `make setup` install)."""
    return attnlib.load_minilm()
