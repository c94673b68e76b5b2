"""The grader's side of the wall: everything that runs in the instructor's own process.

It reads the course and the submitted notebooks as data, starts and watches each notebook's
sandbox, runs the course's checkers on stand-ins for the learner's answers, and alone writes
the grades. It imports nothing of :mod:`attnlib.grading.sandbox`: what the two sides share is
in :mod:`attnlib.grading.wire`.
"""
