"""One call of the learner's answer across the wall: what the grader asks, what the sandbox
replies.

The request, grader → sandbox, is a JSON object with:

- ``pickled``: one cloudpickle (base64) of a :class:`CallOrder`: the arguments, the ``.grad``
  of each tensor among them (a pickle of a tensor drops it), the state the grader's copy of a
  built module is in (``step``), the grader's random state, the watches the answer runs under
  (what the checker forbids it to call) and how to read a crash in the answer's code. This is the
  one pickle on the wire, and it goes this way only (:mod:`attnlib.grading.wire` states the
  rule): the sandbox trusts the grader, and one pickle keeps what the arguments share shared (a
  model and its optimizer). What to watch for and how to read a crash are the checkers', so they
  come from the grader with the arguments, and the sandbox's code holds no checker;
- ``grad``: whether autograd is on; and, for a class's modules, ``build`` (build one),
  ``on`` (call a built module, by handle and index) or ``class_of`` (build another of its class).

The reply, sandbox → grader, is plain data (:mod:`~attnlib.grading.wire.values`), never a
pickle: ``value``; or ``error`` (with ``crash``, where in the learner's code it was raised); or
``not_implemented`` (with ``raised_in``, the function that raised it); or ``built`` (a module's
handle and description); and always ``changed`` (what the call did to its arguments,
:mod:`~attnlib.grading.wire.mirror`), ``rng`` (the random state after it) and ``seen`` (the
forbidden calls each watch saw), with ``modules`` (what it changed in them) for a built module's
call.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cloudpickle
import torch


@dataclass(frozen=True)
class CallOrder:
    """What one call of the answer needs from the grader, sent as one pickle."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    grads: list[tuple[int, torch.Tensor]]  # (index of the part, its .grad): mirror.grads_of
    step: object  # what a built module is brought to first (grader.stand_in_classes)
    rng: torch.Tensor  # the grader's random state: the call draws what it would draw there
    # Each makes a fresh watch: a context manager whose ``seen`` lists the forbidden calls made
    # inside it (attnlib.checks._calls.CallWatch).
    watches: list[Callable[[], Any]]
    # The crash an error shows in the answer's code (an object with ``to_wire()``), or None
    # (attnlib.checks._crash.crash_of).
    read_crash: Callable[[BaseException], Any]


def pickled(order: CallOrder) -> str:
    """``order`` as the request's ``pickled`` field (the grader's side)."""
    return base64.b64encode(cloudpickle.dumps(order)).decode()


def unpickled(text: str) -> CallOrder:
    """The :class:`CallOrder` in a request's ``pickled`` field. The sandbox's side only: loading
    a pickle runs its code, and only the grader's pickles are loaded."""
    order = pickle.loads(base64.b64decode(text))
    if not isinstance(order, CallOrder):
        raise TypeError(f"a call's pickle holds a {type(order).__name__}, not a CallOrder")
    return order
