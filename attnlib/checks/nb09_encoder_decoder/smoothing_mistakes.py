"""The mistakes learners make on notebook 09's Exercise 1, and the loss they should compute.

Each :class:`~attnlib.checks._exercise.Mistake` builds the smoothed target or averages the
positions the way a learner does by mistake; two are the same mistake written two usual ways
(a target built as a tensor, or the loss written out term by term).

Notebook 09.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Mistake
from attnlib.checks._slips import EPSILONS, with_epsilons

Tensor = torch.Tensor


def reference_smoothed_loss(
    logits: Tensor, target: Tensor, smoothing: float, pad_id: int
) -> Tensor:
    """The exercise's loss: cross-entropy against 1 − ε on the target, 0 on ``pad_id`` and
    ε / (V − 2) on every other token, averaged over the non-padding positions.

    Shapes:
        logits: ``(B, T, V)``; target: ``(B, T)``; returns a scalar (float64).
    """
    log_p = torch.log_softmax(logits.double(), dim=-1)  # (B, T, V)
    q = torch.full_like(log_p, smoothing / (logits.shape[-1] - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1.0 - smoothing)
    q[..., pad_id] = 0.0
    per_position = -(q * log_p).sum(dim=-1)  # (B, T)
    return per_position[target != pad_id].mean()


def _target(target: Tensor, V: int, pad_id: int, right: float, other: float, pad: float) -> Tensor:
    q = torch.full((*target.shape, V), other, dtype=torch.float64)
    q.scatter_(-1, target.unsqueeze(-1), right)
    q[..., pad_id] = pad
    return q


def _loss(
    log_p: Tensor,
    target: Tensor,
    pad_id: int,
    q: Tensor,
    reduce: Callable[[Tensor, Tensor], Tensor] = lambda per, keep: per[keep].mean(),
) -> Tensor:
    per = -(q * log_p.double()).sum(dim=-1)  # (B, T)
    return reduce(per, target != pad_id)


def _smoothed(logits: Tensor, target: Tensor, eps: float, pad_id: int, **shares: float) -> Tensor:
    """The right loss, or with the shares of the target changed as a mistake changes them."""
    V = logits.shape[-1]
    share = dict(right=1 - eps, other=eps / (V - 2), pad=0.0) | shares
    return _loss(logits.log_softmax(-1), target, pad_id, _target(target, V, pad_id, **share))


def _q(logits: Tensor, target: Tensor, eps: float, pad_id: int) -> Tensor:
    return _target(target, logits.shape[-1], pad_id, 1 - eps, eps / (logits.shape[-1] - 2), 0.0)


def _algebraic_unmasked(logits: Tensor, target: Tensor, eps: float, pad_id: int) -> Tensor:
    nll = -logits.log_softmax(-1)  # (B, T, V)
    right, pad = nll.gather(-1, target.unsqueeze(-1))[..., 0], nll[..., pad_id]
    others = nll.sum(-1) - right - pad
    return ((1 - eps) * right + eps / (logits.shape[-1] - 2) * others).mean()


def _kl(logits: Tensor, target: Tensor, eps: float, pad_id: int) -> Tensor:
    q = _q(logits, target, eps, pad_id)
    kl = F.kl_div(logits.double().log_softmax(-1), q, reduction="none").sum(-1)  # (B, T)
    return kl[target != pad_id].mean()


MISTAKES = (
    Mistake(
        "took the logarithm of the softmax instead of log_softmax",
        "a confident model's softmax gives some tokens a probability that rounds to 0, whose "
        "logarithm is −inf: every token but <pad> has a share of q, so the loss becomes inf "
        "or NaN. log_softmax computes the same numbers without ever forming the tiny ones.",
        lambda logits, target, eps, pad_id: _loss(
            torch.log(torch.softmax(logits, -1)), target, pad_id, _q(logits, target, eps, pad_id)
        ),
    ),
    Mistake(
        "wrote log_softmax by hand without subtracting the largest logit first",
        "exp of a logit above about 88 is inf in float32, so the sum of exponentials overflows "
        "and log(inf) turns the loss into NaN. Subtracting each position's largest logit "
        "before exp changes no log-probability and keeps every exponential at most 1.",
        lambda logits, target, eps, pad_id: _loss(
            logits - logits.exp().sum(-1, keepdim=True).log(),
            target,
            pad_id,
            _q(logits, target, eps, pad_id),
        ),
    ),
    Mistake(
        "spread ε over all V tokens, as in the lesson, the right token and <pad> included",
        "in this exercise <pad> gets nothing and the right token exactly 1 − ε: ε is shared by "
        "the V − 2 other tokens.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits,
            target,
            eps,
            pad_id,
            right=1 - eps + eps / logits.shape[-1],
            other=eps / logits.shape[-1],
            pad=eps / logits.shape[-1],
        ),
    ),
    Mistake(
        "gave each of the other tokens ε / V",
        "only V − 2 tokens share ε (not the right token, not <pad>): with ε / V each, q adds "
        "up to less than 1.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits, target, eps, pad_id, other=eps / logits.shape[-1]
        ),
    ),
    Mistake(
        "gave each of the other tokens ε / (V − 1)",
        "only V − 2 tokens share ε: the right token and <pad> are both left out, so each "
        "other token gets ε / (V − 2) and q adds up to 1.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits, target, eps, pad_id, other=eps / (logits.shape[-1] - 1)
        ),
    ),
    Mistake(
        "gave <pad> a share of ε like every other wrong token",
        "a model should never write <pad>: in this exercise its entry of q is 0, and ε is "
        "shared by the V − 2 tokens that are neither right nor <pad>.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits,
            target,
            eps,
            pad_id,
            other=eps / (logits.shape[-1] - 1),
            pad=eps / (logits.shape[-1] - 1),
        ),
    ),
    Mistake(
        "gave <pad> the same share ε / (V − 2) as the other wrong tokens",
        "a model should never write <pad>: its entry of q is 0. With a share of its own, q "
        "adds up to more than 1, and the loss rewards probability on <pad>.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits, target, eps, pad_id, pad=eps / (logits.shape[-1] - 2)
        ),
    ),
    Mistake(
        "gave the right token 1 − ε on top of its share ε / (V − 2)",
        "the right token's entry of q is exactly 1 − ε: ε is shared by the V − 2 tokens that "
        "are neither right nor <pad>, so that q adds up to 1.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits, target, eps, pad_id, right=1 - eps + eps / (logits.shape[-1] - 2)
        ),
    ),
    Mistake(
        "shared ε among every token but <pad>, the right one included",
        "the right token gets exactly 1 − ε here, no share of ε on top: ε is shared by the "
        "V − 2 tokens that are neither right nor <pad>.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits,
            target,
            eps,
            pad_id,
            right=1 - eps + eps / (logits.shape[-1] - 1),
            other=eps / (logits.shape[-1] - 1),
        ),
    ),
    Mistake(
        "put ε on the right token and 1 − ε on the others",
        "the right token keeps most of the probability, 1 − ε; the small ε is what the other "
        "tokens share.",
        lambda logits, target, eps, pad_id: _smoothed(
            logits, target, eps, pad_id, right=eps, other=(1 - eps) / (logits.shape[-1] - 2)
        ),
    ),
    Mistake(
        "averaged over every position, the padding included",
        "padding positions have no token to predict: their loss must not enter the average, "
        "which runs over the positions whose target is not pad_id.",
        lambda logits, target, eps, pad_id: _loss(
            logits.log_softmax(-1),
            target,
            pad_id,
            _q(logits, target, eps, pad_id),
            lambda per, keep: per.mean(),
        ),
        variants=(_algebraic_unmasked,),
    ),
    Mistake(
        "zeroed the padding positions but divided by the number of all positions",
        "the zeros of the padding still count in the denominator, so the mean is too small: "
        "divide by the number of positions that are not padding.",
        lambda logits, target, eps, pad_id: _loss(
            logits.log_softmax(-1),
            target,
            pad_id,
            _q(logits, target, eps, pad_id),
            lambda per, keep: (per * keep).sum() / per.numel(),
        ),
    ),
    Mistake(
        "averaged each sequence first, then the sequences",
        "sequences of different lengths then weigh the same, so a token of a short sequence "
        "counts more than one of a long one: the mean runs over all non-padding positions "
        "at once.",
        lambda logits, target, eps, pad_id: _loss(
            logits.log_softmax(-1),
            target,
            pad_id,
            _q(logits, target, eps, pad_id),
            lambda per, keep: ((per * keep).sum(1) / keep.sum(1)).mean(),
        ),
    ),
    Mistake(
        "summed the positions' losses instead of averaging them",
        "the loss is the mean over the non-padding positions, so that it does not grow with "
        "the batch.",
        lambda logits, target, eps, pad_id: _loss(
            logits.log_softmax(-1),
            target,
            pad_id,
            _q(logits, target, eps, pad_id),
            lambda per, keep: per[keep].sum(),
        ),
    ),
    Mistake(
        "computed the KL divergence from q instead of the cross-entropy",
        "KL(q ‖ p) is the cross-entropy minus the entropy of q: the two agree only for ε = 0. "
        "The exercise asks for the cross-entropy, whose floor is q's entropy.",
        _kl,
    ),
    Mistake(
        "used the raw logits as log-probabilities, without log_softmax",
        "logits are log-probabilities plus a constant that differs from position to position: "
        "only the log_softmax of a position's logits is log p, whose exponentials add up to 1.",
        lambda logits, target, eps, pad_id: _loss(
            logits, target, pad_id, _q(logits, target, eps, pad_id)
        ),
    ),
    Mistake(
        "left out the minus sign",
        "log-probabilities are at most 0, so −Σ q log p is the positive loss.",
        lambda logits, target, eps, pad_id: -reference_smoothed_loss(logits, target, eps, pad_id),
    ),
    Mistake(
        "left the smoothing out: plain cross-entropy on the right token",
        "with ε > 0 the target is q, not the one-hot right token: the other tokens' "
        "log-probabilities enter the loss too.",
        lambda logits, target, eps, pad_id: reference_smoothed_loss(logits, target, 0.0, pad_id),
    ),
    Mistake(
        "took the softmax along the positions (dim=1) instead of the tokens (the last dim)",
        "p is a distribution over the V tokens at each position: the softmax runs along the "
        "last dimension.",
        lambda logits, target, eps, pad_id: _loss(
            logits.log_softmax(1), target, pad_id, _q(logits, target, eps, pad_id)
        ),
    ),
    Mistake(
        "zeroed token 0's share of q instead of pad_id's (the positions left out are right)",
        "the token that gets nothing is pad_id, whichever id it has: with its column left at a "
        "share of ε, and token 0's set to 0, q gives ε to <pad> and takes it from a real token.",
        lambda logits, target, eps, pad_id: _loss(
            logits.log_softmax(-1), target, pad_id, _q(logits, target, eps, 0)
        ),
    ),
    Mistake(
        "treated token 0 as <pad> whatever pad_id is",
        "the padding token is pad_id: its column of q is 0 and its positions are left out of "
        "the mean, whichever id it has.",
        lambda logits, target, eps, pad_id: reference_smoothed_loss(logits, target, eps, 0),
    ),
    *with_epsilons(
        "added a number to the count of positions it divides by (to keep it from 0)",
        "the count is the number of positions whose target is not <pad>, and there is at "
        "least one: with anything added to it, the average comes out too small.",
        lambda eps: (
            lambda logits, target, smoothing, pad_id: _loss(
                logits.log_softmax(-1),
                target,
                pad_id,
                _q(logits, target, smoothing, pad_id),
                lambda per, keep: (per * keep).sum() / (keep.sum() + eps),
            )
        ),
        (1.0, *EPSILONS[:4]),  # 1e-5 and less: within the tolerance
    ),
)
