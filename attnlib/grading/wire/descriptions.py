"""How the sandbox describes the learner's answer, and the modules its class builds, as data the
grader reads: signatures as lists, classes both sides have by their qualified names, and the
plain values of attributes.

The sandbox writes a description (:mod:`~attnlib.grading.sandbox.answering`,
:mod:`~attnlib.grading.sandbox.built_modules`); the grader reads it into stand-ins
(:mod:`~attnlib.grading.grader.stand_ins`, :mod:`~attnlib.grading.grader.stand_in_classes`).
Reading trusts nothing: a parameter, a class's name or an attribute that is not of the form
written here is a :class:`~attnlib.grading.wire.errors.WireError`, or left out.

Part of the grader of notebooks 00–12 (:mod:`attnlib.grading`).
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import torch
from torch import nn

from attnlib.grading.wire.errors import WireError

# Classes both sides have, by name, so a submodule of one of them is that class on each side.
KNOWN_PACKAGES = ("torch.", "attnlib.")
_SIMPLE = (bool, int, float, str, type(None), torch.dtype)


def qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def is_known(cls: type) -> bool:
    """A class of torch's or attnlib's own (not one defined in a notebook)."""
    module = cls.__module__ or ""
    return module.startswith(KNOWN_PACKAGES) and "<locals>" not in cls.__qualname__


def known_class(name: Any) -> type[nn.Module] | None:
    """torch's or attnlib's module class of this qualified name, if this process has it
    (already imported: a name from the sandbox never imports anything here)."""
    if not isinstance(name, str) or not name.startswith(KNOWN_PACKAGES):
        return None
    module_name, _, rest = name.rpartition(".")
    found: Any = None
    while module_name:  # "torch.nn.modules.linear.Linear", or a nested class's path
        if module_name in sys.modules:
            found = sys.modules[module_name]
            for part in rest.split("."):
                found = getattr(found, part, None)
            break
        module_name, _, last = module_name.rpartition(".")
        rest = f"{last}.{rest}"
    if isinstance(found, type) and issubclass(found, nn.Module):
        return found
    return None


def simple(value: object) -> bool:
    """Plain data that a module's attribute holds and the grader may copy: numbers, strings,
    dtypes, and tuples or lists of them."""
    if isinstance(value, _SIMPLE):
        return True
    if type(value) in (tuple, list):
        return len(value) <= 64 and all(simple(v) for v in value)
    return False


def simple_attributes(module: nn.Module) -> dict[str, Any]:
    """A module's public attributes that hold plain data (:func:`simple`)."""
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_") and name != "training" and simple(value)
    }


def parameters_of(function: object) -> list[list[Any]] | None:
    """``[name, kind, has a default]`` for each parameter of ``function``, or None when it
    has no signature to read."""
    try:
        signature = inspect.signature(function)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return [
        [p.name, int(p.kind), p.default is not inspect.Parameter.empty]
        for p in signature.parameters.values()
    ]


def signature_of(parameters: list[list[Any]] | None) -> inspect.Signature | None:
    """The signature a :func:`parameters_of` list stands for; defaults are None, as their values
    stay in the sandbox."""
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
