"""Notebook 11, Exercise 1: max pooling over the real tokens only.

sentence-transformers' pooling step can take, for each feature, the largest value over a
sentence's tokens instead of their mean (``pooling_mode_max_tokens`` in the model's
``1_Pooling/config.json``). Padding must not be able to win. The cases show each mistake:
real values that are all negative (padding set to 0 wins), padding larger than every real value
(the mask ignored), padding on the left, float16 (a fill of -1e9 does not fit), a square input
(a mask without its feature dimension lines up with the wrong axes), a single token, and a
feature whose real values are all below -10000 (a fixed fill such as -10000 wins). An answer
right on every case that changes the caller's ``hidden`` is told so.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.engine import check_function
from attnlib.checks.engine.in_place import edits_its_input
from attnlib.course import own_encoder

Tensor = torch.Tensor
_HALF = {"atol": 1e-2, "rtol": 1e-2}  # float16 arithmetic, for recognising a mistake made there

MAX_POOL = register(
    Exercise(
        id="ex1_my_max_pool",
        notebook="11",
        number=1,
        name="my_max_pool",
        hints=(
            "A padding position must not be able to win the maximum, whatever the real tokens "
            "hold: before you take the maximum over the tokens, give every padding entry a value "
            "that no real value can lose to.",
            "Multiplying by the mask (or filling with 0) is not enough: when a feature is "
            "negative at every real token, a 0 at a padding position still wins. The value to "
            "put there is the lowest one the dtype can hold, and the mask needs a size-1 feature "
            "dimension to line up with (B, T, C).",
            "Fill the padding entries with the dtype's smallest value (`torch.finfo` gives it "
            "for any float dtype; -inf also works here, since every sentence has a real token), "
            "then take the maximum along the token dimension, dim 1, and keep only its values. "
            "A fixed number such as -1e9 overflows in float16.",
        ),
    )
)


# The course's own max pool, and torch's masked maximum (a masked amax over the tokens).
FORBIDDEN = Forbidden(
    python={
        own_encoder.max_pool: "attnlib.course.own_encoder.max_pool",
        torch.masked.amax: "torch.masked.amax",
    }
)


def reference_max_pool(hidden: Tensor, token_mask: Tensor) -> Tensor:
    """The reference: the largest value of each feature over the real tokens, in float64."""
    filled = hidden.double().masked_fill(~token_mask[..., None], float("-inf"))  # (B, T, C)
    return filled.amax(dim=1)  # (B, C)


def _fill(hidden: Tensor, token_mask: Tensor, value: float) -> Tensor:
    return hidden.masked_fill(~token_mask.unsqueeze(-1), value)  # (B, T, C)


def _first_positions(h: Tensor, m: Tensor) -> Tensor:
    lengths = m.sum(dim=1)  # (B,): how many real tokens
    return torch.stack([h[b, : int(n)].amax(dim=0) for b, n in enumerate(lengths)])


def _in_place(h: Tensor, m: Tensor) -> Tensor:
    h[~m] = float("-inf")
    return h.amax(dim=1)


IN_PLACE = Mistake(
    "wrote into the caller's hidden in place (hidden[~token_mask] = …)",
    "hidden is not yours to change: the caller uses it again (section 4 pools the same hidden "
    "states by their mean), and finds -inf where the padding was.",
    _in_place,
)

MISTAKES = (
    Mistake(
        "averaged the real tokens instead of taking their maximum",
        "that is section 4's mean pooling; max pooling keeps, for each feature, the single "
        "largest value any real token has.",
        lambda h, m: (h * m[..., None]).sum(1) / m.sum(1, keepdim=True),
    ),
    Mistake(
        "took the maximum over every position, padding included",
        "a padding vector can hold anything, larger values too: the mask must decide which "
        "positions may win.",
        lambda h, m: h.amax(dim=1),
    ),
    Mistake(
        "set the padding to 0 before taking the maximum (by multiplying by the mask or "
        "filling with 0)",
        "when a feature is negative at every real token of a sentence, the padding's 0 is "
        "larger and wins: padding must be lower than any value a real token can have.",
        lambda h, m: (h * m[..., None]).amax(dim=1),
    ),
    Mistake(
        "blocked the real tokens and kept the padding",
        "token_mask is True for a real token, as everywhere in this course: the positions "
        "to keep out are those where it is False.",
        lambda h, m: _fill(h, ~m, float("-inf")).amax(dim=1),
    ),
    Mistake(
        "filled the padding with a fixed very negative number (-1e9, or float32's smallest "
        "value) that float16 cannot hold",
        "float16 reaches only about ±65504, so the fill overflows and PyTorch refuses it; the "
        "lowest value must come from the dtype of `hidden` (notebook 07).",
        lambda h, m: _fill(h, m, -1e9).amax(dim=1),
    ),
    Mistake(
        "filled the padding with a fixed negative number (such as -10000) that real values "
        "can fall below",
        "a feature whose real values are all below the fill is won by the padding; the fill "
        "must lie below every value the dtype can hold: its smallest one, or -inf.",
        lambda h, m: _fill(h, m, -1e4).amax(dim=1),
    ),
    Mistake(
        "took the first positions as the real tokens, as if the padding always came last",
        "the mask says which positions are real, wherever they are: padding may come first, "
        "and then the first `length` positions hold padding.",
        _first_positions,
    ),
    Mistake(
        "took the maximum over the features (the last dimension), not over the tokens",
        "pooling makes one vector per sentence: each of its C features is the largest value "
        "that feature takes over the sentence's tokens, along dim 1.",
        lambda h, m: _fill(h, m, float("-inf")).amax(dim=-1),
    ),
    Mistake(
        "took the maximum over the batch (dim 0), not over each sentence's tokens",
        "each sentence is pooled on its own, over its tokens along dim 1; dim 0 runs across "
        "the sentences.",
        lambda h, m: _fill(h, m, float("-inf")).amax(dim=0),
    ),
    Mistake(
        "took one maximum over the real tokens of the whole batch, not one per sentence",
        "selecting hidden[token_mask] flattens the batch: the result is one vector of C "
        "values for all sentences together instead of one per sentence, shape (B, C).",
        lambda h, m: h[m].amax(dim=0),
    ),
    Mistake(
        "returned torch.max's pair (values, indices) instead of the values",
        "with a dim, torch.max returns both the largest values and where they are; the pooled "
        "vectors are the values alone.",
        lambda h, m: _fill(h, m, float("-inf")).max(dim=1),
    ),
    Mistake(
        "returned the position of each maximum (argmax) instead of its value",
        "the pooled vector holds the largest values themselves, not the indices of the "
        "tokens they come from.",
        lambda h, m: _fill(h, m, float("-inf")).argmax(dim=1),
    ),
    Mistake(
        "used the mask without a size-1 feature dimension",
        "a (B, T) mask broadcasts against (B, T, C) from the right, lining T up with C and B "
        "with T: it fails for most shapes and, when they happen to match, blocks the wrong "
        "entries.",
        lambda h, m: h.masked_fill(~m, float("-inf")).amax(dim=1),
    ),
    Mistake(
        "gave the mask its size-1 dimension in the middle, (B, 1, T), instead of at the end",
        "the mask must line up with hidden's tokens, dimension 1 of (B, T, C): with the extra "
        "dimension in the middle its T lines up with the features, which fails for most "
        "shapes and, when T equals C, blocks features instead of tokens.",
        lambda h, m: h.masked_fill(~m.unsqueeze(1), float("-inf")).amax(dim=1),
    ),
    IN_PLACE,
)


def _cases() -> list[Case]:
    g = fixed_generator()
    right = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    left = right.flip(-1)  # (3, 5): the padding first
    batch = torch.randn(3, 5, 4, generator=g, dtype=torch.float64)
    negative = -batch.abs() - 0.5  # every real value below 0 …
    negative[~right] = 0.0  # … and the padding at 0, as many models leave it
    large_padding = batch.clone()
    large_padding[~right] = 5.0  # every padding entry larger than every real one
    square = torch.randn(3, 3, 3, generator=g, dtype=torch.float64)
    square_mask = torch.tensor([[1, 1, 1], [1, 1, 0], [1, 0, 0]], dtype=torch.bool)
    half = torch.randn(2, 4, 3, generator=g).half()
    half_mask = torch.tensor([[1, 1, 1, 0], [0, 1, 1, 1]], dtype=torch.bool)
    one = torch.randn(2, 1, 3, generator=g, dtype=torch.float64)
    far = batch.clone()
    far[..., 0] = -3e4 - batch[..., 0].abs()  # feature 0: every real value below -10000
    specs = [
        ("3 sentences of 5 tokens, 4 features, padded on the right", batch, right),
        ("every real value negative, the padding 0", negative, right),
        ("padding vectors larger than every real value", large_padding, right),
        ("padded on the left", large_padding, left),
        ("float16, one sentence padded on each side", half, half_mask),  # wider tolerance
        ("a square input: 3 sentences of 3 tokens, 3 features", square, square_mask),
        ("sentences of a single token", one, torch.ones(2, 1, dtype=torch.bool)),
        ("a feature whose real values are all below -10000", far, right),
    ]
    return [
        Case(d, (h, m), reference_max_pool(h, m), **_HALF if h.dtype == torch.float16 else {})
        for d, h, m in specs
    ]


@checker_of(MAX_POOL, MISTAKES)
def check_masked_max_pool(fn: Callable[[Tensor, Tensor], Tensor]) -> CheckResult:
    """Check ``my_max_pool(hidden (B, T, C), token_mask (B, T) bool) -> (B, C)``."""
    cases = _cases()
    result = check_function(
        MAX_POOL, fn, cases, MISTAKES, forbidden=FORBIDDEN, atol=1e-9, rtol=1e-9, dtypes=()
    )
    edited = edits_its_input(fn, cases) if result.passed else None
    if edited is None:
        return result
    problem = "the result is right, but after the call the caller's hidden has changed"
    return failed(MAX_POOL, fn, f"case '{edited.description}'", problem, IN_PLACE)
