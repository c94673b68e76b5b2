"""Run a learner's ``nn.Module`` class on cases and name its mistake: the engine's check of a
class, beside :func:`~attnlib.checks.engine.functions.check_function` for a function.

A :class:`ModuleCase` builds the class with its arguments (``MyLayerNorm(8, 0.1)``), moves it
to the case's dtype, copies given weights into its parameters **by name** (what the MiniLM
loader will do), runs ``forward`` on copies of the inputs and compares what comes back with the
reference's; for the attention and the layer only the real tokens' rows count (``keep``). Each
mistake of an exercise's table is a learner-style class with the same parameters: it gets the
same weights and inputs, and the first whose outputs are the learner's on every case is named,
as :func:`~attnlib.checks.engine.functions.check_function` does for functions (with the same
:func:`~attnlib.checks.engine.naming.recognise` and crash report). The whole run is watched for
calls of the implementation the exercise asks for (:class:`~attnlib.checks._calls.CallWatch`).
Serves the checkers of notebooks 08, 10 and 11.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import NOTHING, CallWatch, Forbidden
from attnlib.checks._exercise import Exercise, failed, not_done, passed, refused
from attnlib.checks._framework import Case, CheckResult, compare_outputs, describe, tolerance
from attnlib.checks._mistake import Mistake, every_way
from attnlib.checks._outcomes import Outcome
from attnlib.checks.engine.kinds import dtype_changed
from attnlib.checks.engine.naming import crash_report, recognise

Tensor = torch.Tensor


class WeightsDoNotFitError(ValueError):
    """The learner's parameters are not named or shaped as the task says."""


def _as_is(result: Any) -> Any:
    return result


@dataclass(frozen=True)
class ModuleCase:
    """One build and one call of the learner's class: ``cls(*init_args)``, the weights ``state``
    loaded by name, then ``forward(*inputs)``; ``keep`` restricts what is compared. The module
    runs in eval mode, or in training mode with ``training``; with ``seed``, the random numbers
    are seeded just before the call (a right module then draws the reference's dropout);
    ``prepare`` changes the loaded module before it runs (its dropout made a fixed pattern)."""

    description: str
    init_args: tuple[Any, ...]
    state: Mapping[str, Tensor]
    inputs: tuple[Any, ...]
    expected: Any  # a tensor, or a tuple of them (already passed through ``keep``)
    keep: Callable[[Any], Any] = _as_is
    dtype: torch.dtype = torch.float64
    atol: float | None = None
    rtol: float | None = None
    training: bool = False
    seed: int | None = None
    prepare: Callable[[nn.Module], nn.Module] = _as_is


@dataclass(frozen=True)
class Verdict:
    """What a module check found, before it becomes a report (a layer's check reuses it)."""

    kind: str  # "passed", "failed", "refused" or "not_done"
    what: str = ""  # passed: what was tried
    where: str = ""  # failed: the failing case
    problem: str = ""
    mistake: Mistake | None = None
    called: tuple[str, ...] = ()  # refused: the forbidden calls seen
    task: str = ""  # not_done: the stub's task
    # passed and failed: each case's outcome and what is wrong with it (None: right), for a
    # checker that names a mistake the cases show in another way (a misplaced dropout, say)
    outcomes: tuple[Outcome, ...] = ()
    problems: tuple[str | None, ...] = ()


def signature(cls: object, init_args: Sequence[Any]) -> str:
    """How a report names one build: ``MyLayerNorm(8, 0.1)``."""
    return f"{getattr(cls, '__name__', repr(cls))}({', '.join(repr(a) for a in init_args)})"


def task_of_class(cls: object) -> str:
    """The class's own docstring on one line (not one inherited from ``nn.Module``)."""
    doc = cls.__dict__.get("__doc__") if isinstance(cls, type) else None
    return " ".join((doc or "").split())


def load_weights(module: nn.Module, state: Mapping[str, Tensor], what: str) -> None:
    """Copy ``state`` into ``module``'s parameters of the same names, or say why it cannot."""
    ours = dict(module.named_parameters())
    if set(ours) != set(state):
        lacking, unknown = sorted(set(state) - set(ours)), sorted(set(ours) - set(state))
        problem = f"{what} has the parameters {sorted(ours)}; the weights are named {sorted(state)}"
        problem += f" (missing: {lacking})" if lacking else ""
        problem += f" (not expected: {unknown})" if unknown else ""
        raise WeightsDoNotFitError(problem + ". Name the modules and parameters as the task says.")
    for name, tensor in state.items():
        if ours[name].shape != tensor.shape:
            raise WeightsDoNotFitError(
                f"{what}: its parameter {name} has shape {tuple(ours[name].shape)}, but the "
                f"weight to load has shape {tuple(tensor.shape)} (nn.Linear(a, b) stores a "
                "weight of shape (b, a))"
            )
    with torch.no_grad():
        for name, tensor in state.items():
            ours[name].copy_(tensor)


def build(cls: Callable[..., Any], case: ModuleCase) -> nn.Module:
    """``cls(*case.init_args)`` in the case's dtype, with the case's weights, in the case's
    mode (eval unless ``training``)."""
    module = cls(*case.init_args)
    if not isinstance(module, nn.Module):
        raise TypeError(f"it gives a {type(module).__name__}, not an nn.Module")
    module = module.to(case.dtype)
    load_weights(module, case.state, signature(cls, case.init_args))
    return case.prepare(module).train(case.training)


def _copies(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(v.clone() if isinstance(v, Tensor) else v for v in values)


def _forward(module: nn.Module, case: ModuleCase) -> Any:
    if case.seed is not None:
        torch.manual_seed(case.seed)
    with torch.no_grad():
        return case.keep(module(*_copies(case.inputs)))


def run(cls: Callable[..., Any], case: ModuleCase) -> Any:
    """Build ``cls`` for the case and return what its forward gives, through ``keep``."""
    return _forward(build(cls, case), case)


def attempt(cls: Callable[..., Any], case: ModuleCase) -> tuple[Outcome, str]:
    """:func:`run` for the learner's class, with the stage that raised ("building" or
    "forward"); ``NotImplementedError`` is left to the caller."""
    try:
        module = build(cls, case)
    except NotImplementedError:
        raise
    except Exception as error:  # the learner's bug, reported instead of a traceback
        return Outcome(error=error), "building"
    try:
        return Outcome(value=_forward(module, case)), "forward"
    except NotImplementedError:
        raise
    except Exception as error:
        return Outcome(error=error), "forward"


def compare(got: Any, expected: Any, names: Sequence[str], atol: float, rtol: float) -> str | None:
    """None when ``got`` is ``expected``, else a sentence saying how it differs."""
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            wanted = ", ".join(names[: len(expected)])
            shown = describe(got, article=True)
            return f"forward should return {len(expected)} results ({wanted}), got {shown}"
        for name, part, right in zip(names, got, expected, strict=False):
            problem = compare_outputs(part, right, name, atol, rtol)
            if problem is not None:
                return problem
        return None
    if isinstance(got, (tuple, list)):
        return f"forward should return one tensor, {names[0]}, got a {type(got).__name__}"
    return compare_outputs(got, expected, names[0], atol, rtol)


Judge = Callable[[Outcome, ModuleCase], str | None]


def check_module(
    cls: object,
    cases: Sequence[ModuleCase],
    mistakes: Sequence[Mistake] = (),
    *,
    forbidden: Forbidden = NOTHING,
    output_names: Sequence[str] = ("the output",),
    atol: float = 1e-6,
    rtol: float = 1e-5,
    keep_dtype: bool = False,
    judge: Judge | None = None,
    eval_first: bool = False,
    crash_lines: bool = True,
) -> Verdict:
    """Run the learner's class on every case; on a failure, name the mistake it behaves like.

    The cases are float64, but the tolerance is float32's: an answer that computes a step in
    float32 (a softmax, say) is right, and every mistake departs by far more. With
    ``keep_dtype`` (a task that asks for any float dtype), every float output must come back
    in its case's dtype, as a module of that dtype gives it: a step computed in float32 is
    right only when its result is brought back. Options: ``judge(outcome, case)`` says what is
    wrong with one case's outcome in the exercise's own words (None: right); with
    ``eval_first``, a class wrong in eval mode is judged on the eval cases alone (it may draw
    its random numbers in another order, which changes only the training cases); without
    ``crash_lines``, a crash is reported by its message alone."""
    if not isinstance(cls, type):
        problem = f"expected a class (an nn.Module subclass), got {describe(cls, article=True)}"
        return Verdict("failed", where="as a whole", problem=problem)
    outcomes, problems = [], []
    for case in cases:
        watch = CallWatch(forbidden)
        try:
            with watch:
                outcome, stage = attempt(cls, case)
        except NotImplementedError as error:
            return Verdict("not_done", task=str(error) or task_of_class(cls))
        if watch.seen:
            return Verdict("refused", called=tuple(watch.seen))
        outcomes.append(outcome)
        if judge is not None and stage == "forward":
            problems.append(judge(outcome, case))
        else:
            problems.append(_problem(cls, case, outcome, stage, output_names, atol, rtol))
    wrong = [problem is not None for problem in problems]
    if not any(wrong):
        changed = _dtype_changed(cases, outcomes, output_names) if keep_dtype else None
        if changed is not None:
            return changed
        what = "the 1 case" if len(cases) == 1 else f"all {len(cases)} cases"
        return Verdict("passed", what=what, outcomes=tuple(outcomes), problems=tuple(problems))
    first = wrong.index(True)
    judged = _judged(cases, wrong, eval_first)
    mistake = recognise_class(
        mistakes,
        [cases[i] for i in judged],
        [outcomes[i] for i in judged],
        [wrong[i] for i in judged],
        atol,
        rtol,
    )
    where, problem = f"case '{cases[first].description}'", str(problems[first])
    error = outcomes[first].error
    if crash_lines and error is not None and not isinstance(error, WeightsDoNotFitError):
        # where in the learner's module, and the slip the crash shows
        lines, mistake = crash_report(error, _float_dtype(cases[first]), mistake)
        problem += lines
    return Verdict(
        "failed",
        where=where,
        problem=problem,
        mistake=mistake,
        outcomes=tuple(outcomes),
        problems=tuple(problems),
    )


def _problem(
    cls: object,
    case: ModuleCase,
    outcome: Outcome,
    stage: str,
    output_names: Sequence[str],
    atol: float,
    rtol: float,
) -> str | None:
    """What is wrong with one case's outcome, None when it is right."""
    if outcome.error is None:
        return compare(outcome.value, case.expected, output_names, *tolerance(case, atol, rtol))
    if isinstance(outcome.error, WeightsDoNotFitError):
        return str(outcome.error)
    built = signature(cls, case.init_args)
    who = built if stage == "building" else f"{built}.forward"
    return f"{who} raised {type(outcome.error).__name__}: {outcome.error}"


def _judged(cases: Sequence[ModuleCase], wrong: Sequence[bool], eval_first: bool) -> list[int]:
    """The cases a mistake is judged on: all, or with ``eval_first`` the eval-mode ones when
    the answer is wrong on one of them."""
    in_eval = [i for i, case in enumerate(cases) if not case.training]
    if eval_first and any(wrong[i] for i in in_eval):
        return in_eval
    return list(range(len(cases)))


def recognise_class(
    mistakes: Sequence[Mistake],
    cases: Sequence[ModuleCase],
    outcomes: Sequence[Outcome],
    wrong: Sequence[bool],
    atol: float,
    rtol: float,
) -> Mistake | None:
    """The mistake (a class) whose outputs are the learner's, as
    :func:`~attnlib.checks.engine.naming.recognise` names a function's: each mistake becomes a
    function of a case that builds it with the case's weights and runs it."""
    as_cases = [Case(c.description, (c,), c.expected, c.atol, c.rtol) for c in cases]
    theirs = {id(case): outcome.value for case, outcome in zip(cases, outcomes, strict=True)}
    as_functions = [Mistake(m.name, m.why, _runner(m.fn, theirs)) for m in every_way(mistakes)]
    return recognise(as_functions, as_cases, outcomes, wrong, atol, rtol)


def _float_dtype(case: ModuleCase) -> str:
    """The float dtype a case runs the module in."""
    return str(case.dtype).removeprefix("torch.")


def _dtype_changed(
    cases: Sequence[ModuleCase], outcomes: Sequence[Outcome], names: Sequence[str]
) -> Verdict | None:
    """The first right output whose float dtype is not its case's, as a failure."""
    for case, outcome in zip(cases, outcomes, strict=True):
        values = outcome.value if isinstance(outcome.value, (tuple, list)) else (outcome.value,)
        given = _float_dtype(case)
        for name, value in zip(names, values, strict=False):
            if (
                isinstance(value, Tensor)
                and value.is_floating_point()
                and value.dtype != case.dtype
            ):
                got = str(value.dtype).removeprefix("torch.")
                problem = f"the values are right, but the module is {given} and {name} is {got}"
                where = f"case '{case.description}'"
                return Verdict(
                    "failed", where=where, problem=problem, mistake=dtype_changed(got, given)
                )
    return None


def _runner(mistake_cls: Callable[..., Any], learners: dict[int, Any]) -> Callable[..., Any]:
    """The mistake as a function of a case. Where the mistake leaves its result undefined
    (NaN: a softmax over nothing but blocked scores), any value of the learner's counts as a
    match, so that a mistake is named whichever fill (-inf or the dtype's minimum) it came with.
    """

    def run_mistake(case: ModuleCase) -> Any:
        return _undefined_is_theirs(run(mistake_cls, case), learners.get(id(case)))

    return run_mistake


def _undefined_is_theirs(value: Any, theirs: Any) -> Any:
    if isinstance(value, tuple):
        if isinstance(theirs, (tuple, list)) and len(theirs) == len(value):
            return tuple(_undefined_is_theirs(v, t) for v, t in zip(value, theirs, strict=True))
        return value
    if (
        isinstance(value, Tensor)
        and isinstance(theirs, Tensor)
        and value.is_floating_point()
        and theirs.shape == value.shape
    ):
        return torch.where(torch.isnan(value), theirs.to(value.dtype), value)
    return value


def report(exercise: Exercise, answer: object, verdict: Verdict) -> CheckResult:
    """The verdict as the exercise's report (which also records whether it was accepted)."""
    if verdict.kind == "passed":
        return passed(exercise, answer, verdict.what)
    if verdict.kind == "refused":
        return refused(exercise, answer, list(verdict.called))
    if verdict.kind == "not_done":
        return not_done(exercise, answer, verdict.task)
    return failed(exercise, answer, verdict.where, verdict.problem, verdict.mistake)


def real_rows(token_mask: Tensor) -> Callable[[Any], Any]:
    """A ``keep`` that zeroes the rows of padding queries in ``(B, T, C)`` outputs, and in
    ``(B, H, T, T)`` weights also the columns of padding keys: what a padding position computes
    is never used, and a padding key's weight (which must be 0) shows in the real keys' weights,
    which must then sum to 1."""
    batch, length = token_mask.shape

    def part(value: Any) -> Any:
        if not isinstance(value, Tensor):
            return value
        if value.dim() == 3 and tuple(value.shape[:2]) == (batch, length):
            return torch.where(token_mask[..., None], value, 0)  # (B, T, C)
        if value.dim() == 4 and value.shape[0] == batch and value.shape[2:] == (length, length):
            pairs = token_mask[:, None, :, None] & token_mask[:, None, None, :]  # (B, 1, T, T)
            return torch.where(pairs, value, 0)  # (B, H, T, T): real queries and real keys
        return value

    def keep(result: Any) -> Any:
        if isinstance(result, (tuple, list)):
            return tuple(part(value) for value in result)
        return part(result)

    return keep


def random_state(
    module: nn.Module, generator: torch.Generator, dtype: torch.dtype = torch.float64
) -> dict[str, Tensor]:
    """New weights for ``module`` (drawn from ``generator``, representable in ``dtype``), loaded
    into it in float64; returns them by name."""
    state = {
        name: (0.5 * torch.randn(p.shape, generator=generator) + 0.1).to(dtype).double()
        for name, p in module.named_parameters()
    }
    module.double().eval()
    load_weights(module, state, type(module).__name__)
    return state
