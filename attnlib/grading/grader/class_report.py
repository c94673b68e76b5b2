"""What a class got right and wrong, exercise by exercise, from what grading wrote:
``python -m attnlib.grading class-report DIR`` (``make class-report COURSE=DIR``).

It reads two files of the course directory and nothing else: nbgrader's gradebook
(``DIR/gradebook.db``, each check's score) and ``DIR/grades.csv`` (each check's status, the
first line of its report and the mistake the checker named). :func:`class_summary` turns them
into data (:mod:`~attnlib.grading.grader.class_results`: per exercise, in course order, the
scores, the students with each result, the most common mistakes and who made them), and
:mod:`~attnlib.grading.grader.class_report_page` draws that data as
``DIR/class-report/index.html`` with its PNGs beside it.

Every text in the two files may come from a student (an id, a reason, a mistake): it is cut,
stripped of control characters and escaped before it is shown, and a row that cannot be read
is skipped and listed at the foot of the page, never the end of the report.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import csv
import datetime
import math
import re
import sqlite3
import sys
import tempfile
import urllib.parse
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from attnlib.grading.grader.class_report_page import write_report
from attnlib.grading.grader.class_results import (
    MAX_NAME,
    MAX_TEXT,
    NO_RESULT,
    RESULTS,
    STATUSES,
    ClassSummary,
    ExerciseSummary,
    Tally,
    plain_text,
)
from attnlib.grading.grader.course import ASSIGNMENT

COLUMNS = ["student", "notebook", "exercise", "score", "max_score", "reason", "status", "mistake"]
STOPPED = ("not checked", "not graded")  # their reason says why the check did not run
# grades.csv writes a text that starts with one of these with a leading "'" (records.py).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
TOP_MISTAKES = 5  # named mistakes shown per exercise


class ReportError(Exception):
    """The class report cannot be made from this course directory; the message says why."""


class Row(NamedTuple):
    """One row of grades.csv, the student's id as the gradebook has it."""

    student: str
    notebook: str
    exercise: str
    score: float | None
    max_score: float | None
    reason: str
    status: str
    mistake: str


def class_summary(course_dir: Path) -> ClassSummary:
    """The class's results from ``course_dir``'s gradebook.db and grades.csv (only those)."""
    course_dir = Path(course_dir)
    grades = course_dir / "grades.csv"
    if not grades.is_file():
        raise ReportError(
            f"{grades} does not exist: grade the class first (make autograde COURSE={course_dir})"
        )
    gradebook = course_dir / "gradebook.db"
    if not gradebook.is_file():
        raise ReportError(f"{gradebook} does not exist: this is not a graded course directory")
    cells, scores = read_gradebook(gradebook)
    rows, skipped = read_grades(grades, {student for student, _, _ in scores})
    written = datetime.datetime.fromtimestamp(grades.stat().st_mtime)
    return summarise(
        course_dir.resolve().name,
        written.strftime("%A %d %B %Y, %H:%M"),
        cells,
        scores,
        rows,
        skipped,
    )


def read_gradebook(
    path: Path,
) -> tuple[list[tuple[str, str, float]], dict[tuple[str, str, str], float]]:
    """The assignment's checks ``(notebook, exercise, max_score)`` and each student's score
    ``{(student, notebook, exercise): auto_score}``, from nbgrader's gradebook at ``path``.

    The gradebook is copied first (sqlite's backup, opened read-only): nothing is ever written
    beside it, and nbgrader's URL never holds the course directory's path.
    """
    try:
        from nbgrader.api import Gradebook  # the `instructor` extra
    except ImportError as error:
        raise ReportError("nbgrader is not installed: pip install -e '.[instructor]'") from error
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "gradebook.db"
        try:
            _copy_database(path, copy)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with Gradebook(f"sqlite:///{copy}") as book:
                    return _checks(book), _scores(book)
        except Exception as error:  # a broken or foreign file: say so, not a traceback
            raise ReportError(f"{path} cannot be read as nbgrader's gradebook: {error}") from None


def _copy_database(path: Path, copy: Path) -> None:
    """``path``'s database into ``copy``, read without a lock or a journal left beside it."""
    source = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True)
    target = sqlite3.connect(copy)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def _checks(book: Any) -> list[tuple[str, str, float]]:
    from nbgrader.api import Assignment, GradeCell, Notebook
    from sqlalchemy import literal_column

    query = (
        book.db.query(Notebook.name, GradeCell.name, GradeCell.max_score)
        .join(Notebook, GradeCell.notebook_id == Notebook.id)
        .join(Assignment, Notebook.assignment_id == Assignment.id)
        .filter(Assignment.name == ASSIGNMENT)
        .order_by(literal_column("base_cell.rowid"))  # the order nbgrader met the cells in
    )
    return [
        (str(notebook), str(cell).removesuffix("_check"), _number(most) or 0.0)
        for notebook, cell, most in query
        if str(cell).endswith("_check")
    ]


def _scores(book: Any) -> dict[tuple[str, str, str], float]:
    from nbgrader.api import (
        Assignment,
        Grade,
        GradeCell,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    query = (
        book.db.query(
            SubmittedAssignment.student_id, Notebook.name, GradeCell.name, Grade.auto_score
        )
        .select_from(Grade)
        .join(GradeCell, Grade.cell_id == GradeCell.id)
        .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
        .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
        .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
        .filter(Assignment.name == ASSIGNMENT)
    )
    scores: dict[tuple[str, str, str], float] = {}
    for student, notebook, cell, score in query:
        # A submission's every notebook is in the gradebook: a student appears with no score.
        key = (str(student), str(notebook), str(cell).removesuffix("_check"))
        scores[key] = _number(score) if _number(score) is not None else math.nan
    return scores


def _number(value: object) -> float | None:
    """``value`` as a finite float, or None."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def gradebook_id(csv_id: str, known: set[str]) -> str:
    """The id a grades.csv row's student has in the gradebook: a leading ``'`` that made an
    id such as ``=cmd`` safe in a spreadsheet is taken off again."""
    if csv_id.startswith("'") and csv_id[1:].startswith(FORMULA_STARTS):
        if csv_id in known and csv_id[1:] not in known:  # an id that was "'=…" all along
            return csv_id
        return csv_id[1:]
    return csv_id


def read_grades(path: Path, known: set[str]) -> tuple[list[Row], list[str]]:
    """grades.csv's rows (student ids as in the gradebook, whose ids are ``known``), and the
    rows that could not be read, with why."""
    rows: list[Row] = []
    skipped: list[str] = []
    with path.open(newline="", encoding="utf-8", errors="replace") as file:
        reader = csv.reader(file)
        try:
            header = next(reader, None)
        except csv.Error as error:
            header = [str(error)]
        if header != COLUMNS:
            raise ReportError(
                f"{path} does not start with the header {','.join(COLUMNS)}: "
                "grade the class again with this version of attnlib (make autograde)"
            )
        while True:
            line = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as error:  # e.g. a field past csv's size limit: skip its line
                skipped.append(f"grades.csv line {line}: {error}")
                if reader.line_num < line:
                    break
                continue
            row = _row(fields, known)
            if isinstance(row, str):
                skipped.append(f"grades.csv line {line}: {row}")
                continue
            if row.status not in STATUSES:
                status = plain_text(row.status, MAX_NAME)
                skipped.append(f"grades.csv line {line}: status {status!r}, counted as no result")
                row = row._replace(status=NO_RESULT)
            rows.append(row)
    return rows, skipped


def _row(fields: list[str], known: set[str]) -> Row | str:
    """The row in ``fields``, or why it is not one."""
    if len(fields) != len(COLUMNS):
        return f"{len(fields)} fields, not {len(COLUMNS)}: skipped"
    student, notebook, exercise, score, most, reason, status, mistake = fields
    if not (student and notebook and exercise):
        return "no student, notebook or exercise: skipped"
    return Row(
        gradebook_id(student, known),
        notebook,
        exercise,
        _number(score),
        _number(most),
        _unguarded(reason),
        status,
        _unguarded(mistake),
    )


def _unguarded(text: str) -> str:
    """``text`` without the ``'`` that grades.csv puts before a text a spreadsheet would run."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) else text


def summarise(
    course: str,
    written: str,
    cells: Sequence[tuple[str, str, float]],
    scores: Mapping[tuple[str, str, str], float],
    rows: Iterable[Row],
    skipped: Iterable[str] = (),
) -> ClassSummary:
    """The class's summary from the gradebook's ``cells`` and ``scores`` (as
    :func:`read_gradebook` gives them) and grades.csv's ``rows``: a pure function.

    The class is every student with a submission in the gradebook or a row in grades.csv.
    """
    latest: dict[tuple[str, str, str], Row] = {}
    for row in rows:
        latest[(row.student, row.notebook, row.exercise)] = row  # a repeated row: the last
    students = sorted({s for s, _, _ in scores} | {s for s, _, _ in latest}, key=_by_name)
    exercises = [
        _exercise_summary(
            notebook,
            exercise,
            most,
            [
                _score(scores.get((s, notebook, exercise)), latest.get((s, notebook, exercise)))
                for s in students
            ],
            [latest.get((s, notebook, exercise)) for s in students],
        )
        for notebook, exercise, most in _course_order(cells, latest.values())
    ]
    return ClassSummary(course, written, tuple(students), tuple(exercises), tuple(skipped))


def _exercise_summary(
    notebook: str, exercise: str, most: float, marks: list[float], rows: list[Row | None]
) -> ExerciseSummary:
    """One exercise's summary from each student's score and grades.csv row (or None)."""
    results = Counter(row.status if row else NO_RESULT for row in rows)
    not_passed = [r for r in rows if r and r.status != "passed"]
    named = _tallies((r.mistake, r.student) for r in not_passed if plain_text(r.mistake, 1))
    stops = _tallies((r.reason, r.student) for r in not_passed if r.status in STOPPED)
    return ExerciseSummary(
        notebook=notebook,
        exercise=exercise,
        max_score=most,
        scores=tuple(marks),
        results={result: results[result] for result in RESULTS},
        mistakes=tuple(named[:TOP_MISTAKES]),
        other_mistakes=max(0, len(named) - TOP_MISTAKES),
        unnamed_failures=sum(
            1 for r in not_passed if r.status == "failed" and not plain_text(r.mistake, 1)
        ),
        stops=tuple(stops[:TOP_MISTAKES]),
    )


def _by_name(student: str) -> tuple[str, str]:
    """A sort key: students A to Z, whatever the case."""
    return (student.casefold(), student)


def _score(from_gradebook: float | None, row: Row | None) -> float:
    """A student's score: the gradebook's; else grades.csv's; else 0 (nothing was earned)."""
    if from_gradebook is not None and not math.isnan(from_gradebook):
        return from_gradebook
    return row.score if row and row.score is not None else 0.0


def _course_order(
    cells: Sequence[tuple[str, str, float]], rows: Iterable[Row]
) -> list[tuple[str, str, float]]:
    """Every exercise ``(notebook, exercise, max_score)``, in course order: by notebook, then
    by the number in its id (``ex2_…``), then as the gradebook lists them; an exercise that
    grades.csv names and the gradebook does not comes after the gradebook's."""
    most: dict[tuple[str, str], float] = {}
    for notebook, exercise, points in cells:
        most.setdefault((notebook, exercise), points)
    for row in rows:
        if (row.notebook, row.exercise) not in most or not most[(row.notebook, row.exercise)]:
            most[(row.notebook, row.exercise)] = row.max_score or 0.0
    position = {key: index for index, key in enumerate(most)}

    def key(item: tuple[str, str]) -> tuple[object, ...]:
        number = re.match(r"ex(\d+)", item[1])
        return (_natural(item[0]), int(number[1]) if number else math.inf, position[item])

    return [(nb, ex, most[(nb, ex)]) for nb, ex in sorted(most, key=key)]


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that puts "2" before "10"."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p)


def _tallies(named: Iterable[tuple[str, str]]) -> list[Tally]:
    """Each text with the students it was named for, the most named first (then A to Z)."""
    students: dict[str, list[str]] = {}
    for text, student in named:
        students.setdefault(plain_text(text, MAX_TEXT) or "(no reason given)", []).append(student)
    tallies = [Tally(text, tuple(sorted(set(who), key=_by_name))) for text, who in students.items()]
    return sorted(tallies, key=lambda t: (-t.count, t.text))


# ---------------------------------------------------------------- the command


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m attnlib.grading.grader.class_report DIR``: write the page, print where."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m attnlib.grading.grader.class_report COURSE_DIR", file=sys.stderr)
        return 2
    course = Path(args[0])
    try:
        summary = class_summary(course)
    except ReportError as error:
        print(f"class report: {error}", file=sys.stderr)
        return 1
    page = write_report(summary, course / "class-report")
    print(f"class report: {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
