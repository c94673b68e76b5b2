"""Notebook 09, Exercise 1: label smoothing that gives <pad> nothing, over a padded batch.

The smoothed target of the exercise is the Annotated Transformer's: 1 − ε on the right token,
nothing on ``<pad>``, and ε shared equally by the V − 2 other tokens; the loss is the
cross-entropy against it, averaged over the positions whose target is not padding. The cases
show each mistake: rows of different lengths (padding counted, or rows averaged first), a
``pad_id`` that is not 0, ε = 0, shapes with B, T and V all different (a softmax along the
wrong dimension), and logits 200 and 1000 apart, where the softmax of a confident model
underflows to 0 and its logarithm to −inf in float32 and in float64.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._implementations import CROSS_ENTROPY
from attnlib.checks.nb09_encoder_decoder.answers import check_converted
from attnlib.checks.nb09_encoder_decoder.smoothing_mistakes import MISTAKES, reference_smoothed_loss

Tensor = torch.Tensor

SMOOTHED_LOSS = register(
    Exercise(
        id="ex1_smoothed_loss",
        notebook="09",
        number=1,
        name="smoothed_loss",
        hints=(
            "At each position the loss is the cross-entropy −Σ_k q_k log p_k against a smoothed "
            "target q, a distribution over the V tokens: 1 − ε on the right token, 0 on <pad>, "
            "and the rest of the probability shared equally by the tokens left. Padding "
            "positions take no part in the average.",
            "Write q for one position by hand, for V = 5, pad_id = 0, ε = 0.3 and right token 2: "
            "its five entries must add up to 1, so how many tokens share the 0.3? Work with "
            "log-probabilities from the start: a confident model gives some tokens a probability "
            "that underflows to 0, whose logarithm is −inf, while its log-probability is finite.",
            "Build q in the shape of the logits, (B, T, V): every entry the share of one other "
            "token, then 1 − ε at each position's right token (a scatter or a one-hot along the "
            "last dimension), then 0 in the column pad_id. Multiply it by the log-probabilities "
            "along the last dimension, sum, change the sign, and average over the positions "
            "whose target is not pad_id: a boolean mask selects them and counts them.",
        ),
    )
)

# torch's cross-entropy has a label_smoothing of its own. (F.nll_loss is allowed: it averages
# the right tokens' log-probabilities, half of the smoothed loss at most.)
SMOOTHED_LOSS_IMPLEMENTATIONS = CROSS_ENTROPY


def _batch(B: int, T: int, V: int, lengths: list[int], pad_id: int, g: torch.Generator):
    logits = torch.randn(B, T, V, generator=g, dtype=torch.float64) * 2
    target = torch.randint(0, V - 1, (B, T), generator=g)
    target = target + (target >= pad_id).long()  # any token but pad_id
    for row, length in enumerate(lengths):
        target[row, length:] = pad_id
    return logits, target


def _confident(B: int, T: int, V: int, gap: float, dtype: torch.dtype, g: torch.Generator):
    """Logits of a sure model: the right token `gap` / 2 above 0 and a wrong one `gap` / 2 below
    (<pad> = 0 stays near 0, so only the wrong token's probability underflows)."""
    logits = torch.randn(B, T, V, generator=g, dtype=torch.float64)
    target = torch.randint(1, V, (B, T), generator=g)
    wrong = (target % (V - 1)) + 1  # another token, never 0
    logits.scatter_(-1, target.unsqueeze(-1), gap / 2)
    logits.scatter_(-1, wrong.unsqueeze(-1), -gap / 2)
    return logits.to(dtype), target


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [  # (what, (logits, target), ε, pad_id)
        ("a sentence of 4 tokens, V = 6, no padding, ε = 0.1", _batch(1, 4, 6, [4], 0, g), 0.1, 0),
        ("a batch (2, 3, 7), no padding, ε = 0.3", _batch(2, 3, 7, [3, 3], 0, g), 0.3, 0),
        ("3 sentences of 5, 2 and 4 tokens padded to 5, V = 8, ε = 0.1",
         _batch(3, 5, 8, [5, 2, 4], 0, g), 0.1, 0),
        ("pad_id = 3: 2 sentences of 4 and 1 tokens, V = 6, ε = 0.2",
         _batch(2, 4, 6, [4, 1], 3, g), 0.2, 3),
        ("ε = 0: 2 sentences of 3 and 2 tokens, V = 5", _batch(2, 3, 5, [3, 2], 0, g), 0.0, 0),
        ("float32 logits 200 apart (a confident model), ε = 0.1",
         _confident(2, 3, 6, 200.0, torch.float32, g), 0.1, 0),
        ("float64 logits 1000 apart, ε = 0.1",
         _confident(2, 2, 5, 1000.0, torch.float64, g), 0.1, 0),
    ]  # fmt: skip
    return [
        Case(what, (logits, target, eps, pad), reference_smoothed_loss(logits, target, eps, pad))
        for what, (logits, target), eps, pad in specs
    ]


def _as_tensor(got: object, args: tuple[object, ...]) -> object:
    """A loss returned as a Python number (``.item()``) is a right answer too: it stands for a
    tensor of the logits' dtype."""
    if isinstance(got, (int, float)) and not isinstance(got, bool):
        logits = args[0]
        dtype = logits.dtype if isinstance(logits, Tensor) else torch.float64
        return torch.tensor(float(got), dtype=dtype)
    return got


@checker_of(SMOOTHED_LOSS, MISTAKES)
def check_smoothed_loss(fn: Callable[[Tensor, Tensor, float, int], Tensor]) -> CheckResult:
    """Check ``smoothed_loss(logits, target, smoothing, pad_id)``: logits ``(B, T, V)``,
    targets ``(B, T)``; a scalar."""
    return check_converted(
        SMOOTHED_LOSS,
        fn,
        _as_tensor,
        _cases,
        MISTAKES,
        forbidden=SMOOTHED_LOSS_IMPLEMENTATIONS,
        atol=1e-6,
        rtol=1e-5,
        output_names=("the loss",),
        dtypes=(),
    )
