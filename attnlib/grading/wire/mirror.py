"""What a call did to its arguments, carried back from the sandbox as data.

A checker may hand the learner's answer more than tensors: a model and its optimizer, a
function to differentiate, a spy that records how it is called. These go to the sandbox in the
grader's one pickle (:mod:`~attnlib.grading.wire.calls`), so that objects shared between
arguments stay shared there. After the call, the sandbox reports what became of them as plain
data, and the grader's own copies are made to match: every tensor's values, ``requires_grad``
and ``.grad``; each optimizer's state; lists, and the plain data (numbers, strings, tensors,
lists of them) of objects of the checkers' own classes, reached through functions' closures
and modules' hooks too, where spies keep their records.

Both sides list the arguments' parts with :func:`parts`, which walks the object graph in one
fixed order, so the n-th part here is the n-th part there.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import contextlib
import types
from typing import Any

import torch
from torch import nn

# Objects whose plain attributes are mirrored back: the checkers' own helpers (spies, toy
# models). Others' objects (torch's, the learner's) are walked only for their tensors.
_MIRRORED_MODULES = ("attnlib.checks",)


def _same_bits(before: torch.Tensor, after: torch.Tensor) -> bool:
    """The same shape, dtype and bytes: a change is sent back whatever its values compare as
    (NaN to NaN, -0.0 to 0.0)."""
    if before.shape != after.shape or before.dtype != after.dtype:
        return False
    return torch.equal(_bytes_of(before), _bytes_of(after))


def _bytes_of(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().reshape(-1).contiguous().view(torch.uint8)


def _mirrored(value: object) -> bool:
    module = type(value).__module__ or ""
    return module.startswith(_MIRRORED_MODULES)


def _is_data(value: object) -> bool:
    """Numbers, strings, tensors, and lists or tuples of them: what goes back as it is."""
    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor)):
        return True
    if type(value) in (list, tuple):
        return all(_is_data(v) for v in value)
    return False


def _same_items(a: list[object], b: list[object]) -> bool:
    return len(a) == len(b) and all(
        x is y or (_plain(x) and x == y) for x, y in zip(a, b, strict=True)
    )


def _plain(value: object) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def parts(root: object) -> list[object]:
    """Every tensor, list and mirrored object reachable from ``root``, each once, in a fixed
    order (depth first, attributes in their dict order)."""
    seen: set[int] = set()
    found: list[object] = []

    def visit(value: object) -> None:
        if id(value) in seen or value is None or isinstance(value, (bool, int, float, str)):
            return
        seen.add(id(value))
        if isinstance(value, (torch.Tensor, torch.Generator)):
            found.append(value)
            return
        if isinstance(value, (list, tuple)):
            if isinstance(value, list):
                found.append(value)
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, nn.Module):
            for item in (value._parameters, value._buffers, value._modules):
                visit(item)
            # A checker's hooks (a counter of backward passes) keep records to mirror.
            for hooks in (value._forward_pre_hooks, value._forward_hooks):
                visit(list(hooks.values()))
            if _mirrored(value):
                found.append(value)
        elif isinstance(value, torch.optim.Optimizer):
            visit(value.param_groups)
            found.append(value)
        elif isinstance(value, types.FunctionType):
            for cell in value.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    visit(cell.cell_contents)
        elif isinstance(value, types.MethodType):
            visit(value.__self__)
        elif _mirrored(value) and hasattr(value, "__dict__"):
            found.append(value)
            for item in vars(value).values():
                visit(item)

    visit(root)
    return found


def grads_of(found: list[object]) -> list[tuple[int, torch.Tensor]]:
    """The ``.grad`` of each tensor part that holds one, by index (a pickle drops them)."""
    return [
        (i, part.grad)
        for i, part in enumerate(found)
        if isinstance(part, torch.Tensor) and part.grad is not None
    ]


def set_grads(found: list[object], grads: list[tuple[int, torch.Tensor]]) -> None:
    for index, grad in grads:
        part = found[index]
        if isinstance(part, torch.Tensor):
            part.grad = grad


def snapshot(part: object) -> object:
    """What to compare with after the call."""
    if isinstance(part, torch.Tensor):
        return (part.detach().clone(), part.requires_grad, part.grad)
    if isinstance(part, torch.Generator):
        return part.get_state()
    if isinstance(part, torch.optim.Optimizer):
        return None  # its state after the call is sent whole
    if isinstance(part, list):
        return list(part)
    return {k: v for k, v in vars(part).items() if _is_data(v)}


def changes(found: list[object], before: list[object]) -> list[list[Any]]:
    """[index, what it holds now] for each part the call changed: for a tensor its values (or
    None when unchanged), ``requires_grad`` and ``.grad``; for a list its items; for an object
    its plain attributes."""
    changed: list[list[Any]] = []
    for index, (part, was) in enumerate(zip(found, before, strict=True)):
        if isinstance(part, torch.Tensor):
            values, requires_grad, grad = was  # type: ignore[misc]
            same = _same_bits(values, part)
            if same and requires_grad == part.requires_grad and grad is part.grad:
                continue
            new = None if same else part.detach().clone()
            changed.append([index, {"tensor": [new, part.requires_grad, part.grad]}])
        elif isinstance(part, torch.Generator):
            state = part.get_state()
            if not torch.equal(state, was):  # type: ignore[arg-type]
                changed.append([index, {"generator": state}])
        elif isinstance(part, torch.optim.Optimizer):
            changed.append([index, {"optimizer": part.state_dict()}])
        elif isinstance(part, list):
            if _is_data(part) and not _same_items(part, was):  # type: ignore[arg-type]
                changed.append([index, {"list": list(part)}])
        else:
            now = {k: v for k, v in vars(part).items() if _is_data(v)}
            if now.keys() != was.keys() or not _same_items(list(now.values()), list(was.values())):  # type: ignore[attr-defined]
                changed.append([index, {"attributes": now}])
    return changed


def apply(found: list[object], changed: list[list[Any]]) -> None:
    """Make the grader's parts hold what the sandbox's parts held after the call."""
    for index, change in changed:
        if not isinstance(index, int) or not 0 <= index < len(found):
            raise ValueError(f"a change to part {index!r}, of {len(found)}")
        part = found[index]
        if isinstance(part, torch.Tensor) and "tensor" in change:
            values, requires_grad, grad = change["tensor"]
            with torch.no_grad():
                if isinstance(values, torch.Tensor):
                    if values.shape == part.shape and values.dtype == part.dtype:
                        part.copy_(values)
                    else:
                        part.data = values
            if part.is_leaf:
                if bool(requires_grad) != part.requires_grad:
                    part.requires_grad_(bool(requires_grad))
                part.grad = grad if isinstance(grad, torch.Tensor) else None
        elif isinstance(part, torch.Generator) and "generator" in change:
            part.set_state(change["generator"])
        elif isinstance(part, torch.optim.Optimizer) and "optimizer" in change:
            part.load_state_dict(change["optimizer"])
        elif isinstance(part, list) and "list" in change:
            part[:] = list(change["list"])
        elif "attributes" in change and isinstance(change["attributes"], dict):
            for name, value in change["attributes"].items():
                if isinstance(name, str) and name in vars(part) and _is_data(value):
                    setattr(part, name, value)
        else:
            raise ValueError(f"a change of the wrong kind to part {index}")
