"""A class's results as the class report shows them: per exercise (:class:`ExerciseSummary`),
for the whole class (:class:`ClassSummary`), and each named mistake or reason with the students
it was named for (:class:`Tally`); and :func:`plain_text`, which every text from the grades
goes through before it is shown.

:mod:`~attnlib.grading.grader.class_report` reads them from what grading wrote, and
:mod:`~attnlib.grading.grader.class_report_page` draws them; neither imports the other's
callers.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

STATUSES = ("passed", "failed", "not done", "not checked", "not graded")
NO_RESULT = "no result"  # a student of the class with no row (or no readable row) for it
RESULTS = (*STATUSES, NO_RESULT)
TOP_EXERCISES = 5  # exercises listed under "re-teach first"
MAX_TEXT = 300  # characters of a mistake or reason shown (and told apart)
MAX_NAME = 60  # characters of a student id, notebook or exercise shown


@dataclass(frozen=True)
class Tally:
    """One named mistake (or reason a check did not run) and the students it was named for."""

    text: str
    students: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.students)


@dataclass(frozen=True)
class ExerciseSummary:
    """How the class did on one exercise."""

    notebook: str  # "02_softmax_and_scaling"
    exercise: str  # "ex2_stable_softmax"
    max_score: float
    scores: tuple[float, ...]  # one per student of the class (no score counts as 0)
    results: Mapping[str, int]  # students per result, for each of RESULTS
    mistakes: tuple[Tally, ...]  # the most often named first, at most TOP_MISTAKES
    other_mistakes: int  # distinct mistakes named beyond those
    unnamed_failures: int  # failed answers for which no mistake was named
    stops: tuple[Tally, ...]  # why checks were not checked or not graded, most common first

    @property
    def students(self) -> int:
        return sum(self.results.values())

    @property
    def not_passed(self) -> int:
        return self.students - self.results["passed"]

    @property
    def share_not_done(self) -> float:
        return self.results["not done"] / self.students if self.students else 0.0

    @property
    def mean_score(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    def distribution(self) -> list[tuple[float, int]]:
        """``(score, students with it)``, lowest score first."""
        return sorted(Counter(round(s, 2) for s in self.scores).items())


@dataclass(frozen=True)
class ClassSummary:
    """The class's results, exercise by exercise in course order."""

    course: str  # the course directory's name
    written: str  # when grades.csv was written
    students: tuple[str, ...]
    exercises: tuple[ExerciseSummary, ...]
    skipped: tuple[str, ...]  # what could not be read, and why

    @property
    def notebooks(self) -> list[str]:
        return list(dict.fromkeys(e.notebook for e in self.exercises))

    def notebook_mean(self, notebook: str) -> float:
        """The class's mean share of the notebook's points, 0 to 1."""
        theirs = [e for e in self.exercises if e.notebook == notebook]
        most = sum(e.max_score for e in theirs) * len(self.students)
        return sum(sum(e.scores) for e in theirs) / most if most else 0.0

    def most_often_not_passed(self, count: int = TOP_EXERCISES) -> list[ExerciseSummary]:
        """The exercises that the most students did not pass (none that all passed)."""
        ranked = sorted(self.exercises, key=lambda e: -e.not_passed)  # stable: course order
        return [e for e in ranked if e.not_passed][:count]


_BIDI = dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F])


def plain_text(text: str, limit: int) -> str:
    """``text`` as one line of at most ``limit`` characters: lone surrogates replaced,
    control and text-direction characters out, runs of white space made one space."""
    text = str(text).encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    text = "".join(" " if ord(c) < 32 or 0x7F <= ord(c) < 0xA0 else c for c in text)
    text = " ".join(text.translate(_BIDI).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
