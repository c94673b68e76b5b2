"""The class report's page: ``index.html`` and its PNGs, drawn from a
:class:`~attnlib.grading.grader.class_results.ClassSummary` (``make class-report COURSE=DIR``).

What to re-teach comes first (the exercises most often not passed, with their most common
mistake; the class mean per notebook; a bar per exercise with the share of each result), then
each exercise: its scores and results as a figure, the mistakes the checker named with the
students who made them, and why some checks did not run. The page holds no script and loads
nothing but the PNGs beside it; every text from the grades is cut and escaped
(:func:`~attnlib.grading.grader.class_results.plain_text`), and each student's id is kept apart from
the text around it (``<bdi>``), whatever its writing direction.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import html
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attnlib.grading.grader.class_results import (
    MAX_NAME,
    MAX_TEXT,
    NO_RESULT,
    RESULTS,
    ClassSummary,
    ExerciseSummary,
    Tally,
    plain_text,
)

MAX_NAMES = 15  # students named beside a mistake; the rest are counted
MAX_SKIPPED = 20  # skipped rows listed at the foot of the page


PAGE = "index.html"
DPI = 100
COLOURS = {
    "passed": "#3a8a3a",
    "failed": "#c8423b",
    "not done": "#9a9a9a",
    "not checked": "#e69f00",
    "not graded": "#7b5ea7",
    NO_RESULT: "#d4d4d4",
}
SCORE_COLOUR = "#4a78b0"
MEANINGS = {
    "passed": "the check found the answer right.",
    "failed": "the check found the answer wrong; it names the mistake where it can.",
    "not done": "the answer was still the stub the notebook came with, or was never written.",
    "not checked": "the student's run stopped before this check (a crash, or the time or "
    "memory limit); the reason says which.",
    "not graded": "the whole notebook could not be graded (a refused or unreadable file); "
    "the reason says why.",
    NO_RESULT: "grades.csv has no readable row for this student and exercise.",
}


def write_report(summary: ClassSummary, folder: Path) -> Path:
    """``folder/index.html`` and its PNGs (an overview, one per exercise); the page's path."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in [*folder.glob("exercise-*.png"), folder / "overview.png"]:
        old.unlink(missing_ok=True)  # from an earlier report, which may have had more
    if summary.exercises:
        _save(overview_figure(summary), folder / "overview.png")
    for number, exercise in enumerate(summary.exercises, start=1):
        _save(exercise_figure(exercise), folder / _picture(number))
    page = folder / PAGE
    page.write_text(page_html(summary), encoding="utf-8")
    return page


def _picture(number: int) -> str:
    return f"exercise-{number:02d}.png"


def _save(figure: Any, path: Path) -> None:
    """``figure`` as a PNG with no date or version in it: the same data, the same bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a glyph no font has is drawn as a box
        figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def _label(exercise: ExerciseSummary) -> str:
    """``02 ex2_stable_softmax``: the notebook's number (or name) and the exercise."""
    number = re.match(r"(\d\d)_", exercise.notebook)
    where = number[1] if number else plain_text(exercise.notebook, 20)
    return plain_text(f"{where} {exercise.exercise}", MAX_NAME)


def overview_figure(summary: ClassSummary) -> Any:
    """One bar per exercise, in course order: the share of the class with each result."""
    from matplotlib.figure import Figure

    exercises = summary.exercises
    figure = Figure(figsize=(9, 1.6 + 0.3 * len(exercises)), layout="constrained")
    axes = figure.subplots()
    rows = range(len(exercises))
    left = [0.0] * len(exercises)
    for result in RESULTS:
        shares = [100 * e.results[result] / (e.students or 1) for e in exercises]
        if any(shares):
            axes.barh(rows, shares, left=left, color=COLOURS[result], label=result, height=0.7)
            left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.set_yticks(list(rows), labels=[_label(e) for e in exercises], parse_math=False)
    axes.invert_yaxis()  # the course's first exercise at the top
    axes.set_xlim(0, 100)
    axes.set_xlabel("share of the class (%)")
    axes.set_ylabel("notebook and exercise")
    axes.set_title(f"How the {len(summary.students)} students did on each exercise")
    figure.legend(loc="outside lower center", ncols=len(RESULTS), frameon=False)
    return figure


def exercise_figure(exercise: ExerciseSummary) -> Any:
    """Two panels: how many students got each score, and how many had each result."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(9, 2.6), layout="constrained")
    scores, results = figure.subplots(1, 2, width_ratios=[1, 1.3])
    most = exercise.max_score
    distribution = exercise.distribution()
    if len(distribution) <= 12:  # a bar for each score given
        values = [value for value, _ in distribution]
        bars = scores.bar(range(len(values)), [n for _, n in distribution], color=SCORE_COLOUR)
        scores.set_xticks(range(len(values)), labels=[f"{v:g}" for v in values])
        scores.bar_label(bars, padding=2)
        scores.set_ylim(0, max(n for _, n in distribution) * 1.2 if distribution else 1)
    else:
        scores.hist(exercise.scores, bins=10, range=(0, most or None), color=SCORE_COLOUR)
    scores.set(title="Scores", xlabel=f"score (out of {most:g})", ylabel="students")
    shown = [r for r in RESULTS if r != NO_RESULT or exercise.results[r]]
    bars = results.barh(
        range(len(shown)),
        [exercise.results[r] for r in shown],
        color=[COLOURS[r] for r in shown],
    )
    results.bar_label(bars, padding=2)
    results.set_yticks(range(len(shown)), labels=shown)
    results.invert_yaxis()
    results.set(title="Results", xlabel="students")
    results.set_xlim(0, max(1, exercise.students) * 1.12)
    for axes in (scores, results):
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    results.xaxis.set_major_locator(MaxNLocator(integer=True))
    title = f"{plain_text(exercise.exercise, MAX_NAME)} ({plain_text(exercise.notebook, MAX_NAME)})"
    figure.suptitle(title, parse_math=False)
    return figure


STYLE = """
body{font:15px/1.45 system-ui,sans-serif;color:#222;max-width:1000px;margin:24px auto;
padding:0 16px}
h1{font-size:26px;margin-bottom:4px}h2{margin-top:36px;border-bottom:2px solid #ddd}
h3{margin-top:28px;color:#444}section{margin:18px 0 30px}
.lead{color:#555;margin-top:0}.where{color:#777;font-weight:normal;font-size:14px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ddd;padding:4px 8px;
text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f4f4f4}
.n{text-align:right;white-space:nowrap}.who{font-size:13px;color:#555;width:30%}
table.tally{width:100%}
img{max-width:100%;height:auto}ol li{margin-bottom:6px}.quiet{color:#666;font-size:13px}
"""
# No script, no outside resource: only the PNGs beside the page and the style above.
SECURITY = "default-src 'none'; img-src 'self' file:; style-src 'unsafe-inline'"


def _h(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters and escaped: safe anywhere in the page."""
    return html.escape(plain_text(text, limit), quote=True)


def _students(names: Sequence[str]) -> str:
    """The first of ``names``, each kept apart from the text around it; the rest counted."""
    shown = ", ".join(f"<bdi>{_h(n, MAX_NAME)}</bdi>" for n in names[:MAX_NAMES])
    rest = len(names) - MAX_NAMES
    return shown + (f" and {rest} more" if rest > 0 else "")


def _count(students: int) -> str:
    return f"{students} student{'' if students == 1 else 's'}"


def _percent(share: float) -> str:
    return f"{100 * share:.0f} %"


def page_html(summary: ClassSummary) -> str:
    """The class report as one HTML page, linking the PNGs :func:`write_report` writes."""
    body = [
        f"<h1>Class report: {_h(summary.course, MAX_NAME)}</h1>",
        f"<p class=lead>{len(summary.students)} students, {len(summary.exercises)} exercises "
        f"in {len(summary.notebooks)} notebooks; grades written {_h(summary.written)}.</p>",
        _reteach_html(summary),
        _notebooks_html(summary),
    ]
    if summary.exercises:
        body.append(
            "<h2>Every exercise at a glance</h2><img src='overview.png' alt='For each "
            "exercise, the share of the class that passed, failed, did not do it, or was not "
            "checked or graded'>"
        )
    body.append("<h2>Each exercise</h2>")
    number = 0
    for notebook in summary.notebooks:
        body.append(f"<h3>{_h(notebook, MAX_NAME)}</h3>")
        for exercise in summary.exercises:
            if exercise.notebook == notebook:
                number += 1
                body.append(_exercise_html(exercise, number))
    body += [_meanings_html(), _skipped_html(summary.skipped)]
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{SECURITY}\">"
        f"<title>Class report: {_h(summary.course, MAX_NAME)}</title><style>{STYLE}</style>"
        "</head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _anchor(summary: ClassSummary, exercise: ExerciseSummary) -> str:
    return f"exercise-{summary.exercises.index(exercise) + 1}"


def _results_text(exercise: ExerciseSummary, leave_out: str = "") -> str:
    """``3 failed, 1 not done``: the results other than ``leave_out`` that some students had."""
    return ", ".join(
        f"{exercise.results[r]} {r}" for r in RESULTS if r != leave_out and exercise.results[r]
    )


def _reteach_html(summary: ClassSummary) -> str:
    hardest = summary.most_often_not_passed()
    if not hardest:
        return "<h2>Re-teach first</h2><p>Every student passed every exercise.</p>"
    items = []
    for exercise in hardest:
        item = (
            f"<a href='#{_anchor(summary, exercise)}'><b>{_h(exercise.exercise, MAX_NAME)}</b>"
            f"</a> <span class=where>{_h(exercise.notebook, MAX_NAME)}</span>: "
            f"<b>{exercise.not_passed} of {exercise.students}</b> students did not pass "
            f"({_results_text(exercise, 'passed')})."
        )
        if exercise.mistakes:
            top = exercise.mistakes[0]
            item += f" Most common mistake: “{_h(top.text)}” ({_count(top.count)})."
        elif exercise.stops:
            top = exercise.stops[0]
            item += f" Most often the check did not run: “{_h(top.text)}” ({_count(top.count)})."
        items.append(f"<li>{item}</li>")
    return (
        "<h2>Re-teach first</h2><p>The exercises the most students did not pass:</p>"
        f"<ol>{''.join(items)}</ol>"
    )


def _notebooks_html(summary: ClassSummary) -> str:
    rows = []
    for notebook in summary.notebooks:
        theirs = [e for e in summary.exercises if e.notebook == notebook]
        answers = sum(e.students for e in theirs)
        not_done = sum(e.results["not done"] for e in theirs) / answers if answers else 0.0
        rows.append(
            f"<tr><td>{_h(notebook, MAX_NAME)}</td>"
            f"<td class=n>{_percent(summary.notebook_mean(notebook))}</td>"
            f"<td class=n>{len(theirs)}</td><td class=n>{_percent(not_done)}</td></tr>"
        )
    return (
        "<h2>Class mean per notebook</h2><table><tr><th>Notebook</th>"
        "<th>Class mean (share of the points)</th><th>Exercises</th><th>Answers not done</th>"
        f"</tr>{''.join(rows)}</table>"
    )


def _exercise_html(exercise: ExerciseSummary, number: int) -> str:
    parts = [
        f"<section id='exercise-{number}'><h4>{_h(exercise.exercise, MAX_NAME)}</h4>",
        f"<p><b>{exercise.results['passed']} of {exercise.students}</b> passed"
        + (f"; {_results_text(exercise, 'passed')}" if exercise.not_passed else "")
        + (
            f". Not done: {_percent(exercise.share_not_done)} of the class"
            if exercise.share_not_done
            else ""
        )
        + f". Mean score {exercise.mean_score:.2f} of {exercise.max_score:g}.</p>",
        f"<img src='{_picture(number)}' alt='Scores and results of "
        f"{_h(exercise.exercise, MAX_NAME)}'>",
    ]
    if exercise.mistakes:
        parts.append(_tally_table("Mistake the checker named", exercise.mistakes))
        notes = []
        if exercise.other_mistakes:
            notes.append(f"{exercise.other_mistakes} other mistakes were named less often")
        if exercise.unnamed_failures:
            notes.append(f"{exercise.unnamed_failures} failed answers had no mistake named")
        if notes:
            parts.append(f"<p class=quiet>{'; '.join(notes)}.</p>")
    elif exercise.results["failed"]:
        failed = exercise.results["failed"]
        answers = "answer" if failed == 1 else "answers"
        parts.append(f"<p class=quiet>No mistake was named for the {failed} failed {answers}.</p>")
    if exercise.stops:
        parts.append(_tally_table("Why the check did not run", exercise.stops))
    return "\n".join(parts) + "</section>"


def _tally_table(heading: str, tallies: Sequence[Tally]) -> str:
    rows = "".join(
        f"<tr><td>{_h(t.text)}</td><td class=n>{t.count}</td>"
        f"<td class=who>{_students(t.students)}</td></tr>"
        for t in tallies
    )
    return (
        f"<table class=tally><tr><th>{heading}</th><th class=n>Students</th><th>Who</th></tr>"
        f"{rows}</table>"
    )


def _meanings_html() -> str:
    items = "".join(f"<li><b>{r}</b>: {html.escape(m)}</li>" for r, m in MEANINGS.items())
    return (
        "<h2>What the results mean</h2><ul>"
        f"{items}</ul><p class=quiet>A score missing from the gradebook counts as 0 in "
        "the means.</p>"
    )


def _skipped_html(skipped: Sequence[str]) -> str:
    if not skipped:
        return ""
    shown = "".join(f"<li>{_h(line)}</li>" for line in skipped[:MAX_SKIPPED])
    rest = len(skipped) - MAX_SKIPPED
    more = f"<p class=quiet>and {rest} more.</p>" if rest > 0 else ""
    return f"<h2>What could not be read</h2><ul class=quiet>{shown}</ul>{more}"
