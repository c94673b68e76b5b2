"""The machinery every exercise checker shares: run cases, compare, explain."""

from __future__ import annotations

import inspect
from collections.abc import Callable
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


def _describe(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return f"{type(value).__name__}"


def _short(tensor: torch.Tensor) -> str:
    flat = tensor.detach().flatten().tolist()
    shown = ", ".join(f"{v:.4g}" for v in flat[:6])
    return f"[{shown}{', …' if len(flat) > 6 else ''}]"


def task_of(learner_fn: Callable[..., Any]) -> str:
    """The task a stub's docstring states, on one line ('' when it has none)."""
    return " ".join((inspect.getdoc(learner_fn) or "").split())


def not_done(name: str, learner_fn: Callable[..., Any], error: NotImplementedError) -> CheckResult:
    """The report for a function that still raises ``NotImplementedError``: its task, no trace."""
    task = str(error) or task_of(learner_fn)
    detail = f" ({task})" if task else ""
    message = (
        f"… {name}: not done yet{detail}. Fill in the function above, run its cell, "
        "then run this check again."
    )
    return CheckResult(name, False, message, done=False)


def compare_outputs(
    got: object, expected: torch.Tensor, what: str, atol: float, rtol: float
) -> str | None:
    """``None`` when ``got`` matches ``expected``, else a sentence saying how it differs."""
    if not isinstance(got, torch.Tensor):
        got_as_number = isinstance(got, (int, float)) and expected.dim() == 0
        if not got_as_number:
            return f"{what} should be a torch.Tensor, but your function returned {_describe(got)}"
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


def run_cases(
    name: str,
    learner_fn: Callable[..., Any],
    cases: list[Case],
    hints: dict[str, str],
    atol: float = 1e-5,
    rtol: float = 1e-4,
    output_names: tuple[str, ...] = ("out", "weights"),
) -> CheckResult:
    """Call ``learner_fn`` on each case's args (copies) and report the first mismatch.

    ``hints`` maps a case description to its hint; ``"default"`` is required and
    ``"raised"`` is used when the learner's function raises. ``output_names`` name the
    parts of a tuple result in the report.
    """
    if not callable(learner_fn):
        return CheckResult(
            name, False, f"✗ {name}: expected a function, got {_describe(learner_fn)}"
        )
    for case in cases:
        args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in case.args)
        try:
            got = learner_fn(*args)
        except NotImplementedError as error:
            return not_done(name, learner_fn, error)
        except Exception as error:  # the learner's bug, reported instead of a traceback
            return CheckResult(
                name,
                False,
                f"✗ {name}, case '{case.description}': your function raised "
                f"{type(error).__name__}: {error}\n  hint: {hints.get('raised', hints['default'])}",
            )
        problem = _check_output(got, case.expected, atol, rtol, output_names)
        if problem is not None:
            hint = hints.get(case.description, hints["default"])
            return CheckResult(
                name, False, f"✗ {name}, case '{case.description}': {problem}\n  hint: {hint}"
            )
    scope = "the 1 case" if len(cases) == 1 else f"all {len(cases)} cases"
    return CheckResult(name, True, f"✓ {name} is correct on {scope}.")


def _check_output(
    got: object,
    expected: torch.Tensor | tuple[torch.Tensor, ...],
    atol: float,
    rtol: float,
    output_names: tuple[str, ...],
) -> str | None:
    if isinstance(expected, torch.Tensor):
        return compare_outputs(got, expected, "the result", atol, rtol)
    if not isinstance(got, (tuple, list)) or len(got) != len(expected):
        names = ", ".join(output_names)
        return f"the function should return a pair ({names}), but it returned {_describe(got)}"
    for label, got_part, expected_part in zip(output_names, got, expected, strict=True):
        problem = compare_outputs(got_part, expected_part, label, atol, rtol)
        if problem is not None:
            return problem
    return None


def fixed_generator() -> torch.Generator:
    """A generator with a fixed seed, so a learner sees the same report on every run."""
    return torch.Generator().manual_seed(1234)


def randn64(*shape: int, generator: torch.Generator) -> torch.Tensor:
    """A float64 tensor of standard normal samples drawn from ``generator``."""
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def vec(*values: float) -> torch.Tensor:
    """A float64 vector of the given values."""
    return torch.tensor(values, dtype=torch.float64)
