"""The command line every benchmark shares: its docstring as `--help`, and `--no-save`.

Each `python -m benchmarks.NAME` builds its parser here, so that `--help` prints the module's
docstring and every flag and runs nothing, and `--no-save` measures and prints as a default
run does but leaves every file of the checkout as it was (the stored runs in
`benchmarks/results/`, and the data, figures and pages a benchmark rewrites).
`tests/docs/test_benchmarks_command_line.py` runs every benchmark's `--help`.
"""

from __future__ import annotations

import argparse


def benchmark_parser(
    name: str, docstring: str | None, writes: str | None
) -> argparse.ArgumentParser:
    """The parser of `python -m benchmarks.<name>`, described by the module's ``docstring``.

    ``writes`` names what a default run writes (``"benchmarks/results/gpt.json"``), or is
    None for a benchmark that only prints: `--no-save` is offered either way, so that any
    benchmark can be run with it. The parsed arguments carry it as ``no_save``.
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m benchmarks.{name}",
        description=docstring,
        # The docstrings are laid out by hand (lists, commands): keep their lines.
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if writes is None:
        no_save = "write no file (this benchmark writes none anyway)"
    else:
        no_save = f"measure and print, but write nothing (a run writes {writes})"
    parser.add_argument("--no-save", action="store_true", help=no_save)
    return parser
