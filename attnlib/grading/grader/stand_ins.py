"""The grader's side of a check: stand-ins for the learner's answer, which run nothing of it.

A checker is called with a stand-in instead of the learner's function. The stand-in has the
answer's name, docstring and signature (what the checker reads before calling), and calling it
sends the arguments to the sandbox (:mod:`attnlib.grading.sandbox.answering`) and waits for the
reply. Then it does here what the call did there: it makes the arguments hold what they held there
after the call (:mod:`attnlib.grading.wire.mirror`), adds the forbidden calls seen there to the open
:class:`~attnlib.checks._calls.CallWatch` es, and returns the value or raises the error. The
checker runs as it does in a notebook, so its report is the one the learner saw, and it
compares with expected values that never left this process.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

from typing import Any

from attnlib.grading.grader.across import call_across
from attnlib.grading.grader.channel import Channel
from attnlib.grading.grader.stand_in_classes import stand_in_class
from attnlib.grading.wire.descriptions import signature_of


class _NotCallable:
    """The stand-in for an answer that is not a function (``fn = 3``): only its type's name
    comes along."""


class StandInFunction:
    """The learner's function, called across the sandbox's wall."""

    def __init__(self, channel: Channel, description: dict[str, Any]) -> None:
        self._channel = channel
        self.__name__ = self.__qualname__ = str(description["name"])
        self.__doc__ = str(description["doc"]) or None
        signature = signature_of(description["parameters"])
        if signature is not None:
            self.__signature__ = signature
        source = description.get("source")  # what a checker reads of what the learner wrote
        self.__attnlib_source__ = source if isinstance(source, str) else ""

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call_across(self._channel, args, kwargs)


def stand_in(channel: Channel, description: dict[str, Any]) -> Any:
    """What the checker gets in place of the answer :func:`~answering.describe` described."""
    if description["callable"] and not description["is_class"]:
        return StandInFunction(channel, description)
    if not description["callable"]:
        name = str(description["type"])
        kind = type(name if name.isidentifier() else "value", (_NotCallable,), {})
        return kind()
    return stand_in_class(channel, description)
