"""Notebook 10, Exercise 7: the usual wrong samplers, each written as a learner would write it.

A sampler's mistake shows in the distribution it draws from, so most are written as the
weights the learner's code hands to ``torch.multinomial`` (:func:`weights`, with one switch
per mistake; a mistake made several usual ways, such as top-k's fill of 0, −1 or the row's
smallest logit, has one entry per way under one name); the checker compares a failing
sampler's counts with each mistake's distribution. Two mistakes leave the distribution right
and show otherwise: a result of shape ``(B,)`` and draws that ignore the generator.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor
Sampler = Callable[..., Tensor]  # sample(logits (B, V), temperature, top_k, top_p, generator)
Weights = Callable[[Tensor, float, int | None, float | None], Tensor]  # (B, V) -> (B, V)


def _fill(z: Tensor, how: float | str) -> Tensor:
    """What a learner puts in place of the removed logits: a number, or the row's smallest or
    mean logit, broadcast to ``z``'s shape."""
    if how == "row min":
        return z.amin(dim=-1, keepdim=True).expand_as(z)
    if how == "row mean":
        return z.mean(dim=-1, keepdim=True).expand_as(z)
    return torch.full_like(z, float(how))


def top_k(z: Tensor, k: int, offset: int = 0, fill: float | str = -torch.inf) -> Tensor:
    """Each row's k largest logits kept (k + offset with a mistake), -inf (or ``fill``, with a
    mistake) elsewhere."""
    kept = max(1, min(k + offset, z.shape[-1]))
    removed = z < z.topk(kept, dim=-1).values[..., -1:]
    return torch.where(removed, _fill(z, fill), z)


def nucleus(probs: Tensor, top_p: float, mistake: str = "") -> Tensor:
    """The smallest set of likeliest tokens reaching top_p, renormalised (or one mistake)."""
    ranked, order = probs.sort(dim=-1, descending=True)
    total = ranked.cumsum(dim=-1)
    keep_sorted = total <= top_p if mistake == "drops crossing" else total - ranked < top_p
    if mistake == "sorted order":
        kept = ranked * keep_sorted
    else:
        kept = probs * torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return kept / kept.sum(dim=-1, keepdim=True)


def weights(
    z: Tensor,
    temperature: float,
    k: int | None,
    p: float | None,
    *,
    scale: str = "divide",
    at_zero: str = "argmax",
    k_offset: int = 0,
    k_on: str = "logits",
    p_mistake: str = "",
    p_when: str = "last",
    softmax_dim: int = -1,
    ids: str = "vocabulary",
    k_fill: float | str = -torch.inf,
    p_fill: float | str | None = None,
) -> Tensor:
    """What a sampler hands to torch.multinomial: right by default, one mistake per switch."""
    if temperature == 0 and at_zero == "argmax":
        return F.one_hot(z.argmax(dim=-1), z.shape[-1]).to(z.dtype)
    if temperature == 0 and at_zero == "limit":  # the tied largest logits share the mass
        top = (z == z.amax(dim=-1, keepdim=True)).to(z.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    t = 1.0 if temperature == 0 and at_zero == "as T = 1" else temperature
    if scale == "ignore when filtering" and (k is not None or p is not None):
        t = 1.0
    if p is not None and p_when == "before temperature":
        kept = weights(z, 1.0, k, p) > 0
        return weights(z.masked_fill(~kept, -torch.inf), t, None, None)
    if p is not None and k is not None and p_when == "before top-k":
        kept = weights(z, t, None, p) > 0
        return weights(z.masked_fill(~kept, -torch.inf), t, k, None)
    z = {"divide": z / t, "multiply": z * t, "ignore": z}.get(scale, z / t)
    if k is not None and (k_on == "logits" or (k_on == "unless top-p" and p is None)):
        z = top_k(z, k, k_offset, k_fill)
    probs = torch.softmax(z, dim=softmax_dim)
    if p is not None and p_fill is not None:  # the nucleus's outsiders get a finite logit
        keep = nucleus(probs, p) > 0
        return torch.softmax(torch.where(keep, z, _fill(z, p_fill)), dim=-1)
    if k is not None and k_on == "probabilities":  # dropped, but not renormalised
        probs = probs.masked_fill(probs < probs.topk(k, dim=-1).values[..., -1:], 0.0)
    if p is not None and p_when != "never" and (k is None or p_when != "unless top-k"):
        probs = nucleus(probs, p, p_mistake)
    if k is not None and ids == "top-k places":  # drawn among topk's values: a place, 0 … k − 1
        probs = probs.sort(dim=-1, descending=True).values
    return probs


Generator = torch.Generator | None


def draws_from(wrong: dict[str, object]) -> tuple[Sampler, Weights]:
    """A sampler that draws from ``weights`` with these switches, and those weights."""

    def rows(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
        return weights(z, t, k, p, **wrong)  # type: ignore[arg-type]

    def sample(logits: Tensor, t: float, k: int | None, p: float | None, g: Generator) -> Tensor:
        return torch.multinomial(rows(logits, t, k, p), 1, generator=g)

    return sample, rows


def greedy_without_column(
    logits: Tensor, t: float, k: int | None, p: float | None, g: Generator
) -> Tensor:
    if t == 0:
        return logits.argmax(dim=-1)  # (B,): the column is gone
    return torch.multinomial(weights(logits, t, k, p), 1, generator=g).squeeze(-1)


def without_generator(
    logits: Tensor, t: float, k: int | None, p: float | None, g: Generator
) -> Tensor:
    return torch.multinomial(weights(logits, t, k, p), 1)  # the global generator instead


def always_greedy(logits: Tensor, t: float, k: int | None, p: float | None, g: Generator) -> Tensor:
    return logits.argmax(dim=-1, keepdim=True)


def first_row_only(
    logits: Tensor, t: float, k: int | None, p: float | None, g: Generator
) -> Tensor:
    if t == 0:
        return logits.argmax(dim=-1, keepdim=True)
    token = torch.multinomial(weights(logits, t, k, p)[0], 1, generator=g)  # (1,): row 0's
    return token.expand(logits.shape[0], 1)


def from_logits(logits: Tensor, t: float, k: int | None, p: float | None, g: Generator) -> Tensor:
    if t == 0:
        return logits.argmax(dim=-1, keepdim=True)
    return torch.multinomial(logits / t, 1, generator=g)


_SPECS: list[tuple[str, str, dict[str, object]]] = [
    (
        "the temperature changes nothing: the logits were never divided by it",
        "dividing the probabilities instead, after the softmax, is undone when they are "
        "normalised for the draw; the temperature must act on the logits, before the softmax.",
        {"scale": "ignore"},
    ),
    (
        "multiplied the logits by the temperature instead of dividing them",
        "z · T sharpens when T > 1 and flattens when T < 1: the opposite of a temperature.",
        {"scale": "multiply"},
    ),
    (
        "drew at random at temperature 0, as at T = 1",
        "temperature 0 is greedy decoding: always the most likely token, no draw at all.",
        {"at_zero": "as T = 1"},
    ),
    (
        "at temperature 0, drew from the limit of the distribution (the tied largest logits "
        "sharing the mass) instead of taking the most likely token",
        "temperature 0 is greedy decoding: no draw at all, each row's most likely token, so "
        "that the same logits always give the same token. Drawing among tied logits makes "
        "greedy decoding random.",
        {"at_zero": "limit"},
    ),
    (
        "divided by the temperature at T = 0 too",
        "z / 0 gives inf and NaN, and no distribution to draw from: temperature 0 means the "
        "most likely token of each row, with no division.",
        {"at_zero": "divide"},
    ),
    (
        "left the temperature out when top-k or top-p is on",
        "the temperature reshapes the logits whatever filters follow: top-k and top-p act on "
        "the distribution at the given temperature, the distribution of "
        "attnlib.next_token_probs.",
        {"scale": "ignore when filtering"},
    ),
    (
        "returned a token's place among the top k (0 … k − 1) instead of its id in the vocabulary",
        "torch.topk gives the k largest values and, apart from them, their indices: a draw "
        "among the k values gives a place in that list, which topk's indices turn back into "
        "a token id.",
        {"ids": "top-k places"},
    ),
    (
        "top-k kept k + 1 tokens (off by one at the boundary)",
        "the k-th largest logit is the last one kept: counting from 0 it sits at index k − 1.",
        {"k_offset": 1},
    ),
    (
        "top-k kept k − 1 tokens (off by one at the boundary)",
        "the k-th largest logit itself stays: only the logits strictly below it are removed.",
        {"k_offset": -1},
    ),
    (
        "top-p dropped the token that carries the total past top_p",
        "the nucleus is the smallest set whose total reaches top_p, so the token that makes "
        "the total cross top_p belongs to it.",
        {"p_mistake": "drops crossing"},
    ),
    (
        "top-p's kept probabilities were left in sorted order, not at their tokens",
        "the draw returns an index into the vocabulary: each kept probability must stay at "
        "the token it belongs to.",
        {"p_mistake": "sorted order"},
    ),
    (
        "top-p was applied before the temperature",
        "the temperature reshapes the distribution first, and the nucleus is the set of "
        "likeliest tokens of that reshaped distribution: a colder one needs fewer tokens.",
        {"p_when": "before temperature"},
    ),
    (
        "top-p measured its share on the whole distribution, not on the tokens top-k kept "
        "(top-p before top-k, or top-k's probabilities not renormalised)",
        "top-p picks its nucleus among the tokens top-k kept, from their probabilities "
        "renormalised to sum to 1; measured against the whole distribution it keeps too many.",
        {"p_when": "before top-k"},
    ),
    (
        "applied top-k only when top_p was not given (top-k or top-p, never both)",
        "with both given, top-p picks its nucleus among the tokens top-k kept: top-k removes "
        "the unlikely tokens first, whatever top_p is.",
        {"k_on": "unless top-p"},
    ),
    (
        "applied top-p only when top_k was not given: with both on, top-p was skipped",
        "with both given, top-p picks its nucleus among the tokens top-k kept: top-k does not "
        "replace it, and the tokens outside that nucleus must never be drawn.",
        {"p_when": "unless top-k"},
    ),
    (
        "top_k was never applied",
        "with top_k given, only the top_k largest logits of each row may be drawn.",
        {"k_on": "never"},
    ),
    (
        "top_p was never applied",
        "with top_p given, only the tokens of the nucleus may be drawn.",
        {"p_when": "never"},
    ),
    (
        "took the softmax along dim 0, across the batch, instead of over each row",
        "each row is one next-token distribution over the vocabulary, the last dimension.",
        {"softmax_dim": 0},
    ),
]

# A fill other than −inf gives the removed tokens a probability of their own; learners fill with
# 0, −1, or the row's smallest or mean logit (a fill of −1e4 or float32's smallest is −inf in
# effect, and right).
K_FILL = (
    "top-k filled the removed logits with a finite number instead of −inf",
    "a removed token must get probability exactly 0: with a finite fill (0, −1, the row's "
    "smallest logit) the softmax still gives it e^fill over the total, and it is drawn. −inf "
    "is the one fill whose exponential is 0.",
)
P_FILL = (
    "top-p set the dropped tokens' logits to a finite number instead of −inf",
    "a token outside the nucleus must get probability exactly 0: a logit of 0 (or any finite "
    "number) goes back through the softmax with a weight of its own, often more than it had. "
    "Set the dropped probabilities to 0, or their logits to −inf.",
)
_SPECS += [
    *((*K_FILL, {"k_fill": fill}) for fill in (0.0, -1.0, "row min", "row mean")),
    *((*P_FILL, {"p_fill": fill}) for fill in (0.0, -1.0, "row min")),
]

_DRAWN = [(name, why, draws_from(wrong)) for name, why, wrong in _SPECS]

GREEDY_WITHOUT_COLUMN = Mistake(
    "returned one id per row as shape (B,), without the column of shape (B, 1)",
    "the caller appends the ids to the text with torch.cat along dim 1, which needs (B, 1) "
    "like the prompt's (B, T); argmax drops the dimension unless told to keep it.",
    greedy_without_column,
)
FIRST_ROW_ONLY = Mistake(
    "drew one token, from the first row, instead of one per row",
    "logits holds a batch of rows, one next-token distribution each: every row draws its own "
    "token, so a batch of identical rows gives tokens that vary from row to row.",
    first_row_only,
)
WITHOUT_GENERATOR = Mistake(
    "drew without the generator it was given",
    "the same seed must give the same tokens: torch.multinomial draws from the global "
    "random numbers unless it is handed the generator.",
    without_generator,
)

_DRAWING = tuple((Mistake(name, why, sample), rows) for name, why, (sample, rows) in _DRAWN)

ALWAYS_GREEDY = Mistake(
    "always took the most likely token, at every temperature",
    "argmax is greedy decoding, right only at temperature 0; above 0 the token is drawn "
    "from the distribution.",
    always_greedy,
)

MISTAKES = (
    *(mistake for mistake, _ in _DRAWING),
    ALWAYS_GREEDY,
    Mistake(
        "drew from the scaled logits themselves instead of from probabilities",
        "torch.multinomial reads its input as non-negative weights; logits are any real "
        "numbers, so the softmax has to come first.",
        from_logits,
    ),
    GREEDY_WITHOUT_COLUMN,
    FIRST_ROW_ONLY,
    WITHOUT_GENERATOR,
)
# The distribution each mistake draws from, for naming a failing sampler by its counts (several
# mistakes of one name, each with its own).
DISTRIBUTIONS: dict[Mistake, Weights] = dict(_DRAWING)
DISTRIBUTIONS[ALWAYS_GREEDY] = lambda z, t, k, p: weights(z, 0.0, k, p)
