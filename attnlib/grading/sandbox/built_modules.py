"""The sandbox's side of a class answer: the modules the learner's class builds, kept in step
with the grader's copies of them.

When a checker builds the learner's class (``MyEncoderLayer(8, 2, 16, 0.1)``), the module is
built here, in the sandbox, and kept; the grader gets a description of it as data
(:func:`describe`): every submodule once, by index, with its class, parameters, buffers, plain
tensors, simple attributes and children. From that the grader builds a module of its own of the
same shape (:mod:`attnlib.grading.grader.stand_in_classes`), which the checker inspects, converts,
loads weights into and rewires as it would the learner's. Each time the checker calls one of
the learner's modules, the grader sends what it changed since the last call
(:func:`bring_in_step`) and the sandbox calls the module here; what that call changed in the
module's tensors goes back (:func:`changed_since`).

Everything here runs beside the learner's code: the grader reads nothing of it but data.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from attnlib.grading.wire.descriptions import (
    is_known,
    parameters_of,
    qualified_name,
    simple_attributes,
)


def known_base(cls: type) -> str | None:
    """The first class of torch's or attnlib's in ``cls``'s ancestry, by name."""
    for ancestor in cls.__mro__:
        if is_known(ancestor) and issubclass(ancestor, nn.Module):
            return qualified_name(ancestor)
    return None


def own_doc(cls: type) -> str | None:
    """The class's own docstring (not one it inherits from ``nn.Module``)."""
    doc = cls.__dict__.get("__doc__")
    return doc if isinstance(doc, str) else None


def forward_parameters(cls: type) -> list[list[Any]] | None:
    """The parameters of ``cls.forward`` (``self`` included), as :func:`describe` lists them."""
    return parameters_of(getattr(cls, "forward", None))


def init_parameters(cls: type) -> list[list[Any]] | None:
    """The parameters that building ``cls`` takes."""
    return parameters_of(cls)


@dataclass
class Built:
    """One module the learner's class built, and its submodules by index."""

    root: nn.Module
    modules: list[nn.Module] = field(default_factory=list)


def _tensor_slots(module: nn.Module) -> list[tuple[str, str, torch.Tensor]]:
    """(kind, name, tensor) of what the grader keeps in step: parameters and buffers."""
    slots = [("parameter", n, t) for n, t in module._parameters.items() if t is not None]
    slots += [("buffer", n, t) for n, t in module._buffers.items() if t is not None]
    return slots


def describe(root: nn.Module) -> tuple[Built, dict[str, Any]]:
    """Keep ``root``; describe it and every submodule, each once, by index (the root's is 0)."""
    built = Built(root)
    index: dict[int, int] = {}
    tensors: list[torch.Tensor] = []
    tensor_index: dict[int, int] = {}

    def tensor_at(tensor: torch.Tensor) -> int:
        if id(tensor) not in tensor_index:
            tensor_index[id(tensor)] = len(tensors)
            tensors.append(tensor.detach())
        return tensor_index[id(tensor)]

    def visit(module: nn.Module) -> int:
        if id(module) in index:
            return index[id(module)]
        index[id(module)] = len(built.modules)
        built.modules.append(module)
        return index[id(module)]

    visit(root)
    described = []
    position = 0
    while position < len(built.modules):  # breadth first; visit() appends as it finds
        module = built.modules[position]
        cls = type(module)
        plain = [
            [name, tensor_at(value)]
            for name, value in vars(module).items()
            if isinstance(value, torch.Tensor) and not name.startswith("_")
        ]
        children = [
            [name, None if child is None else visit(child)]
            for name, child in module._modules.items()
        ]
        described.append(
            {
                "class": cls.__name__,
                "known": qualified_name(cls) if is_known(cls) else None,
                "base": known_base(cls),
                "doc": own_doc(cls),
                "forward": None if is_known(cls) else forward_parameters(cls),
                "init": None if is_known(cls) else init_parameters(cls),
                "training": bool(module.training),
                "tensors": [
                    [kind, name, tensor_at(t), bool(t.requires_grad)]
                    for kind, name, t in _tensor_slots(module)
                ],
                "plain": plain,
                "children": children,
                "attributes": simple_attributes(module),
            }
        )
        position += 1
    return built, {"modules": described, "tensors": tensors}


def bring_in_step(built: Built, step: dict[str, Any]) -> None:
    """Make the kept module what the grader's copy is now (``step`` comes from the grader).

    ``step`` holds ``new``: modules the grader put in (``[index, module, [[path, index]…]]``);
    ``children``: ``[index, name, child index or None]``; ``training``: a flag per index;
    ``tensors``: ``[index, kind, name, tensor]``; ``attributes``: ``[index, name, value]``.
    """
    for index, module, inside in step.get("new", []):
        _place(built, index, module)
        for path, sub_index in inside:
            _place(built, sub_index, module.get_submodule(path))
    for index, name, child in step.get("children", []):
        setattr(built.modules[index], name, None if child is None else built.modules[child])
    for index, training in enumerate(step.get("training", [])):
        if index < len(built.modules):
            built.modules[index].training = bool(training)
    for index, kind, name, tensor in step.get("tensors", []):
        module = built.modules[index]
        slots = module._parameters if kind == "parameter" else module._buffers
        held = slots.get(name)
        if isinstance(held, torch.Tensor):
            held.data = tensor  # the same object: what shares it sees the new values
        elif kind == "parameter":
            slots[name] = nn.Parameter(tensor)
        else:
            slots[name] = tensor
    for index, name, value in step.get("attributes", []):
        setattr(built.modules[index], name, value)


def _place(built: Built, index: int, module: nn.Module) -> None:
    while len(built.modules) <= index:
        built.modules.append(nn.Module())
    built.modules[index] = module


def versions(built: Built) -> dict[tuple[int, str, str], tuple[int, int, int]]:
    """Where each kept tensor stands now, to tell afterwards what a call changed."""
    return {
        (i, kind, name): (id(t), t._version, t.data_ptr())
        for i, module in enumerate(built.modules)
        for kind, name, t in _tensor_slots(module)
    }


def changed_since(
    built: Built, before: dict[tuple[int, str, str], tuple[int, int, int]]
) -> dict[str, Any]:
    """What a call changed in the kept modules: ``tensors`` ``[index, kind, name, tensor]``
    and each module's ``training`` flag."""
    now = versions(built)
    tensors = []
    for key, where in now.items():
        if before.get(key) != where:
            index, kind, name = key
            module = built.modules[index]
            slots = module._parameters if kind == "parameter" else module._buffers
            tensors.append([index, kind, name, slots[name].detach()])
    return {"tensors": tensors, "training": [bool(m.training) for m in built.modules]}
