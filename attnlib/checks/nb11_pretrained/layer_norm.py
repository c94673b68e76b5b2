"""Notebook 11, Exercise 4: ``MyLayerNorm(d_model, eps)``, BERT's LayerNorm with its parameters.

The cases show each mistake: rows of small variance with eps = 0.1 (where epsilon stands, and
whether it is the one given, matters only there), constant vectors (no epsilon divides 0 by 0), a
square input (a mean without ``keepdim`` broadcasts the wrong way instead of failing) and a 3-D
input (dim 1 is not the last dimension) and float32 rows of mean 100 and spread 0.1 (a variance
computed as mean(x²) − mean(x)² cancels). Every case has weights other than ones and zeros, so
that a missing scale or shift shows. Parameters named gamma and beta are named as such, and a
right module whose weight and bias do not start at ones and zeros is told so. The table of
mistakes is in :mod:`.layer_norm_mistakes`.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import CheckResult, fixed_generator
from attnlib.checks._implementations import LAYER_NORM as FORBIDDEN  # may not be called
from attnlib.checks.engine.classes import (
    ModuleCase,
    Verdict,
    check_module,
    random_state,
    report,
)
from attnlib.checks.nb11_pretrained._after import named_by_parameters, start_problem
from attnlib.checks.nb11_pretrained.layer_norm_mistakes import (  # noqa: F401 (re-exported)
    GAMMA_BETA,
    MISTAKES,
    NOT_ONES,
    PLAIN_TENSORS,
    RightLayerNorm,
)

Tensor = torch.Tensor

LAYER_NORM = register(
    Exercise(
        id="ex4_my_layer_norm",
        notebook="11",
        number=4,
        name="MyLayerNorm",
        hints=(
            "Each vector (the last dimension) is normalised on its own: subtract its own mean, "
            "divide by its own standard deviation with epsilon inside the square root, then "
            "apply the learned per-feature scale and shift.",
            "The mean and the variance are one number per vector: keep the reduced dimension "
            "(size 1) so that they line up with the vector. The variance is the population one "
            "(divide by C, not C − 1), and epsilon is the `eps` the module was built with.",
            "In __init__, the two learned vectors are nn.Parameter objects of shape (d_model,), "
            "starting at ones and zeros, named weight and bias; keep eps as an attribute. In "
            "forward, reduce along dim=-1 with keepdim=True, take the mean of the squared "
            "deviations, divide by the square root of (variance + eps), then scale and shift.",
        ),
    )
)


def reference_case(
    description: str, x: Tensor, eps: float, generator: torch.Generator
) -> ModuleCase:
    """A case whose expected output is torch's LayerNorm with new weights, in float64."""
    reference = nn.LayerNorm(x.shape[-1], eps=eps)
    state = random_state(reference, generator)
    with torch.no_grad():
        expected = reference(x)
    return ModuleCase(description, (x.shape[-1], eps), state, (x,), expected)


def _float32_case(description: str, x: Tensor, eps: float, g: torch.Generator) -> ModuleCase:
    """A float32 case, compared with float64's result at float32's precision."""
    reference = nn.LayerNorm(x.shape[-1], eps=eps)
    state = random_state(reference, g, dtype=torch.float32)
    with torch.no_grad():
        expected = reference(x.double())
    return ModuleCase(
        description, (x.shape[-1], eps), state, (x,), expected, dtype=torch.float32,
        atol=1e-3, rtol=1e-3,
    )  # fmt: skip


def cases() -> list[ModuleCase]:
    g = fixed_generator()
    batch = 2.0 * torch.randn(2, 5, 8, generator=g, dtype=torch.float64) + 1.0
    quiet = 3.0 + 0.1 * torch.randn(3, 6, generator=g, dtype=torch.float64)  # variance ≈ 0.01
    constant = torch.tensor([[4.0], [-1.0]], dtype=torch.float64).expand(2, 8)  # variance 0
    square = torch.randn(4, 4, generator=g, dtype=torch.float64)
    far = (100.0 + 0.1 * torch.randn(3, 16, generator=g)).float()  # the mean ≫ the spread
    return [
        reference_case("a batch (2, 5, 8), eps = 1e-5", batch, 1e-5, g),
        reference_case("rows of variance about 0.01, eps = 0.1", quiet, 0.1, g),
        reference_case("constant vectors (variance 0), eps = 1e-5", constant, 1e-5, g),
        reference_case("a square input (4, 4), eps = 0.01", square, 0.01, g),
        _float32_case("float32 rows of mean 100 and spread 0.1, eps = 1e-12", far, 1e-12, g),
    ]


def _plain_tensors(cls: object) -> bool:
    """Whether a new module has no parameters but a weight and a bias that are tensors."""
    try:
        module = cls(8, 0.1)  # type: ignore[operator]
        pieces = (getattr(module, "weight", None), getattr(module, "bias", None))
        return not list(module.parameters()) and all(isinstance(p, Tensor) for p in pieces)
    except Exception:  # the cases have reported it
        return False


def verdict(cls: object) -> Verdict:
    """What the check finds for ``cls``, without recording it (the layer's check uses it)."""
    all_cases = cases()
    found = check_module(cls, all_cases, MISTAKES, forbidden=FORBIDDEN)
    found = named_by_parameters(
        found, cls, all_cases[0], {frozenset({"gamma", "beta"}): GAMMA_BETA}
    )
    if found.kind == "failed" and found.mistake is None and _plain_tensors(cls):
        found = Verdict("failed", where=found.where, problem=found.problem, mistake=PLAIN_TENSORS)
    problem = start_problem(cls, (8, 0.1)) if found.kind == "passed" else None  # type: ignore[arg-type]
    if problem is not None:
        return Verdict("failed", where="as built", problem=problem, mistake=NOT_ONES)
    return found


@checker_of(LAYER_NORM, (*MISTAKES, GAMMA_BETA, NOT_ONES, PLAIN_TENSORS))
def check_bert_layer_norm(cls: type) -> CheckResult:
    """Check ``MyLayerNorm(d_model, eps)``: forward ``(..., d_model) -> (..., d_model)``."""
    return report(LAYER_NORM, cls, verdict(cls))
