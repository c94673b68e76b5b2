"""Notebook 10, Exercise 4: sampling probabilities at any temperature T ≥ 0, softmax(z / T).

For T > 0 the softmax is written by hand, so the cases show what a missing shift costs:
scores in the thousands, ordinary logits at T = 0.001 (exponents in the thousands), rows of
very different sizes (one shift for the whole batch), float16 (exp overflows above 11.1), and
float16 logits [70, 0] at T = 0.001, where z / T itself overflows (70,000 is past float16's
65,504): an answer must subtract each row's largest logit before it divides by T.
T = 0 is the limit as T → 0: the mass is shared equally by the logits that tie for the
largest, which the cases with ties show (one in float16, where a division by T + 1e-8
overflows). A square batch shows a missing ``keepdim``, a 1-D and a 3-D input a fixed ``dim``.
The usual mistakes are in :mod:`.temperature_mistakes`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, checker_of, failed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._implementations import LOG_SOFTMAX, LOGSUMEXP, SOFTMAX
from attnlib.checks._outcomes import call
from attnlib.checks._threads import one_thread
from attnlib.checks.engine import check_function
from attnlib.checks.nb10_gpt.distributions import rows_are_distributions
from attnlib.checks.nb10_gpt.temperature_mistakes import BY_SHAPE, DIVIDED_FIRST, MISTAKES

Tensor = torch.Tensor

TEMPERATURE = register(
    Exercise(
        id="ex4_my_temperature_probs",
        notebook="10",
        number=4,
        name="my_temperature_probs",
        hints=(
            "Two ideas meet here. A softmax of z / T by hand overflows unless each row is first "
            "shifted so that its largest exponent is 0, which does not change its softmax "
            "(notebook 02). And T = 0 cannot be divided by: ask where softmax(z / T) goes as T "
            "shrinks towards 0.",
            "As T → 0, every logit below its row's largest falls infinitely far behind it, so "
            "its weight goes to 0; the logits equal to the largest keep all the mass between "
            "them, equally. For T > 0 the shift is each row's own largest logit, taken along the "
            "last dimension and kept so that it lines up with its row, and it comes before the "
            "division by T: z / T alone overflows float16 at a small T (70 / 0.001 is past "
            "float16's largest number, 65,504).",
            "For T = 0: mark in each row the entries equal to the row's largest logit, turn the "
            "marks into numbers and divide each row by how many it has ([3, 1, 3, 2] gives "
            "[0.5, 0, 0.5, 0]). For T > 0: subtract each row's maximum (keepdim), then divide by "
            "T, exponentiate and divide by each row's sum (keepdim).",
        ),
    )
)

# An answer may not hand the work to an existing softmax.
SOFTMAX_IMPLEMENTATIONS = SOFTMAX | LOG_SOFTMAX | LOGSUMEXP


def reference(z: Tensor, temperature: float) -> Tensor:
    """softmax(z / T) in float64, and its limit (ties share equally) at T = 0."""
    z = z.double()
    if temperature == 0:
        top = (z == z.amax(dim=-1, keepdim=True)).double()
        return top / top.sum(dim=-1, keepdim=True)
    e = torch.exp((z - z.amax(dim=-1, keepdim=True)) / temperature)
    return e / e.sum(dim=-1, keepdim=True)


# The case where z / T itself overflows float16: last of the cases, so that an answer that
# divides first and makes another slip is shown the other slip's case first.
FAR_IN_FLOAT16 = "float16 logits [[70, 0]] at T = 0.001"


def _f32(*rows: object) -> Tensor:
    return torch.tensor(rows, dtype=torch.float32)


def _cases() -> list[Case]:
    g = fixed_generator()
    batch, square = torch.randn(2, 5, generator=g) * 3, torch.randn(4, 4, generator=g) * 3
    cube = torch.randn(2, 3, 6, generator=g) * 3
    mixed = _f32([1000, 1001, 1002], [0, 1, 2], [-1000, -998, -999])
    ties = _f32([3, 1, 3, 2], [0, 5, 1, 5], [7, 7, 7, -1])
    tied_cube = torch.tensor([[[1, 4, 4], [2, 0, 1]], [[0, 0, 0], [9, 3, 9]]], dtype=torch.float16)
    half = torch.tensor([10.0, 11.0, 12.0], dtype=torch.float16)
    half_far = torch.tensor([[70.0, 0.0]], dtype=torch.float16)  # 2-D: no "2-D only" naming
    specs: list[tuple[str, Tensor, float]] = [
        ("one row [1, 2, 3, 0] at T = 1", _f32(1, 2, 3, 0), 1.0),
        ("a (2, 5) batch at T = 0.5", batch, 0.5),
        ("a (2, 5) batch at T = 2", batch, 2.0),
        ("a square (4, 4) batch at T = 0.7", square, 0.7),
        ("a (2, 3, 6) tensor at T = 1.5", cube, 1.5),
        ("logits [1000, 1001, 1002] at T = 1", _f32(1000, 1001, 1002), 1.0),
        ("ordinary logits [2, 5, 3.5] at T = 0.001", _f32(2, 5, 3.5), 0.001),
        ("3 rows of very different sizes at T = 1", mixed, 1.0),
        ("one row [1, 3, 2, 0] at T = 0", _f32(1, 3, 2, 0), 0.0),
        ("3 rows with tied largest logits at T = 0", ties, 0.0),
        ("a float16 (2, 2, 3) tensor with ties at T = 0", tied_cube, 0.0),
        ("float16 logits [10, 11, 12] at T = 1", half, 1.0),
        (FAR_IN_FLOAT16, half_far, 0.001),
    ]
    wide = 2e-3  # float16 keeps about 3 digits
    return [
        Case(name, (z, t), reference(z, t), *((wide, wide) if z.dtype == torch.float16 else ()))
        for name, z, t in specs
    ]


@checker_of(TEMPERATURE, MISTAKES)
def check_my_temperature_probs(fn: Callable[[Tensor, float], Tensor]) -> CheckResult:
    """Check ``my_temperature_probs(logits, temperature)``: softmax(logits / T) along the last
    dimension for T > 0, its limit (the largest logits share the mass) at T = 0.

    Shapes:
        logits: ``(..., V)``; returns ``(..., V)``.
    """
    cases = _cases()
    report = _check(fn, cases)
    if report.passed or report.mistake or not report.done:  # a stub is not run again
        return report
    if not _not_finite_far_in_float16(fn, cases):
        return report
    # The answer divides by T before the shift. When that is all, the float16 case (the last)
    # is its first failing case: name it. When it is not, the answer's other slip is named as
    # it would be without that case, the divided-first NaN left for later.
    if report.message.startswith(f"✗ {TEMPERATURE.name}, case '{FAR_IN_FLOAT16}': "):
        problem = report.message.split("\n", 1)[0].split("': ", 1)[1]
        return failed(TEMPERATURE, fn, f"case '{FAR_IN_FLOAT16}'", problem, DIVIDED_FIRST)
    other = _check(fn, [case for case in cases if case.description != FAR_IN_FLOAT16])
    return other if other.mistake else report


def _check(fn: Callable[[Tensor, float], Tensor], cases: list[Case]) -> CheckResult:
    return check_function(
        TEMPERATURE,
        fn,
        cases,
        MISTAKES,
        forbidden=SOFTMAX_IMPLEMENTATIONS,
        properties=(rows_are_distributions(),),
        several=BY_SHAPE,
        dtypes=(),
    )


def _not_finite_far_in_float16(fn: Callable[[Tensor, float], Tensor], cases: list[Case]) -> bool:
    """Whether the answer gives inf or NaN on float16 logits [[70, 0]] at T = 0.001: it
    divided by T before subtracting the maximum, whatever its numbers there (``[nan, 0]`` for
    a maximum divided apart, say)."""
    (case,) = (case for case in cases if case.description == FAR_IN_FLOAT16)
    with one_thread():
        value = call(fn, case).value
    return isinstance(value, Tensor) and value.is_floating_point() and not value.isfinite().all()
