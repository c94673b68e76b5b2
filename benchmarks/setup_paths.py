"""The course's set-up without make, and grading the course, timed.

`python -m benchmarks.setup_paths` prints the time and size of the plain-pip set-up (a new
venv in a copy of this checkout, then `pip install -r requirements.txt`, as docs/setup.md gives
it) and the time of grading's two steps: nbgrader's `generate_assignment` with this checkout's
`nbgrader_config.py` (`make student`), and a course directory (`make course-dir`) in which
`python -m attnlib.grading autograde --whole` grades two submissions (the notebooks with their
solutions, and the student edition as handed out), every cell run. The steps are
`tests/support/setup_runs.py`; `tests/pip_path/` and `tests/grading/` run the same steps and
check what they produce; the times depend on the machine and the package caches, so none is a
test.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from setup_runs import build_pip_setup, describe_grading, describe_pip_setup, grade_course

from benchmarks import command_line


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser("setup_paths", __doc__, writes=None)
    parser.add_argument("--skip-pip", action="store_true", help="only time grading")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_pip:
            print(describe_pip_setup(build_pip_setup(Path(tmp) / "attention-course")), flush=True)
        course = Path(tmp) / "course"
        course.mkdir()
        print(describe_grading(grade_course(course)))


if __name__ == "__main__":
    main()
