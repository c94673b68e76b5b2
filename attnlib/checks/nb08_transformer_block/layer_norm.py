"""Notebook 08, Exercise 2: LayerNorm over the trailing dimensions γ covers, with γ, β and ε.

The cases show each mistake: [1, 2, 3, 4] (the unbiased variance, 5/3 instead of 5/4), a
square batch (statistics without ``keepdim``, or down the columns), γ of shape (3, 4) (the last
dimension alone), a constant vector (no ε: 0 / 0), a tiny spread around a large mean, in float64
(ε outside the root) and in float32 (a variance that cancels), and ε = 0.5 (ε ignored). A right
result computed by editing x in place is refused as well (by the framework's check that an
answer leaves its arguments as they were), and named as the table's in-place mistake. Every
result must keep its input's dtype (float64, float32, and float16 tried on the first case): a
result in another dtype, or a float32 constant that breaks float16, is named.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Exercise, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator, randn64, vec
from attnlib.checks._implementations import LAYER_NORM as NORMALISATIONS  # may not be called
from attnlib.checks._outcomes import call
from attnlib.checks._threads import on_one_thread
from attnlib.checks.engine import check_function
from attnlib.checks.nb08_transformer_block.layer_norm_mistakes import (
    CANCELLING,
    MISTAKES,
)

Tensor = torch.Tensor

LAYER_NORM = register(
    Exercise(
        id="ex2_layer_norm",
        notebook="08",
        number=2,
        name="layer_norm",
        hints=(
            "LayerNorm treats each position on its own: its statistics come from the entries of "
            "that position only, which are the trailing dimensions γ has the shape of. With γ of "
            "shape (3, 4), one position is a whole 3 × 4 block.",
            "Per position: the mean, and the variance as the mean squared distance from it "
            "(divide by the number of entries, not one fewer). ε joins the variance before the "
            "square root, so that a position whose entries are all equal gives 0, not 0 / 0. "
            "Keep the reduced dimensions (size 1) so the statistics line up with x.",
            "Reduce over the last γ.dim() dimensions at once (a tuple of negative dims), with "
            "keepdim. Subtract the mean first and average the squares of what is left: "
            "E[x²] − E[x]² loses every digit in float32 when the mean is large and the spread "
            "tiny. Divide by the root of variance + ε, then scale by γ and shift by β.",
        ),
    )
)


FLOAT32_CASE = "float32 vectors of mean 10 and variance about 1e-6"
FLOAT32_TOL = 1e-2


def reference_layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float) -> Tensor:
    """The reference, in float64 from the case's own (possibly float32) inputs."""
    shape = tuple(gamma.shape)
    return F.layer_norm(x.double(), shape, gamma.double(), beta.double(), eps)


def _cases() -> list[Case]:
    g = fixed_generator()

    def affine(*shape: int) -> tuple[Tensor, Tensor]:
        return 1 + 0.5 * randn64(*shape, generator=g), 0.5 * randn64(*shape, generator=g)

    gamma4, beta4 = affine(4)
    gamma8, beta8 = affine(8)
    gamma34, beta34 = affine(3, 4)
    gamma16, beta16 = affine(16)
    tiny64 = 1000 + 1e-3 * randn64(3, 16, generator=g)
    tiny32 = (10 + 1e-3 * randn64(3, 16, generator=g)).float()
    constant = torch.stack([vec(7, 7, 7, 7), vec(-2, 0.5, 3, 1)])
    ones = vec(1, 1, 1, 1)
    specs = [
        ("one vector [1, 2, 3, 4], γ = 1, β = 0", vec(1, 2, 3, 4), ones, 0 * ones),
        ("(2, 3, 8) vectors of mean 5 and spread 3", 5 + 3 * randn64(2, 3, 8, generator=g),
         gamma8, beta8),
        ("a square batch (4, 4)", 2 + randn64(4, 4, generator=g), gamma4, beta4),
        ("x of shape (2, 5, 3, 4) with γ and β of shape (3, 4)",
         randn64(2, 5, 3, 4, generator=g) * 2 + 1, gamma34, beta34),
        ("a constant vector [7, 7, 7, 7] beside another", constant, gamma4, beta4),
        ("float64 vectors of mean 1000 and variance about 1e-6", tiny64, gamma16, beta16),
        (FLOAT32_CASE, tiny32, gamma16.float(), beta16.float()),
    ]  # fmt: skip
    cases = []
    for description, x, gamma, beta in specs:
        expected = reference_layer_norm(x, gamma, beta, 1e-5)
        # A right float32 answer is off by about 2e-4 on its case (2e-3 where float32 sums round
        # otherwise), a wrong one by 0.5 or more; in float64, E[x²] − E[x]² (which fails in
        # float32) keeps 5 digits around a mean of 1000, enough here.
        tol = {torch.float32: (FLOAT32_TOL, FLOAT32_TOL)}.get(x.dtype, (1e-7, 1e-6))
        if "mean 1000" in description:
            tol = (1e-4, 1e-4)
        cases.append(Case(description, (x, gamma, beta, 1e-5), expected, *tol))
    x, gamma, beta = randn64(3, 6, generator=g) * 0.8, *affine(6)
    big_eps = reference_layer_norm(x, gamma, beta, 0.5)
    cases.append(Case("eps = 0.5 on (3, 6) vectors", (x, gamma, beta, 0.5), big_eps, 1e-7, 1e-6))
    return cases


def _only_float32_lost(fn: Callable[..., Tensor], cases: list[Case]) -> Case | None:
    """The float32 case, when the answer fails it but is right on it in float64: a formula
    that is right on paper and loses its digits in float32."""
    float32 = next(case for case in cases if case.description == FLOAT32_CASE)
    x, gamma, beta, eps = float32.args
    got = call(fn, float32)
    as64 = call(
        fn, Case(float32.description, (x.double(), gamma.double(), beta.double(), eps), None)
    )
    right = reference_layer_norm(x, gamma, beta, eps)

    def close(value: object, atol: float) -> bool:
        return (
            isinstance(value, Tensor)
            and value.shape == right.shape
            and bool(torch.isclose(value.detach().double(), right, atol=atol, rtol=atol).all())
        )

    return float32 if close(as64.value, 1e-5) and not close(got.value, FLOAT32_TOL) else None


@checker_of(LAYER_NORM, MISTAKES)
@on_one_thread
def check_layer_norm_trailing_dims(fn: Callable[..., Tensor]) -> CheckResult:
    """Check ``layer_norm(x, gamma, beta, eps)``: LayerNorm over the last ``gamma.dim()`` dims."""
    cases = _cases()
    # The task names float32 inputs: a LayerNorm answers in its input's dtype, so the result
    # must keep it, and the first case is tried in float16 too (a float32 constant breaks it).
    result = check_function(
        LAYER_NORM, fn, cases, MISTAKES, forbidden=NORMALISATIONS, dtypes=(torch.float16,)
    )
    if result.passed or not result.done or "The mistake:" in result.message:
        return result
    lost = _only_float32_lost(fn, cases) if callable(fn) else None
    if lost is None:
        return result
    problem = "right in float64, but in float32 the result is far off: the variance lost its digits"
    return failed(LAYER_NORM, fn, f"case '{lost.description}'", problem, CANCELLING)
