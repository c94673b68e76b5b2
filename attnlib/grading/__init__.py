"""Autograding the course's notebooks (00–12) for a class, safely: ``python -m attnlib.grading``.

Each submitted notebook runs in its own sandbox (:mod:`~attnlib.grading.sandbox`); the course's
checkers run in the grader's process on stand-ins for the learner's answers
(:mod:`~attnlib.grading.stand_ins`), so the learner's code never runs beside them and never
sees an expected value. Only the grader writes the gradebook, ``grades.csv`` and the feedback
notebooks (:mod:`~attnlib.grading.records`). The instructors' guide, "Grading", shows the
commands; "Grading security" says what the sandbox guards and what it does not.
``make class-report``: what the class got right and wrong (:mod:`~attnlib.grading.class_report`).
"""
