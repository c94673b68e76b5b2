"""Notebook 08, Exercise 1: a gated feed-forward network (GEGLU), weights in nn.Linear's layout.

The cases show each mistake: d ≠ d_ff (a missing transpose raises instead of passing), a square
layer d = d_ff (where it gives numbers, so that the two missing transposes can be told apart),
inputs of one, two and three dimensions (the network acts on each position alone), and weights
large enough that GELU, ReLU and GELU's tanh approximation differ.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._threads import on_one_thread
from attnlib.checks.engine import check_function

Tensor = torch.Tensor

GATED_FEED_FORWARD = register(
    Exercise(
        id="ex1_gated_feed_forward",
        notebook="08",
        number=1,
        name="gated_feed_forward",
        hints=(
            "It is still a feed-forward network: widen each position's vector to d_ff, act on it "
            "non-linearly, bring it back to d. The gate only changes the middle step: two "
            "widened copies of x, one bent by GELU, are multiplied entry by entry.",
            "Each weight is stored as nn.Linear stores it, (out, in): a map from width d to "
            "width d_ff is a (d_ff, d) tensor, and x, whose last dimension is d, meets it "
            "transposed. Section 1 did the same with linear1.weight. Nothing mixes positions, "
            "so any leading dimensions of x just ride along.",
            "Compute the gate (x through w_gate, then GELU) and the up branch (x through w_up, "
            "no activation): both have last dimension d_ff. Their product, entry by entry, is "
            "the hidden vector; w_down takes it back to width d. Print the shapes for a (3, d) "
            "input: (3, d_ff), (3, d_ff), (3, d).",
        ),
    )
)


def _gelu(x: Tensor) -> Tensor:
    return F.gelu(x)


def _branches(x: Tensor, w_gate: Tensor, w_up: Tensor) -> tuple[Tensor, Tensor]:
    return x @ w_gate.T, x @ w_up.T


MISTAKES = (
    Mistake(
        "used the weights as they are stored, without transposing them",
        "nn.Linear stores a map from width d to width d_ff as a (d_ff, d) tensor, (out, in): x, "
        "whose last dimension is d, must meet it transposed. With d ≠ d_ff the product fails; "
        "with d = d_ff it runs and gives the wrong numbers.",
        lambda x, w_gate, w_up, w_down: (_gelu(x @ w_gate) * (x @ w_up)) @ w_down,
    ),
    Mistake(
        "transposed w_gate and w_up but not w_down",
        "w_down maps width d_ff back to d and is stored (d, d_ff), (out, in), like the other "
        "two: it too meets the hidden vector transposed.",
        lambda x, w_gate, w_up, w_down: (_gelu(x @ w_gate.T) * (x @ w_up.T)) @ w_down,
    ),
    Mistake(
        "applied GELU to both branches",
        "only the gate is bent: the up branch stays linear in x, and the gate decides, entry by "
        "entry, how much of it passes.",
        lambda x, w_gate, w_up, w_down: (_gelu(x @ w_gate.T) * _gelu(x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "put GELU on the up branch instead of the gate",
        "the names say which is which: GELU bends x·W_gateᵀ, and x·W_upᵀ stays linear. Swapping "
        "them gives another network, not this one with these weights.",
        lambda x, w_gate, w_up, w_down: ((x @ w_gate.T) * _gelu(x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "applied GELU after multiplying the two branches",
        "the gate is GELU of one branch, taken before the product: GELU of the product is "
        "another function.",
        lambda x, w_gate, w_up, w_down: _gelu((x @ w_gate.T) * (x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "added the two branches instead of multiplying them",
        "a gate scales: the hidden vector is the gate times the up branch, entry by entry.",
        lambda x, w_gate, w_up, w_down: (_gelu(x @ w_gate.T) + x @ w_up.T) @ w_down.T,
    ),
    Mistake(
        "left out the up branch: a plain feed-forward network with w_gate as its first layer",
        "the gated network has two widened copies of x, and the hidden vector is their product: "
        "w_up must enter the result.",
        lambda x, w_gate, w_up, w_down: _gelu(x @ w_gate.T) @ w_down.T,
    ),
    Mistake(
        "used w_gate for the up branch as well: w_up never enters",
        "the two branches are two different maps of x, each with its own weights: the gate "
        "reads w_gate, the up branch w_up. With w_gate in both, the hidden vector is "
        "GELU(z)·z for one z, and w_up is ignored.",
        lambda x, w_gate, w_up, w_down: (_gelu(x @ w_gate.T) * (x @ w_gate.T)) @ w_down.T,
    ),
    Mistake(
        "used ReLU as the gate's non-linearity instead of GELU",
        "ReLU and GELU differ near 0 (GELU dips to −0.17, ReLU is 0 for every negative input): "
        "the task asks for GELU.",
        lambda x, w_gate, w_up, w_down: (torch.relu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "used a sigmoid gate (the original GLU) instead of GELU",
        "σ(z) lies between 0 and 1 and is not GELU(z) = z·Φ(z): the gate of this network is GELU.",
        lambda x, w_gate, w_up, w_down: (torch.sigmoid(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "used SiLU (x·σ(x), SwiGLU's gate) instead of GELU",
        "SiLU and GELU are close but not equal (SiLU dips to −0.28, GELU to −0.17): this "
        "exercise's network is GEGLU, gated by GELU.",
        lambda x, w_gate, w_up, w_down: (F.silu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "applied GELU to x before the gate's weights",
        "the gate is GELU of the widened vector, x·W_gateᵀ: the non-linearity acts in the "
        "d_ff-wide hidden layer, after the weights.",
        lambda x, w_gate, w_up, w_down: ((_gelu(x) @ w_gate.T) * (x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "used GELU's tanh approximation",
        "GELU(z) = z·Φ(z) exactly, as in section 1; the tanh formula differs from it by up to "
        "about 1e-3, more than the check allows.",
        lambda x, w_gate, w_up, w_down: (
            (F.gelu(x @ w_gate.T, approximate="tanh") * (x @ w_up.T)) @ w_down.T
        ),
    ),
    Mistake(
        "used GELU's sigmoid approximation, z·σ(1.702 z)",
        "GELU(z) = z·Φ(z) exactly, as in section 1; z·σ(1.702 z) is a cheap stand-in for it "
        "that is off by up to about 0.02.",
        lambda x, w_gate, w_up, w_down: (
            ((a := x @ w_gate.T) * torch.sigmoid(1.702 * a) * (x @ w_up.T)) @ w_down.T
        ),
    ),
    Mistake(
        "wrote GELU by hand with erf(z / 2): the √2 is missing",
        "Φ, the standard normal CDF, is ½(1 + erf(z / √2)): erf(z / 2) is the CDF of a normal "
        "with another spread, and the gate comes out a little off everywhere.",
        lambda x, w_gate, w_up, w_down: (
            ((a := x @ w_gate.T) * 0.5 * (1 + torch.erf(a / 2)) * (x @ w_up.T)) @ w_down.T
        ),
    ),
    Mistake(
        "left GELU out: the gate is linear",
        "without a non-linearity the gate is a second linear map, and the product of two linear "
        "maps of x is a quadratic, not the GELU-gated unit.",
        lambda x, w_gate, w_up, w_down: ((x @ w_gate.T) * (x @ w_up.T)) @ w_down.T,
    ),
    Mistake(
        "wrote it for a 2-D x only (torch.mm, or .t() of x)",
        "the network acts on each position alone, so x may have any number of leading "
        "dimensions, one vector or a batch of sentences: torch.mm takes 2-D matrices only.",
        lambda x, w_gate, w_up, w_down: torch.mm(
            F.gelu(torch.mm(x, w_gate.T)) * torch.mm(x, w_up.T), w_down.T
        ),
    ),
    Mistake(
        "wrote the einsum subscripts for a 2-D x, (positions, d), only",
        "the network acts on each position alone, so x may have any number of leading "
        "dimensions, from one vector to a batch of sentences: subscripts that name exactly two "
        "dimensions of x fail on every other shape.",
        lambda x, w_gate, w_up, w_down: torch.einsum(
            "tf,df->td",
            F.gelu(torch.einsum("td,fd->tf", x, w_gate)) * torch.einsum("td,fd->tf", x, w_up),
            w_down,
        ),
    ),
    Mistake(
        "left out the down projection: returned the d_ff-wide hidden vector",
        "the gated product lives in the wide hidden layer, of width d_ff; w_down brings it back "
        "to width d, so that the result has the shape of x and can be added to it.",
        lambda x, w_gate, w_up, w_down: _gelu(x @ w_gate.T) * (x @ w_up.T),
    ),
    Mistake(
        "applied a non-linearity to the output as well",
        "the network ends with the linear map w_down, as the plain FFN ends with W₂: its output "
        "can be any vector, negative entries included.",
        lambda x, w_gate, w_up, w_down: _gelu((_gelu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T),
    ),
)


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        ("one vector, d = 4, d_ff = 6", (4,), 4, 6),
        ("5 positions, d = 4, d_ff = 6", (5, 4), 4, 6),
        ("a batch (2, 3, 4), d_ff = 10", (2, 3, 4), 4, 10),
        ("a square layer, d = d_ff = 5, shape (3, 5)", (3, 5), 5, 5),
        ("a batch of one position (1, 1, 4), d_ff = 6", (1, 1, 4), 4, 6),
    ]
    cases = []
    for description, shape, d, d_ff in specs:
        x = randn64(*shape, generator=g) * 1.5
        w_gate, w_up = randn64(d_ff, d, generator=g), randn64(d_ff, d, generator=g)
        w_down = randn64(d, d_ff, generator=g) / 2
        expected = (F.gelu(x @ w_gate.T) * (x @ w_up.T)) @ w_down.T
        cases.append(Case(description, (x, w_gate, w_up, w_down), expected, atol=1e-6, rtol=1e-5))
    return cases


@checker_of(GATED_FEED_FORWARD, MISTAKES)
@on_one_thread
def check_gated_feed_forward(fn: Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``gated_feed_forward(x, w_gate, w_up, w_down)`` on inputs of 1 to 3 dimensions."""
    return check_function(GATED_FEED_FORWARD, fn, _cases(), MISTAKES)
