"""Every exercise of the course: its label, what a learner can see of its answer beforehand,
and the table of mistakes its checker names.

    python instructors/exercise_table.py            # all notebooks
    python instructors/exercise_table.py 02 10      # some of them
    python instructors/exercise_table.py --markdown # as a Markdown table, one row per exercise
    python instructors/exercise_table.py --write    # instructors/exercises.md, the guide's list

The labels come from the exercise headings of the instructors' edition
(`### Exercise 2 — ★★☆ core, ~15 min: title`), the visible lines from
``editions.visible_solution_lines`` and the mistakes from ``attnlib.checks``' registry.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from instructors import editions

HEADING = re.compile(r"### Exercise (\d+) — (★☆☆|★★☆|★★★) (core|optional), ~(\d+) min[^:]*: (.+)")


@dataclass(frozen=True)
class Row:
    notebook: str
    number: int
    stars: str
    kind: str
    minutes: int
    title: str
    exercise_id: str  # "" for an open-ended exercise without an answer cell
    solution_lines: int
    visible: int
    mistakes: tuple[str, ...]


def rows(numbers: list[str] | None = None) -> list[Row]:
    from attnlib.checks import _exercise

    by_number = {e.id: e for e in _exercise.all_exercises().values()}
    extra = editions.report_texts()
    found = []
    for path in editions.source_notebooks():
        if numbers and path.name[:2] not in numbers:
            continue
        notebook = editions.read(path)
        visible = editions.visible_solution_lines(notebook, extra)
        ids = {e.number: e.id for e in by_number.values() if e.notebook == path.name[:2]}
        for cell in notebook["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for line in editions.cell_source(cell).splitlines():
                match = HEADING.fullmatch(line)
                if not match:
                    continue
                number = int(match[1])
                exercise_id = ids.get(number, "")
                count, shown = visible.get(exercise_id, (0, []))
                known = _exercise.known_mistakes(exercise_id) if exercise_id else ()
                found.append(
                    Row(
                        path.name[:2],
                        number,
                        match[2],
                        match[3],
                        int(match[4]),
                        match[5],
                        exercise_id,
                        count,
                        len(shown),
                        tuple(dict.fromkeys(m.name for m in known)),  # a family once
                    )
                )
    return found


DOCUMENT = Path(__file__).resolve().parent / "exercises.md"


def document(table: list[Row]) -> str:
    """``instructors/exercises.md``: every exercise, its label and the mistakes its check names."""
    lines = [
        "# The exercises and the mistakes their checks name",
        "",
        "Written by `python instructors/exercise_table.py --write` (`make editions`); a test keeps",
        "it in step with the notebooks and `attnlib.checks`. For each exercise: its label, its id",
        "(for `checks.hint(id)` and `checks.solution(id)`), how many lines of its solution can be",
        "read before it, and the mistakes its check recognises and names in a report.",
    ]
    for r in table:
        lines += ["", f"## {r.notebook} Exercise {r.number}: {r.title}", ""]
        lines.append(f"{r.stars} {r.kind}, ~{r.minutes} min.")
        if not r.exercise_id:
            lines.append("Open-ended: no answer cell and no check.")
            continue
        lines.append(
            f"`{r.exercise_id}`; {r.visible} of {r.solution_lines} solution lines visible "
            f"before it; {len(r.mistakes)} named mistakes:"
        )
        lines.append("")
        lines += [f"- {name}" for name in r.mistakes]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="two-digit notebook numbers")
    parser.add_argument("--markdown", action="store_true", help="one table row per exercise")
    parser.add_argument("--write", action="store_true", help=f"write {DOCUMENT.name}")
    args = parser.parse_args(argv)
    table = rows(args.notebooks)
    if args.write:
        DOCUMENT.write_text(document(rows()), encoding="utf-8")
        print(f"wrote {DOCUMENT.relative_to(DOCUMENT.parents[1])}")
        return 0
    if args.markdown:
        print("| NN | exercise | label | visible lines | named mistakes |")
        print("|---|---|---|---|---|")
        for r in table:
            mistakes = "; ".join(r.mistakes) or "(open-ended: no check)"
            label = f"{r.stars} {r.kind}, ~{r.minutes} min"
            visible = f"{r.visible} of {r.solution_lines}" if r.exercise_id else "–"
            print(f"| {r.notebook} | Ex {r.number}: {r.title} | {label} | {visible} | {mistakes} |")
        return 0
    for r in table:
        print(f"{r.notebook} Exercise {r.number} — {r.stars} {r.kind}, ~{r.minutes} min: {r.title}")
        if not r.exercise_id:
            print("    open-ended: no answer cell, no check")
            continue
        print(f"    id {r.exercise_id}; {r.visible} of {r.solution_lines} solution lines visible")
        for name in r.mistakes:
            print(f"    - {name}")
    total = sum(r.minutes for r in table)
    print(f"{len(table)} exercises, {total} minutes as labelled")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
