"""Notebook 11, Exercise 4: ``MyLayerNorm(d_model, eps)``, BERT's LayerNorm with its parameters.

The cases show each mistake: rows of small variance with eps = 0.1 (where epsilon stands, and
whether it is the one given, matters only there), constant vectors (no epsilon divides 0 by 0), a
square input (a mean without ``keepdim`` broadcasts the wrong way instead of failing) and a 3-D
input (dim 1 is not the last dimension) and float32 rows of mean 100 and spread 0.1 (a variance
computed as mean(x²) − mean(x)² cancels). Every case has weights other than ones and zeros, so
that a missing scale or shift shows. Parameters named gamma and beta are named as such, and a
right module whose weight and bias do not start at ones and zeros is told so.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import CheckResult, fixed_generator
from attnlib.checks.nb11_pretrained._after import named_by_parameters, start_problem
from attnlib.checks.nb11_pretrained._modules import (
    ModuleCase,
    Verdict,
    check_module,
    random_state,
    report,
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

FORBIDDEN = Forbidden(
    python={nn.LayerNorm: "torch.nn.LayerNorm", F.layer_norm: "torch.nn.functional.layer_norm"},
    torch={"layer_norm": "torch.layer_norm", "native_layer_norm": "torch.layer_norm"},
)


class _Norm(nn.Module):
    """The parameters every mistake below keeps, as the task names them."""

    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps


def _norm(forward: object) -> type:
    """A learner's MyLayerNorm whose ``forward(self, x)`` is ``forward``."""
    return type("MyLayerNorm", (_Norm,), {"forward": forward})


def _centred(x: Tensor, dim: int = -1) -> Tensor:
    return x - x.mean(dim=dim, keepdim=True)


def _var(x: Tensor, dim: int = -1) -> Tensor:
    return _centred(x, dim).pow(2).mean(dim=dim, keepdim=True)  # population variance


def _scaled(n: _Norm, normed: Tensor) -> Tensor:
    return n.weight * normed + n.bias


# A right one, for the encoder layer's table of mistakes (Exercise 7) to be built from.
RightLayerNorm = _norm(lambda n, x: _scaled(n, _centred(x) / (_var(x) + n.eps).sqrt()))


class _GammaBeta(nn.Module):
    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        return self.gamma * _centred(x) / (_var(x) + self.eps).sqrt() + self.beta


class _ZerosFirst(nn.Module):
    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    forward = RightLayerNorm.forward


# Named apart from the cases: by the parameters' names, and by a new module's starting values.
GAMMA_BETA = Mistake(
    "named the parameters gamma and beta instead of weight and bias",
    "the loader copies MiniLM's LayerNorm weights by name into weight and bias, the names of "
    "torch's nn.LayerNorm and of the checkpoint: under other names they do not load.",
    _GammaBeta,
)
NOT_ONES = Mistake(
    "did not start the weight at ones and the bias at zeros",
    "a new LayerNorm must leave a normalised vector as it is (scale 1, shift 0) until training "
    "moves it; with a weight of zeros every output starts as the bias, the same for every token.",
    _ZerosFirst,
)

MISTAKES = (
    Mistake(
        "added epsilon outside the square root",
        "(x − μ)/(σ + ε) is not (x − μ)/√(σ² + ε): they differ wherever the variance is not far "
        "larger than ε. With MiniLM's ε = 1e-12 no number you could see changes, which is why "
        "the check uses ε = 0.1 and rows of small variance.",
        _norm(lambda n, x: _scaled(n, _centred(x) / (_var(x).sqrt() + n.eps))),
    ),
    Mistake(
        "divided by torch.std plus epsilon (the unbiased deviation, epsilon outside the root)",
        "torch.std divides by C − 1 unless told otherwise, and ε belongs under the square root "
        "with the population variance: √(σ² + ε). (The Annotated Transformer's LayerNorm does "
        "this; BERT's does not.)",
        _norm(lambda n, x: _scaled(n, _centred(x) / (x.std(-1, keepdim=True) + n.eps))),
    ),
    Mistake(
        "used the unbiased variance (divided by C − 1)",
        "torch.var divides by C − 1 unless told otherwise; LayerNorm's variance is the mean of "
        "the squared deviations, a division by C.",
        _norm(lambda n, x: _scaled(n, _centred(x) / (x.var(-1, keepdim=True) + n.eps).sqrt())),
    ),
    Mistake(
        "did not apply the learned scale and shift",
        "weight and bias are what the model learned for each feature: MiniLM's LayerNorms are "
        "far from the plain normalisation without them.",
        _norm(lambda n, x: _centred(x) / (_var(x) + n.eps).sqrt()),
    ),
    Mistake(
        "used a fixed epsilon (PyTorch's default 1e-5) instead of the eps it was given",
        "BERT's ε is 1e-12, not PyTorch's 1e-5, and MiniLM moves visibly with the wrong one "
        "(section 2): the module must use the eps passed to __init__.",
        _norm(lambda n, x: _scaled(n, _centred(x) / (_var(x) + 1e-5).sqrt())),
    ),
    Mistake(
        "left epsilon out (or used a far smaller one than the eps given)",
        "without ε a constant vector divides 0 by 0 and gives NaN; and where the variance is "
        "small, the ε given changes the result.",
        _norm(lambda n, x: _scaled(n, _centred(x) / _var(x).sqrt())),
    ),
    Mistake(
        "divided by the variance instead of its square root",
        "normalising divides by the standard deviation √(σ² + ε), so that each vector ends with "
        "variance 1; dividing by σ² + ε leaves it with variance 1/σ².",
        _norm(lambda n, x: _scaled(n, _centred(x) / (_var(x) + n.eps))),
    ),
    Mistake(
        "took one mean and one variance over the whole tensor, not one per vector",
        "each token's vector is normalised on its own, along the last dimension: statistics of "
        "the whole batch mix tokens and sentences.",
        _norm(
            lambda n, x: _scaled(n, (x - x.mean()) / ((x - x.mean()).pow(2).mean() + n.eps).sqrt())
        ),
    ),
    Mistake(
        "took the mean and variance along dim 1, which is the last dimension only for a 2-D input",
        "the features are always the last dimension: for (B, T, C) dim 1 runs over the tokens.",
        _norm(lambda n, x: _scaled(n, _centred(x, 1) / (_var(x, 1) + n.eps).sqrt())),
    ),
    Mistake(
        "took the mean and variance without keeping the reduced dimension",
        "a mean of shape (…,) instead of (…, 1) broadcasts along the wrong axis: it fails for "
        "most shapes and, for a square input, subtracts row i's mean from column i.",
        _norm(
            lambda n, x: _scaled(
                n, (x - x.mean(-1)) / ((x - x.mean(-1)).pow(2).mean(-1) + n.eps).sqrt()
            )
        ),
    ),
    Mistake(
        "computed the variance as mean(x²) − mean(x)², which cancels when the mean is large",
        "when the mean is large and the spread small, mean(x²) and mean(x)² agree in almost "
        "every digit float32 keeps, and their difference is rounding noise. Averaging the "
        "squares of x − μ keeps those digits.",
        _norm(
            lambda n, x: _scaled(
                n,
                _centred(x)
                / ((x * x).mean(-1, keepdim=True) - x.mean(-1, keepdim=True) ** 2 + n.eps).sqrt(),
            )
        ),
    ),
    Mistake(
        "added the shift before scaling",
        "LayerNorm scales the normalised vector by weight, then adds bias: weight · (x̂ + bias) "
        "scales the shift too.",
        _norm(lambda n, x: n.weight * (_centred(x) / (_var(x) + n.eps).sqrt() + n.bias)),
    ),
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


def verdict(cls: object) -> Verdict:
    """What the check finds for ``cls``, without recording it (the layer's check uses it)."""
    all_cases = cases()
    found = check_module(cls, all_cases, MISTAKES, forbidden=FORBIDDEN)
    found = named_by_parameters(
        found, cls, all_cases[0], {frozenset({"gamma", "beta"}): GAMMA_BETA}
    )
    problem = start_problem(cls, (8, 0.1)) if found.kind == "passed" else None  # type: ignore[arg-type]
    if problem is not None:
        return Verdict("failed", where="as built", problem=problem, mistake=NOT_ONES)
    return found


@checker_of(LAYER_NORM, (*MISTAKES, GAMMA_BETA, NOT_ONES))
def check_bert_layer_norm(cls: type) -> CheckResult:
    """Check ``MyLayerNorm(d_model, eps)``: forward ``(..., d_model) -> (..., d_model)``."""
    return report(LAYER_NORM, cls, verdict(cls))
