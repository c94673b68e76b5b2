"""The sandbox's side of the wall: what runs inside it, in the same processes as the learner's
code, and may be tampered with.

The warm server (:mod:`~attnlib.grading.sandbox.fork_server`) forks a process per notebook;
that process runs the notebook (:mod:`~attnlib.grading.sandbox.notebook`) and calls the
learner's answer as the grader asks (:mod:`~attnlib.grading.sandbox.answering`,
:mod:`~attnlib.grading.sandbox.built_modules`). Nothing here decides a grade, so nothing here
imports a checker (:mod:`attnlib.checks`) or the grader's code; what it shares with the grader
is in :mod:`attnlib.grading.wire`.
"""
