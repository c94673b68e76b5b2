"""The class report (attnlib.grading.grader.class_report), on a class laid out here by hand: a
gradebook made with nbgrader's own API and a grades.csv as grading writes it, with neutralised
ids, a student id that is HTML, odd Unicode, a 10 000-character reason and rows that cannot
be read. Every count below is worked out by hand from the table in CLASS."""

from __future__ import annotations

import csv
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from attnlib.grading.grader.class_report import COLUMNS, class_summary, gradebook_id, main
from attnlib.grading.grader.class_report_page import write_report
from attnlib.grading.grader.class_results import ClassSummary, ExerciseSummary
from attnlib.grading.grader.course import venv_on_path

CHECKOUT = Path(__file__).resolve().parents[2]

SCRIPT_ID = "<script>alert('id')</script>"
FORMULA_ID = '=HYPERLINK("http://example.invalid","x")'
DASH_ID = "-dash"
ODD_ID = "Zoë \u202eevil\u202c 👩\u200d💻 ǅ̸ 𝕫"  # a right-to-left override, a ZWJ, combining marks
# The class as the gradebook has it, in the order grades.csv lists them.
STUDENTS = ["ada", "bo", FORMULA_ID, DASH_ID, SCRIPT_ID, ODD_ID]
# grades.csv writes an id that a spreadsheet would run with a leading "'".
CSV_ID = {**{s: s for s in STUDENTS}, FORMULA_ID: "'" + FORMULA_ID, DASH_ID: "'" + DASH_ID}

SOFTMAX, MASKING = "02_softmax_and_scaling", "07_masking"
# The gradebook's check cells, in the order they are added: not the course's order.
CELLS = [
    (MASKING, "ex1_cached_causal_mask", 2.0),
    (MASKING, "ex2_padding_mask", 1.0),
    (SOFTMAX, "ex3_softmax_backward", 1.0),
    (SOFTMAX, "ex1_softmax_from_formula", 1.0),
    (SOFTMAX, "ex2_stable_softmax", 1.0),
]
COURSE_ORDER = [
    (SOFTMAX, "ex1_softmax_from_formula"),
    (SOFTMAX, "ex2_stable_softmax"),
    (SOFTMAX, "ex3_softmax_backward"),
    (MASKING, "ex1_cached_causal_mask"),
    (MASKING, "ex2_padding_mask"),
]

BATCH = "subtracted the largest score of the whole batch, not of each row"
HTML_MISTAKE = "<img src=x onerror=alert(1)> divided by the sum of the whole batch"
REFUSED = "calls torch.softmax"
POLARITY = "True where the mask should be False: the polarity is reversed"
TIME_LIMIT = "the run reached the time limit (60 s) before this check"
LONG_REASON = "the run was stopped: " + "far too long a reason " * 460  # > 10 000 characters
UNREADABLE = "the notebook could not be read: it is not valid JSON"

# (notebook, exercise) -> one (score, status, mistake, reason) per student of STUDENTS;
# None: no row in grades.csv.
CLASS = {
    (SOFTMAX, "ex1_softmax_from_formula"): [(1, "passed", "", "")] * 6,
    (SOFTMAX, "ex2_stable_softmax"): [
        (0, "failed", BATCH, "wrong values"),
        (0, "failed", BATCH, "wrong values"),
        (0, "failed", REFUSED, "refused: calls torch.softmax"),
        (1, "passed", "", ""),
        (0, "failed", HTML_MISTAKE, "wrong values"),
        (0, "not done", "", "not done yet"),
    ],
    (SOFTMAX, "ex3_softmax_backward"): [
        (1, "passed", "", ""),
        (0, "not checked", "", TIME_LIMIT),
        (0, "not checked", "", TIME_LIMIT),
        (0, "not checked", "", LONG_REASON),
        (0, "failed", "", "wrong gradient"),  # no mistake named
        (0, "not done", "", "not done yet"),
    ],
    (MASKING, "ex1_cached_causal_mask"): [
        (2, "passed", "", ""),
        (0, "failed", POLARITY, "wrong mask"),  # the gradebook says 1.5: its score wins
        (0, "failed", POLARITY, "wrong mask"),
        (0, "not graded", "", UNREADABLE),
        (0, "not graded", "", UNREADABLE),
        (0, "failed", POLARITY, "=1+1 wrong mask"),
    ],
    (MASKING, "ex2_padding_mask"): [
        (1, "passed", "", ""),
        (1, "passed", "", ""),
        (1, "passed", "", ""),
        (0, "not graded", "", UNREADABLE),
        (0, "not graded", "", UNREADABLE),
        None,  # no row: the grader wrote none (the next one below cannot be read)
    ],
}
GRADEBOOK_SCORES = {("bo", MASKING, "ex1_cached_causal_mask"): 1.5}


def _write_gradebook(course: Path) -> None:
    """The class's gradebook, made as nbgrader makes it; ODD_ID's 07 ex2 has no score."""
    from nbgrader.api import Gradebook

    with (
        warnings.catch_warnings(),
        venv_on_path(),  # nbgrader runs alembic from PATH
        Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook,
    ):
        warnings.simplefilter("ignore")  # nbgrader trips SQLAlchemy's autoflush warnings
        gradebook.add_assignment("notebooks")
        for notebook in dict.fromkeys(nb for nb, _, _ in CELLS):
            gradebook.add_notebook(notebook, "notebooks")
        for notebook, exercise, most in CELLS:
            gradebook.add_grade_cell(
                f"{exercise}_check", notebook, "notebooks", max_score=most, cell_type="code"
            )
        for index, student in enumerate(STUDENTS):
            gradebook.add_student(student)
            gradebook.add_submission("notebooks", student)
            for (notebook, exercise), rows in CLASS.items():
                if rows[index] is None:
                    continue
                grade = gradebook.find_grade(f"{exercise}_check", notebook, "notebooks", student)
                key = (student, notebook, exercise)
                grade.auto_score = GRADEBOOK_SCORES.get(key, float(rows[index][0]))
        gradebook.db.commit()


def _write_grades(course: Path) -> None:
    """grades.csv as grading writes it, with two rows that cannot be read."""
    rows = []
    for (notebook, exercise), results in CLASS.items():
        most = dict(((nb, ex), m) for nb, ex, m in CELLS)[(notebook, exercise)]
        for student, result in zip(STUDENTS, results, strict=True):
            if result is not None:
                score, status, mistake, reason = result
                reason = "'" + reason if reason.startswith("=") else reason
                row = [CSV_ID[student], notebook, exercise, f"{score:g}", f"{most:g}"]
                rows.append([*row, reason, status, mistake])
    rows.append([CSV_ID[ODD_ID], MASKING, "ex2_padding_mask", "0", "1", "?", "maybe", ""])
    rows.append(["ada", SOFTMAX, "ex1_softmax_from_formula", "1"])  # 4 fields, not 8
    with (course / "grades.csv").open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course directory that holds grading's two files and nothing else."""
    course = tmp_path_factory.mktemp("class") / "course"
    course.mkdir()
    _write_gradebook(course)
    _write_grades(course)
    return course


@pytest.fixture(scope="module")
def summary(course: Path) -> ClassSummary:
    return class_summary(course)


@pytest.fixture(scope="module")
def report(course: Path) -> Path:
    """The report, made by the command as an instructor runs it."""
    completed = subprocess.run(
        [sys.executable, "-m", "attnlib.grading", "class-report", str(course)],  # as make runs it
        capture_output=True,
        text=True,
        check=False,
        cwd=course.parent,
    )
    assert completed.returncode == 0, completed.stderr
    page = course / "class-report" / "index.html"
    assert completed.stdout.strip() == f"class report: {page}"
    return page


def _exercise(summary: ClassSummary, exercise: str) -> ExerciseSummary:
    (found,) = [e for e in summary.exercises if e.exercise == exercise]
    return found


def test_the_class_is_every_student_with_their_id_as_the_gradebook_has_it(
    summary: ClassSummary,
) -> None:
    assert sorted(summary.students) == sorted(STUDENTS)
    assert summary.course == "course"


def test_the_exercises_come_in_course_order(summary: ClassSummary) -> None:
    assert [(e.notebook, e.exercise) for e in summary.exercises] == COURSE_ORDER
    assert summary.notebooks == [SOFTMAX, MASKING]
    assert [e.max_score for e in summary.exercises] == [1, 1, 1, 2, 1]


def test_the_results_are_counted_per_exercise(summary: ClassSummary) -> None:
    counts = {
        e.exercise: [e.results[r] for r in ("passed", "failed", "not done", "not checked")]
        + [e.results["not graded"], e.results["no result"]]
        for e in summary.exercises
    }
    assert counts == {
        "ex1_softmax_from_formula": [6, 0, 0, 0, 0, 0],
        "ex2_stable_softmax": [1, 4, 1, 0, 0, 0],
        "ex3_softmax_backward": [1, 1, 1, 3, 0, 0],
        "ex1_cached_causal_mask": [1, 3, 0, 0, 2, 0],
        "ex2_padding_mask": [3, 0, 0, 0, 2, 1],
    }
    assert [e.share_not_done for e in summary.exercises] == [0, 1 / 6, 1 / 6, 0, 0]
    assert [e.not_passed for e in summary.exercises] == [0, 5, 5, 5, 3]


def test_scores_come_from_the_gradebook(summary: ClassSummary) -> None:
    mask = _exercise(summary, "ex1_cached_causal_mask")
    assert mask.distribution() == [(0, 4), (1.5, 1), (2, 1)]  # bo's 1.5 is the gradebook's
    assert mask.mean_score == pytest.approx(3.5 / 6)
    assert _exercise(summary, "ex2_padding_mask").distribution() == [(0, 3), (1, 3)]
    assert summary.notebook_mean(SOFTMAX) == pytest.approx((6 + 1 + 1) / 18)
    assert summary.notebook_mean(MASKING) == pytest.approx((3.5 + 3) / 18)


def test_the_most_common_mistakes_come_first_with_who_made_them(summary: ClassSummary) -> None:
    stable = _exercise(summary, "ex2_stable_softmax")
    assert [(m.text, m.count) for m in stable.mistakes] == [
        (BATCH, 2),
        (HTML_MISTAKE, 1),  # ties: A to Z ("<" before "c")
        (REFUSED, 1),
    ]
    assert stable.mistakes[0].students == ("ada", "bo")
    assert stable.mistakes[2].students == (FORMULA_ID,)
    mask = _exercise(summary, "ex1_cached_causal_mask")
    assert [(m.text, m.count) for m in mask.mistakes] == [(POLARITY, 3)]
    assert set(mask.mistakes[0].students) == {"bo", FORMULA_ID, ODD_ID}


def test_why_checks_did_not_run_is_counted_and_long_reasons_are_cut(
    summary: ClassSummary,
) -> None:
    backward = _exercise(summary, "ex3_softmax_backward")
    assert (backward.stops[0].text, backward.stops[0].count) == (TIME_LIMIT, 2)
    assert backward.stops[1].students == (DASH_ID,)
    assert len(backward.stops[1].text) <= 300 and backward.stops[1].text.endswith("…")
    assert backward.unnamed_failures == 1 and not backward.mistakes
    padding = _exercise(summary, "ex2_padding_mask")
    assert [(s.text, s.count) for s in padding.stops] == [(UNREADABLE, 2)]


def test_the_exercises_most_often_not_passed(summary: ClassSummary) -> None:
    hardest = [e.exercise for e in summary.most_often_not_passed()]
    assert hardest == [
        "ex2_stable_softmax",
        "ex3_softmax_backward",
        "ex1_cached_causal_mask",
        "ex2_padding_mask",
    ]


def test_rows_that_cannot_be_read_are_listed_not_fatal(summary: ClassSummary) -> None:
    assert len(summary.skipped) == 2, summary.skipped
    assert "status 'maybe', counted as no result" in summary.skipped[0]
    assert "4 fields, not 8" in summary.skipped[1]


def test_a_neutralised_id_is_mapped_back_unless_it_was_written_so() -> None:
    assert gradebook_id("'=cmd", {"=cmd"}) == "=cmd"
    assert gradebook_id("'-1", set()) == "-1"
    assert gradebook_id("'=x", {"'=x"}) == "'=x"  # the student's id starts with "'"
    assert gradebook_id("'ada", {"'ada"}) == "'ada"


def test_the_page_shows_every_exercise_and_the_summary(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    for notebook, exercise in COURSE_ORDER:
        assert f"exercise-{COURSE_ORDER.index((notebook, exercise)) + 1}" in page
        assert exercise in page and notebook in page
    assert "6 students, 5 exercises in 2 notebooks" in page
    summary = page[page.index("Re-teach first") : page.index("Class mean per notebook")]
    assert summary.index("ex2_stable_softmax") < summary.index("ex1_cached_causal_mask")
    assert "ex1_softmax_from_formula" not in summary  # every student passed it
    assert "<b>5 of 6</b> students did not pass (4 failed, 1 not done)" in summary
    assert f"Most common mistake: “{BATCH}” (2 students)" in summary
    assert f"Most often the check did not run: “{TIME_LIMIT}” (2 students)" in summary
    means = page[page.index("Class mean per notebook") : page.index("Each exercise")]
    assert re.search(r"02_softmax_and_scaling</td><td class=n>44 %", means)
    assert re.search(r"07_masking</td><td class=n>36 %", means)
    assert "<b>1 of 6</b> passed; 4 failed, 1 not done. Not done: 17 % of the class" in page


def test_the_mistakes_table_lists_them_in_order(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    section = page[page.index("id='exercise-2'") : page.index("id='exercise-3'")]
    texts = re.findall(r"<tr><td>(.*?)</td><td class=n>(\d+)</td>", section)
    assert texts[:3] == [
        (BATCH, "2"),
        ("&lt;img src=x onerror=alert(1)&gt; divided by the sum of the whole batch", "1"),
        (REFUSED, "1"),
    ]


def test_every_student_string_is_escaped_and_kept_apart(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#x27;id&#x27;)&lt;/script&gt;" in page
    assert "<bdi>=HYPERLINK(&quot;http://example.invalid&quot;,&quot;x&quot;)</bdi>" in page
    assert "'=HYPERLINK" not in page and "<bdi>'-dash</bdi>" not in page
    assert "\u202e" not in page and "<bdi>Zoë evil 👩\u200d💻 ǅ̸ 𝕫</bdi>" in page
    assert "far too long a reason " * 20 not in page
    assert re.search(r"<td>the run was stopped: (far too long a reason ){5}[^<]*…</td>", page)
    assert "Content-Security-Policy" in page


def test_the_pictures_exist_and_are_on_the_page(report: Path) -> None:
    page = report.read_text(encoding="utf-8")
    pictures = re.findall(r"<img src='([^']+)'", page)
    assert pictures == ["overview.png"] + [f"exercise-{n:02d}.png" for n in range(1, 6)]
    for name in pictures:
        assert (report.parent / name).read_bytes().startswith(b"\x89PNG\r\n\x1a\n"), name
    assert sorted(p.name for p in report.parent.iterdir()) == sorted([*pictures, "index.html"])


def test_the_report_is_the_same_bytes_each_time(report: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in report.parent.iterdir()}
    write_report(class_summary(report.parents[1]), tmp_path)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert before == after


PROBE = """
import json, sys
opened = []
sys.addaudithook(lambda event, args: opened.append([event, str(args[0]), str(args[1:2])])
                 if event in ("open", "sqlite3.connect") else None)
from attnlib.grading.grader.class_report import main
code = main([sys.argv[1]])
modules = [m for m in sys.modules if m.startswith(("attnlib.checks", "attnlib.course"))]
print(json.dumps({"code": code, "opened": opened, "modules": modules}))
"""


def test_the_report_reads_the_two_files_alone(course: Path, tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    for name in ("gradebook.db", "grades.csv"):
        shutil.copy2(course / name, alone / name)
    gradebook = (alone / "gradebook.db").read_bytes()
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, str(alone)], capture_output=True, text=True, check=True
    )
    probe = json.loads(completed.stdout.splitlines()[-1])
    assert probe["code"] == 0 and probe["modules"] == []  # no checker, no course code
    near = [(event, path, mode) for event, path, mode in probe["opened"] if str(tmp_path) in path]
    read = {Path(path.removeprefix("file:").split("?")[0]).name for _, path, mode in near}
    assert read - {"index.html", *(p.name for p in (alone / "class-report").glob("*.png"))} == {
        "gradebook.db",
        "grades.csv",
    }
    for event, path, mode in near:
        if "class-report" not in path:  # only the report's own folder is written
            assert event == "sqlite3.connect" or "w" not in mode, (event, path, mode)
    assert sorted(p.name for p in alone.iterdir()) == ["class-report", "gradebook.db", "grades.csv"]
    assert (alone / "gradebook.db").read_bytes() == gradebook


def test_a_class_with_no_grades_csv_gives_a_clear_error(course: Path, tmp_path: Path) -> None:
    shutil.copy2(course / "gradebook.db", tmp_path / "gradebook.db")
    completed = subprocess.run(
        [sys.executable, "-m", "attnlib.grading.grader.class_report", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert completed.stderr == (
        f"class report: {tmp_path / 'grades.csv'} does not exist: grade the class first "
        f"(make autograde COURSE={tmp_path})\n"
    )
    assert not (tmp_path / "class-report").exists()


@pytest.mark.parametrize(
    ("problem", "expected"),
    [
        ("another header", "does not start with the header student,notebook,exercise,score,"),
        ("not a gradebook", "cannot be read as nbgrader's gradebook: file is not a database"),
        ("no gradebook", "gradebook.db does not exist: this is not a graded course directory"),
    ],
)
def test_files_grading_did_not_write_give_a_clear_error(
    problem: str, expected: str, course: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy2(course / "gradebook.db", tmp_path / "gradebook.db")
    shutil.copy2(course / "grades.csv", tmp_path / "grades.csv")
    if problem == "another header":
        (tmp_path / "grades.csv").write_text("student,notebook,score\nada,02,1\n", encoding="utf-8")
    elif problem == "not a gradebook":
        (tmp_path / "gradebook.db").write_bytes(b"not sqlite " * 100)
    else:
        (tmp_path / "gradebook.db").unlink()
    assert main([str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("class report: ") and expected in error, error
    assert not (tmp_path / "class-report").exists()


def test_a_picture_of_the_report(course: Path, tmp_path: Path) -> None:
    """With ATTNLIB_CLASS_REPORT_PICTURE=PATH (``make screenshots``), the test class's report
    as headless Chromium shows it, to PATH (figures/grading/class-report.png): its top 2400
    pixels."""
    target = os.environ.get("ATTNLIB_CLASS_REPORT_PICTURE")
    if not target:
        pytest.skip("set ATTNLIB_CLASS_REPORT_PICTURE=PATH to take the picture")
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    autumn = tmp_path / "autumn-class"
    autumn.mkdir()
    for name in ("gradebook.db", "grades.csv"):
        shutil.copy2(course / name, autumn / name)
    friday = datetime.datetime(2025, 9, 12, 17, 5).timestamp()  # the page says when
    os.utime(autumn / "grades.csv", (friday, friday))
    page = write_report(class_summary(autumn), autumn / "class-report")
    options = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    subprocess.run(
        [chromium, *options, f"--screenshot={target}", "--window-size=1200,2400", page.as_uri()],
        capture_output=True,
        check=True,
        timeout=120,
    )
    assert 20_000 < Path(target).stat().st_size < 400_000


def test_make_class_report_says_how_to_call_it() -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    completed = subprocess.run(
        ["make", "--no-print-directory", "-s", "class-report", "COURSE="],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2
    assert "usage: make class-report COURSE=/path/to/course-dir" in completed.stdout
