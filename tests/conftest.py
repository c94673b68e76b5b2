"""Shared test set-up: a headless matplotlib backend and no figure left open."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


@pytest.fixture
def generator() -> torch.Generator:
    return torch.Generator().manual_seed(0)
