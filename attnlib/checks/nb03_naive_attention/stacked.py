"""Notebook 03, Exercise 1: any number of stacked naive layers, and the one mix of x they make.

``stacked_naive_attention(x, layers)`` returns the output after ``layers`` naive layers (each
reads the one before) and the weights ``(..., T, T)`` that give it as one mix of the original
vectors, ``out = weights @ x``. The cases show each mistake: vectors small enough that the
layers' weights do not commute (the order of the product), 0 layers (the identity, one per
sequence of a batch), 1 layer (an off-by-one loop) and a sequence of one vector.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks.engine import check_function
from attnlib.checks.nb03_naive_attention._common import naive_layer, out_is_weights_applied_to_x

Tensor = torch.Tensor

STACKED = register(
    Exercise(
        id="ex1_stacked_naive_attention",
        notebook="03",
        number=1,
        name="stacked_naive_attention",
        hints=(
            "Section 7: each layer's output is a mix of its input, and its input is a mix of x, "
            "so a mix of mixes is again one mix of x. Its recipe is built from the layers' "
            "weights, and what it is for no layer at all tells you where to start.",
            "Zero layers leave every vector as it is: the mix that changes nothing takes all of "
            "x_i for output i. Each further layer mixes the previous outputs, so its weights act "
            "on the recipe you have so far, from the left, as in section 7's two layers.",
            "Start from the identity, shaped like one (T, T) weight matrix per sequence of the "
            "batch; for each layer, run naive attention on the current output, replace the "
            "output, and put the new weights in front of the recipe with a matrix product. "
            "Check on 0, 1 and 2 layers by hand.",
        ),
    )
)


def _t_from_the_first_dimension(x: Tensor, layers: int) -> tuple[Tensor, Tensor]:
    """The stack with T read as x.shape[0] (the identity to start from is that wide)."""
    return _loop(x, layers, start="batch size")


def _loop(
    x: Tensor, layers: int, *, start: str = "identity", combine: str = "before", runs: int = 0
) -> tuple[Tensor, Tensor]:
    """A stack written as learners write it; the keywords make it go wrong in one way each."""
    t = x.shape[-2]
    if start == "identity":
        mix = torch.eye(t, dtype=x.dtype).expand(*x.shape[:-2], t, t)
    elif start == "one eye":
        mix = torch.eye(t, dtype=x.dtype)
    elif start == "batch size":
        mix = torch.eye(x.shape[0], dtype=x.dtype)
    elif start == "none":
        mix = None
    elif start == "zeros":
        mix = torch.zeros(*x.shape[:-2], t, t, dtype=x.dtype)
    else:  # ones
        mix = torch.ones(*x.shape[:-2], t, t, dtype=x.dtype)
    out = x
    for _ in range(layers + runs):
        source = x if combine == "from x" else out
        out, weights = attnlib.naive_self_attention(source)
        if mix is None:
            mix = weights
        elif combine == "after":
            mix = mix @ weights
        elif combine == "sum":
            mix = mix + weights
        elif combine == "entrywise":
            mix = mix * weights
        elif combine == "transposed":
            mix = weights.transpose(-2, -1) @ mix
        elif combine == "last":
            mix = weights
        else:  # "before", "from x"
            mix = weights @ mix
    return out, mix


def _power_of_the_first(x: Tensor, layers: int) -> tuple[Tensor, Tensor]:
    out = x
    for _ in range(layers):
        out, _ = attnlib.naive_self_attention(out)
    first = attnlib.naive_self_attention(x)[1]  # (..., T, T)
    return out, torch.linalg.matrix_power(first, layers)


def _mixed_by_a_power(x: Tensor, layers: int) -> tuple[Tensor, Tensor]:
    first = attnlib.naive_self_attention(x)[1]  # (..., T, T)
    recipe = torch.linalg.matrix_power(first, layers)
    return recipe @ x, recipe


def _scaled_layers(x: Tensor, layers: int) -> tuple[Tensor, Tensor]:
    t = x.shape[-2]
    out, mix = x, torch.eye(t, dtype=x.dtype).expand(*x.shape[:-2], t, t)
    for _ in range(layers):
        weights = torch.softmax(out @ out.transpose(-2, -1) / math.sqrt(x.shape[-1]), dim=-1)
        out, mix = weights @ out, weights @ mix
    return out, mix


ENTRYWISE = "multiplied the weight matrices entry by entry (*), not as matrices (@)"
ENTRYWISE_WHY = (
    "output i of layer 2 takes from every output j of layer 1, which takes from every "
    "input: that sum over j is a matrix product."
)

MISTAKES = (
    Mistake(
        "multiplied the layers' weights in the wrong order, the first layer's on the left",
        "the second layer mixes the first layer's outputs, so its recipe applies to the first "
        "layer's recipe: it stands in front. Matrix products do not commute, so the other order "
        "is another mix.",
        lambda x, layers: _loop(x, layers, combine="after"),
    ),
    Mistake(
        "returned the last layer's weights, not the mix of x that all the layers make together",
        "the last layer's weights mix its own inputs, the previous outputs; the weights asked "
        "for give the output from the original vectors x, in one mix.",
        lambda x, layers: _loop(x, layers, combine="last"),
    ),
    Mistake(
        "fed every layer the original x instead of the previous layer's output",
        "a stack passes each layer's output to the next; run on x every time, each layer "
        "repeats the first and the output never gets past one layer.",
        lambda x, layers: _loop(x, layers, combine="from x"),
    ),
    Mistake(
        "started the product of the weights from a matrix of zeros",
        "anything multiplied by zeros stays zero: the recipe for 'no layer yet' keeps each "
        "vector as it is, which is not the zero matrix.",
        lambda x, layers: _loop(x, layers, start="zeros"),
    ),
    Mistake(
        "started the product of the weights from a matrix of ones",
        "a matrix of ones mixes every vector into every output; with 0 layers nothing should "
        "be mixed, and rows of weights times ones stay ones.",
        lambda x, layers: _loop(x, layers, start="ones"),
    ),
    Mistake(
        "added the layers' weight matrices instead of multiplying them",
        "layers mix in sequence, one after the other: a mix of mixes is a product of their "
        "recipes, and a sum of them does not even have rows that sum to 1.",
        lambda x, layers: _loop(x, layers, start="zeros", combine="sum"),
    ),
    Mistake(
        "multiplied the weights entry by entry (*) into an identity, which keeps only its diagonal",
        ENTRYWISE_WHY,
        lambda x, layers: _loop(x, layers, combine="entrywise"),
    ),
    Mistake(
        ENTRYWISE,
        ENTRYWISE_WHY,
        lambda x, layers: _loop(x, layers, start="ones", combine="entrywise"),
    ),
    Mistake(
        "used each layer's weights transposed, reading a column as a recipe",
        "row i of a layer's weights is the recipe of output i; its columns do not sum to 1 "
        "and mix the wrong way round.",
        lambda x, layers: _loop(x, layers, combine="transposed"),
    ),
    Mistake(
        "ran a single layer, whatever `layers` is",
        "each of the `layers` layers reads the output of the one before: the loop runs "
        "`layers` times, and 0 layers change nothing.",
        lambda x, layers: attnlib.naive_self_attention(x),
    ),
    Mistake(
        "ran one layer too few",
        "the loop must run exactly `layers` times: with layers = 1 the output is already mixed.",
        lambda x, layers: _loop(x, layers, runs=-1),
    ),
    Mistake(
        "ran one layer too many",
        "the loop must run exactly `layers` times: with layers = 0 the output is x itself.",
        lambda x, layers: _loop(x, layers, runs=1),
    ),
    Mistake(
        "took T from x.shape[0], which for a batch is the number of sequences",
        "x is (..., T, C): the number of vectors is the size of its second-to-last dimension, "
        "whatever the batch dimensions in front; the identity to start from is (T, T).",
        _t_from_the_first_dimension,
        written=r"shape\[0\]|size\(0\)|\blen\(",  # a .T of a batch crashes alike
    ),
    Mistake(
        "returned the pair the wrong way round, (weights, out)",
        "the task asks for (out, weights): the output first, shape (..., T, C), then the "
        "weights, shape (..., T, T).",
        lambda x, layers: _loop(x, layers)[::-1],
    ),
    Mistake(
        "for 0 layers, returned one (T, T) identity instead of one for each sequence of a batch",
        "the weights have the shape (..., T, T) of x's batch, whatever the number of layers; a "
        "product with a batch of weights broadcasts, but with no layer nothing does.",
        lambda x, layers: _loop(x, layers, start="one eye"),
    ),
    Mistake(
        "started the product of the weights from None, so 0 layers return no weights",
        "with no layer at all the weights still exist: the mix that changes nothing, one "
        "(T, T) identity per sequence, from which every later layer's product starts.",
        lambda x, layers: _loop(x, layers, start="none"),
    ),
    Mistake(
        "raised the first layer's weights to the power `layers`, as if every layer had them",
        "each layer computes its own weights from its own input, the previous output: the "
        "second layer's weights differ from the first's, so the mix is the product of "
        "different matrices, not a power of one.",
        _power_of_the_first,
    ),
    Mistake(
        "mixed x with a power of the first layer's weights, the output included",
        "only the first layer reads x: every later layer computes new weights from the "
        "previous output, so neither the output nor the mix is the first layer's weights "
        "applied again and again.",
        _mixed_by_a_power,
    ),
    Mistake(
        "divided each layer's scores by √C: naive layers are unscaled",
        "the stack is made of the naive layers of section 2, softmax(x xᵀ) with no scaling; "
        "the 1/√C of notebook 02 gives other weights in every layer.",
        _scaled_layers,
    ),
)


def _reference(x: Tensor, layers: int) -> tuple[Tensor, Tensor]:
    t = x.shape[-2]
    out = x.double()
    mix = torch.eye(t, dtype=torch.float64).expand(*x.shape[:-2], t, t)
    for _ in range(layers):
        out, weights = naive_layer(out)
        mix = weights @ mix
    return out, mix


def _cases() -> list[Case]:
    g = fixed_generator()
    example = torch.tensor([[1.0, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 0]])  # section 2's X
    specs = [
        ("the 3×4 example of section 2, 2 layers", example, 2),
        ("the 3×4 example, 1 layer", example, 1),
        ("the 3×4 example, 0 layers", example, 0),
        ("5 vectors of width 3, 3 layers", 0.7 * torch.randn(5, 3, generator=g), 3),
        ("a batch of 2 sequences, (2, 4, 3), 2 layers", 0.7 * torch.randn(2, 4, 3, generator=g), 2),
        ("a batch (2, 4, 3), 0 layers", 0.7 * torch.randn(2, 4, 3, generator=g), 0),
        ("a single vector, (1, 4), 2 layers", torch.randn(1, 4, generator=g), 2),
    ]
    return [Case(name, (x, layers), _reference(x, layers)) for name, x, layers in specs]


@checker_of(STACKED, MISTAKES)
def check_stacked_naive_attention(
    fn: Callable[[Tensor, int], tuple[Tensor, Tensor]],
) -> CheckResult:
    """Check ``stacked_naive_attention(x, layers) -> (out, weights)`` for ``x`` ``(..., T, C)``."""
    return check_function(
        STACKED,
        fn,
        _cases(),
        MISTAKES,
        properties=(rows_sum_to_one(), out_is_weights_applied_to_x()),
        dtypes=(torch.float64,),
        probe_case=(0, 2),  # 2 layers, and 0 layers: the weights are then the start alone
    )
