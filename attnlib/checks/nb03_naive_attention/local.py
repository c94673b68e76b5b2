"""Notebook 03, Exercise 3: causal self-attention that looks back over a window of positions.

``local_self_attention(x, window)``: naive (unscaled) self-attention in which position t may
attend only to positions t − window + 1 … t (itself and the window − 1 before it, fewer at the
start); every other weight is exactly 0 and each row still sums to 1. The cases show each
mistake: windows of 1, 2 and 3 and one longer than the sequence (off-by-one windows, the whole
past, the future, both sides), T ≠ C and a batch whose size differs from T (the length taken
from the wrong dimension), a (B, H, T, C) batch, a single vector, a long vector after short
ones (a softmax over the whole row rounds the visible weights to 0) and float16 (−1e9 does not
fit in it). Vectors are short, so that a hidden score left at 0 still gets a visible weight.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._properties import rows_sum_to_one
from attnlib.checks._run import check_function
from attnlib.checks.nb03_naive_attention._common import named_by_overflow, zero_outside

Tensor = torch.Tensor

LOCAL = register(
    Exercise(
        id="ex3_local_self_attention",
        notebook="03",
        number=3,
        name="local_self_attention",
        hints=(
            "A weight is exactly 0 only if its score never reached the softmax as a finite "
            "number: what score has e^score = 0? Decide, for every pair (query t, key j), "
            "whether j is inside t's window, and hide the rest before the softmax normalises.",
            "Key j is in query t's window when it is not in the future (j ≤ t) and not too far "
            "back (t − j < window). Compare a column of query positions with a row of key "
            "positions (torch.arange) and you get the whole (T, T) table of allowed pairs at "
            "once, for any batch.",
            "Build the allowed table from two comparisons of position indices combined with &, "
            "T being x.shape[-2]. Fill the scores x xᵀ where a pair is not allowed with -inf "
            "(a value every float type can hold), then take the row softmax and mix x. Position "
            "t always sees itself, so no row is left empty.",
        ),
    )
)

# Attention functions that take a mask already do what this exercise asks.
MASKED_ATTENTION = Forbidden(
    python={
        attnlib.scaled_dot_product_attention: "attnlib.scaled_dot_product_attention",
        attnlib.tiled_attention: "attnlib.tiled_attention",
        attnlib.fused_attention: "attnlib.fused_attention",
    },
    torch={"scaled_dot_product_attention": "torch's scaled_dot_product_attention"},
)


def _band(t: int, low: int, high: int) -> Tensor:
    """(t, t): key j allowed for query i when low ≤ i − j ≤ high."""
    offset = torch.arange(t)[:, None] - torch.arange(t)[None, :]  # i − j
    return (offset >= low) & (offset <= high)


def _window(x: Tensor, window: int) -> Tensor:
    return _band(x.shape[-2], 0, window - 1)


def _masked(
    x: Tensor, allowed: Tensor, fill: float = -math.inf, scale: float = 1.0
) -> tuple[Tensor, Tensor]:
    scores = (x @ x.transpose(-2, -1)) * scale
    weights = torch.softmax(scores.masked_fill(~allowed, fill), dim=-1)
    return weights @ x, weights


def _renormalised_after(x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    return weights @ x, weights


def _float32_bias(x: Tensor, window: int) -> tuple[Tensor, Tensor]:
    t = x.shape[-2]
    bias = torch.zeros(t, t).masked_fill(~_band(t, 0, window - 1), -math.inf)  # float32
    weights = torch.softmax(x @ x.transpose(-2, -1) + bias, dim=-1)
    return weights @ x, weights


def _renormalised(x: Tensor, allowed: Tensor) -> tuple[Tensor, Tensor]:
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1) * allowed
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ x, weights


def _exp_unshifted(x: Tensor, window: int, *, hide_first: bool) -> tuple[Tensor, Tensor]:
    allowed, scores = _window(x, window), x @ x.transpose(-2, -1)
    if hide_first:  # e^-inf is 0
        powers = torch.exp(scores.masked_fill(~allowed, -math.inf))
    else:  # the hidden ones multiplied by 0 afterwards
        powers = torch.exp(scores) * allowed
    weights = powers / powers.sum(dim=-1, keepdim=True)
    return weights @ x, weights


UNSHIFTED = "exponentiated the scores by hand without subtracting each row's largest first"
UNSHIFTED_ZEROED = (
    "exponentiated the scores by hand without subtracting each row's largest, then zeroed the "
    "hidden ones"
)
UNSHIFTED_WHY = (
    "e to an unscaled score overflows as soon as a vector is long (above about 88 in float32, "
    "11 in float16), and inf / inf is NaN; softmax does not change when a row's largest "
    "visible score is subtracted from every score of that row, which keeps each exponential "
    "at most 1."
)

MISTAKES = (
    Mistake(
        "left out the mask: every position sees every position",
        "without hiding anything, position t mixes the whole sequence, the future included.",
        lambda x, window: _masked(x, torch.ones(x.shape[-2], x.shape[-2], dtype=torch.bool)),
    ),
    Mistake(
        "kept the whole past: a causal mask without the window",
        "position t may see only its last `window` positions, itself included: keys further "
        "back than t − window + 1 must get weight 0 too.",
        lambda x, window: _masked(x, _band(x.shape[-2], 0, x.shape[-2])),
    ),
    Mistake(
        "let each position see window + 1 positions, t − window … t",
        "the window holds `window` positions counting t itself: with window = 1 a position "
        "sees only itself.",
        lambda x, window: _masked(x, _band(x.shape[-2], 0, window)),
    ),
    Mistake(
        "let each position see only window − 1 positions: the window stops one short",
        "the window holds `window` positions counting t itself: t − window + 1 is still in it.",
        lambda x, window: _masked(x, _band(x.shape[-2], 0, window - 2)),
    ),
    Mistake(
        "hid each position from itself: the window ends at t − 1",
        "position t belongs to its own window; without it position 0 sees nothing at all and "
        "its row of the softmax is 0 / 0.",
        lambda x, window: _masked(x, _band(x.shape[-2], 1, window)),
    ),
    Mistake(
        "hid each position from itself, filling with the smallest number of the dtype",
        "position t belongs to its own window; without it position 0's scores are all equal "
        "and it spreads its weight over positions it may not see.",
        lambda x, window: _masked(x, _band(x.shape[-2], 1, window), torch.finfo(x.dtype).min),
    ),
    Mistake(
        "hid the past instead of the future: each position saw itself and every later one",
        "a causal window looks back from t: the keys after t are the ones to hide, and those "
        "before it, up to window − 1 of them, stay.",
        lambda x, window: _masked(x, _band(x.shape[-2], -x.shape[-2], 0)),
    ),
    Mistake(
        "turned the window towards the future: positions t … t + window − 1",
        "the window looks back: the keys after t are the future a causal model may not see.",
        lambda x, window: _masked(x, _band(x.shape[-2], -(window - 1), 0)),
    ),
    Mistake(
        "let each position see window − 1 positions on both sides, past and future",
        "the window is causal: it reaches back from t, never forward.",
        lambda x, window: _masked(x, _band(x.shape[-2], -(window - 1), window - 1)),
    ),
    Mistake(
        "cut the window off at t − window + 1 but not at t: each position also saw the future",
        "a causal window has two ends: keys further back than t − window + 1 are hidden, and "
        "so is every key after t.",
        lambda x, window: _masked(x, _band(x.shape[-2], -x.shape[-2], window - 1)),
    ),
    Mistake(
        "mixed a float32 tensor into the float16 scores, so the weights could not mix x",
        "float16 together with float32 gives float32: the weights no longer have x's dtype, "
        "and a matrix product needs both in one dtype. Whatever is added to or written into "
        "the scores and weights should be made in x's dtype.",
        _float32_bias,
    ),
    Mistake(
        "used the mask the wrong way round: the allowed scores were the ones hidden",
        "in this course True means 'may attend': fill the scores where the table is False. "
        "The other way round each position sees exactly what it should not.",
        lambda x, window: _masked(x, ~_window(x, window)),
    ),
    Mistake(
        "set the hidden weights to 0 after the softmax, without renormalising",
        "the softmax had already shared each row's weight among all positions; zeroing some "
        "afterwards leaves rows that sum to less than 1. Hide the scores before the softmax.",
        lambda x, window: _renormalised_after(x, _window(x, window)),
    ),
    Mistake(
        "filled the hidden scores with 0 instead of -inf",
        "a score of 0 still gets the weight e^0 = 1 before normalising, as much as a real "
        "score of 0: hidden positions keep a share of the weight.",
        lambda x, window: _masked(x, _window(x, window), fill=0.0),
    ),
    Mistake(
        "filled the hidden scores with -1e9, which float16 cannot hold",
        "float16 stops at about -65504, so masked_fill refuses -1e9 there; -inf (or the "
        "dtype's own smallest number) works in every float type.",
        lambda x, window: _masked(x, _window(x, window), fill=-1e9),
    ),
    Mistake(
        "took T from x.shape[0], which for a batch is the number of sequences",
        "x is (..., T, C): the length of a sequence is the size of its second-to-last dimension, "
        "whatever the batch dimensions in front.",
        lambda x, window: _masked(x, _band(x.shape[0], 0, window - 1)),
    ),
    Mistake(
        "took T from x.shape[1], which is the length only for a (B, T, C) batch",
        "for one sequence (T, C) dim 1 is the width C, and in a (B, H, T, C) batch it is H: "
        "the length of a sequence is always the size of the second-to-last dimension.",
        lambda x, window: _masked(x, _band(x.shape[1], 0, window - 1)),
    ),
    Mistake(
        "returned the pair the wrong way round, (weights, out)",
        "the task asks for (out, weights): the output first, shape (..., T, C), then the "
        "weights, shape (..., T, T).",
        lambda x, window: _masked(x, _window(x, window))[::-1],
    ),
    Mistake(
        "divided the scores by √C: this exercise is naive, unscaled attention",
        "the task asks for the scores x xᵀ of section 2; the scaling of section 4 changes "
        "every weight.",
        lambda x, window: _masked(x, _window(x, window), scale=1 / math.sqrt(x.shape[-1])),
    ),
    Mistake(UNSHIFTED, UNSHIFTED_WHY, lambda x, w: _exp_unshifted(x, w, hide_first=True)),
    Mistake(UNSHIFTED_ZEROED, UNSHIFTED_WHY, lambda x, w: _exp_unshifted(x, w, hide_first=False)),
    Mistake(
        "took the softmax of the whole row, then zeroed the hidden weights and renormalised",
        "it is the same in exact arithmetic, but the softmax shifts by the largest score of the "
        "row, a hidden one too: when a hidden score is far above the visible ones (a long vector "
        "later in the sequence), every visible weight rounds to 0 and the renormalisation "
        "divides 0 by 0. Hide the scores before the softmax.",
        lambda x, window: _renormalised(x, _window(x, window)),
    ),
)


def _reference(x: Tensor, window: int) -> tuple[Tensor, Tensor]:
    return _masked(x.double(), _window(x, window))


def _cases() -> list[Case]:
    g = fixed_generator()

    def short(*shape: int) -> Tensor:
        return 0.6 * torch.randn(*shape, generator=g)

    half = short(5, 3).half()
    # The last vector is long: every earlier position scores far higher with it than with
    # anything it may see.
    long_last = torch.tensor([[1.0, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [150, 50, 0]])
    specs = [
        ("5 vectors of width 3, window 2", short(5, 3), 2),
        ("window 1: each position sees only itself, (4, 3)", short(4, 3), 1),
        ("a window longer than the sequence: (4, 3), window 6", short(4, 3), 6),
        ("6 vectors of width 4, window 3", short(6, 4), 3),
        ("a single vector, (1, 3), window 3", short(1, 3), 3),
        ("a batch of 2 sequences, (2, 6, 3), window 3", short(2, 6, 3), 3),
        ("a (B, H, T, C) = (2, 2, 5, 4) batch, window 2", short(2, 2, 5, 4), 2),
        ("a long vector last, (4, 3), window 2", long_last, 2),
    ]
    cases = [Case(name, (x, w), _reference(x, w)) for name, x, w in specs]
    cases.append(Case("float16, (5, 3), window 2", (half, 2), _reference(half, 2), 3e-3, 3e-3))
    return cases


def _allowed(case: Case) -> Tensor:
    x, window = case.args
    return _window(x, window)


MINUS_1E9 = next(m for m in MISTAKES if "-1e9" in m.name)


@checker_of(LOCAL, MISTAKES)
def check_local_self_attention(
    fn: Callable[[Tensor, int], tuple[Tensor, Tensor]],
) -> CheckResult:
    """Check ``local_self_attention(x, window) -> (out, weights)`` for ``x`` ``(..., T, C)``."""
    cases = _cases()
    result = check_function(
        LOCAL,
        fn,
        cases,
        MISTAKES,
        forbidden=MASKED_ATTENTION,
        properties=(zero_outside(_allowed, "outside the query's window"), rows_sum_to_one()),
    )
    # -1e9 with another mistake: name the one float16 shows beyond doubt, one fix at a time.
    return named_by_overflow(result, LOCAL, fn, cases[-1], MINUS_1E9)
