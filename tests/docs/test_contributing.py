"""CONTRIBUTING.md is followed step by step, so every command it gives must exist: each `make`
target, each `python -m benchmarks.…` module and each file or folder of the repository it names
in backquotes (a name with a placeholder, such as `nbNN_topic/`, is a pattern, not a path)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
# Examples the recipe makes up (the exercise it walks through does not exist).
EXAMPLES = ("my_thing", "NN", "nbNN", "….")


def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", MAKEFILE, re.MULTILINE))


def test_every_make_target_it_names_exists() -> None:
    named = set(re.findall(r"`make ([a-z][\w-]*)", GUIDE)) - {"<stage>"}
    assert named, "the guide names no make target"
    assert named <= make_targets(), sorted(named - make_targets())


def test_every_benchmark_it_names_exists() -> None:
    named = set(re.findall(r"python -m benchmarks\.(\w+)", GUIDE)) - {"NAME"}
    missing = [name for name in named if not (ROOT / "benchmarks" / f"{name}.py").is_file()]
    assert named and not missing, missing


def test_every_path_it_names_exists() -> None:
    quoted = re.findall(r"`([\w./-]+/[\w./-]*)`", GUIDE)
    paths = [p for p in quoted if not any(example in p for example in EXAMPLES)]
    assert len(paths) >= 10, paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, missing
