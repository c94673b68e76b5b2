"""What crosses the sandbox's wall, and in what form.

Messages go both ways as frames of JSON (:mod:`~attnlib.grading.wire.frames`), read on the
grader's side with limits on their size, depth and time. In them, values travel as plain data
(:mod:`~attnlib.grading.wire.values`), errors as a type's name and a message
(:mod:`~attnlib.grading.wire.errors`), and what a call did to its arguments as data too
(:mod:`~attnlib.grading.wire.mirror`).

The rule on pickles, one way only (loading a pickle runs code):

- grader → sandbox: a call's arguments, the forbidden calls to watch for and the state a built
  module is brought to, as one cloudpickle inside the JSON frame
  (:func:`~attnlib.grading.wire.calls.call_request`). The sandbox trusts the grader, and one
  pickle keeps what the arguments share shared (a model and its optimizer).
- sandbox → grader: never a pickle, nor anything else that runs when read; JSON only, every
  field checked before it is used. No module of the grader's side imports ``pickle``
  (``tests/grader/test_grading_sides.py`` checks it).

This package imports nothing of either side.
"""
