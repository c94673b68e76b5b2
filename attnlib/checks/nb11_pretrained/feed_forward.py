"""Notebook 11, Exercise 6: ``MyFeedForward(d_model, d_ff)`` with BERT's exact GELU.

Expected outputs come from :class:`attnlib.FeedForward` with ``activation="gelu"`` (PyTorch's
exact, erf GELU). The inputs are scaled by 3, so that the GELU sees values up to about ±10,
where its approximations (tanh, sigmoid) and the slips in its formula all differ from it by far
more than the tolerance; a 2-D input and another size show that the network works on every
position alone, and a network as wide as its model (d_ff = d_model) what the weight matrices
give untransposed. Linear maps built without biases are named as such.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import CheckResult, fixed_generator
from attnlib.checks.engine.classes import (
    ModuleCase,
    Verdict,
    check_module,
    random_state,
    report,
)
from attnlib.checks.nb11_pretrained._after import named_by_parameters

Tensor = torch.Tensor

FEED_FORWARD = register(
    Exercise(
        id="ex6_my_feed_forward",
        notebook="11",
        number=6,
        name="MyFeedForward",
        hints=(
            "The network widens each position's vector to d_ff, applies the non-linearity "
            "entry by entry, and narrows it back to d_model (notebook 08). MiniLM's "
            "non-linearity is the exact GELU, a·Φ(a), not an approximation of it.",
            "Φ, the standard normal distribution function, is not a torch function by that "
            "name, but the error function is: Φ(a) = ½(1 + erf(a / √2)). The two linear maps "
            "need the names the loader reads, in the order the data flows through them.",
            "In __init__, linear1 maps d_model to d_ff and linear2 maps d_ff back to d_model, "
            "both nn.Linear with biases. In forward, apply linear1, then a·½(1 + erf(a/√2)) to "
            "its output a (torch.erf and math.sqrt), then linear2.",
        ),
    )
)

# attnlib's network, and the two halves of transformers' BERT network.
FORBIDDEN = Forbidden(
    python={attnlib.FeedForward: "attnlib.FeedForward"},
    paths={
        f"transformers.models.bert.modeling_bert:{name}": f"transformers' {name}"
        for name in ("BertIntermediate", "BertOutput")
    },
)


class _FeedForward(nn.Module):
    """The parameters every mistake below keeps, as the task names them."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)


def _with(activation: object, after: bool = False) -> type:
    """A learner's MyFeedForward whose activation is ``activation(a)`` (after linear2 if
    ``after``)."""

    def forward(m: _FeedForward, x: Tensor) -> Tensor:
        if after:
            return activation(m.linear2(m.linear1(x)))  # type: ignore[operator]
        return m.linear2(activation(m.linear1(x)))  # type: ignore[operator]

    return type("MyFeedForward", (_FeedForward,), {"forward": forward})


def _erf_gelu(a: Tensor) -> Tensor:
    return 0.5 * a * (1 + torch.erf(a / math.sqrt(2)))


# A right one, for the encoder layer's table of mistakes (Exercise 7) to be built from.
RightFeedForward = _with(_erf_gelu)


class _Untransposed(_FeedForward):
    def forward(self, x: Tensor) -> Tensor:
        a = x @ self.linear1.weight + self.linear1.bias
        return _erf_gelu(a) @ self.linear2.weight + self.linear2.bias


class _GeluTwice(_FeedForward):
    def forward(self, x: Tensor) -> Tensor:
        return _erf_gelu(self.linear2(_erf_gelu(self.linear1(x))))


class _NoBiases(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff, bias=False)
        self.linear2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(_erf_gelu(self.linear1(x)))


class _SizesSwapped(nn.Module):
    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_ff, d_model)  # (out, in), as the weight's shape reads
        self.linear2 = nn.Linear(d_model, d_ff)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(_erf_gelu(self.linear1(x)))


# Named apart from the cases, by the parameters' names and shapes.
NO_BIASES = Mistake(
    "built the linear maps without biases",
    "MiniLM's linear maps have biases (linear1.bias, linear2.bias) and the loader copies them "
    "by name: nn.Linear has one unless it is built with bias=False.",
    _NoBiases,
)

SIZES_SWAPPED = Mistake(
    "built each nn.Linear with its sizes in (out, in) order, linear1 from d_ff to d_model",
    "nn.Linear(in_features, out_features) takes the input size first (it stores its weight the "
    "other way round, as (out, in)): linear1 goes from d_model to d_ff and linear2 back.",
    _SizesSwapped,
)

MISTAKES = (
    Mistake(
        "used the tanh approximation of GELU",
        "½a(1 + tanh(√(2/π)(a + 0.044715a³))) is GPT-2's choice; it is within about 1e-3 of "
        "the exact GELU, enough to move MiniLM's activations visibly. BERT and MiniLM use "
        "a·Φ(a).",
        _with(lambda a: F.gelu(a, approximate="tanh")),
    ),
    Mistake(
        "used the sigmoid approximation of GELU, a·σ(1.702a)",
        "it is within about 2e-2 of a·Φ(a): close on a plot, far outside MiniLM's tolerance.",
        _with(lambda a: a * torch.sigmoid(1.702 * a)),
    ),
    Mistake(
        "used ReLU",
        "the original Transformer's network used ReLU; BERT's and MiniLM's use GELU, which is "
        "smooth and lets a little of each negative value through.",
        _with(F.relu),
    ),
    Mistake(
        "used SiLU (Swish), a·σ(a)",
        "SiLU is a different curve (LLaMA's networks use it in a gated form); MiniLM was "
        "trained with a·Φ(a).",
        _with(F.silu),
    ),
    Mistake(
        "put no activation between the two linear maps",
        "two linear maps in a row are one linear map (notebook 08): the non-linearity is the "
        "point of the network.",
        _with(lambda a: a),
    ),
    Mistake(
        "applied the activation after the second linear map",
        "the non-linearity acts on the wide, d_ff-dimensional vector, between linear1 and "
        "linear2; after linear2 the two maps again collapse into one.",
        _with(_erf_gelu, after=True),
    ),
    Mistake(
        "applied GELU twice: to linear2's output too",
        "the network's output is linear2's, as it is: the non-linearity acts once, on the wide "
        "d_ff-dimensional vector between the two maps.",
        _GeluTwice,
    ),
    Mistake(
        "wrote ½(1 + erf(a)) / √2, with the √2 outside erf instead of dividing a inside it",
        "Φ(a) = ½(1 + erf(a/√2)): the √2 scales the argument of erf; divided outside, Φ no "
        "longer runs from 0 to 1.",
        _with(lambda a: a * 0.5 * (1 + torch.erf(a)) / math.sqrt(2)),
    ),
    Mistake(
        "multiplied by the weight matrices as they are (x @ W) instead of calling the linear "
        "maps (x @ Wᵀ)",
        "nn.Linear(a, b) stores its weight as (b, a) and computes x @ weightᵀ + bias: the "
        "weight untransposed fits only when d_ff = d_model, and then gives other numbers.",
        _Untransposed,
    ),
    Mistake(
        "wrote erf(a) instead of erf(a / √2)",
        "Φ, the standard normal distribution function, is ½(1 + erf(a/√2)): without the √2 it "
        "is the distribution function of a normal with variance ½.",
        _with(lambda a: 0.5 * a * (1 + torch.erf(a))),
    ),
    Mistake(
        "wrote erf(a / 2) instead of erf(a / √2)",
        "Φ(a) = ½(1 + erf(a/√2)): the √2 comes from the normal distribution's variance of 1.",
        _with(lambda a: 0.5 * a * (1 + torch.erf(a / 2))),
    ),
    Mistake(
        "wrote erf(a·√2) instead of erf(a / √2)",
        "Φ(a) = ½(1 + erf(a/√2)): erf's argument is a divided by √2; multiplied by it, Φ "
        "becomes the distribution function of a normal with variance ¼.",
        _with(lambda a: 0.5 * a * (1 + torch.erf(a * math.sqrt(2)))),
    ),
    Mistake(
        "multiplied a by the normal density φ(a) instead of the distribution function Φ(a)",
        "the density is the bell curve, largest at 0 and vanishing on both sides; GELU weighs a "
        "by Φ(a), the probability that a standard normal lies below a, which rises from 0 to "
        "1.",
        _with(lambda a: a * torch.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)),
    ),
    Mistake(
        "left out the factor ½ in a·½(1 + erf(a/√2))",
        "without it Φ would run from 0 to 2: a positive input would come out doubled.",
        _with(lambda a: a * (1 + torch.erf(a / math.sqrt(2)))),
    ),
    Mistake(
        "applied Φ(a) instead of a·Φ(a)",
        "Φ alone is a smooth step between 0 and 1 that forgets the size of a; GELU weighs a "
        "by Φ(a).",
        _with(lambda a: 0.5 * (1 + torch.erf(a / math.sqrt(2)))),
    ),
)


def reference_case(
    description: str, x: Tensor, d_ff: int, generator: torch.Generator
) -> ModuleCase:
    """A case whose expected output is attnlib's GELU feed-forward network, in float64."""
    reference = attnlib.FeedForward(x.shape[-1], d_ff, activation="gelu")
    state = random_state(reference, generator)
    with torch.no_grad():
        expected = reference(x)
    return ModuleCase(description, (x.shape[-1], d_ff), state, (x,), expected)


def cases() -> list[ModuleCase]:
    g = fixed_generator()
    randn = lambda *shape: 3.0 * torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    return [
        reference_case("a batch (2, 5, 8), d_ff = 16", randn(2, 5, 8), 16, g),
        reference_case("a 2-D input (4, 6), d_ff = 10", randn(4, 6), 10, g),
        reference_case("one position (1, 1, 4), d_ff = 12", randn(1, 1, 4), 12, g),
        reference_case("a network as wide as its model (2, 3, 6), d_ff = 6", randn(2, 3, 6), 6, g),
    ]


def verdict(cls: object) -> Verdict:
    """What the check finds for ``cls``, without recording it (the layer's check uses it)."""
    all_cases = cases()
    found = check_module(cls, all_cases, MISTAKES, forbidden=FORBIDDEN)
    no_biases = frozenset({"linear1.weight", "linear2.weight"})
    found = named_by_parameters(found, cls, all_cases[0], {no_biases: NO_BIASES})
    if found.kind == "failed" and found.mistake is None and _sizes_swapped(cls, all_cases[0]):
        found = Verdict("failed", where=found.where, problem=found.problem, mistake=SIZES_SWAPPED)
    return found


def _sizes_swapped(cls: object, case: ModuleCase) -> bool:
    """Whether a new module's linear maps have the shapes of the task's, transposed."""
    try:
        shapes = {n: tuple(p.shape) for n, p in cls(*case.init_args).named_parameters()}  # type: ignore[operator]
    except Exception:  # the cases have reported it
        return False
    wanted = {n: tuple(t.shape) for n, t in case.state.items()}
    return (
        set(shapes) == set(wanted)
        and all(shapes[n] == wanted[n][::-1] for n in wanted if n.endswith(".weight"))
        and shapes != wanted
    )


@checker_of(FEED_FORWARD, (*MISTAKES, NO_BIASES, SIZES_SWAPPED))
def check_bert_feed_forward(cls: type) -> CheckResult:
    """Check ``MyFeedForward(d_model, d_ff)``: forward ``(..., d_model) -> (..., d_model)``."""
    return report(FEED_FORWARD, cls, verdict(cls))
