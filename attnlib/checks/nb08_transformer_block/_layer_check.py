"""Notebook 08: the checker of a layer exercise (Exercises 4 and 5), in the order a learner's
layer can go wrong.

Refused if it hands its work to an existing layer; then its class (a class, its arguments),
its building (``super().__init__()`` first), its structure (names, shapes, sharing), its
``forward``'s arguments, dropout that stays random; then its outputs on every case, and when
they are wrong the mistake of the table that behaves the same, else a misplaced dropout (right
in eval mode, wrong in training), else a property of every right layer that it breaks.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import CallWatch
from attnlib.checks._crash import float_dtype_of
from attnlib.checks._exercise import failed, not_done, passed, refused
from attnlib.checks._framework import CheckResult, task_of
from attnlib.checks._outcomes import same_behaviour
from attnlib.checks._threads import on_one_thread
from attnlib.checks.engine.naming import crash_report
from attnlib.checks.nb08_transformer_block._layers import (
    D_FF,
    D_MODEL,
    DROPOUT,
    LAYER_IMPLEMENTATIONS,
    NUM_HEADS,
    LayerExercise,
    prepared,
    problem_of,
    recognise_layer,
    run_case,
    structure_problem,
)


@on_one_thread
def check_layer(spec: LayerExercise, layer_class: Any) -> CheckResult:
    """Build the learner's layer class, run it on the cases and name the mistake it makes."""
    return _check_layer(spec, layer_class)


def _unbindable(function: Any, args: tuple[Any, ...]) -> str | None:
    try:
        inspect.signature(function).bind(*args)
    except TypeError as error:
        return str(error)
    except ValueError:  # no signature to read: let the call itself tell
        return None
    return None


def _check_layer(spec: LayerExercise, layer_class: Any) -> CheckResult:
    learner = _built(spec, layer_class)
    if isinstance(learner, CheckResult):
        return learner
    learner = learner.to(torch.float64)
    learner.load_state_dict(spec.reference.state_dict())
    prepared(learner)
    outcomes = _outcomes(spec, layer_class, learner)
    if isinstance(outcomes, CheckResult):
        return outcomes
    return _named(spec, layer_class, learner, outcomes)


def _built(spec: LayerExercise, layer_class: Any) -> nn.Module | CheckResult:
    """The learner's layer, built as the task says; or why it could not be."""
    exercise, structure = spec.exercise, spec.structure
    if isinstance(layer_class, nn.Module):
        problem = (
            "it got a layer built from a class, not the class itself: the check builds its own"
        )
        return failed(exercise, layer_class, "as a whole", problem, structure.instance)
    if not isinstance(layer_class, type) or not issubclass(layer_class, nn.Module):
        problem = f"expected a class derived from nn.Module, got {type(layer_class).__name__}"
        return failed(exercise, layer_class, "as a whole", problem, None)
    arguments = (D_MODEL, NUM_HEADS, D_FF, DROPOUT)
    building = f"building {layer_class.__name__}{arguments}"
    unbound = _unbindable(layer_class, arguments)
    if unbound is not None:
        problem = f"its __init__ cannot take (d_model, num_heads, d_ff, dropout): {unbound}"
        return failed(exercise, layer_class, building, problem, structure.signature)
    watch = CallWatch(LAYER_IMPLEMENTATIONS)
    try:
        with watch:
            learner = layer_class(*arguments)
    except NotImplementedError as error:
        return not_done(exercise, layer_class, str(error) or task_of(layer_class))
    except Exception as error:  # the learner's bug, reported instead of a traceback
        problem = f"it raised {type(error).__name__}: {error}"
        early = isinstance(error, AttributeError) and "__init__() call" in str(error)
        return failed(
            exercise, layer_class, building, problem, structure.no_super if early else None
        )
    if watch.seen:
        return refused(exercise, layer_class, watch.seen)
    found = structure_problem(learner, spec)
    if found is not None:
        return failed(exercise, layer_class, building, *found)
    unbound = _unbindable(learner.forward, spec.cases[0].args)
    if unbound is not None:
        problem = f"its forward cannot take the arguments the task lists: {unbound}"
        return failed(exercise, layer_class, "calling forward", problem, structure.signature)
    return learner


def _outcomes(spec: LayerExercise, layer_class: Any, learner: nn.Module) -> list[Any] | CheckResult:
    """What the layer gives on every case (its dropout random, as it must be); or why not."""
    exercise, structure = spec.exercise, spec.structure
    outcomes = []
    for case in spec.cases:
        watch = CallWatch(LAYER_IMPLEMENTATIONS)
        try:
            with watch:
                outcomes.append(run_case(learner, case))
        except NotImplementedError as error:
            return not_done(exercise, layer_class, str(error) or task_of(layer_class))
        if watch.seen:
            return refused(exercise, layer_class, watch.seen)
    first_training = next(i for i, case in enumerate(spec.cases) if case.training)
    again = run_case(learner, spec.cases[first_training])
    if not same_behaviour(again, outcomes[first_training], (0.0, 0.0)):
        where = f"case '{spec.cases[first_training].description}'"
        problem = "two runs on the same input in training mode gave different outputs"
        return failed(exercise, layer_class, where, problem, structure.random_dropout)
    return outcomes


def _named(
    spec: LayerExercise, layer_class: Any, learner: nn.Module, outcomes: list[Any]
) -> CheckResult:
    """Passed, or the first wrong case and the mistake that behaves the same."""
    exercise, structure = spec.exercise, spec.structure
    problems = [
        problem_of(outcome, spec.expected(case), spec.output_names)
        for case, outcome in zip(spec.cases, outcomes, strict=True)
    ]
    wrong = [problem is not None for problem in problems]
    if not any(wrong):
        return passed(exercise, layer_class, spec.what_passed)
    first = wrong.index(True)
    where, problem = f"case '{spec.cases[first].description}'", str(problems[first])
    mistake = recognise_layer(spec, outcomes, wrong)
    error = outcomes[first].error
    if error is not None:  # where in the layer's code, and the slip the crash shows
        lines, mistake = crash_report(error, float_dtype_of(spec.cases[first].args), mistake)
        problem += lines
    if mistake is not None:
        return failed(exercise, layer_class, where, problem, mistake)
    if all(not bad for bad, case in zip(wrong, spec.cases, strict=True) if not case.training):
        problem += " (right in eval mode, wrong in training mode)"
        return failed(exercise, layer_class, where, problem, structure.dropout_elsewhere)
    mistake = recognise_layer(spec, outcomes, wrong, eval_only=True)
    if mistake is not None:  # and dropout is misplaced as well: first things first
        first = next(i for i, c in enumerate(spec.cases) if wrong[i] and not c.training)
        where, problem = f"case '{spec.cases[first].description}'", str(problems[first])
        return failed(exercise, layer_class, where, problem, mistake)
    learner.eval()
    broken = spec.property_problem(learner)
    if broken is not None:
        return failed(exercise, layer_class, where, *broken)
    return failed(exercise, layer_class, where, problem, None)
