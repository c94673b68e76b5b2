"""The course's figures, each printed by `python -m benchmarks.NAME` (see DESIGN.md's budget).

What a benchmark shares with the tests (the mistake corpus, the plain-pip and grading runs, a
right sampler, the in-process stand-ins) is test support and lives in `tests/support/`, which
the tests import by its modules' own names (pyproject's `pythonpath`); it is put on the path
here so the benchmarks import it by the same names. The tests never import `benchmarks`, except
those whose subject is a benchmark script.
"""

import sys
from pathlib import Path

_TEST_SUPPORT = str(Path(__file__).resolve().parents[1] / "tests" / "support")
if _TEST_SUPPORT not in sys.path:
    sys.path.append(_TEST_SUPPORT)
