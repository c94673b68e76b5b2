"""Notebook 01's predict-first questions."""

from __future__ import annotations

from attnlib.course.predictions import Question

QUESTIONS: tuple[Question, ...] = ()
