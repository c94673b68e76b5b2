"""The grader's side of a class answer: a stand-in class, and copies of the modules it builds.

A checker of a class exercise builds the learner's class, looks at the module (its submodules'
names, shapes and sharing), converts it, loads weights into it, rewires its dropout, and calls
it. Here it gets a stand-in class with the answer's name, docstring and signature. Building it
builds the learner's class in the sandbox (:mod:`attnlib.grading.sandbox.built_modules`) and returns
this process's copy of the module: a module of the same shape, whose submodules are torch's
and attnlib's own classes where the learner's are, and stand-ins named as the learner's
classes elsewhere, with the same parameters, buffers, attributes and training flags. The
checker does to that copy all it does to a module; calling one of the learner's modules sends
what changed since the last call to the sandbox (a new dtype, loaded weights, a dropout put in
its place), calls the module there, and brings back its result and what the call changed.

The module that the class builds always runs in the sandbox, even when it claims to be one of
attnlib's (the learner's class may be attnlib's under another name): only a submodule of a
known class that a checker calls by itself runs here, with torch's or attnlib's code.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from attnlib.grading.grader.across import call_across
from attnlib.grading.grader.channel import Channel
from attnlib.grading.wire.descriptions import known_class, signature_of, simple, simple_attributes
from attnlib.grading.wire.errors import WireError, expect_type_name
from attnlib.grading.wire.values import decode

_Key = tuple[int, str, str]


def _remote_forward(parameters: Any) -> Any:
    def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
        remote, index = self.__dict__["_grading_remote"]
        return remote.call(index, args, kwargs)

    signature = signature_of(parameters)
    if signature is not None:
        forward.__signature__ = signature  # type: ignore[attr-defined]
    return forward


def remote_class(
    channel: Channel, entry: dict[str, Any], base: type, order: dict[str, Any]
) -> type:
    """A class named as the learner's (``entry`` describes it), derived from ``base``, whose
    instances are built in the sandbox (``order`` says which class there) and copied here,
    and whose forward runs the learner's there."""

    def build(cls: type, *args: Any, **kwargs: Any) -> Any:
        def read(reply: dict[str, Any]) -> Any:
            built = reply.get("built")
            if not isinstance(built, dict):
                return None
            handle = built.get("handle")
            if type(handle) is not int:
                raise WireError("a built module without its handle")
            return BuiltModule(channel, handle, decode(built.get("description")), cls).modules[0]

        return call_across(channel, args, kwargs, order={"build": True, **order}, read=read)

    def already_built(self: Any, *args: Any, **kwargs: Any) -> None:
        """Built in the sandbox; its copy here is filled in already."""

    doc = entry.get("doc")
    namespace: dict[str, Any] = {
        "__new__": build,
        "__init__": already_built,
        "__doc__": doc if isinstance(doc, str) else None,
        "__module__": "__main__",
    }
    if issubclass(base, nn.Module):
        namespace["forward"] = _remote_forward(entry.get("forward"))
    signature = signature_of(entry.get("init"))
    if signature is not None:
        namespace["__signature__"] = signature
    return type(expect_type_name(entry.get("class")), (base,), namespace)


class BuiltModule:
    """One module the learner's class built in the sandbox, and this process's copy of it."""

    def __init__(
        self, channel: Channel, handle: int, description: Any, root_class: type | None
    ) -> None:
        self.channel, self.handle = channel, handle
        if not isinstance(description, dict):
            raise WireError("a module described as something else")
        entries, tensors = description.get("modules"), description.get("tensors")
        if not isinstance(entries, list) or not entries or not isinstance(tensors, list):
            raise WireError("a module described without its parts")
        if not all(isinstance(t, torch.Tensor) and type(t) is torch.Tensor for t in tensors):
            raise WireError("a module's tensors that are not plain tensors")
        classes: dict[str, type] = {}
        if root_class is not None:
            classes[expect_type_name(entries[0].get("class"))] = root_class
        self.modules: list[nn.Module] = []
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise WireError("a submodule described as something else")
            known = known_class(entry.get("known")) if index > 0 else None
            cls = known or self._learner_class(entry, index, classes)
            module = object.__new__(cls)
            nn.Module.__init__(module)
            if known is None:
                module.__dict__["_grading_remote"] = (self, index)
            self.modules.append(module)
        made: dict[int, torch.Tensor] = {}
        for module, entry in zip(self.modules, entries, strict=True):
            self._fill(module, entry, tensors, made)
        self._sent: dict[_Key, tuple[Any, ...]] = {}
        self._children: dict[tuple[int, str], int | None] = {}
        self._attributes: dict[tuple[int, str], Any] = {}
        self._settle()

    def _learner_class(self, entry: dict[str, Any], index: int, classes: dict[str, type]) -> type:
        name = expect_type_name(entry.get("class"))
        if name not in classes:
            base = known_class(entry.get("known")) or known_class(entry.get("base"))
            order = {"class_of": [self.handle, index]}
            classes[name] = remote_class(self.channel, entry, base or nn.Module, order)
        return classes[name]

    def _fill(
        self,
        module: nn.Module,
        entry: dict[str, Any],
        tensors: list[torch.Tensor],
        made: dict[int, torch.Tensor],
    ) -> None:
        def tensor(at: Any, parameter: bool = False, requires_grad: bool = False) -> torch.Tensor:
            if type(at) is not int or not 0 <= at < len(tensors):
                raise WireError(f"no tensor {at!r}")
            if at not in made:
                made[at] = nn.Parameter(tensors[at], requires_grad) if parameter else tensors[at]
            return made[at]

        for name, value in dict(entry.get("attributes") or {}).items():
            if isinstance(name, str) and simple(value):
                module.__dict__[name] = value
        for kind, name, at, requires_grad in entry.get("tensors") or []:
            if kind == "parameter":
                module._parameters[str(name)] = tensor(at, True, bool(requires_grad))  # type: ignore[assignment]
            else:
                module._buffers[str(name)] = tensor(at)
        for name, at in entry.get("plain") or []:
            module.__dict__[str(name)] = tensor(at)
        for name, child in entry.get("children") or []:
            if child is not None and (type(child) is not int or not 0 <= child < len(self.modules)):
                raise WireError(f"no submodule {child!r}")
            module._modules[str(name)] = None if child is None else self.modules[child]
        module.training = bool(entry.get("training", True))

    # -- keeping the sandbox's module in step ------------------------------------------------

    def _slots(self) -> dict[_Key, torch.Tensor]:
        return {
            (i, kind, name): t
            for i, module in enumerate(self.modules)
            for kind, held in (("parameter", module._parameters), ("buffer", module._buffers))
            for name, t in held.items()
            if t is not None
        }

    @staticmethod
    def _where(tensor: torch.Tensor) -> tuple[Any, ...]:
        return (id(tensor), tensor._version, tensor.data_ptr(), tensor.dtype, tensor.shape)

    def _settle(self) -> None:
        """Take what this copy holds now as what the sandbox's module holds."""
        self._sent = {key: self._where(t) for key, t in self._slots().items()}
        index = {id(m): i for i, m in enumerate(self.modules)}
        self._children = {
            (i, name): None if child is None else index[id(child)]
            for i, module in enumerate(self.modules)
            for name, child in module._modules.items()
        }
        self._attributes = {
            (i, name): value
            for i, module in enumerate(self.modules)
            for name, value in simple_attributes(module).items()
        }

    def _step(self) -> dict[str, Any]:
        """What the checker changed in this copy since the sandbox's module was last like it."""
        index = {id(m): i for i, m in enumerate(self.modules)}
        new: list[list[Any]] = []
        position = 0
        while position < len(self.modules):
            for child in list(self.modules[position]._modules.values()):
                if child is not None and id(child) not in index:
                    new.append(self._take_in(child, index))
            position += 1
        children = []
        for i, module in enumerate(self.modules):
            for name, child in module._modules.items():
                now = None if child is None else index[id(child)]
                if self._children.get((i, name), -1) != now:
                    children.append([i, name, now])
        tensors = [
            [i, kind, name, t.detach()]
            for (i, kind, name), t in self._slots().items()
            if self._sent.get((i, kind, name)) != self._where(t)
        ]
        attributes = [
            [i, name, value]
            for i, module in enumerate(self.modules)
            for name, value in simple_attributes(module).items()
            if (i, name) not in self._attributes or self._attributes[i, name] != value
        ]
        training = [bool(m.training) for m in self.modules]
        self._settle()
        return {
            "new": new,
            "children": children,
            "training": training,
            "tensors": tensors,
            "attributes": attributes,
        }

    def _take_in(self, module: nn.Module, index: dict[int, int]) -> list[Any]:
        """A module the checker put in (a fixed dropout, say), to go over whole."""
        inside = []
        for path, sub in module.named_modules():
            if "_grading_remote" in sub.__dict__ or (path and id(sub) in index):
                raise ValueError("a module that holds the learner's cannot go to the sandbox")
            index[id(sub)] = len(self.modules)
            self.modules.append(sub)
            if path:
                inside.append([path, index[id(sub)]])
        return [index[id(module)], module, inside]

    def _read(self, reply: dict[str, Any]) -> None:
        """Bring back what the call changed in the sandbox's module."""
        changed = decode(reply.get("modules", {"dict": []}))
        if not isinstance(changed, dict):
            raise WireError("a module's changes that are not a dict")
        slots = self._slots()
        for key in changed.get("tensors", []):
            index, kind, name, value = key
            held = slots.get((index, kind, name))
            if held is None or type(value) is not torch.Tensor:
                raise WireError(f"a change to no tensor: {index!r} {kind!r} {name!r}")
            with torch.no_grad():
                if value.shape == held.shape and value.dtype == held.dtype:
                    held.copy_(value)
                else:
                    held.data = value
        for module, training in zip(self.modules, changed.get("training", []), strict=False):
            module.training = bool(training)
        self._settle()

    def call(self, index: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``modules[index](*args, **kwargs)``, in the sandbox."""
        return call_across(
            self.channel,
            args,
            kwargs,
            order={"on": [self.handle, index]},
            step=self._step(),
            read=self._read,
        )


def stand_in_class(channel: Channel, description: dict[str, Any]) -> type:
    """What the checker gets in place of a class :func:`~answering.describe` described: a
    class whose instances are built in the sandbox and copied here."""
    base = known_class(description.get("base")) or (
        nn.Module if description.get("module") else object
    )
    entry = {
        "class": description.get("name"),
        "doc": description.get("own_doc"),
        "forward": description.get("forward"),
        "init": description.get("parameters"),
    }
    return remote_class(channel, entry, base, {})
