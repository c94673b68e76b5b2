"""How long each notebook takes to run top to bottom: `python -m benchmarks.notebook_times`.

Runs every notebook of the instructors' edition (every solution in place) one after the
other, each in a fresh kernel of this Python with all the machine's cores, as a learner's
Run All does, from a copy in a scratch folder; prints and stores the seconds of each
(`benchmarks/results/notebook_times.json`, which docs/measurements.md quotes). The course's
CI runs the same notebooks under strict nbval (`make nbval`), two at a time.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks import command_line, results
from instructors import editions


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser(
        "notebook_times", __doc__, writes="benchmarks/results/notebook_times.json"
    )
    args = parser.parse_args(argv)
    # Imported once the arguments are read: nbformat's import takes seconds (its JSON schema
    # checks), which --help need not wait for.
    import run_notebooks  # tests/support/, put on the path by benchmarks/__init__.py

    seconds = {}
    with tempfile.TemporaryDirectory(prefix="notebook-times-") as scratch:
        for source in editions.source_notebooks():
            folder = Path(scratch) / source.stem
            folder.mkdir()
            path = Path(shutil.copy(source, folder))
            outcome = run_notebooks.run(path, sys.executable, [])
            if outcome["error"] or outcome["retried"]:
                raise SystemExit(f"{source.name} did not run through: {outcome}")
            seconds[source.name] = outcome["seconds"]
            print(f"{source.name:40s} {outcome['seconds']:6.1f} s", flush=True)
    print(f"{'every notebook, one after the other':40s} {sum(seconds.values()):6.1f} s")
    if not args.no_save:
        results.save("notebook_times", {"seconds": seconds})


if __name__ == "__main__":
    main()
