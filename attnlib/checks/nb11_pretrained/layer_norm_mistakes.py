"""Notebook 11, Exercise 4: the usual mistakes in a learner's ``MyLayerNorm(d_model, eps)``, each
a learner's class with the task's parameters (:mod:`.layer_norm` checks the answer). Three are
named apart from the cases: by the parameters' names, by the parameters' kind and by a new
module's starting values.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor


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


class _PlainTensors(nn.Module):
    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__()
        self.weight, self.bias, self.eps = torch.ones(d_model), torch.zeros(d_model), eps

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

PLAIN_TENSORS = Mistake(
    "kept weight and bias as plain tensors, not nn.Parameter",
    "only nn.Parameter attributes are the module's parameters: plain tensors are not learned, "
    "not moved by .to(), and the loader, which fills parameters by name, cannot find them.",
    _PlainTensors,
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
        "took the mean and variance along dim 0, the first dimension, not the last",
        "the features are the last dimension: dim 0 runs over the batch (or, for a 2-D input, "
        "the rows), so each feature is normalised across tokens instead of each token's vector.",
        _norm(lambda n, x: _scaled(n, _centred(x, 0) / (_var(x, 0) + n.eps).sqrt())),
    ),
    Mistake(
        "left out the bias: scaled by the weight but added no shift",
        "the learned bias β is MiniLM's trained shift of every feature: without it each "
        "normalised vector keeps mean 0 where the model expects β.",
        _norm(lambda n, x: n.weight * _centred(x) / (_var(x) + n.eps).sqrt()),
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
        "subtracted a mean and divided by a deviation of shape (…,) instead of (…, 1)",
        "a mean of shape (…,) instead of (…, 1) broadcasts along the wrong axis: it fails for "
        "most shapes and, for a square input, subtracts row i's mean from column i.",
        _norm(lambda n, x: _scaled(n, (x - x.mean(-1)) / (_var(x).squeeze(-1) + n.eps).sqrt())),
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
