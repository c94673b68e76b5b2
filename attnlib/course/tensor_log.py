"""Watching a computation: every torch operation it calls, what it makes and what it moves.

Inside ``with TensorLog() as log:`` PyTorch hands each torch operation to the log first
(``torch.overrides.TorchFunctionMode``), which runs it and records the shape of the tensor
it returns and how many numbers it read and wrote. Notebook 12 uses it to check that tiled
attention never builds a ``T × T`` matrix, and to count the memory traffic of each way of
attending.

Notebook 12.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
from torch.overrides import TorchFunctionMode

# Operations that return a view (or uninitialised memory): they copy no numbers.
COPY_FREE: frozenset[str] = frozenset(
    {"__getitem__", "detach", "empty", "expand", "reshape", "transpose", "view"}
)


class LoggedOp(NamedTuple):
    """One torch operation: its name, the shape it returned, numbers read plus written."""

    name: str
    shape: tuple[int, ...]
    numbers_moved: int


class TensorLog(TorchFunctionMode):
    """Records every torch operation that returns a tensor and is not a view.

    ``numbers_moved`` counts each tensor argument's elements once (read) and the result's
    once (written): a lower bound on memory traffic, since a kernel that does not fit its
    operands in cache reads them more than once. ``x.new_zeros(...)`` and friends read
    nothing of ``x``.

    Shapes:
        each :class:`LoggedOp` carries the returned tensor's shape.
    """

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[LoggedOp] = []

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if isinstance(out, torch.Tensor) and name not in COPY_FREE:
            inputs = args[1:] if name.startswith("new_") else args
            read = sum(
                a.numel() for a in (*inputs, *kwargs.values()) if isinstance(a, torch.Tensor)
            )
            self.ops.append(LoggedOp(name, tuple(out.shape), read + out.numel()))
        return out

    def largest(self) -> LoggedOp:
        """The operation that returned the tensor with the most elements."""
        if not self.ops:
            raise ValueError("nothing was logged")
        return max(self.ops, key=lambda op: math.prod(op.shape))

    def numbers_moved(self) -> int:
        """Numbers read and written by every logged operation together."""
        return sum(op.numbers_moved for op in self.ops)
