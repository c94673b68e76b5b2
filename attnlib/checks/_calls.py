"""Notice when a learner's answer calls the implementation its exercise asks for.

A wrapper around ``attnlib.softmax`` passes every case of a softmax checker and teaches
nothing. While the learner's code runs, :class:`CallWatch` listens in two places:

- with ``sys.setprofile``, for calls of the forbidden functions as the learner wrote them:
  Python functions (attnlib's, scipy's, or a module's ``forward``) by their code object, and
  torch's built-in functions, tensor methods and ``torch.ops`` operators by name
  (``torch.softmax``, ``x.softmax``, ``torch.special.softmax``, ``torch.ops.aten._softmax``).
  Aliases, partials, lambdas and subclasses all end in the same code, so they are seen too;
- with a ``TorchDispatchMode``, for the ATen operators that run (``aten._softmax``), whatever
  Python name, composite function (``F.cross_entropy`` runs ``aten._log_softmax``), TorchScript
  or autograd reached them. Only checks whose list names operators pay for it.

A report names the outermost forbidden call only, which is the one the learner typed (a call
of ``torch.special.softmax`` runs ``aten._softmax``, which is not named again).

This guards an honest learner's shortcut, not a grade: code that wants to can switch the
watch off (``sys.setprofile(None)``), run work in another thread, or copy the implementation's
code. When grading, the answer runs in another process (:mod:`attnlib.grading`): a watch there
listens to its calls, and what it saw comes back with each result (:func:`watching` tells that
process what to listen for).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

Target = Callable[..., Any] | type


@dataclass(frozen=True)
class Forbidden:
    """What an answer may not call, each entry with how a report names it.

    ``python``: functions, methods or classes. ``torch``: names of torch built-ins, tensor
    methods and ``torch.ops`` operators as Python calls them (``"special_softmax"``). ``ops``:
    ATen operators by their packet name (``"_softmax"``), seen wherever they run. ``paths``:
    functions or classes by ``"module:qualified.name"``, for those a checker does not import
    itself (scipy's; a module's private helper): watched once their module is imported, by
    attnlib or by the answer, and skipped where it is not installed.
    """

    python: dict[Target, str] = field(default_factory=dict)
    torch: dict[str, str] = field(default_factory=dict)
    ops: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)

    def __or__(self, other: Forbidden) -> Forbidden:
        """Both lists in one (``SOFTMAX | LOG_SOFTMAX``)."""
        return Forbidden(
            python={**self.python, **other.python},
            torch={**self.torch, **other.torch},
            ops={**self.ops, **other.ops},
            paths={**self.paths, **other.paths},
        )

    def __bool__(self) -> bool:
        return bool(self.python or self.torch or self.ops or self.paths)

    def labels(self) -> set[str]:
        """Every name a report of this list may give."""
        entries = (self.python, self.torch, self.ops, self.paths)
        return {label for entry in entries for label in entry.values()}

    def codes(self) -> dict[CodeType, str]:
        """The code objects of the ``python`` entries, with their labels."""
        return _codes_of(self.python)

    def by_path(self) -> dict[str, dict[str, str]]:
        """The same list as plain data, for another process: each function or class by its
        ``module:qualified.name``, each name and path as it is."""
        python = {f"{t.__module__}:{t.__qualname__}": label for t, label in self.python.items()}
        return {
            "python": python,
            "torch": dict(self.torch),
            "ops": dict(self.ops),
            "paths": dict(self.paths),
        }

    @classmethod
    def from_paths(cls, paths: Mapping[str, Mapping[str, str]]) -> Forbidden:
        """The list :meth:`by_path` wrote, with each ``python`` path imported again (one whose
        module is not installed here is left out; one that names neither a function nor a
        class is an error). ``paths`` entries stay paths: the watch imports nothing."""
        python = {}
        for path, label in paths.get("python", {}).items():
            found = _imported(path)
            if found is not None:
                python[found] = label
        return cls(
            python=python,
            torch=dict(paths.get("torch", {})),
            ops=dict(paths.get("ops", {})),
            paths=dict(paths.get("paths", {})),
        )


NOTHING = Forbidden()


def _imported(path: str) -> Target | None:
    module_name, _, qualname = path.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
    except ModuleNotFoundError:  # a library this machine does not have: nothing to call
        return None
    for part in qualname.split("."):
        found = getattr(found, part)
    if not (callable(found) or isinstance(found, type)):
        raise TypeError(f"{path} names neither a function nor a class")
    return found


def _attribute(module: object, qualname: str) -> Target | None:
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if callable(found) or isinstance(found, type) else None


def _being_imported(module: object) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _functions_of(target: Target) -> Iterable[Callable[..., Any]]:
    """A class stands for the methods it defines itself (its ``forward``, ``__call__``…)."""
    if isinstance(target, type):
        return [v for v in vars(target).values() if inspect.isfunction(v)]
    return [target]


def _codes_of(targets: Mapping[Target, str]) -> dict[CodeType, str]:
    """The code of each target's functions: a decorated function's own, not its decorator's
    (``torch.no_grad()``'s wrapper is the same code for every function it decorates)."""
    found: dict[CodeType, str] = {}
    for target, label in targets.items():
        for function in _functions_of(target):
            code = getattr(inspect.unwrap(function), "__code__", None)
            if isinstance(code, CodeType):
                found[code] = label
    return found


def _is_torch_builtin(function: object) -> bool:
    owner = getattr(function, "__self__", None)
    if isinstance(owner, torch.Tensor):
        return True
    module = (
        getattr(function, "__module__", None)
        or getattr(owner, "__name__", None)
        or type(owner).__module__  # the autograd engine's run_backward, say
    )
    return str(module).startswith("torch")


# A call of a torch.ops operator (torch.ops.aten._softmax, or its .default) runs one of these.
_OPERATOR_CALLS = frozenset(
    {torch._ops.OpOverload.__call__.__code__, torch._ops.OpOverloadPacket.__call__.__code__}
)


def _operator_name(frame: FrameType) -> str:
    """The packet name (``"_softmax"``) of the operator a frame of ``_OPERATOR_CALLS`` calls."""
    operator = frame.f_locals.get("self")
    return str(getattr(getattr(operator, "_overloadpacket", operator), "__name__", ""))


class _OperatorWatch(TorchDispatchMode):
    """Records the forbidden ATen operators that run while it is on, for its :class:`CallWatch`.

    Every operator of the answer's call passes through here, so this does as little as it can:
    no Python call but the operator's own (each would also be an event for the profiler).
    """

    def __init__(self, watch: CallWatch) -> None:
        super().__init__()
        self.watch = watch

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch would wrap __torch_dispatch__ to keep torch.compile out of it: five Python
        # calls around every operator, more than the operator itself costs on a check's tensors.
        return False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        watch = self.watch
        name = func._overloadpacket.__name__  # "_softmax" of aten._softmax.default
        if watch._open is not None or name not in watch._ops:  # allowed, or seen already
            return func._op(*args, **(kwargs or {}))  # what func(...) does, one call shorter
        watch.seen.append(watch._ops[name])
        watch._open = (None, self)
        try:
            return func._op(*args, **(kwargs or {}))
        finally:
            watch._open = None


class CallWatch:
    """A context manager that records forbidden calls made inside it, in ``seen``. On leaving,
    the profiler is again the one it found, and its dispatch mode is off, with any mode the code
    inside left on above it."""

    def __init__(self, forbidden: Forbidden) -> None:
        self.forbidden = forbidden
        self._codes = forbidden.codes()
        self._pending = dict(forbidden.paths)  # paths whose module is not imported yet
        self._modules = 0  # len(sys.modules) when the pending paths were last looked up
        self._look_up_pending()
        self._names = dict(forbidden.torch)
        self._ops = dict(forbidden.ops)
        self.seen: list[str] = []
        # The outermost forbidden call being made: (its frame, None) for Python code, (the
        # calling frame, the built-in) for a built-in, (None, the mode) for an operator.
        self._open: tuple[object, object] | None = None
        self._previous: Any = None
        self._profiling = bool(self._codes or self._names or self._pending)
        self._mode: _OperatorWatch | None = None
        self._depth = 0

    def _look_up_pending(self) -> None:
        """Take in the pending paths whose module is imported (nothing is imported here). A
        module still running its own code is looked at again at the next call; a path its
        finished module does not hold (another version of the library) is dropped."""
        settled, found = True, {}
        for path, label in list(self._pending.items()):
            module_name, _, qualname = path.partition(":")
            module = sys.modules.get(module_name)
            if module is None:
                continue
            if _being_imported(module):
                settled = False
                continue
            del self._pending[path]
            target = _attribute(module, qualname)
            if target is not None:
                found[target] = label
        self._modules = len(sys.modules) if settled else -1
        self._codes.update(_codes_of(found))

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if self._open is None:
            if event == "call":
                self._on_call(frame)
            elif event == "c_call":
                label = self._names.get(getattr(arg, "__name__", ""))
                if label is not None and _is_torch_builtin(arg):
                    self.seen.append(label)
                    self._open = (frame, arg)
        elif event in ("return", "c_return", "c_exception"):
            opened_by, callee = self._open
            if opened_by is frame and callee is (None if event == "return" else arg):
                self._open = None
        if self._previous is not None:  # a profiler that was already running keeps running
            self._previous(frame, event, arg)

    def _on_call(self, frame: FrameType) -> None:
        if self._pending and len(sys.modules) != self._modules:  # the answer imported some
            self._look_up_pending()
        code = frame.f_code
        label = self._codes.get(code)
        if label is None and self._names and code in _OPERATOR_CALLS:
            label = self._names.get(_operator_name(frame))
        if label is not None:
            self.seen.append(label)
            self._open = (frame, None)

    def __enter__(self) -> CallWatch:
        _WATCHES.append(self)
        if self._profiling:
            self._previous = sys.getprofile()
            sys.setprofile(self._profile)
        if self._ops:
            self._depth = torch._C._len_torch_dispatch_stack()
            self._mode = _OperatorWatch(self)
            self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._mode is not None:
            _leave_dispatch_mode(self._mode, self._depth)
            self._mode = None
        if self._profiling:
            sys.setprofile(self._previous)
        _WATCHES.remove(self)


def _leave_dispatch_mode(mode: TorchDispatchMode, depth: int) -> None:
    """Take ``mode`` off torch's stack of dispatch modes, with any mode the code inside left on
    above it, so that the stack is again ``depth`` deep."""
    while torch._C._len_torch_dispatch_stack() > depth:
        top = torch._C._get_dispatch_stack_at(torch._C._len_torch_dispatch_stack() - 1)
        if top is mode:
            mode.__exit__(None, None, None)
        else:
            torch._C._pop_torch_dispatch_stack(None)


# The watches open now, innermost last.
_WATCHES: list[CallWatch] = []


def watching() -> list[CallWatch]:
    """The watches open now: an answer that runs in another process asks that process to
    listen for what they forbid, and adds what it saw to their ``seen``."""
    return list(_WATCHES)
