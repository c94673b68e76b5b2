"""Notebook 09, Exercise 2: a warm-up whose peak really is ``peak_lr``, then a linear decay.

The learning rate of step s (counted from 1) rises in a straight line to ``peak_lr`` at step
``warmup``, falls in a straight line to ``floor · peak_lr`` at step ``n_steps`` and stays there.
The cases are the corners of three schedules (§6's numbers among them) and steps between them:
step 1, the step before and after the peak, the middle of the decay, the last step and steps
after it, with a floor of 0 in one, so that every mistake of :data:`MISTAKES` shows.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks.nb09_encoder_decoder.answers import check_converted

WARMUP_LINEAR_DECAY = register(
    Exercise(
        id="ex2_warmup_linear_decay",
        notebook="09",
        number=2,
        name="warmup_linear_decay",
        hints=(
            "The schedule is three pieces that meet: a straight line up from 0 that reaches "
            "peak_lr at step warmup, a straight line down from there that reaches "
            "floor · peak_lr at step n_steps, and that floor for every later step. Like the "
            "paper's formula of §5, it is the smaller of a rising and a falling curve; the "
            "floor only stops the falling one.",
            "Check the corners by hand for peak_lr 1, warm-up 20, 100 steps and floor 0.1: "
            "step 1 gives 0.05 (below the floor: the warm-up starts low), step 20 gives 1, step "
            "60 gives 0.55, step 100 gives 0.1 and step 150 still 0.1. Steps count from 1, and "
            "the fall takes n_steps − warmup steps.",
            "Work with fractions of the peak. The rising line is the share of the warm-up done; "
            "the falling line starts at 1 at step warmup and loses 1 − floor over the "
            "n_steps − warmup steps that follow, and is never allowed below the floor. The rate "
            "is the smaller of the two, times peak_lr.",
        ),
    )
)

SCHEDULE_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.warmup_inverse_sqrt: "attnlib.warmup_inverse_sqrt",
        attnlib.warmup_scheduler: "attnlib.warmup_scheduler",
        torch.optim.lr_scheduler.LRScheduler: "a torch.optim.lr_scheduler scheduler",
    }
)


def reference_warmup_linear_decay(
    step: int, peak_lr: float, warmup: int, n_steps: int, floor: float
) -> float:
    """The learning rate of ``step`` (from 1): up to ``peak_lr`` at ``warmup``, then a straight
    line down to ``floor · peak_lr`` at ``n_steps``, and that floor afterwards."""
    rise = step / warmup
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * min(rise, max(floor, fall))


def _fall(s: float, w: int, n: int, f: float) -> float:
    return 1 - (1 - f) * (s - w) / (n - w)


def _right(s: float, peak: float, w: int, n: int, f: float) -> float:
    return peak * min(s / w, max(f, _fall(s, w, n, f)))


PRODUCT = (
    "multiplied the warm-up ramp by a decay that starts at the first step, as §6's loop does",
    "the product of the two is below both: it peaks under peak_lr and reaches the floor "
    "at another step. The decay must start at the peak, at step warmup.",
)
ABSOLUTE_FLOOR = (
    "treated floor as a learning rate instead of a fraction of peak_lr",
    "the floor is a share of the peak: the rate ends at floor · peak_lr.",
)

MISTAKES = (
    Mistake(*PRODUCT, lambda s, peak, w, n, f: peak * min(s / w, 1.0) * max(f, 1 - (s - 1) / n)),
    # the same, its decay written 1 − step / n_steps
    Mistake(*PRODUCT, lambda s, peak, w, n, f: peak * min(s / w, 1.0) * max(f, 1 - s / n)),
    # the same, its decay a line from 1 at step 0 down to the floor at n_steps
    Mistake(
        *PRODUCT,
        lambda s, peak, w, n, f: peak * min(s / w, 1.0) * (1 - (1 - f) * min(s / n, 1.0)),
    ),
    Mistake(
        "held the rate at the floor or above during the warm-up too",
        "the floor is where the decay stops; the warm-up starts from peak_lr / warmup, which "
        "is below the floor when the warm-up is long (§6: 1·10⁻⁴ at step 1, under the floor "
        "of 3·10⁻⁴).",
        lambda s, peak, w, n, f: peak * max(f, min(s / w, _fall(s, w, n, f))),
    ),
    Mistake(
        "let the falling line start at step 0 instead of at the peak",
        "then the line is already below peak_lr when the warm-up ends: the fall runs from "
        "step warmup, where the rate is peak_lr, to step n_steps.",
        lambda s, peak, w, n, f: peak * min(s / w, max(f, 1 - (1 - f) * s / n)),
        variants=(  # the warm-up and the fall written as two branches
            lambda s, peak, w, n, f: peak * s / w if s <= w else peak * max(f, 1 - (1 - f) * s / n),
        ),
    ),
    # the same, with the floor put around both lines (so under the warm-up too)
    Mistake(
        "let the falling line start at step 0 instead of at the peak",
        "then the line is already below peak_lr when the warm-up ends: the fall runs from "
        "step warmup, where the rate is peak_lr, to step n_steps. (The floor stops only the "
        "fall, too: the warm-up starts below it.)",
        lambda s, peak, w, n, f: peak * max(f, min(s / w, 1 - (1 - f) * s / n)),
    ),
    Mistake(
        "let the falling line reach 0 at n_steps and cut it at the floor",
        "that line reaches the floor before n_steps: it must reach floor · peak_lr exactly "
        "at step n_steps.",
        lambda s, peak, w, n, f: peak * min(s / w, max(f, (n - s) / (n - w))),
    ),
    Mistake(
        "divided the decay by n_steps instead of by its length, n_steps − warmup",
        "the fall starts at step warmup, so it has n_steps − warmup steps to lose 1 − floor: "
        "divided by n_steps it reaches the floor too late.",
        lambda s, peak, w, n, f: peak * min(s / w, max(f, 1 - (1 - f) * (s - w) / n)),
    ),
    Mistake(
        "counted the steps from 0: the warm-up reaches the peak one step early",
        "step counts from 1 here: step 1 is the first step, and the rate reaches peak_lr at "
        "step warmup, not at step warmup − 1.",
        lambda s, peak, w, n, f: _right(s + 1, peak, w, n, f),
    ),
    Mistake(
        "shifted the steps by one: the warm-up reaches the peak one step late",
        "step counts from 1 and the rate of step 1 is peak_lr / warmup: the rate reaches "
        "peak_lr at step warmup, not at step warmup + 1.",
        lambda s, peak, w, n, f: _right(s - 1, peak, w, n, f),
    ),
    Mistake(
        "left out the floor: the line keeps falling after n_steps",
        "after step n_steps the rate stays at floor · peak_lr; the line alone goes on "
        "falling, below 0 in the end.",
        lambda s, peak, w, n, f: peak * min(s / w, _fall(s, w, n, f)),
    ),
    Mistake(
        "took the larger of the rising and the falling line",
        "each line is the schedule only where it is the smaller one: the larger rises for ever "
        "after the warm-up.",
        lambda s, peak, w, n, f: peak * max(s / w, max(f, _fall(s, w, n, f))),
    ),
    Mistake(
        *ABSOLUTE_FLOOR,
        lambda s, peak, w, n, f: (
            peak * s / w if s <= w else max(f, peak - (peak - f) * (s - w) / (n - w))
        ),
    ),
    # the same, the line drawn from peak_lr to floor and floor held after n_steps
    Mistake(
        *ABSOLUTE_FLOOR,
        lambda s, peak, w, n, f: (
            peak * s / w if s <= w else f if s >= n else peak + (f - peak) * (s - w) / (n - w)
        ),
    ),
    # the same, the line drawn to floor · peak_lr but held at floor itself or above
    Mistake(
        *ABSOLUTE_FLOOR,
        lambda s, peak, w, n, f: peak * s / w if s <= w else max(f, peak * _fall(s, w, n, f)),
    ),
    Mistake(
        "decayed as 1/√step after the warm-up, as the paper does",
        "this schedule falls in a straight line after the warm-up, to floor · peak_lr at "
        "n_steps; the paper's 1/√step tail falls fast at first and slowly later.",
        lambda s, peak, w, n, f: peak * min(s / w, max(f, (w / s) ** 0.5)),
    ),
    # the same, with the floor put around the paper's whole formula (so under the warm-up too)
    Mistake(
        "decayed as 1/√step after the warm-up, as the paper does",
        "this schedule falls in a straight line after the warm-up, to floor · peak_lr at "
        "n_steps; the paper's 1/√step tail falls fast at first and slowly later. (The floor "
        "stops only the fall, too: the warm-up starts below it.)",
        lambda s, peak, w, n, f: peak * max(f, min(s / w, (w / s) ** 0.5)),
    ),
    Mistake(
        "decayed along a cosine after the warm-up instead of a straight line",
        "the task's fall is a straight line: the rate loses the same amount at every step "
        "from peak_lr at step warmup to floor · peak_lr at n_steps. A cosine falls slowly "
        "near both ends and fast in the middle.",
        lambda s, peak, w, n, f: (
            peak
            * (
                s / w
                if s < w
                else f + (1 - f) * (1 + math.cos(math.pi * min(1.0, (s - w) / (n - w)))) / 2
            )
        ),
    ),
    Mistake(
        "divided with // (whole numbers): the warm-up jumps instead of rising",
        "step // warmup is 0 for every step before the peak: the division must keep the fraction.",
        lambda s, peak, w, n, f: peak * min(s // w, max(f, _fall(s, w, n, f))),
    ),
    Mistake(
        "made the line after the warm-up rise instead of fall (a sign)",
        "after the peak the rate goes down: the falling line loses a little more at each step.",
        lambda s, peak, w, n, f: peak * min(s / w, max(f, 1 + (1 - f) * (s - w) / (n - w))),
    ),
)


def _cases() -> list[Case]:
    schedules = {  # name: ((peak_lr, warmup, n_steps, floor), steps)
        "peak 1e-3, warm-up 10, 100 steps, floor 0.1":
            ((1e-3, 10, 100, 0.1), (1, 4, 9, 10, 11, 40, 100, 130)),
        "§6's numbers: peak 6e-3, warm-up 60, 600 steps, floor 0.05":
            ((6e-3, 60, 600, 0.05), (1, 60, 300, 571, 600, 650)),
        "peak 0.5, warm-up 4, 12 steps, floor 0": ((0.5, 4, 12, 0.0), (3, 8, 12, 20)),
    }  # fmt: skip
    return [
        Case(f"step {s} of ({name})", (s, *args), reference_warmup_linear_decay(s, *args))
        for name, (args, steps) in schedules.items()
        for s in steps
    ]


def _as_float(got: object) -> object:
    """A rate returned as an int, a NumPy number or a one-element tensor is a number too."""
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        return float(got)
    if isinstance(got, numbers.Real) and not isinstance(got, bool):
        return float(got)
    return got


@checker_of(WARMUP_LINEAR_DECAY, MISTAKES)
def check_warmup_linear_decay(fn: Callable[[int, float, int, int, float], float]) -> CheckResult:
    """Check ``warmup_linear_decay(step, peak_lr, warmup, n_steps, floor)``: one number."""
    return check_converted(
        WARMUP_LINEAR_DECAY,
        fn,
        _as_float,
        _cases,
        MISTAKES,
        forbidden=SCHEDULE_IMPLEMENTATIONS,
        atol=1e-12,
        rtol=1e-6,  # a rate computed in float32 is right: it keeps 7 digits
        output_names=("the learning rate",),
    )
