"""The grader's side of a check: stand-ins for the learner's answer, which run nothing of it.

A checker is called with a stand-in instead of the learner's function. The stand-in has the
answer's name, docstring and signature (what the checker reads before calling), and calling it
sends the arguments to the sandbox (:mod:`attnlib.grading.answering`) and waits for the reply.
Then it does here what the call did there: it makes the arguments hold what they held there
after the call (:mod:`attnlib.grading.mirror`), adds the forbidden calls seen there to the open
:class:`~attnlib.checks._calls.CallWatch` es, and returns the value or raises the error. The
checker runs as it does in a notebook, so its report is the one the learner saw, and it
compares with expected values that never left this process.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import base64
import inspect
from typing import Any, Protocol

import cloudpickle

from attnlib.checks._calls import watching
from attnlib.grading.mirror import apply, grads_of, parts
from attnlib.grading.raised import WireError, decode_error
from attnlib.grading.wire import decode


class RunEnded(BaseException):
    """The sandboxed run stopped answering properly: it ended, ran out of time, or sent what
    the grader cannot read. A BaseException, so that no checker takes it for an error the
    learner's answer raised (checkers catch those as ``Exception``)."""


class Channel(Protocol):
    """Sends one request to the sandbox and returns its reply."""

    def request(self, message: dict[str, Any]) -> dict[str, Any]: ...


class _NotCallable:
    """The stand-in for an answer that is not a function (``fn = 3``): only its type's name
    comes along."""


def _signature(parameters: list[list[Any]] | None) -> inspect.Signature | None:
    if parameters is None:
        return None
    made = []
    for name, kind, has_default in parameters:
        if kind not in range(len(_KINDS)) or not isinstance(name, str):
            raise WireError(f"not a parameter: {name!r} of kind {kind!r}")
        default = None if has_default else inspect.Parameter.empty
        made.append(inspect.Parameter(name, _KINDS[kind], default=default))
    try:
        return inspect.Signature(made)
    except ValueError as error:
        raise WireError(f"an impossible signature: {error}") from error


# inspect's parameter kinds, by the number that inspect gives each.
_KINDS = sorted(
    [
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.VAR_KEYWORD,
    ]
)


class StandInFunction:
    """The learner's function, called across the sandbox's wall."""

    def __init__(self, channel: Channel, description: dict[str, Any]) -> None:
        self._channel = channel
        self.__name__ = self.__qualname__ = str(description["name"])
        self.__doc__ = str(description["doc"]) or None
        signature = _signature(description["parameters"])
        if signature is not None:
            self.__signature__ = signature

    def __repr__(self) -> str:
        return f"<function {self.__name__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        watches = watching()
        # One pickle for all the arguments, so that what they share stays shared there; the
        # gradients that tensors hold go along, as a pickle of a tensor drops its .grad.
        found = parts((args, kwargs))
        grads = grads_of(found)
        pickled = base64.b64encode(cloudpickle.dumps((args, kwargs, grads))).decode()
        forbidden = [w.forbidden.by_path() for w in watches]
        reply = self._channel.request({"call": {"pickled": pickled, "forbidden": forbidden}})
        try:
            error, value = self._outcome(reply, found, watches)
        except Exception as broken:  # a reply this side cannot use: the run is at fault
            raise RunEnded(
                f"the notebook's run sent a reply the check cannot use ({broken})"
            ) from None
        if error is not None:
            raise error
        return value

    @staticmethod
    def _outcome(
        reply: dict[str, Any], found: list[object], watches: list[Any]
    ) -> tuple[BaseException | None, Any]:
        """(the error to raise, or None; the value) that ``reply`` reports, after the caller's
        arguments and watches are made to match what the call did in the sandbox."""
        changed = decode(reply.get("changed", {"list": []}))
        if not isinstance(changed, list):
            raise WireError("a reply whose changes are not a list")
        apply(found, changed)
        for watch, seen in zip(watches, reply.get("seen", []), strict=False):
            known = set(watch.forbidden.python.values()) | set(watch.forbidden.torch.values())
            watch.seen.extend(label for label in seen if label in known)
        if "not_implemented" in reply:
            return NotImplementedError(str(reply["not_implemented"])), None
        if "error" in reply:
            return decode_error(reply["error"]), None
        if "value" not in reply:
            raise WireError("a reply with neither a value nor an error")
        return None, decode(reply["value"])


def stand_in(channel: Channel, description: dict[str, Any]) -> Any:
    """What the checker gets in place of the answer :func:`~answering.describe` described."""
    if description["callable"] and not description["is_class"]:
        return StandInFunction(channel, description)
    if not description["callable"]:
        name = str(description["type"])
        kind = type(name if name.isidentifier() else "value", (_NotCallable,), {})
        return kind()
    raise NotImplementedError("a class as an answer is checked by its probes (not yet here)")
