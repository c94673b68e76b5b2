"""Notebook 08: what the checkers of the encoder and decoder layers (Exercises 4 and 5) share.

A layer exercise's answer is an ``nn.Module`` class. The checker builds it, loads the weights
of a seeded attnlib layer into it by name (LayerNorms with distinct random γ and β, so that two
norms in each other's place show), and replaces every ``nn.Dropout`` in it with a stand-in that
drops a fixed pattern of entries: training-mode outputs are then the same on every run, and
where dropout was applied shows in them. Each mistake of an exercise's table is a class written
as a learner would write it; the mistake named is the first whose outputs are the learner's on
every case (the engine's class check runs them). Mistakes of structure (names, shapes, a module
shared by two sublayers, a dropout inside the attention or the FFN, dropout that is not a
module) are found by looking at the layer, before it runs (:mod:`._layer_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake
from attnlib.checks._framework import compare_outputs, fixed_generator
from attnlib.checks._outcomes import Outcome
from attnlib.layer_stack import LayerStack

Tensor = torch.Tensor

# The checkers' layer: small enough to be quick, two heads so that a head mix-up shows.
D_MODEL, NUM_HEADS, D_FF, DROPOUT = 8, 2, 16, 0.1
TOLERANCE = (1e-7, 1e-6)

# A layer may not hand its work to a whole layer that exists already.
LAYER_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.EncoderLayer: "attnlib.EncoderLayer",
        attnlib.DecoderLayer: "attnlib.DecoderLayer",
        attnlib.Encoder: "attnlib.Encoder",
        attnlib.Decoder: "attnlib.Decoder",
        attnlib.Residual: "attnlib.Residual",
        attnlib.residual_connection: "attnlib.residual_connection",
        LayerStack: "attnlib's layer stack (LayerStack)",
        nn.TransformerEncoderLayer: "torch.nn.TransformerEncoderLayer",
        nn.TransformerDecoderLayer: "torch.nn.TransformerDecoderLayer",
        nn.TransformerEncoder: "torch.nn.TransformerEncoder",
        nn.TransformerDecoder: "torch.nn.TransformerDecoder",
        nn.Transformer: "torch.nn.Transformer",
    },
    torch={"_transformer_encoder_layer_fwd": "torch's fused encoder layer"},
)


class PatternDropout(nn.Module):
    """Dropout that always drops the same entries (every third, by position) and scales the rest
    by 1.5, in training mode only: what ``nn.Dropout(1/3)`` does, without the randomness."""

    def forward(self, x: Tensor) -> Tensor:
        if not self.training:
            return x
        keep = (torch.arange(x.numel(), device=x.device) % 3 != 1).reshape(x.shape)
        return x * keep.to(x.dtype) * 1.5


@dataclass(frozen=True)
class LayerCase:
    """One call of the layer: ``forward(*args)`` in training or eval mode."""

    description: str
    args: tuple[Any, ...]
    training: bool


@dataclass(frozen=True)
class StructureMistakes:
    """The mistakes of a layer's structure, which the checker finds by looking at it."""

    names: Mistake  # a submodule named otherwise than the task says
    shapes: Mistake  # a sublayer built with its sizes swapped
    shared: Mistake  # one module used as two sublayers
    random_dropout: Mistake  # dropout drawn outside an nn.Dropout submodule
    instance: Mistake  # a layer built from the class, passed instead of the class
    no_super: Mistake  # submodules assigned before nn.Module.__init__ ran
    signature: Mistake  # __init__ or forward takes other arguments than the task's
    dropout_elsewhere: Mistake  # right in eval mode, wrong in training: dropout misplaced
    inner_dropout: Mistake  # a dropout inside the attention or the FFN, besides the residual one


@dataclass(frozen=True)
class LayerExercise:
    """What a layer checker needs to know of its exercise."""

    exercise: Exercise
    reference: nn.Module  # the seeded attnlib layer, float64
    expected: Callable[[LayerCase], tuple[Tensor, ...]]
    cases: Sequence[LayerCase]
    mistakes: Sequence[Mistake]  # behaviour, in the order they are tried
    structure: StructureMistakes
    output_names: tuple[str, ...]
    # For an unknown mistake: a property every right layer has, which this one breaks, and
    # the (general) mistake that names it, if any.
    property_problem: Callable[[nn.Module], tuple[str, Mistake | None] | None]
    what_passed: str


def seeded(make: Callable[[], nn.Module]) -> nn.Module:
    """The reference layer ``make()`` builds, in float64, its LayerNorms given distinct random γ
    and β (with PyTorch's γ = 1, β = 0 two norms are one function), its dropout the fixed
    pattern. Its weights are the same on every check, and the notebook's random numbers stay
    its own."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(8)
        layer = make().to(torch.float64)
    g = fixed_generator()
    with torch.no_grad():
        for module in layer.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.copy_(1 + 0.5 * torch.randn(module.weight.shape, generator=g))
                module.bias.copy_(0.5 * torch.randn(module.bias.shape, generator=g))
    return prepared(layer)


def prepared(layer: nn.Module) -> nn.Module:
    """``layer`` with every residual dropout replaced by :class:`PatternDropout`; the dropout
    inside attention and the FFN (attnlib's layers have it, the paper's do not) switched off."""
    for module in list(layer.modules()):
        for name, child in list(module.named_children()):
            if isinstance(child, nn.Dropout):
                inside = isinstance(module, (attnlib.FeedForward, attnlib.MultiHeadAttention))
                setattr(module, name, nn.Identity() if inside else PatternDropout())
        if isinstance(module, attnlib.MultiHeadAttention):
            module.dropout = 0.0
    return layer


def run_case(layer: nn.Module, case: LayerCase) -> Outcome:
    layer.train(case.training)
    args = tuple(a.clone() if isinstance(a, Tensor) else a for a in case.args)
    try:
        with torch.no_grad():
            value = layer(*args)
    except NotImplementedError:
        raise
    except Exception as error:  # the learner's bug, reported with its case
        return Outcome(error=error)
    if isinstance(value, (tuple, list)):
        value = tuple(v.detach() if isinstance(v, Tensor) else v for v in value)
    elif isinstance(value, Tensor):
        value = value.detach()
    return Outcome(value=value)


def problem_of(
    outcome: Outcome, expected: tuple[Tensor, ...], names: tuple[str, ...]
) -> str | None:
    if outcome.error is not None:
        return f"forward raised {type(outcome.error).__name__}: {outcome.error}"
    got = outcome.value
    if not isinstance(got, tuple) or len(got) != len(expected):
        kind = f"a tensor of shape {tuple(got.shape)}" if isinstance(got, Tensor) else type(got)
        return f"forward should return a tuple ({', '.join(names)}), got {kind}"
    for label, got_part, expected_part in zip(names, got, expected, strict=True):
        problem = compare_outputs(got_part, expected_part, label, *TOLERANCE)
        if problem is not None:
            return problem
    return None


def structure_problem(learner: nn.Module, spec: LayerExercise) -> tuple[str, Mistake] | None:
    """A problem with the layer's submodules, before it runs: names, shapes, sharing, a dropout
    inside the attention or the FFN."""
    expected = spec.reference.state_dict()
    got = learner.state_dict()
    missing, unexpected = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    if missing or unexpected:
        listed = "; ".join(
            f"{what} {', '.join(keys)}"
            for what, keys in (("missing", missing), ("unexpected", unexpected))
            if keys
        )
        return f"its parameters are not named as the task says ({listed})", spec.structure.names
    for key, tensor in expected.items():
        if got[key].shape != tensor.shape:
            problem = f"{key} has shape {tuple(got[key].shape)}, expected {tuple(tensor.shape)}"
            return problem, spec.structure.shapes
    owners: dict[int, str] = {}
    for key, tensor in got.items():
        module = key.split(".")[0]
        other = owners.setdefault(tensor.data_ptr(), module)
        if other != module:
            return f"{other} and {module} hold the same tensors", spec.structure.shared
    for name, module in learner.named_children():
        rate = inner_dropout_rate(module)
        if rate > 0:
            problem = (
                f"{name} has a dropout of its own (rate {rate:g}), besides the residual dropout"
            )
            return problem, spec.structure.inner_dropout
    return None


def inner_dropout_rate(module: nn.Module) -> float:
    """The rate of the dropout inside an attention or a feed-forward network (0 if none)."""
    if isinstance(module, attnlib.MultiHeadAttention):
        return float(module.dropout)
    if isinstance(module, attnlib.FeedForward) and isinstance(module.dropout, nn.Dropout):
        return float(module.dropout.p)
    return 0.0
