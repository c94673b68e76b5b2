"""What each benchmark measured last, stored so that the docs quote it without a hand.

`python -m benchmarks.NAME` saves its figures here as `NAME.json`, with the machine it ran
on; `python -m benchmarks.measurements` writes them into `docs/measurements.md`, and a test
keeps that page equal to the stored figures.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

import torch

RESULTS = Path(__file__).resolve().parent


def machine() -> str:
    """The machine a figure was measured on, as the measurements page names it."""
    cpu = platform.processor() or platform.machine()
    return (
        f"{cpu}, {torch.get_num_threads()} threads, torch {torch.__version__}, "
        f"Python {platform.python_version()}"
    )


def save(name: str, figures: dict[str, Any]) -> Path:
    """Store ``figures`` as ``benchmarks/results/<name>.json``, with the machine."""
    path = RESULTS / f"{name}.json"
    record = {"machine": machine(), **figures}
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(RESULTS.parents[1])}")
    return path


def load(name: str) -> dict[str, Any]:
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path.name}: run `python -m benchmarks.{name}` to measure it")
    return json.loads(path.read_text(encoding="utf-8"))
