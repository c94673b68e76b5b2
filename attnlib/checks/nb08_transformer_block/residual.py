"""Notebook 08, Exercise 3: a residual block with dropout, post-norm or pre-norm.

The block gets its sublayer, its LayerNorm (random γ and β, so that a LayerNorm of the
learner's own shows) and its dropout as callables. The dropout is a stand-in that zeroes a
fixed pattern of entries and scales the rest by 1.5, as ``nn.Dropout(1/3)`` would in training:
the same on every run, so that where it was applied (and how often) shows in the result.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64
from attnlib.checks._threads import on_one_thread
from attnlib.checks.engine import check_function

Tensor = torch.Tensor
Fn = Callable[[Tensor], Tensor]

RESIDUAL_BLOCK = register(
    Exercise(
        id="ex3_residual_block",
        notebook="08",
        number=3,
        name="residual_block",
        hints=(
            "Both wirings keep a skip path that carries x to the output and add the sublayer's "
            "contribution to it; they differ only in where the LayerNorm sits. Dropout belongs "
            "to the sublayer's contribution alone: section 2's identity path must stay intact.",
            "Pre-norm: the sublayer reads the normalised x, and the sum (skip plus contribution) "
            "is the output, never normalised. Post-norm: the sublayer reads x itself, and the "
            "sum is normalised. In both, dropout acts once, on what the sublayer returned, "
            "before the addition.",
            "Write the two wirings as the two branches of an if on norm_first. In each, the "
            "contribution is dropout applied to the sublayer's output; the skip path adds the "
            "block's own input x (not its normalised version); `norm` is the one given, called "
            "once: on the sublayer's input (pre-norm) or on the sum (post-norm).",
        ),
    )
)

RESIDUAL_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.Residual: "attnlib.Residual",
        attnlib.residual_connection: "attnlib.residual_connection",
    }
)


def _layer_norm(h: Tensor) -> Tensor:
    return F.layer_norm(h, h.shape[-1:])


def _block(
    pre: Callable[[Tensor, Fn, Fn, Fn], Tensor], post: Callable[[Tensor, Fn, Fn, Fn], Tensor]
) -> Callable[[Tensor, Fn, Fn, Fn, bool], Tensor]:
    """A learner's block, written as its two branches."""

    def block(x: Tensor, sublayer: Fn, norm: Fn, dropout: Fn, norm_first: bool) -> Tensor:
        return (pre if norm_first else post)(x, sublayer, norm, dropout)

    return block


def _right_pre(x: Tensor, f: Fn, norm: Fn, drop: Fn) -> Tensor:
    return x + drop(f(norm(x)))


def _right_post(x: Tensor, f: Fn, norm: Fn, drop: Fn) -> Tensor:
    return norm(x + drop(f(x)))


MISTAKES = (
    Mistake(
        "swapped the two wirings: norm_first=True is pre-norm",
        "norm_first says the norm comes first, on the sublayer's input (pre-norm); without it "
        "the norm comes last, on the sum (post-norm, the paper).",
        _block(_right_post, _right_pre),
    ),
    Mistake(
        "always used post-norm, whatever norm_first was",
        "norm_first=True asks for pre-norm: the norm on the sublayer's input, the sum left as it "
        "is.",
        _block(_right_post, _right_post),
    ),
    Mistake(
        "always used pre-norm, whatever norm_first was",
        "norm_first=False asks for post-norm, the paper's wiring: the sublayer reads x and the "
        "sum is normalised.",
        _block(_right_pre, _right_pre),
    ),
    Mistake(
        "in pre-norm, carried the normalised x on the skip path",
        "the skip path of pre-norm carries x itself: adding LN(x) instead normalises the path "
        "that should pass through every block untouched.",
        _block(lambda x, f, n, d: n(x) + d(f(n(x))), _right_post),
    ),
    Mistake(
        "in post-norm, normalised the sublayer's output instead of the sum",
        "post-norm normalises x plus the sublayer's contribution, LN(x + f(x)); x + LN(f(x)) "
        "leaves the sum, and so the stack, unnormalised.",
        _block(_right_pre, lambda x, f, n, d: x + n(d(f(x)))),
    ),
    Mistake(
        "in post-norm, gave the sublayer the normalised x",
        "in post-norm the sublayer reads x as it comes; the norm is applied once, to the sum.",
        _block(_right_pre, lambda x, f, n, d: n(x + d(f(n(x))))),
    ),
    Mistake(
        "in pre-norm, normalised the sum as well",
        "pre-norm leaves the sum as it is: normalising it puts a LayerNorm back on the skip "
        "path, which is what pre-norm avoids (the stack's one final LayerNorm does that job).",
        _block(lambda x, f, n, d: n(x + d(f(n(x)))), _right_post),
    ),
    Mistake(
        "in pre-norm, normalised the sublayer's output instead of its input",
        "pre-norm puts the LayerNorm first, on what the sublayer reads: x + f(LN(x)).",
        _block(lambda x, f, n, d: x + n(d(f(x))), _right_post),
    ),
    Mistake(
        "in post-norm, left out the LayerNorm",
        "post-norm's LayerNorm comes last, on the sum, LN(x + f(x)): without it nothing in a "
        "post-norm block normalises, and the sums grow from block to block.",
        _block(_right_pre, lambda x, f, n, d: x + d(f(x))),
    ),
    Mistake(
        "in post-norm, normalised x and then added the sublayer's output, not the sum",
        "post-norm normalises the sum, LN(x + f(x)): the sublayer's contribution must go "
        "through the norm too.",
        _block(_right_pre, lambda x, f, n, d: n(x) + d(f(x))),
    ),
    Mistake(
        "applied dropout to the sum, skip path included",
        "dropout belongs to the sublayer's contribution only: dropping entries of the sum also "
        "cuts the skip path, the identity that carries x and the gradient through the stack.",
        _block(lambda x, f, n, d: d(x + f(n(x))), lambda x, f, n, d: n(d(x + f(x)))),
    ),
    Mistake(
        "applied dropout to the sublayer's input instead of its output",
        "the paper drops entries of each sublayer's output, before it is added to the sublayer's "
        "input: the sublayer itself reads its input whole.",
        _block(lambda x, f, n, d: x + f(d(n(x))), lambda x, f, n, d: n(x + f(d(x)))),
    ),
    Mistake(
        "applied dropout to the block's input x, before the norm",
        "dropout acts on the sublayer's output, before the addition; dropped before the norm "
        "it changes what the sublayer reads (and the statistics the norm takes) instead.",
        _block(lambda x, f, n, d: x + f(n(d(x))), lambda x, f, n, d: n(x + f(d(x)))),
    ),
    Mistake(
        "applied dropout to the block's output, after the norm",
        "dropout acts on the sublayer's output before the addition; on the block's output it "
        "hits the skip path and undoes the normalisation of post-norm.",
        _block(lambda x, f, n, d: d(x + f(n(x))), lambda x, f, n, d: d(n(x + f(x)))),
    ),
    Mistake(
        "left dropout out",
        "the block must apply the dropout it is given (in training it is what regularises the "
        "sublayer); this check's dropout drops a fixed third of the entries, which shows.",
        _block(lambda x, f, n, d: x + f(n(x)), lambda x, f, n, d: n(x + f(x))),
    ),
    Mistake(
        "applied dropout twice",
        "each call of dropout drops entries and scales the rest up again: twice drops more than "
        "the rate asks and scales the rest twice.",
        _block(lambda x, f, n, d: x + d(d(f(n(x)))), lambda x, f, n, d: n(x + d(d(f(x))))),
    ),
    Mistake(
        "used a LayerNorm of your own instead of the `norm` given",
        "the block's LayerNorm has learned γ and β; F.layer_norm without them (or a norm of "
        "your own) normalises differently.",
        _block(
            lambda x, f, n, d: x + d(f(_layer_norm(x))),
            lambda x, f, n, d: _layer_norm(x + d(f(x))),
        ),
    ),
    Mistake(
        "left out the skip path: returned the sublayer's branch only",
        "a residual block adds the sublayer's contribution to its input x; without the addition "
        "the gradient has no identity path (section 2).",
        _block(lambda x, f, n, d: d(f(n(x))), lambda x, f, n, d: n(d(f(x)))),
    ),
)


def pattern_dropout(x: Tensor) -> Tensor:
    """Dropout with rate 1/3 that always drops the same entries: every third, by position."""
    keep = (torch.arange(x.numel()) % 3 != 1).reshape(x.shape)
    return x * keep.to(x.dtype) * 1.5


def _cases() -> list[Case]:
    g = fixed_generator()
    c = 6
    weight, bias = randn64(c, c, generator=g) / 2, randn64(c, generator=g) / 2

    def sublayer(h: Tensor) -> Tensor:
        return torch.tanh(h @ weight.T + bias)

    norm = nn.LayerNorm(c).double()
    with torch.no_grad():
        norm.weight.copy_(1 + 0.5 * randn64(c, generator=g))
        norm.bias.copy_(0.5 * randn64(c, generator=g))
    specs = [
        ("post-norm, x of shape (2, 3, 6)", (2, 3, 6), False),
        ("pre-norm, x of shape (2, 3, 6)", (2, 3, 6), True),
        ("post-norm, one position (1, 1, 6)", (1, 1, 6), False),
        ("pre-norm, 4 positions (4, 6)", (4, 6), True),
    ]
    cases = []
    for description, shape, norm_first in specs:
        x = 2 * randn64(*shape, generator=g) + 1
        right = _right_pre if norm_first else _right_post
        with torch.no_grad():
            expected = right(x, sublayer, norm, pattern_dropout)
        args = (x, sublayer, norm, pattern_dropout, norm_first)
        cases.append(Case(description, args, expected, atol=1e-8, rtol=1e-7))
    return cases


@checker_of(RESIDUAL_BLOCK, MISTAKES)
@on_one_thread
def check_residual_block_with_dropout(
    fn: Callable[[Tensor, Fn, Fn, Fn, bool], Tensor],
) -> CheckResult:
    """Check ``residual_block(x, sublayer, norm, dropout, norm_first)``, pre- and post-norm."""
    cases = _cases()
    # A mistake in each wiring is named by the first failing case's wiring (its norm_first).
    return check_function(
        RESIDUAL_BLOCK,
        fn,
        cases,
        MISTAKES,
        forbidden=RESIDUAL_IMPLEMENTATIONS,
        group_of=lambda case: case.args[4],
    )
