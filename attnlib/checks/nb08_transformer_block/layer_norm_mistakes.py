"""Notebook 08, Exercise 2: the mistakes learners make writing LayerNorm over trailing dimensions.

Each is written as a learner would write it, with the answer's signature
``(x, gamma, beta, eps=1e-5)``; :data:`CANCELLING` is also named when a learner's own way of
writing E[x²] − E[x]² rounds otherwise than this one (it is right in float64, wrong in float32),
and :data:`IN_PLACE` when a right result leaves the caller's x changed.
"""

from __future__ import annotations

import torch

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor


def _dims(gamma: Tensor) -> tuple[int, ...]:
    return tuple(range(-gamma.dim(), 0))


def _norm(
    x: Tensor, dims: tuple[int, ...], eps: float, unbiased: bool = False, inside: bool = True
) -> Tensor:
    mean = x.mean(dim=dims, keepdim=True)
    var = x.var(dim=dims, keepdim=True, unbiased=unbiased)
    return (x - mean) / (torch.sqrt(var + eps) if inside else torch.sqrt(var) + eps)


def _centred(x: Tensor, dims: tuple[int, ...]) -> Tensor:
    return x - x.mean(dim=dims, keepdim=True)


def _variance(x: Tensor, dims: tuple[int, ...]) -> Tensor:
    return _centred(x, dims).pow(2).mean(dim=dims, keepdim=True)


def _cancelling(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    d = _dims(gamma)
    mean = x.mean(dim=d, keepdim=True)
    var = (x * x).mean(dim=d, keepdim=True) - mean * mean
    return gamma * (x - mean) / torch.sqrt(var + eps) + beta


CANCELLING = Mistake(
    "computed the variance as mean(x²) − mean(x)², which cancels in float32",
    "when the mean is large and the spread tiny, mean(x²) and mean(x)² agree in every digit "
    "float32 keeps (about 7), and their difference is rounding noise, even negative. Averaging "
    "the squares of x − μ keeps those digits.",
    _cancelling,
)


def _after_first(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    flat = x.reshape(x.shape[0], -1)  # one row per sentence: "everything but the batch"
    centred = flat - flat.mean(dim=1, keepdim=True)
    var = (centred**2).mean(dim=1, keepdim=True)
    return gamma * (centred / torch.sqrt(var + eps)).reshape(x.shape) + beta


def _flattened_from_front(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    flat = x.flatten(start_dim=gamma.dim())  # meant: the last gamma.dim() dimensions
    centred = flat - flat.mean(dim=-1, keepdim=True)
    var = (centred**2).mean(dim=-1, keepdim=True)
    return gamma * (centred / torch.sqrt(var + eps)).reshape(x.shape) + beta


def _in_place(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    d = _dims(gamma)
    x -= x.mean(dim=d, keepdim=True)
    x /= torch.sqrt((x**2).mean(dim=d, keepdim=True) + eps)
    return gamma * x + beta


# Named when the result is right but the caller's x has changed (see layer_norm.py).
IN_PLACE = Mistake(
    "changed x in place (x -= …, x /= …)",
    "the caller's x is not yours to change: a pre-norm block adds x itself back after the "
    "LayerNorm, x + f(LN(x)), and autograd refuses to go back through a tensor edited in place. "
    "The result needs tensors of its own.",
    _in_place,
)

MISTAKES = (
    Mistake(
        "normalised over the last dimension only, whatever the shape of γ",
        "a position is every entry γ covers: with γ of shape (3, 4) each 3 × 4 block has one "
        "mean and one variance, not each row of 4.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, (-1,), eps) + beta,
    ),
    Mistake(
        "normalised everything after the first dimension, whatever the shape of γ",
        "a position is the block of entries γ covers, the last γ.dim() dimensions of x: the "
        "dimensions before them (the first one too) are positions and sentences, each "
        "normalised on its own.",
        _after_first,
    ),
    Mistake(
        "flattened x from dimension γ.dim() on, counting from the front instead of the back",
        "the normalised dimensions are the last γ.dim() of x, counted from its end; counted "
        "from the front, the block starts too early on a tensor of three or more dimensions "
        "(and is out of range on a single vector).",
        _flattened_from_front,
    ),
    Mistake(
        "took one mean and one variance for the whole tensor",
        "LayerNorm normalises each position on its own: other positions and other sentences of "
        "the batch must not change its result.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma * (x - x.mean()) / torch.sqrt(x.var(unbiased=False) + eps) + beta
        ),
    ),
    Mistake(
        "normalised along dim 0, across the batch (as BatchNorm does)",
        "LayerNorm's statistics come from one position's own entries, never from the other "
        "positions or sentences: its result for a token does not depend on the batch.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, (0,), eps) + beta,
    ),
    Mistake(
        "took the statistics over the leading dimensions, not the trailing ones γ covers",
        "the normalised dimensions are the last γ.dim() of x, where γ lines up when it "
        "broadcasts; the leading ones are positions and the batch.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, tuple(range(gamma.dim())), eps) + beta,
    ),
    Mistake(
        "used the unbiased variance (dividing by n − 1)",
        "LayerNorm's variance is the population one, the mean squared distance from the mean "
        "(divide by n): on [1, 2, 3, 4] it is 1.25, not 5/3.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, _dims(gamma), eps, unbiased=True) + beta,
    ),
    Mistake(
        "added ε outside the square root",
        "ε is added to the variance, inside the root: √(σ² + ε). Outside it, √σ² + ε, the two "
        "differ most where it matters, on a position whose spread is tiny.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, _dims(gamma), eps, inside=False) + beta,
    ),
    Mistake(
        "added ε after dividing by the square root, to the result, not to the variance under it",
        "(x − μ) / √σ² + ε divides first and adds ε to every output: a position of equal "
        "entries divides 0 by 0, and the others are shifted by ε. ε belongs under the root, "
        "√(σ² + ε).",
        lambda x, gamma, beta, eps=1e-5: (
            gamma * _centred(x, _dims(gamma)) / torch.sqrt(_variance(x, _dims(gamma))) + eps + beta
        ),
    ),
    Mistake(
        "took the square root of the standard deviation plus ε, (σ + ε)^½",
        "the denominator is the standard deviation itself, √(σ² + ε): the root of σ + ε is the "
        "fourth root of the variance, and scales each position by the wrong amount.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma * _centred(x, _dims(gamma)) / (_variance(x, _dims(gamma)).sqrt() + eps) ** 0.5
            + beta
        ),
    ),
    Mistake(
        "left ε out",
        "a position whose entries are all equal has variance 0, and without ε it gives 0 / 0 = "
        "NaN; a tiny spread gets blown up to variance 1.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, _dims(gamma), 0.0) + beta,
    ),
    Mistake(
        "used x.std(), which divides by n − 1, and added ε to it",
        "two things differ from LayerNorm's √(σ² + ε): torch.std is the unbiased standard "
        "deviation unless told otherwise, and ε belongs inside the root, with the variance.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma * _centred(x, _dims(gamma)) / (x.std(dim=_dims(gamma), keepdim=True) + eps) + beta
        ),
    ),
    Mistake(
        "clamped the variance at ε instead of adding ε to it",
        "LayerNorm divides by √(σ² + ε) for every position; a clamp changes only the positions "
        "whose variance is below ε, and differently.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma
            * _centred(x, _dims(gamma))
            / torch.sqrt(x.var(dim=_dims(gamma), keepdim=True, unbiased=False).clamp(min=eps))
            + beta
        ),
    ),
    Mistake(
        "always used ε = 1e-5, ignoring the eps argument",
        "ε is an argument: BERT uses 1e-12, and the check also passes 0.5.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, _dims(gamma), 1e-5) + beta,
    ),
    Mistake(
        "divided by the variance instead of its square root",
        "the standard deviation, √(σ² + ε), has the units of x; dividing by the variance leaves "
        "a result whose size depends on the size of x.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma
            * _centred(x, _dims(gamma))
            / (x.var(dim=_dims(gamma), keepdim=True, unbiased=False) + eps)
            + beta
        ),
    ),
    Mistake(
        "did not subtract the mean",
        "LayerNorm centres each position before scaling it: x / √(mean(x²) + ε) is RMSNorm, a "
        "different normalisation, and far off when the mean is large.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma * x / torch.sqrt((x * x).mean(dim=_dims(gamma), keepdim=True) + eps) + beta
        ),
    ),
    Mistake(
        "took the mean of x² as the variance, without centring x first",
        "the variance is the mean of (x − μ)², the squared distance from the mean; the mean of "
        "x² also counts μ² and is far too large when the mean is large.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma
            * _centred(x, _dims(gamma))
            / torch.sqrt((x * x).mean(dim=_dims(gamma), keepdim=True) + eps)
            + beta
        ),
    ),
    CANCELLING,
    Mistake(
        "left out γ and β",
        "after normalising, LayerNorm scales by γ and shifts by β, entry by entry: they let the "
        "layer undo the normalisation where that helps.",
        lambda x, gamma, beta, eps=1e-5: _norm(x, _dims(gamma), eps),
    ),
    Mistake(
        "left out β (scaled by γ only)",
        "after scaling by γ, LayerNorm shifts by β: γ ⊙ x̂ + β.",
        lambda x, gamma, beta, eps=1e-5: gamma * _norm(x, _dims(gamma), eps),
    ),
    Mistake(
        "left out γ (shifted by β only)",
        "before shifting by β, LayerNorm scales by γ, entry by entry: γ ⊙ x̂ + β.",
        lambda x, gamma, beta, eps=1e-5: _norm(x, _dims(gamma), eps) + beta,
    ),
    Mistake(
        "added β before scaling by γ",
        "the result is γ ⊙ x̂ + β: the shift β comes after the scale, so it is not multiplied by γ.",
        lambda x, gamma, beta, eps=1e-5: gamma * (_norm(x, _dims(gamma), eps) + beta),
    ),
    Mistake(
        "swapped γ and β",
        "γ scales (it starts at 1) and β shifts (it starts at 0): x̂ ⊙ γ + β.",
        lambda x, gamma, beta, eps=1e-5: beta * _norm(x, _dims(gamma), eps) + gamma,
    ),
    Mistake(
        "took the mean and the variance without keeping the reduced dimensions",
        "without keepdim the statistics lose a dimension and broadcast against the wrong one of "
        "x: a square batch is normalised with the statistics of other positions, other shapes "
        "fail.",
        lambda x, gamma, beta, eps=1e-5: (
            gamma
            * (x - x.mean(dim=_dims(gamma)))
            / torch.sqrt(x.var(dim=_dims(gamma), unbiased=False) + eps)
            + beta
        ),
    ),
    IN_PLACE,
)
