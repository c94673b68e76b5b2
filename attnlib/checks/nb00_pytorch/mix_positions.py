"""Notebook 00, Exercise 3: a linear layer that mixes the positions of a sequence, not its
channels.

``nn.Linear(T, T_out)`` stores its weight as ``(T_out, T)`` and its bias as ``(T_out,)``
(section 5). Applied along the positions of ``x`` ``(..., T, C)``, it gives ``(..., T_out, C)``:
``out[..., u, c] = Σ_t weight[u, t] · x[..., t, c] + bias[u]``, as the token-mixing layer of an
MLP-Mixer does. The cases give every size its own value, so a product along the wrong
dimension has the wrong shape, then make two sizes equal at a time (C = T, C = T_out,
T = T_out) so that a wrong product or a bias along the wrong dimension runs instead of failing,
and as many sequences as positions (B = T), where code written for one (T, C) sequence runs on a
batch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import torch

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks.engine import check_function

Tensor = torch.Tensor

MIX_POSITIONS = register(
    Exercise(
        id="ex3_mix_positions",
        notebook="00",
        number=3,
        name="mix_positions",
        hints=(
            "nn.Linear(T, T_out) turns T numbers into T_out numbers. Here the T numbers it reads "
            "are one channel of the sequence, a column of x, running along the positions: not a "
            "row, which is what nn.Linear reads by default.",
            "Either bring the positions to the last dimension, apply section 5's formula and put "
            "them back; or write one matrix product in which the weight's T columns meet x's T "
            "rows. Either way the bias holds one number per output position: it must line up "
            "with the positions, not with the channels.",
            "With the weight on the left, (T_out, T) times x's (..., T, C) gives (..., T_out, C) "
            "and broadcasts over any batch. The bias (T_out,) then needs a trailing dimension of "
            "size 1 so that each output position adds its own number to every channel.",
        ),
    )
)

# torch's linear layer is this exercise along the last dimension: F.linear and nn.Linear's
# forward both end in the built-in `linear`.
LINEAR_LAYERS = Forbidden(torch={"linear": "torch.nn.functional.linear"})


def _channels_last(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)  # (..., C, T)


def _loop_over_matrix_channels(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    columns = [w @ x[:, c] + b for c in range(x.shape[1])]  # channel c of one (T, C) sequence
    return torch.stack(columns, dim=1)


def _dot_t(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    with warnings.catch_warnings():  # torch warns that .T of a batch is deprecated
        warnings.simplefilter("ignore", UserWarning)
        return (x.T @ w.T + b).T


def _column_u_of_the_weight(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    rows = [(w[:, u][:, None] * x).sum(dim=-2) + b[u] for u in range(w.shape[0])]
    return torch.stack(rows, dim=-2)  # output position u from column u of the weight


def _mean_over_positions(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    products = w[:, :, None] * x.unsqueeze(-3)  # (..., T_out, T, C)
    return products.mean(dim=-2) + b[:, None]


MISTAKES = (
    Mistake(
        "applied the layer to the channels (the last dimension), as nn.Linear does by default",
        "that mixes the C numbers of each position; this layer mixes the T positions of each "
        "channel. It only runs at all when C happens to equal T.",
        lambda x, w, b: x @ w.T + b,
    ),
    Mistake(
        "added the bias along the channels instead of the positions",
        "bias[u] belongs to output position u and is added to every channel there; added as it "
        "is, (T_out,) lines up with the last dimension, the channels, and runs only when C = "
        "T_out.",
        lambda x, w, b: w @ x + b,
    ),
    Mistake(
        "left out the bias",
        "the product is right, but nn.Linear adds its bias to every output.",
        lambda x, w, b: w @ x,
    ),
    Mistake(
        "used the weight the wrong way round (its transpose)",
        "the weight is stored (T_out, T), one row per output position: row u holds the numbers "
        "that mix the T inputs into output u. Transposed, it runs only when T = T_out, and "
        "mixes the wrong way.",
        lambda x, w, b: w.T @ x + b[:, None],
    ),
    Mistake(
        "added the bias before multiplying by the weight",
        "the bias is added to the output, after the product: the weight would otherwise mix the "
        "bias too.",
        lambda x, w, b: w @ (x + b[:, None]),
    ),
    Mistake(
        "reshaped x to (..., C, T) instead of transposing it",
        "reshape re-reads the numbers in their stored order, so its rows are not the channels: "
        "the positions and channels get mixed up. Only a transpose moves each channel's numbers "
        "together.",
        lambda x, w, b: (x.reshape(*x.shape[:-2], x.shape[-1], x.shape[-2]) @ w.T + b).reshape(
            *x.shape[:-2], w.shape[0], x.shape[-1]
        ),
    ),
    Mistake(
        "swapped dimensions 1 and 2, which are the last two only for a (B, T, C) batch",
        "a single sequence (T, C) has no dimension 2, and a (B1, B2, T, C) tensor has its "
        "positions in dimension 2: counted from the end, the last two are -2 and -1 for any "
        "shape.",
        lambda x, w, b: (x.transpose(1, 2) @ w.T + b).transpose(1, 2),
    ),
    Mistake(
        "moved the positions to the last dimension and did not move them back",
        "the numbers are right but the result is (..., C, T_out); the layer's output keeps x's "
        "layout, positions before channels: (..., T_out, C).",
        lambda x, w, b: _channels_last(x) @ w.T + b,
    ),
    Mistake(
        "read the weight as (T, T_out), the wrong way round (its transpose)",
        "the weight is stored (T_out, T), one row per output position: its first index is the "
        "output position u, its second the input position t. Read the other way, it runs only "
        "when T = T_out (or T = 1), and mixes the wrong way.",
        lambda x, w, b: torch.einsum("tu,...tc->...uc", w, x) + b[:, None],
    ),
    Mistake(
        "transposed x with .T, which reverses every dimension of a batch, not only the last two",
        ".T swaps the two dimensions of a matrix, but on a (B, T, C) batch it reverses all three, "
        "(C, T, B): the batch lands where the positions should be. Only the last two dimensions "
        "should swap.",
        _dot_t,
    ),
    Mistake(
        "looped over x[:, c] as the channels, which they are only for a single (T, C) sequence",
        "for a batch (B, T, C), x[:, c] is position c of every sequence, not channel c: the "
        "channels are picked out along the last dimension, whatever the number of dimensions "
        "in front.",
        _loop_over_matrix_channels,
    ),
    Mistake(
        "named the three dimensions of a (B, T, C) batch in the einsum, so it fits no other shape",
        "x may be one sequence (T, C) or have several leading dimensions: an einsum whose "
        "subscripts for x have exactly three letters refuses any other number of dimensions. "
        "einsum's ellipsis stands for however many leading dimensions there are.",
        lambda x, w, b: torch.einsum("ut,btc->buc", w, x) + b[:, None],
    ),
    Mistake(
        "named the two dimensions of one (T, C) sequence in the einsum, so it fits no batch",
        "x may hold a batch of sequences, (..., T, C): an einsum whose subscripts for x have "
        "exactly two letters refuses any leading dimension. einsum's ellipsis stands for "
        "however many leading dimensions there are.",
        lambda x, w, b: torch.einsum("ut,tc->uc", w, x) + b[:, None],
    ),
    Mistake(
        "added the bias twice",
        "nn.Linear adds its bias once, to the output of the product; a second addition shifts "
        "every output position by its bias again.",
        lambda x, w, b: (_channels_last(x) @ w.T + b).transpose(-2, -1) + b[:, None],
    ),
    Mistake(
        "took column u of the weight for output position u, not row u",
        "the weight is stored (T_out, T): row u holds the T numbers that mix the inputs into "
        "output u, one per input position. Column u holds one number per output position; it "
        "lines up with x's positions only when T = T_out, and then mixes the wrong way.",
        _column_u_of_the_weight,
    ),
    Mistake(
        "averaged the weighted positions instead of adding them up",
        "the layer's output is the sum over t of weight[u, t] · x[..., t, c]: a mean divides it "
        "by T, which nn.Linear never does.",
        _mean_over_positions,
    ),
)


def reference(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """The answer by summation, entry by entry of the formula."""
    return torch.einsum("ut,...tc->...uc", weight, x) + bias[:, None]


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [  # (description, leading dims, T, C, T_out)
        ("a batch (2, 3, 4) of 3 positions -> 5", (2,), 3, 4, 5),
        ("one sequence (3, 4) -> 2 positions", (), 3, 4, 2),
        ("T = C = T_out = 3, a batch of 2", (2,), 3, 3, 3),
        ("C = T_out = 4, T = 3, a batch of 2", (2,), 3, 4, 4),
        ("T = T_out = 4, C = 2, a batch of 3", (3,), 4, 2, 4),
        ("a (2, 2, 3, 4) tensor -> 2 positions", (2, 2), 3, 4, 2),
        ("as many sequences as positions, (3, 3, 4) -> 2", (3,), 3, 4, 2),
        ("one position, T = 1 -> 3 positions", (2,), 1, 4, 3),
    ]
    cases = []
    for description, lead, t, c, t_out in specs:
        x = randn64(*lead, t, c, generator=g)
        weight, bias = randn64(t_out, t, generator=g), randn64(t_out, generator=g)
        cases.append(Case(description, (x, weight, bias), reference(x, weight, bias)))
    return cases


@checker_of(MIX_POSITIONS, MISTAKES)
def check_mix_positions(fn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``mix_positions(x, weight, bias)``: ``(..., T, C)`` -> ``(..., T_out, C)``."""
    return check_function(
        MIX_POSITIONS, fn, _cases(), MISTAKES, forbidden=LINEAR_LAYERS, atol=1e-7, rtol=1e-6
    )
