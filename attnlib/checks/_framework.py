"""What every exercise checker shares: its result, the error a graded cell raises, one case,
and the comparison of a result with the expected tensor."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class CheckResult:
    """The outcome of a checker: truthy when every case passed; its repr is the report."""

    name: str
    passed: bool
    message: str
    done: bool = True
    # The mistake the report names, in its words ("" when it names none): what a class report
    # counts across a class.
    mistake: str = ""

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def assert_passed(self) -> CheckResult:
        """Return this result when every case passed; otherwise raise :class:`CheckFailedError`.

        A graded check cell ends with it (``checks.check_softmax(f).assert_passed()``):
        an autograder such as nbgrader scores a cell by whether it raised, and a learner
        still sees only the report, not a traceback.
        """
        if not self.passed:
            raise CheckFailedError(self)
        return self


class CheckFailedError(AssertionError):
    """Raised by :meth:`CheckResult.assert_passed` when a check did not pass.

    In IPython and Jupyter the error shows the checker's report and nothing else: the
    learner's function is what needs fixing, not the line that called the checker.
    """

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result

    def _render_traceback_(self) -> list[str]:
        # IPython's hook for exceptions that print themselves instead of a traceback.
        return self.result.message.splitlines()


@dataclass(frozen=True)
class Case:
    """One call of the learner's function: its arguments and the right result.

    ``atol`` and ``rtol``, when given, replace the checker's tolerances for this case (a
    float16 case needs wider ones)."""

    description: str
    args: tuple[Any, ...]
    expected: Any
    atol: float | None = None
    rtol: float | None = None


def tolerance(case: Any, atol: float, rtol: float) -> tuple[float, float]:
    """The ``(atol, rtol)`` a case is compared at: its own where it sets them (a
    :class:`Case`, or any case with ``atol`` and ``rtol``), else the checker's."""
    return (atol if case.atol is None else case.atol, rtol if case.rtol is None else case.rtol)


def describe(value: object, *, article: bool = False) -> str:
    """What a report calls a value it did not expect: "a tensor of shape (2, 3)", else its
    type's name ("a list" with ``article``)."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return f"a {type(value).__name__}" if article else type(value).__name__


def _short(tensor: torch.Tensor) -> str:
    flat = tensor.detach().flatten().tolist()
    shown = ", ".join(f"{v:.4g}" for v in flat[:6])
    return f"[{shown}{', …' if len(flat) > 6 else ''}]"


def task_of(learner_fn: Callable[..., Any]) -> str:
    """The task a stub's docstring states, on one line ('' when it has none)."""
    return " ".join((inspect.getdoc(learner_fn) or "").split())


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def tensor_subclass_in(value: Any) -> type | None:
    """The first type in ``value`` (a tensor, or tuples, lists and dicts of them) that is a
    subclass of torch.Tensor other than nn.Parameter, or None. ``type()`` is asked, not
    ``isinstance``, which a class can answer as it likes."""
    kind = type(value)
    if issubclass(kind, (tuple, list)):
        items: Sequence[Any] = value
    elif issubclass(kind, dict):
        items = list(value.values())
    else:
        return kind if issubclass(kind, torch.Tensor) and kind not in _PLAIN else None
    for item in items:
        found = tensor_subclass_in(item)
        if found is not None:
            return found
    return None


def compare_outputs(
    got: object, expected: torch.Tensor, what: str, atol: float, rtol: float
) -> str | None:
    """``None`` when ``got`` matches ``expected``, else a sentence saying how it differs. A
    subclass of torch.Tensor is refused before any of its code runs in a comparison."""
    disguised = tensor_subclass_in(got)
    if disguised is not None:
        return f"{what} is a {disguised.__name__}, a subclass of torch.Tensor, not a plain tensor"
    if not isinstance(got, torch.Tensor):
        got_as_number = isinstance(got, (int, float)) and expected.dim() == 0
        if not got_as_number:
            return f"{what} should be a torch.Tensor, but your function returned {describe(got)}"
        got = torch.tensor(float(got), dtype=torch.float64)
    if tuple(got.shape) != tuple(expected.shape):
        return f"{what} has shape {tuple(got.shape)}, expected shape {tuple(expected.shape)}"
    if expected.dtype == torch.bool:
        return _compare_masks(got, expected, what)
    got64 = got.detach().to(torch.float64)
    expected = expected.to(torch.float64)
    if torch.isnan(got64).any():
        return f"{what} contains NaN: got {_short(got64)}, expected {_short(expected)}"
    close = torch.isclose(got64, expected, atol=atol, rtol=rtol)
    if not bool(close.all()):
        bad = tuple(int(i) for i in torch.nonzero(~close)[0])
        return (
            f"{what} differs at index {bad}: got {got64[bad].item():.6g}, "
            f"expected {expected[bad].item():.6g} "
            f"(got {_short(got64)}, expected {_short(expected)})"
        )
    return None


def _compare_masks(got: torch.Tensor, expected: torch.Tensor, what: str) -> str | None:
    if got.dtype != torch.bool:
        return f"{what} should be a bool tensor (True = may attend), got dtype {got.dtype}"
    if torch.equal(got, expected):
        return None
    if torch.equal(got, ~expected):
        return f"{what} is exactly inverted: in this course True means 'may attend'"
    bad = tuple(int(i) for i in torch.nonzero(got != expected)[0])
    return f"{what} differs at index {bad}: got {bool(got[bad])}, expected {bool(expected[bad])}"


def fixed_generator() -> torch.Generator:
    """A generator with a fixed seed, so a learner sees the same report on every run."""
    return torch.Generator().manual_seed(1234)


def randn64(*shape: int, generator: torch.Generator) -> torch.Tensor:
    """A float64 tensor of standard normal samples drawn from ``generator``."""
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def vec(*values: float) -> torch.Tensor:
    """A float64 vector of the given values."""
    return torch.tensor(values, dtype=torch.float64)
