"""The checking engine: the one way every checker runs a learner's answer and names its mistake.

:func:`check_function` checks a function of tensors on cases (:mod:`.functions`);
:func:`check_module` checks an ``nn.Module`` class, built and loaded with given weights on each
case (:mod:`.classes`). Both watch for calls of what the exercise asks the learner to write,
report a crash where the learner's code raised it, and name the mistake of the exercise's table
that behaves as the answer did (:mod:`.naming`). What differs between exercises is an option of
the engine, not another engine: naming one of several mistakes made at once (``several``), an
answer that changes its arguments in place (:mod:`.in_place`), the kind and dtype a result must
have (:mod:`.kinds`), and tolerances per case. Serves the checkers of notebooks 00–12.
"""

from attnlib.checks.engine.classes import ModuleCase, Verdict, check_module, report
from attnlib.checks.engine.functions import Property, check_function
from attnlib.checks.engine.naming import ByShape

__all__ = [
    "ByShape",
    "ModuleCase",
    "Property",
    "Verdict",
    "check_function",
    "check_module",
    "report",
]
