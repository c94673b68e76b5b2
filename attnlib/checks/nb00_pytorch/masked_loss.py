"""Notebook 00, Exercise 4: cross-entropy over a padded (B, T, V) batch, averaged over the
positions that count.

The mask is bool, True where a position counts (a real token), as every mask of the course is
(True = may attend, here: may count). The cases show each mistake: sequences of different
lengths (a mean over every position, or over each sequence first, is then wrong), a sequence
that is all padding (its own mean is 0 / 0), padding in the middle, no padding at all, and
logits 200 apart in float32 and 800 apart in float64, where a probability rounds to 0 and its
log to −∞.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._implementations import CROSS_ENTROPY, NLL_LOSS
from attnlib.checks._slips import EPSILONS, with_epsilons
from attnlib.checks._threads import one_thread
from attnlib.checks.engine import check_function

Tensor = torch.Tensor

MASKED_CROSS_ENTROPY = register(
    Exercise(
        id="ex4_masked_cross_entropy",
        notebook="00",
        number=4,
        name="masked_cross_entropy",
        hints=(
            "The loss of one position is −log of the probability the model gives that "
            "position's target (section 6). The result is the average of that loss over the "
            "positions that count, and only those: padding neither adds to the total nor to "
            "the count.",
            "First the loss of every position, (B, T): log-probabilities along the classes, then "
            "each position's target entry. Then leave the padding out: select the positions "
            "where the mask is True, or zero the others and divide by how many are True, not by "
            "B·T.",
            "Indexing log_p (B, T, V) by the targets needs one index per position: gather along "
            "the last dimension with the targets given a trailing size-1 dimension, or flatten "
            "to (B·T, V) and pair each row with its target as section 6 does. Indexing the "
            "(B, T) losses with the boolean mask keeps the counted ones as a 1-D tensor.",
        ),
    )
)

# torch's and attnlib's cross-entropy are what this exercise asks for.
LOSSES = CROSS_ENTROPY | NLL_LOSS


def _picked(log_p: Tensor, targets: Tensor) -> Tensor:
    return log_p.gather(-1, targets[..., None])[..., 0]  # (B, T)


def _token_losses(logits: Tensor, targets: Tensor) -> Tensor:
    return -_picked(logits.log_softmax(dim=-1), targets)  # (B, T)


MISTAKES = (
    Mistake(
        "averaged over every position, padding included",
        "padding is not text: its losses say nothing about the model and must be left out of "
        "the average, both from the total and from the count.",
        lambda z, y, m: _token_losses(z, y).mean(),
    ),
    Mistake(
        "zeroed the padding's losses but divided by the number of all positions",
        "the zeros are left out of the total but still counted: the loss comes out too small, "
        "the more so the more padding there is.",
        lambda z, y, m: (_token_losses(z, y) * m).sum() / m.numel(),
    ),
    Mistake(
        "averaged each sequence on its own, then averaged the sequences",
        "that gives a short sequence's tokens more weight than a long one's, and a sequence "
        "that is all padding 0 / 0; every counted position weighs the same.",
        lambda z, y, m: ((_token_losses(z, y) * m).sum(dim=-1) / m.sum(dim=-1)).mean(),
    ),
    Mistake(
        "averaged each sequence on its own (an all-padding one as 0), then averaged the sequences",
        "that gives a short sequence's tokens more weight than a long one's, and counts a "
        "sequence with no real token at all; every counted position weighs the same.",
        lambda z, y, m: ((_token_losses(z, y) * m).sum(dim=-1) / m.sum(dim=-1).clamp(min=1)).mean(),
    ),
    Mistake(
        "used the mask the wrong way round (True as padding)",
        "in this course True means 'counts', as True means 'may attend' in every attention "
        "mask: the average runs over the positions where the mask is True.",
        lambda z, y, m: _token_losses(z, y)[~m].mean(),
    ),
    Mistake(
        "formed the probabilities (or e to the logits) before taking the log",
        "softmax rounds a probability that small to exactly 0 (float32 below about 1e-45, "
        "float64 below about 5e-324), and log 0 = −∞; log_softmax subtracts the log-sum-exp "
        "instead and never forms the tiny number.",
        lambda z, y, m: -_picked(torch.softmax(z, dim=-1).log(), y)[m].mean(),
    ),
    Mistake(
        "normalised over the positions (dim 1), not over the classes",
        "each position's logits are one prediction over the V classes: the probabilities of one "
        "position add up to 1 along the last dimension.",
        lambda z, y, m: -_picked(z.log_softmax(dim=1), y)[m].mean(),
    ),
    Mistake(
        "normalised over the batch (dim 0), not over the classes",
        "each position's logits are one prediction over the V classes: the probabilities of one "
        "position add up to 1 along the last dimension, not across the sequences of the batch.",
        lambda z, y, m: -_picked(z.log_softmax(dim=0), y)[m].mean(),
    ),
    Mistake(
        "used the raw logits as log-probabilities",
        "a logit becomes a log-probability only once its row is normalised (log_softmax): "
        "adding the same number to every logit must not change the loss.",
        lambda z, y, m: -_picked(z, y)[m].mean(),
    ),
    Mistake(
        "forgot the minus sign",
        "log-probabilities are at most 0; the loss, −log p, is at least 0 and small when the "
        "target gets a probability near 1.",
        lambda z, y, m: _picked(z.log_softmax(dim=-1), y)[m].mean(),
    ),
    Mistake(
        "added up the counted positions' losses instead of averaging them",
        "a sum grows with the number of tokens; the loss is their mean, like F.cross_entropy's.",
        lambda z, y, m: _token_losses(z, y)[m].sum(),
    ),
    Mistake(
        "divided the total by the number of sequences, not of counted positions",
        "that is the loss per sequence; the average runs over tokens, the positions where the "
        "mask is True.",
        lambda z, y, m: _token_losses(z, y)[m].sum() / z.shape[0],
    ),
    Mistake(
        "zeroed the padding's logits instead of leaving those positions out",
        "all-zero logits are a uniform prediction whose loss is log V: the padding still counts, "
        "now with a made-up loss.",
        lambda z, y, m: _token_losses(z * m[..., None], y).mean(),
    ),
    *with_epsilons(
        "added a number to the count of positions it divides by (to keep it from 0)",
        "the count is the number of positions that count, and there is at least one: with "
        "anything added to it, the average comes out too small.",
        lambda eps: lambda z, y, m: (_token_losses(z, y) * m).sum() / (m.sum() + eps),
        (1.0, *EPSILONS[:4]),  # 1e-5 and less: within the tolerance
    ),
    Mistake(
        "indexed the log-probabilities with the whole targets tensor, which picks every target "
        "at every position (a table), not one per position",
        "log_p[..., targets] takes, at each position, the entries of all B·T targets: the "
        "average then runs over every class any position asked for. Each position needs the "
        "log-probability of its own target (gather along the last dimension).",
        lambda z, y, m: -z.log_softmax(dim=-1)[..., y][m].mean(),
    ),
    Mistake(
        "returned a Python number (.item()), not the loss as a 0-D tensor",
        "a loss must stay a tensor, connected to the logits, so that backward() can run through "
        "it and train the model: .item() keeps the number and drops the rest.",
        lambda z, y, m: _token_losses(z, y)[m].mean().item(),
    ),
)
A_NUMBER = MISTAKES[-1]


def reference(logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    """The answer in float64."""
    return _token_losses(logits.double(), targets)[mask].mean()


def _mask(lengths: list[int], t: int) -> Tensor:
    return torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]  # (B, T) bool


def _cases() -> list[Case]:
    g = fixed_generator()

    def batch(b: int, t: int, v: int) -> tuple[Tensor, Tensor]:
        return randn64(b, t, v, generator=g) * 2, torch.randint(v, (b, t), generator=g)

    z1, y1 = batch(2, 4, 5)
    z2, y2 = batch(3, 5, 4)
    z3, y3 = batch(2, 3, 4)
    z4, y4 = batch(3, 3, 6)
    z5, y5 = batch(2, 4, 3)
    z6, y6 = batch(1, 1, 4)
    middle = torch.tensor([[True, False, True, True], [False, True, True, False]])
    far32 = torch.tensor([[[200.0, 0, 0, 0], [1, 2, 3, 4]], [[0, 1, 0, 1], [9, 0, 0, 0]]])
    far64 = far32.double() * 4
    targets_far = torch.tensor([[1, 2], [3, 0]])
    mask_far = torch.tensor([[True, True], [True, False]])
    specs = [
        ("2 sequences of 4, with 4 and 2 real tokens", z1, y1, _mask([4, 2], 4)),
        ("3 sequences of 5, with 5, 1 and 3 real tokens", z2, y2, _mask([5, 1, 3], 5)),
        ("no padding: every position counts", z3, y3, _mask([3, 3], 3)),
        ("a sequence that is all padding (3, 0 and 2 real tokens)", z4, y4, _mask([3, 0, 2], 3)),
        ("padding in the middle of a sequence", z5, y5, middle),
        ("one sequence of one token", z6, y6, _mask([1], 1)),
        ("float32 logits 200 apart at a real position", far32, targets_far, mask_far),
        ("float64 logits 800 apart at a real position", far64, targets_far, mask_far),
    ]
    return [Case(d, (z, y, m), reference(z, y, m), atol=1e-5, rtol=1e-5) for d, z, y, m in specs]


@checker_of(MASKED_CROSS_ENTROPY, MISTAKES)
def check_masked_cross_entropy(fn: Callable[[Tensor, Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``masked_cross_entropy(logits, targets, mask)``: the mean of −log p(target) over the
    positions where ``mask`` (B, T) is True, from logits (B, T, V)."""
    with one_thread():
        cases = _cases()
        result = check_function(
            MASKED_CROSS_ENTROPY, fn, cases, MISTAKES, forbidden=LOSSES, dtypes=()
        )
        if result.passed and not isinstance(fn(*cases[0].args), Tensor):
            where = f"case '{cases[0].description}'"
            problem = "the result is a Python number; the loss should be a 0-D tensor"
            return failed(MASKED_CROSS_ENTROPY, fn, where, problem, A_NUMBER)
        return result
