"""Notebook 08: the checker of a layer exercise (Exercises 4 and 5), in the order a learner's
layer can go wrong.

Refused if it hands its work to an existing layer; then its class (a class, its arguments),
its building (``super().__init__()`` first), its structure (names, shapes, sharing), its
``forward``'s arguments; then the engine's class check (:func:`attnlib.checks.engine.check_module`)
runs it on every case and names the mistake of the table that behaves the same; a dropout that
stays random comes first, and when no mistake behaves the same, a misplaced dropout (right in
eval mode, wrong in training), else a property of every right layer that it breaks.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import nn

from attnlib.checks._calls import CallWatch
from attnlib.checks._exercise import failed, not_done, passed, refused
from attnlib.checks._framework import CheckResult, task_of
from attnlib.checks._outcomes import same_behaviour
from attnlib.checks._threads import on_one_thread
from attnlib.checks.engine.classes import (
    ModuleCase,
    Verdict,
    check_module,
    recognise_class,
    report,
)
from attnlib.checks.nb08_transformer_block._layers import (
    D_FF,
    D_MODEL,
    DROPOUT,
    LAYER_IMPLEMENTATIONS,
    NUM_HEADS,
    TOLERANCE,
    LayerCase,
    LayerExercise,
    prepared,
    problem_of,
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
    verdict = check_module(
        layer_class,
        [_as_module_case(spec, case) for case in spec.cases],
        spec.mistakes,
        forbidden=LAYER_IMPLEMENTATIONS,
        atol=TOLERANCE[0],
        rtol=TOLERANCE[1],
        judge=lambda outcome, case: problem_of(outcome, case.expected, spec.output_names),
    )
    if verdict.kind in ("refused", "not_done"):
        return report(spec.exercise, layer_class, verdict)
    random = _random_dropout(spec, layer_class, learner, verdict)
    if random is not None:
        return random
    if verdict.kind == "passed":
        return passed(spec.exercise, layer_class, spec.what_passed)
    if verdict.mistake is not None:
        return report(spec.exercise, layer_class, verdict)
    return _named_otherwise(spec, layer_class, learner, verdict)


def _as_module_case(spec: LayerExercise, case: LayerCase) -> ModuleCase:
    """The case as the engine runs it: the layer built at the checkers' size, the reference's
    weights loaded, its dropout the fixed pattern, called in the case's mode."""
    return ModuleCase(
        case.description,
        (D_MODEL, NUM_HEADS, D_FF, DROPOUT),
        dict(spec.reference.named_parameters()),
        case.args,
        spec.expected(case),
        training=case.training,
        prepare=prepared,
    )


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


def _random_dropout(
    spec: LayerExercise, layer_class: Any, learner: nn.Module, verdict: Verdict
) -> CheckResult | None:
    """The failure of a layer whose dropout stays random (two runs of the first training case
    differ), or None."""
    first_training = next(i for i, case in enumerate(spec.cases) if case.training)
    again = run_case(learner, spec.cases[first_training])
    if same_behaviour(again, verdict.outcomes[first_training], (0.0, 0.0)):
        return None
    where = f"case '{spec.cases[first_training].description}'"
    problem = "two runs on the same input in training mode gave different outputs"
    return failed(spec.exercise, layer_class, where, problem, spec.structure.random_dropout)


def _named_otherwise(
    spec: LayerExercise, layer_class: Any, learner: nn.Module, verdict: Verdict
) -> CheckResult:
    """A failure no mistake of the table explains on every case: a dropout in the wrong place
    (right in eval mode, wrong in training), else a mistake made on the eval cases alone (with
    a misplaced dropout besides: first things first), else a property every right layer has."""
    exercise, structure = spec.exercise, spec.structure
    wrong = [problem is not None for problem in verdict.problems]
    in_eval = [i for i, case in enumerate(spec.cases) if not case.training]
    where, problem = verdict.where, verdict.problem
    if not any(wrong[i] for i in in_eval):
        problem += " (right in eval mode, wrong in training mode)"
        return failed(exercise, layer_class, where, problem, structure.dropout_elsewhere)
    mistake = recognise_class(
        spec.mistakes,
        [_as_module_case(spec, spec.cases[i]) for i in in_eval],
        [verdict.outcomes[i] for i in in_eval],
        [wrong[i] for i in in_eval],
        *TOLERANCE,
    )
    if mistake is not None:
        first = next(i for i in in_eval if wrong[i])
        where = f"case '{spec.cases[first].description}'"
        return failed(exercise, layer_class, where, str(verdict.problems[first]), mistake)
    learner.eval()
    broken = spec.property_problem(learner)
    if broken is not None:
        return failed(exercise, layer_class, where, *broken)
    return failed(exercise, layer_class, where, problem, None)
