"""Autograding the course's notebooks (00–12) for a class, safely: ``python -m attnlib.grading``.

The code is split by where it runs, on either side of the sandbox's wall:

- :mod:`attnlib.grading.grader`: the instructor's process. It reads the course and the
  submissions as data, starts each notebook's sandbox (:mod:`~attnlib.grading.grader.wall`),
  runs the course's checkers on stand-ins for the learner's answers
  (:mod:`~attnlib.grading.grader.stand_ins`) and writes the gradebook, ``grades.csv`` and the
  feedback (:mod:`~attnlib.grading.grader.records`); ``make class-report`` reads them back
  (:mod:`~attnlib.grading.grader.class_report`).
- :mod:`attnlib.grading.sandbox`: the sandbox's process, beside the learner's code. It runs
  the notebook and calls the learner's answer when the grader asks. Its code imports no
  checker: the watch for forbidden calls that runs beside the answer arrives from the grader,
  in the pickled call (:mod:`attnlib.grading.wire`).
- :mod:`attnlib.grading.wire`: what crosses between the two, and in which form (its docstring
  states the one rule on pickles). Both sides import it; it imports neither.

``tests/grader/test_grading_sides.py`` keeps the sides apart: the grader imports nothing of
the sandbox's, the sandbox nothing of the grader's or of :mod:`attnlib.checks`. The instructors'
guide, "Grading", shows the commands; "Grading security" says what the sandbox guards and what
it does not, and where in the code each guard is.
"""
