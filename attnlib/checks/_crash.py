"""Where an answer crashed, in the learner's own code, and the slip such a crash usually is.

PyTorch's message names an operator and two shapes, not the learner's line: "The size of tensor
a (2) must match the size of tensor b (6) at non-singleton dimension 0" says nothing of which of
the learner's lines raised it, nor what the tensors were. :func:`crash_of` reads the traceback:
the innermost frame that runs the learner's code (not torch's, attnlib's or Python's own), the
expression on that line Python points to, the operation at its top (``@``, ``masked_fill``,
``self.w_o``) and the shape and dtype of every tensor the expression names, read from the
frame's variables without calling anything. :func:`slip_of` names the slip a crash shows when
it shows one for certain: a ``.T`` on a tensor of more than two dimensions, a float32 tensor
met by the float64 or float16 input, an index that lacks a dimension, a Python list indexed as a
tensor, a fill float16 cannot hold, a float size, a view of a transposed tensor, a float mask or
a mask passed as the key.

When grading, the answer runs in a sandbox and only its error's type and message travel: the
sandbox sends :meth:`Crash.to_wire` with them and the grader's copy of the error carries it
(:func:`attach`), so that both sides report the same.
"""

from __future__ import annotations

import ast
import contextlib
import linecache
import os
import re
import sysconfig
import traceback
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch
from torch import nn

import attnlib
from attnlib.checks._mistake import Mistake

_ATTRIBUTE = "__attnlib_crash__"
_MAX_OPERANDS = 6


@dataclass(frozen=True)
class Crash:
    """Where the learner's code raised: the function and line, the expression on it, the
    operation at its top, the tensors it names (``("k.T", "(6, 7, 2) float64")``) and each
    ``.T`` it takes of a tensor of more than two dimensions (``("k", "(2, 7, 6)")``)."""

    function: str
    line: int
    code: str
    operation: str = ""
    operands: tuple[tuple[str, str], ...] = ()
    batch_transposes: tuple[tuple[str, str], ...] = ()
    float_dtypes: tuple[str, ...] = ()

    def describe(self) -> str:
        """ "at line 5 of your my_attention, `q @ k.T`: q is (2, 4, 6) float64, …"."""
        where = f"at line {self.line} of your {self.function}, `{self.code}`"
        if not self.operands:
            return where
        shapes = ", ".join(f"{name} is {shape}" for name, shape in self.operands)
        return f"{where}: {shapes}"

    def to_wire(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "line": self.line,
            "code": self.code,
            "operation": self.operation,
            "operands": [list(pair) for pair in self.operands],
            "batch_transposes": [list(pair) for pair in self.batch_transposes],
            "float_dtypes": list(self.float_dtypes),
        }

    @classmethod
    def from_wire(cls, body: object) -> Crash | None:
        """The crash ``body`` describes, or None when it is not one (text is cut short)."""
        if not isinstance(body, dict):
            return None

        def text(value: object, limit: int = 200) -> str:
            return value[:limit] if isinstance(value, str) else ""

        def pairs(value: object) -> tuple[tuple[str, str], ...]:
            if not isinstance(value, list):
                return ()
            found = [
                (text(p[0], 80), text(p[1], 80))
                for p in value[:_MAX_OPERANDS]
                if isinstance(p, list) and len(p) == 2
            ]
            return tuple(found)

        line = body.get("line")
        if type(line) is not int:
            return None
        dtypes = body.get("float_dtypes")
        return cls(
            function=text(body.get("function"), 80),
            line=line,
            code=text(body.get("code")),
            operation=text(body.get("operation"), 80),
            operands=pairs(body.get("operands")),
            batch_transposes=pairs(body.get("batch_transposes")),
            float_dtypes=tuple(text(d, 20) for d in dtypes[:4]) if isinstance(dtypes, list) else (),
        )


def attach(error: BaseException, crash: Crash | None) -> BaseException:
    """``error`` carrying ``crash`` (what the sandbox found), for :func:`crash_of`."""
    if crash is not None:
        with contextlib.suppress(AttributeError):  # an exception type without a __dict__
            setattr(error, _ATTRIBUTE, crash)
    return error


# -- finding the learner's frame -------------------------------------------------------------


def _directory(module: Any) -> str:
    return os.path.dirname(os.path.abspath(module.__file__))


_NOT_THE_LEARNERS = tuple(
    os.path.join(path, "")
    for path in {
        _directory(torch),
        _directory(attnlib),
        os.path.abspath(sysconfig.get_paths()["stdlib"]),
    }
)


def _is_learners(filename: str) -> bool:
    if filename.startswith("<") and not filename.startswith("<ipython-input"):
        return False
    return not os.path.abspath(filename).startswith(_NOT_THE_LEARNERS)


def crash_of(error: BaseException) -> Crash | None:
    """Where in the learner's code ``error`` was raised, or None when no frame of it shows."""
    carried = getattr(error, _ATTRIBUTE, None)
    if isinstance(carried, Crash):
        return carried
    tb = error.__traceback__
    if tb is None:
        return None
    frames = list(traceback.walk_tb(tb))
    summaries = traceback.extract_tb(tb)
    for (frame, lineno), summary in reversed(list(zip(frames, summaries, strict=False))):
        if _is_learners(frame.f_code.co_filename):
            try:
                return _crash_in(frame, lineno, summary)
            except Exception:  # a frame this cannot read is no reason for a check to fail
                return None
    return None


def _segment(summary: traceback.FrameSummary, lineno: int) -> str:
    """The expression on the line that Python points to, or the whole line."""
    line = linecache.getline(summary.filename, lineno).rstrip("\n")
    start, end = summary.colno, summary.end_colno
    if summary.end_lineno == lineno and start is not None and end is not None and 0 <= start < end:
        encoded = line.encode()
        part = encoded[start:end].decode(errors="replace").strip()
        if part:
            return part
    return line.strip()


def _crash_in(frame: FrameType, lineno: int, summary: traceback.FrameSummary) -> Crash:
    code = _segment(summary, lineno)
    tree = _parsed(code)
    operation = _operation(tree) if tree is not None else ""
    operands: dict[str, torch.Tensor] = {}
    transposes: dict[str, torch.Tensor] = {}
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = _resolve(node, frame)
            if isinstance(value, torch.Tensor):
                operands.setdefault(ast.unparse(node), value)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            base = _resolve(node.value, frame)
            if isinstance(base, torch.Tensor) and base.dim() > 2:
                transposes.setdefault(ast.unparse(node.value), base)
    shown = list(operands.items())[:_MAX_OPERANDS]
    floats = [t.dtype for t in operands.values() if t.is_floating_point()]
    return Crash(
        function=frame.f_code.co_name,
        line=lineno,
        code=code if len(code) <= 160 else code[:157] + "…",
        operation=operation,
        operands=tuple((name, _shape(t)) for name, t in shown),
        batch_transposes=tuple((name, str(tuple(t.shape))) for name, t in transposes.items()),
        float_dtypes=tuple(dict.fromkeys(_dtype_name(d) for d in floats)),
    )


def _parsed(code: str) -> ast.expr | None:
    for text in (code, code.rstrip(":"), code.split("=", 1)[-1] if "=" in code else code):
        try:
            return ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            continue
    try:  # a statement: its first expression
        module = ast.parse(code.strip())
    except SyntaxError:
        return None
    for node in ast.walk(module):
        if isinstance(node, ast.expr):
            return node
    return None


_OPERATORS = {ast.MatMult: "@", ast.Mult: "*", ast.Add: "+", ast.Sub: "-", ast.Div: "/"}


def _operation(node: ast.expr) -> str:
    if isinstance(node, ast.BinOp):
        return _OPERATORS.get(type(node.op), "")
    if isinstance(node, ast.Call):
        return ast.unparse(node.func)
    if isinstance(node, ast.Subscript):
        return "indexing"
    return ""


_TENSOR_ATTRIBUTES = {"T", "mT", "H", "mH"}


def _resolve(node: ast.AST, frame: FrameType) -> Any:
    """The value of a name or of a chain of attributes in ``frame``, read without calling any
    code: a tensor's transposes and a module's own parameters, buffers, submodules and plain
    attributes; None for anything else."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals):
            if node.id in scope:
                return scope[node.id]
        return None
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, frame)
        if isinstance(base, torch.Tensor) and node.attr in _TENSOR_ATTRIBUTES:
            return getattr(base, node.attr)
        if isinstance(base, nn.Module):
            for store in ("_parameters", "_buffers", "_modules"):
                found = vars(base).get(store, {})
                if node.attr in found:
                    return found[node.attr]
            return vars(base).get(node.attr)
    return None


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _shape(tensor: torch.Tensor) -> str:
    return f"{tuple(tensor.shape)} {_dtype_name(tensor.dtype)}"


# -- the slips a crash shows ------------------------------------------------------------------


def _never(*args: object) -> None:
    """A slip named from a crash, never by comparing behaviour."""


TRANSPOSE_BATCH = Mistake(
    "used .T on a batch, which reverses every dimension, not only the last two",
    ".T swaps the two dimensions of a matrix, but a tensor of three or more dimensions it "
    "turns back to front: (B, T, C) becomes (C, T, B), and the batch lands where the "
    "positions should be. Swap only the last two dimensions (.mT, or transpose(-2, -1)).",
    _never,
)
INDEX_DIMENSIONS = Mistake(
    "gave gather or scatter an index with fewer dimensions than the tensor it indexes",
    "gather and scatter pick one entry along a dimension for every position of the index, "
    "so the index needs as many dimensions as the tensor: a (B, T) index into (B, T, V) "
    "needs a last dimension of size 1 (and loses it again afterwards).",
    _never,
)
LIST_AS_TENSOR = Mistake(
    "indexed a Python list as if it were a tensor",
    "a list takes one whole number or a slice in its brackets; a tensor's indexing with "
    "several dimensions, None or a mask only works on a tensor, so the list has to become "
    "one first.",
    _never,
)
HALF_OVERFLOW = Mistake(
    "filled with a number float16 cannot hold (such as -1e9, or float32's smallest number)",
    "float16 stops at about ±65504: a fill of -1e9 or of float32's smallest number does not "
    "fit, and PyTorch refuses it. -inf, or the smallest number of the tensor's own dtype, "
    "fits every float type.",
    _never,
)
FLOAT_SIZE = Mistake(
    "computed a size with /, which gives a float, where a shape needs a whole number",
    "/ always gives a float in Python, even when the division is exact; a shape is made of "
    "whole numbers (// keeps them whole).",
    _never,
)
VIEW_NOT_CONTIGUOUS = Mistake(
    "called view on a tensor that a transpose or permute left out of order in memory",
    "view only relabels numbers that lie in the order the new shape reads them; after a "
    "transpose they do not, so view refuses (reshape copies them into order when it must).",
    _never,
)
FLOAT_MASK = Mistake(
    "passed an attention a float mask of 1s and 0s, not a bool one",
    "the course's masks are bool, True = may attend; attnlib refuses a float mask, which "
    "other libraries read as numbers added to the scores.",
    _never,
)
MASK_AS_KEY = Mistake(
    "passed the mask as the attention's second argument, which is its key",
    "an attention module takes (query, key, value, mask): the second positional argument is "
    "the key. Self-attention passes the same input as query, key and value, and the mask by "
    "its name.",
    _never,
)


def float32_constant(given: str) -> Mistake:
    """The slip of a float32 tensor (torch.zeros, eye, ones, full, empty, tensor, arange with
    floats, or a .float()) that an operation refuses to mix with the ``given`` input dtype."""
    return Mistake(
        f"a float32 constant breaks {given}",
        f"a tensor made without a dtype (torch.zeros, torch.ones, torch.eye, torch.full, "
        f"torch.empty, torch.tensor) is float32, whatever the input is; with a {given} input, "
        "a matrix product, a scatter, a linear layer or an in-place update refuses to mix the "
        "two. Make such tensors in the input's dtype (the *_like functions, or dtype= and "
        "device= taken from the input).",
        _never,
    )


_DTYPE_MISMATCH = (
    "same dtype",
    "expected scalar type",
    "Expected self.dtype to be equal to src.dtype",
    "Expected object of scalar type",
    "Mismatch in dtype",
    "expected both vectors to have same dtype",
    "must have the same dtype",
    "dtype mismatch",
    "result type Float can't be cast",
    "can't be cast to the desired output type",
)


def slip_of(crash: Crash | None, error: BaseException, given: str | None) -> Mistake | None:
    """The slip ``error`` shows for certain (its message, the line's ``.T`` of a batch, the
    input's float dtype ``given``), or None."""
    message = str(error)
    if crash is not None and crash.batch_transposes:
        return TRANSPOSE_BATCH
    if any(words in message for words in _DTYPE_MISMATCH):
        float32_met = (
            crash is None
            or not crash.float_dtypes
            or "float32" in crash.float_dtypes
            or re.search(r"\b[Ff]loat\b", message) is not None  # "… Float and Double"
        )
        if given in ("float64", "float16", "bfloat16") and float32_met:
            return float32_constant(given)
        return None
    if "Index tensor must have the same number of dimensions" in message:
        return INDEX_DIMENSIONS
    if re.search(r"list indices must be integers or slices, not (tuple|Tensor|NoneType)", message):
        return LIST_AS_TENSOR
    if "cannot be converted to type" in message and "without overflow" in message:
        return HALF_OVERFLOW
    if "tuple of ints,but got float" in message or "must be tuple of ints, not float" in message:
        return FLOAT_SIZE
    if "'float' object cannot be interpreted as an integer" in message:
        return FLOAT_SIZE
    if "view size is not compatible with input tensor's size and stride" in message:
        return VIEW_NOT_CONTIGUOUS
    if message.startswith("mask must be a bool"):
        return FLOAT_MASK
    if message.startswith("key must have a floating-point dtype, got torch.bool"):
        return MASK_AS_KEY
    return None


def float_dtype_of(value: Any) -> str | None:
    """The one float dtype of the tensors in ``value`` (tuples, lists, dicts), by its short
    name, or None when it holds none or several."""
    found: set[torch.dtype] = set()

    def visit(item: Any, depth: int = 0) -> None:
        if depth > 4:
            return
        if isinstance(item, torch.Tensor):
            if item.is_floating_point():
                found.add(item.dtype)
        elif isinstance(item, (tuple, list)):
            for part in item:
                visit(part, depth + 1)
        elif isinstance(item, dict):
            for part in item.values():
                visit(part, depth + 1)

    visit(value)
    return _dtype_name(found.pop()) if len(found) == 1 else None


_RAISED = re.compile(r"raised (\w+): (.+)")


def slip_in_report(problem: str) -> Mistake | None:
    """The slip the message of a crash a report quotes shows for certain ("… raised TypeError:
    mask must be a bool …"), for checkers that report a crash without its traceback."""
    found = _RAISED.search(problem.split("\n", 1)[0])
    if found is None:
        return None
    return slip_of(None, RuntimeError(found.group(2)), None)
