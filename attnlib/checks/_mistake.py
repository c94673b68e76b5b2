"""A mistake learners make on an exercise, written as a learner would write it.

The lowest floor of the checkers: the crash reader (:mod:`attnlib.checks._crash`) names its
slips as mistakes, and the report words (:mod:`attnlib.checks._exercise`) show them, so both
import it from here and neither imports the other back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    """A mistake learners make, written as a learner would write it.

    ``name`` says what was done ("subtracted the largest score of the whole batch, not of each
    row") and ``why`` why that gives a wrong answer, in words: the report shows both and never
    the corrected code. ``fn`` takes what the learner's function takes. ``written``, when set,
    is a pattern of the learner's source that this mistake needs: of two mistakes that behave
    alike (``.T`` on a batch and a sum along dim 0 give the same numbers), the report names
    the one the learner wrote. ``variants`` are more ways of making the same mistake (another
    epsilon, another fill, float32 mixed in another way): each is tried after ``fn``, in order,
    under the same name and why.
    """

    name: str
    why: str
    fn: Callable[..., object]
    written: str = ""
    variants: tuple[Callable[..., object], ...] = ()

    def each_way(self) -> tuple[Mistake, ...]:
        """This mistake once per way of making it: itself (``fn``), then each variant as a
        mistake of its own."""
        more = (Mistake(self.name, self.why, fn, self.written) for fn in self.variants)
        return (self, *more)


def every_way(mistakes: Iterable[Mistake]) -> tuple[Mistake, ...]:
    """A table of mistakes with each variant spelled out as a mistake of its own, in order:
    what a checker runs to recognise one."""
    return tuple(way for mistake in mistakes for way in mistake.each_way())
