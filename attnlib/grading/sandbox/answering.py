"""The sandbox's side of a check: call the learner's answer as the grader asks, say what it did.

The grader's checker never holds the learner's function; it holds a stand-in
(:mod:`~attnlib.grading.grader.stand_ins`) whose every call becomes a request to the sandbox
(:mod:`~attnlib.grading.wire.calls`). Here, in the sandbox, :func:`answer_request` makes that
call on the real answer, under the watches the grader sent for what the checker forbids, and
replies with what came of it: the value or the error (and where in the learner's code it was
raised, read as the grader said), what the call changed in its arguments
(:mod:`~attnlib.grading.wire.mirror`), and the forbidden calls it saw. The watches and the
crash reader are the checkers' and come in the grader's pickle with the arguments: nothing here
imports a checker. Everything here runs beside the learner's code and may be tampered with; the
grader trusts none of it beyond "this is what the answer returned".

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import inspect
import signal
import traceback
from contextlib import ExitStack
from typing import Any

import torch
from torch import nn

from attnlib.grading.sandbox import built_modules
from attnlib.grading.wire.calls import unpickled
from attnlib.grading.wire.descriptions import parameters_of
from attnlib.grading.wire.errors import encode_error
from attnlib.grading.wire.mirror import changes, parts, set_grads, snapshot
from attnlib.grading.wire.values import encode


def describe(answer: object) -> dict[str, Any]:
    """What the checker may ask of the answer without calling it: its kind, name, docstring and
    parameters."""
    parameters = parameters_of(answer) if callable(answer) else None
    described: dict[str, Any] = {
        "type": type(answer).__name__,
        "is_class": isinstance(answer, type),
        "callable": callable(answer),
        "name": str(getattr(answer, "__name__", type(answer).__name__)),
        "doc": inspect.getdoc(answer) or "",
        "parameters": parameters,
        "source": _source(answer),
    }
    if isinstance(answer, type):
        is_module = issubclass(answer, nn.Module)
        described |= {
            "own_doc": built_modules.own_doc(answer),
            "module": is_module,
            "base": built_modules.known_base(answer) if is_module else None,
            "forward": built_modules.forward_parameters(answer) if is_module else None,
        }
    return described


def _source(answer: object) -> str:
    """The answer's source, for a checker that names a mistake by what the learner wrote (a
    ``.T``); '' when it cannot be read."""
    if not (inspect.isfunction(answer) or inspect.isclass(answer)):
        return ""
    try:
        return inspect.getsource(answer)[:_SOURCE_CHARACTERS]
    except (OSError, TypeError):
        return ""


_SOURCE_CHARACTERS = 20_000

# The modules the answer (a class) built for the grader, by handle: the grader's copies of
# them call them here.
_BUILT: list[built_modules.Built] = []


class CallTookTooLong(BaseException):
    """A call of the answer ran over its time limit: the grader's limit, so no ``except
    Exception`` of the answer's can take it for its own."""


# What ran over its time once is not called again: a check makes a dozen calls, and a dozen
# time limits would use up the notebook's.
_TOO_LONG: dict[int, str] = {}


def _stop_the_call(seconds: float) -> None:
    def stop(signum: int, frame: object) -> None:
        raise CallTookTooLong(f"the call ran over {seconds:g} s and was stopped")

    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _sent(value: object) -> object:
    """``value`` on the wire, or what it was when it cannot go (nested too deeply, say)."""
    try:
        return encode(value)
    except Exception as error:  # the answer's value, not the grader's problem
        return {"opaque": {"type": type(value).__name__, "shown": f"(not sent: {error})"[:200]}}


def answer_request(
    answer: Any, request: dict[str, Any], call_seconds: float | None = None
) -> dict[str, Any]:
    """Call ``answer`` with the request's arguments, stopped after ``call_seconds``; the reply
    says what came of it."""
    call = unpickled(request["pickled"])  # the grader's, which the sandbox trusts
    args, kwargs = call.args, call.kwargs
    target, built, kept = answer, None, {}
    if "on" in request:  # a module the answer built: first make it what the grader's copy is
        handle, index = request["on"]
        built = _BUILT[handle]
        built_modules.bring_in_step(built, call.step)
        target, kept = built.modules[index], built_modules.versions(built)
    elif "class_of" in request:  # the class of one of those modules, to build another
        handle, index = request["class_of"]
        target = type(_BUILT[handle].modules[index])
    found = parts((args, kwargs))
    set_grads(found, call.grads)
    before = [snapshot(part) for part in found]
    watches = [make() for make in call.watches]
    reply: dict[str, Any] = {}
    torch.random.set_rng_state(call.rng)  # the grader's: the call draws what it would draw there
    with ExitStack() as stack:
        for watch in watches:
            stack.enter_context(watch)
        try:
            if id(target) in _TOO_LONG:
                raise CallTookTooLong(f"{_TOO_LONG[id(target)]} (an earlier call; not run again)")
            if call_seconds is not None:
                _stop_the_call(call_seconds)
            try:
                with torch.set_grad_enabled(bool(request.get("grad", True))):
                    value = target(*args, **kwargs)
            finally:
                if call_seconds is not None:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except CallTookTooLong as error:
            _TOO_LONG.setdefault(id(target), str(error).split(" (")[0])
            reply["error"] = encode_error(error)
        except NotImplementedError as error:
            reply["not_implemented"] = str(error)
            # The function that raised it: a checker names the unfinished one it calls.
            frames = traceback.extract_tb(error.__traceback__)
            reply["raised_in"] = frames[-1].name if frames else ""
        except BaseException as error:  # the learner's bug (or exit), reported as theirs
            reply["error"] = encode_error(error)
            crash = call.read_crash(error) if isinstance(error, Exception) else None
            if crash is not None:  # where the answer's code raised it, for the report
                reply["crash"] = crash.to_wire()
        else:
            if request.get("build") and isinstance(value, nn.Module):
                made, description = built_modules.describe(value)
                _BUILT.append(made)
                reply["built"] = {"handle": len(_BUILT) - 1, "description": _sent(description)}
            else:
                reply["value"] = _sent(value)
    reply["changed"] = _sent(changes(found, before))
    reply["rng"] = _sent(torch.random.get_rng_state())
    if built is not None:
        reply["modules"] = _sent(built_modules.changed_since(built, kept))
    reply["seen"] = [list(watch.seen) for watch in watches]
    return reply
