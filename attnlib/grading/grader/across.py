"""One call of the learner's code across the sandbox's wall, from the grader's side.

:func:`call_across` sends the call (:mod:`~attnlib.grading.wire.calls`) to the sandbox, where
:mod:`~attnlib.grading.sandbox.answering` makes it, and waits for the reply. Then it does here
what the call did there: it makes the arguments hold what they held there after the call
(:mod:`~attnlib.grading.wire.mirror`), adds the forbidden calls seen there to the open
:class:`~attnlib.checks._calls.CallWatch` es, and returns the value or raises the error.
Stand-ins for a function (:mod:`~attnlib.grading.grader.stand_ins`) and for a class and the
modules it builds (:mod:`~attnlib.grading.grader.stand_in_classes`) are made of such calls.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import torch

from attnlib.checks._calls import CallWatch, watching
from attnlib.checks._crash import Crash, attach, crash_of
from attnlib.grading.grader.channel import Channel, RunEnded
from attnlib.grading.wire.calls import CallOrder, pickled
from attnlib.grading.wire.errors import WireError, decode_error
from attnlib.grading.wire.mirror import apply, grads_of, parts
from attnlib.grading.wire.values import decode


def call_across(
    channel: Channel,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    order: dict[str, Any] | None = None,
    step: object = None,
    read: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """Call the answer (or, by ``order``, a module it built) with these arguments, there.

    ``step`` goes along in the same pickle as the arguments (what a built module must be
    brought to first); ``read`` reads the parts of the reply that only some calls have, and
    may return the value in place of the reply's own.
    """
    watches = watching()
    found = parts((args, kwargs))
    call = CallOrder(
        args,
        kwargs,
        grads_of(found),
        step,
        # The call draws from this process's random numbers, as it would in the notebook: a
        # checker that seeds torch before two calls gets the same dropout in both.
        torch.random.get_rng_state(),
        [functools.partial(CallWatch, watch.forbidden) for watch in watches],
        crash_of,
    )
    request = {"pickled": pickled(call), "grad": torch.is_grad_enabled(), **(order or {})}
    reply = channel.request({"call": request})
    try:
        error, value = _outcome(reply, found, watches, read)
    except Exception as broken:  # a reply this side cannot use: the run is at fault
        raise RunEnded(f"the notebook's run sent a reply the check cannot use ({broken})") from None
    if error is not None:
        raise error
    return value


def _outcome(
    reply: dict[str, Any],
    found: list[object],
    watches: list[CallWatch],
    read: Callable[[dict[str, Any]], Any] | None,
) -> tuple[BaseException | None, Any]:
    """(the error to raise, or None; the value) that ``reply`` reports, after the caller's
    arguments and watches are made to match what the call did in the sandbox."""
    changed = decode(reply.get("changed", {"list": []}))
    if not isinstance(changed, list):
        raise WireError("a reply whose changes are not a list")
    apply(found, changed)
    for watch, seen in zip(watches, reply.get("seen", []), strict=False):
        known = watch.forbidden.labels()
        watch.seen.extend(label for label in seen if label in known)
    rng = decode(reply.get("rng"))
    if type(rng) is not torch.Tensor:
        raise WireError("a reply without the random generator's state")
    torch.random.set_rng_state(rng)
    special = read(reply) if read is not None else None
    if "not_implemented" in reply:
        unfinished = NotImplementedError(str(reply["not_implemented"]))
        return _raised_in(reply.get("raised_in"), unfinished), None
    if "error" in reply:  # with where the answer's code raised it, when the sandbox saw that
        return attach(decode_error(reply["error"]), Crash.from_wire(reply.get("crash"))), None
    if special is not None:
        return None, special
    if "value" not in reply:
        raise WireError("a reply with neither a value nor an error")
    return None, decode(reply["value"])


def _raised_in(name: object, error: BaseException) -> BaseException:
    """``error``, its traceback ending in a frame named ``name``, as it ended in the sandbox
    (a checker reads which of the learner's functions was not done yet from it)."""
    if not isinstance(name, str) or not name.isidentifier():
        return error

    def raiser() -> None:
        raise error

    code = raiser.__code__.replace(co_name=name)
    renamed = types.FunctionType(code, raiser.__globals__, name, None, raiser.__closure__)
    try:
        renamed()
    except BaseException as raised:  # the same error, now with that frame
        return raised
    return error
