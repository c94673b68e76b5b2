"""Checkers for notebook 02's exercises, one module each: softmax from its formula
(:mod:`.from_formula`), a stable softmax along any dimension (:mod:`.stable`) and the gradient
softmax passes back (:mod:`.backward`).

Each exercise lists the mistakes learners make on it (``MISTAKES``), written as a learner would
write them; a failing answer that behaves as one of them on every case is told which. Notebook 02.
"""

from attnlib.checks.nb02_softmax.backward import check_softmax_backward
from attnlib.checks.nb02_softmax.from_formula import check_softmax_from_formula
from attnlib.checks.nb02_softmax.stable import check_stable_softmax

__all__ = ["check_softmax_backward", "check_softmax_from_formula", "check_stable_softmax"]
