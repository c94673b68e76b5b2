"""Notebook 11: what the checks look at besides the outputs of their cases.

- :func:`named_by_parameters`: a class whose weights do not load, named when its parameters
  are exactly those of a known mistake (``gamma`` and ``beta``, linear maps without biases);
- :func:`start_problem`: a freshly built LayerNorm that does not start at ones and zeros;
- :func:`only_two_d_right`: a function right on every 2-D case and wrong on another shape;
- :func:`named_again`: an unnamed failure named at float32's tolerance, or where it ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from attnlib.checks._exercise import Exercise, Mistake, failed
from attnlib.checks._framework import Case, CheckResult, tolerance
from attnlib.checks._outcomes import Outcome, call, same_behaviour
from attnlib.checks.engine.classes import ModuleCase, Verdict
from attnlib.checks.engine.naming import recognise, two_d_only


def named_by_parameters(
    verdict: Verdict, cls: object, case: ModuleCase, known: Mapping[frozenset[str], Mistake]
) -> Verdict:
    """The verdict, naming the mistake whose parameter names the class has (if it is unnamed)."""
    if verdict.kind != "failed" or verdict.mistake is not None or not callable(cls):
        return verdict
    try:
        names = frozenset(name for name, _ in cls(*case.init_args).named_parameters())
    except Exception:  # the cases have reported it
        return verdict
    mistake = known.get(names)
    return verdict if mistake is None else dataclasses.replace(verdict, mistake=mistake)


def start_problem(cls: Callable[..., Any], init_args: tuple[Any, ...]) -> str | None:
    """How a freshly built LayerNorm's weight and bias differ from ones and zeros, or None."""
    try:
        module = cls(*init_args)
        weight, bias = module.weight.detach(), module.bias.detach()
    except Exception:  # the cases have reported it
        return None
    if bool((weight == 1).all()) and bool((bias == 0).all()):
        return None
    shown = ", ".join(f"{v:.3g}" for v in weight.flatten()[:4].tolist())
    return (
        f"right once its weights are loaded, but built as {type(module).__name__}"
        f"{init_args} its weight starts at [{shown}, …] and its bias at "
        f"[{', '.join(f'{v:.3g}' for v in bias.flatten()[:4].tolist())}, …]"
    )


def only_two_d_right(
    fn: Callable[..., Any],
    cases: Sequence[Case],
    tolerance_of: Callable[[Case], tuple[float, float]],
) -> bool:
    """Whether ``fn`` is right on every case whose first argument is 2-D and wrong on another."""
    right = [
        same_behaviour(call(fn, case), Outcome(value=case.expected), tolerance_of(case))
        for case in cases
    ]
    return two_d_only(cases, right)


def named_again(
    exercise: Exercise,
    fn: Callable[..., Any],
    cases: Sequence[Case],
    mistakes: Sequence[Mistake],
    result: CheckResult,
    allowed: tuple[float, float],
    *,
    loose: bool = False,
) -> CheckResult:
    """``result``, unless it failed without naming a mistake: then, with its case and problem,
    the mistake the answer behaves like when compared at ``allowed`` (atol, rtol) for every case
    (``loose``: float32's, for an answer that computes a mistake in float32 on float64 cases),
    on the cases where it raised no error and gave a tensor, when it broke so on one case at
    most (a mistake whose arithmetic also breaks on an edge case: an empty loop's sum is 0, not
    a tensor; topk(k + 1) raises where k is every row)."""
    if result.passed or not result.done or "The mistake:" in result.message:
        return result
    first = result.message.split("\n", 1)[0].removeprefix(f"✗ {exercise.name}, ")
    if not first.startswith("case '"):
        return result
    outcomes = [call(fn, case) for case in cases]
    kept = [
        (dataclasses.replace(case, atol=None, rtol=None) if loose else case, outcome)
        for case, outcome in zip(cases, outcomes, strict=True)
        if outcome.error is None
        and (isinstance(outcome.value, torch.Tensor) or not isinstance(case.expected, torch.Tensor))
    ]
    if len(kept) < len(cases) - 1:
        return result

    wrong = [
        not same_behaviour(outcome, Outcome(value=case.expected), tolerance(case, *allowed))
        for case, outcome in kept
    ]
    if not any(wrong):
        return result
    found = recognise(mistakes, [c for c, _ in kept], [o for _, o in kept], wrong, *allowed)
    if found is None:
        return result
    where, problem = first.split("': ", 1)
    return failed(exercise, fn, where + "'", problem, found)
