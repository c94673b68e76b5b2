"""Notice when a learner's answer calls the implementation its exercise asks for.

A wrapper around ``attnlib.softmax`` passes every case of a softmax checker and teaches
nothing. While the learner's code runs, :class:`CallWatch` listens with ``sys.setprofile``
for calls of the forbidden functions: Python functions (attnlib's, or a module's ``forward``)
by their code object, torch's built-in functions and tensor methods by name
(``torch.softmax``, ``x.softmax``, ``F.scaled_dot_product_attention``). Aliases, partials,
lambdas and subclasses all end in the same code, so they are seen too.

This guards an honest learner's shortcut, not a grade: code that wants to can switch the
watch off (``sys.setprofile(None)``). When grading, the answer runs in another process
(:mod:`attnlib.grading`): a watch there listens to its calls, and what it saw comes back with
each result (:func:`watching` tells that process what to listen for).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import torch


@dataclass(frozen=True)
class Forbidden:
    """What an answer may not call. ``python`` maps functions, methods or classes to how a
    report names them; ``torch`` maps names of torch built-ins and tensor methods likewise."""

    python: dict[Callable[..., Any] | type, str] = field(default_factory=dict)
    torch: dict[str, str] = field(default_factory=dict)

    def codes(self) -> dict[CodeType, str]:
        found: dict[CodeType, str] = {}
        for target, label in self.python.items():
            for function in _functions_of(target):
                code = getattr(inspect.unwrap(function), "__code__", None)
                if code is not None:
                    found[code] = label
        return found

    def __bool__(self) -> bool:
        return bool(self.python or self.torch)

    def by_path(self) -> dict[str, dict[str, str]]:
        """The same list as data, for another process: each function or class by its
        ``module:qualified.name``, each torch name as it is."""
        python = {f"{t.__module__}:{t.__qualname__}": label for t, label in self.python.items()}
        return {"python": python, "torch": dict(self.torch)}

    @classmethod
    def from_paths(cls, paths: dict[str, dict[str, str]]) -> Forbidden:
        """The list :meth:`by_path` wrote, with each path imported again; a path that does not
        name a function or a class is an error."""
        python = {_imported(path): label for path, label in paths.get("python", {}).items()}
        return cls(python=python, torch=dict(paths.get("torch", {})))


NOTHING = Forbidden()


def _imported(path: str) -> Callable[..., Any] | type:
    module_name, _, qualname = path.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    if not (callable(found) or isinstance(found, type)):
        raise TypeError(f"{path} names neither a function nor a class")
    return found


def _functions_of(target: Callable[..., Any] | type) -> Iterable[Callable[..., Any]]:
    """A class stands for the methods it defines itself (its ``forward``, ``__call__``…)."""
    if isinstance(target, type):
        return [v for v in vars(target).values() if inspect.isfunction(v)]
    return [target]


def _is_torch_builtin(function: object) -> bool:
    owner = getattr(function, "__self__", None)
    module = getattr(function, "__module__", None) or getattr(owner, "__name__", None) or ""
    return isinstance(owner, torch.Tensor) or str(module).startswith("torch")


class CallWatch:
    """A context manager that records forbidden calls made inside it, in ``seen``."""

    def __init__(self, forbidden: Forbidden) -> None:
        self.forbidden = forbidden
        self._codes = forbidden.codes()
        self._names = dict(forbidden.torch)
        self.seen: list[str] = []
        self._previous: Any = None

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            label = self._codes.get(frame.f_code)
            if label is not None:
                self.seen.append(label)
        elif event == "c_call":
            label = self._names.get(getattr(arg, "__name__", ""))
            if label is not None and _is_torch_builtin(arg):
                self.seen.append(label)
        if self._previous is not None:  # a profiler that was already running keeps running
            self._previous(frame, event, arg)

    def __enter__(self) -> CallWatch:
        _WATCHES.append(self)
        if self._codes or self._names:
            self._previous = sys.getprofile()
            sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._codes or self._names:
            sys.setprofile(self._previous)
        _WATCHES.remove(self)


# The watches open now, innermost last.
_WATCHES: list[CallWatch] = []


def watching() -> list[CallWatch]:
    """The watches open now: an answer that runs in another process asks that process to
    listen for what they forbid, and adds what it saw to their ``seen``."""
    return list(_WATCHES)
