"""Sampling the next token from a language model's logits: temperature, top-k, top-p, greedy.

:meth:`attnlib.gpt.GPT.generate` calls :func:`sample_next_token` once per new token;
:func:`next_token_probs` is the distribution it draws from, for plotting and checking.

One rule for logits with no distribution, in both and in ``generate``: NaN, +inf, or a row
with no finite logit raises a ``ValueError`` that names ``logits`` (a -inf beside finite
logits is a token left out). The logits are read for it at every draw: in ``generate`` they
are the model's own, new at every step, and a model whose weights went NaN is named there.

Notebook 10.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from attnlib._validate import at_the_door, require_probability, require_sampling_settings
from attnlib._validate_tensors import (
    require_float_tensor,
    require_generator,
    require_min_ndim,
    require_probabilities,
    require_scores,
)


def next_token_probs(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
) -> torch.Tensor:
    r"""The distribution a sampler draws the next token from.

    .. math::

        p_i \propto \exp(z_i / T) \text{ for } i \in S, \quad 0 \text{ otherwise}

    In order: the logits are divided by the temperature :math:`T`; ``top_k`` keeps the
    :math:`k` largest; the softmax is taken over what is left; ``top_p`` (nucleus sampling,
    Holtzman et al. 2020) then keeps the smallest set :math:`S` of the most likely tokens
    whose probabilities sum to at least ``top_p``, and renormalises. ``temperature = 0``
    puts all the mass on the largest logit (greedy); ``top_p = 1`` keeps every token.

    Raises:
        TypeError: ``logits`` is not a floating-point tensor, ``temperature`` or
            ``top_p`` is not a number, or ``top_k`` is not an int.
        ValueError: ``logits`` has no dim, holds NaN or +inf, or has a row with no finite
            logit; ``temperature`` is negative or not finite; ``top_k < 1``; ``top_p``
            is outside ``(0, 1]``.

    Shapes:
        logits: ``(..., V)``; returns ``(..., V)``, summing to 1 over the last dim.
    """
    _require_sampler_arguments(logits, temperature, top_k, top_p)
    require_scores("logits", logits, -1)  # the module's one rule for logits
    return _next_token_probs(logits, temperature, top_k, top_p)


def _require_sampler_arguments(
    logits: object, temperature: object, top_k: object, top_p: object
) -> None:
    """The checks :func:`next_token_probs` and :func:`sample_next_token` share; no data scan."""
    require_min_ndim("logits", require_float_tensor("logits", logits), 1, "(..., V)")
    require_sampling_settings(temperature, top_k, top_p)


def _next_token_probs(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
) -> torch.Tensor:
    """:func:`next_token_probs` without its checks, for callers that made them."""
    if temperature == 0:
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
    # Shift, then divide: (z - max z) / T. A softmax ignores a shift, so this is softmax(z / T),
    # but dividing first overflows at a small T (float16 logits [70, 0] at T = 0.001:
    # 70 / 0.001 = 70,000 is past float16's 65,504, and inf - inf is NaN). Shifted first,
    # every entry is <= 0 and the row's largest is exactly 0 (m - m = 0, 0 / T = 0): exp never
    # overflows and the sum is at least e^0 = 1. An entry whose division overflows becomes
    # -inf, probability 0, and that is exact: its true probability is below e^-(the dtype's
    # largest number), which every dtype rounds to 0.
    # float16 and bfloat16 are computed in float32 and rounded once, at the end, to the input's
    # dtype: in their own 8 to 11 bits the roundings of z - max and of the division cost a
    # probability of 1e-4 up to 0.4 %, nine times float16's own rounding of it; through float32
    # the result is float64's to within that one rounding. float32 and float64 stay in their
    # dtype: their roundings are far below what a draw can tell apart, and some devices (MPS)
    # have no float64 to widen float32 to.
    dtype = logits.dtype
    if dtype in (torch.float16, torch.bfloat16):
        logits = logits.float()
    scaled = (logits - logits.amax(dim=-1, keepdim=True)) / temperature  # (..., V), all <= 0
    if top_k is not None:
        # The k largest logits, read before the shift and the division: those keep the order
        # but may round two close logits into a tie.
        kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]  # (..., 1)
        scaled = scaled.masked_fill(logits < kth, -torch.inf)
    probs = torch.softmax(scaled, dim=-1)
    if top_p is not None and top_p < 1:
        probs = _nucleus(probs, top_p)
    return probs.to(dtype)


def nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    r"""Keep the smallest set of the most likely tokens whose total is at least ``top_p``.

    A token stays when the tokens ranked above it hold less than ``top_p`` together:
    :math:`\sum_{j \text{ above } i} p_j < \text{top\_p}`. So the token whose probability
    carries the running total across ``top_p`` stays, and the most likely token always
    does. The kept probabilities are renormalised to sum to 1.

    Raises:
        TypeError: ``probs`` is not a floating-point tensor, or ``top_p`` not a number.
        ValueError: ``probs`` has no dim or holds a value outside ``[0, 1]`` (or NaN), or
            ``top_p`` is outside ``(0, 1]``.

    Shapes:
        probs: ``(..., V)``, each row summing to 1; returns ``(..., V)``.
    """
    require_min_ndim("probs", require_float_tensor("probs", probs), 1, "(..., V)")
    require_probabilities("probs", probs)
    require_probability("top_p", top_p, "(0, 1]")
    return _nucleus(probs, top_p)


def _nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """:func:`nucleus` without its checks."""
    sorted_probs, order = probs.sort(dim=-1, descending=True)  # (..., V) each
    mass_above = sorted_probs.cumsum(dim=-1) - sorted_probs  # (..., V): what ranks above
    drop_sorted = mass_above >= top_p  # (..., V), in rank order
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # back to vocab order
    kept = probs.masked_fill(drop, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)


def sample_next_token(
    logits: torch.Tensor,
    temperature: float,
    top_k: int | None = None,
    top_p: float | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One token per row: the argmax at temperature 0, else a draw from :func:`next_token_probs`.

    The arguments come in the order of notebook 10's sampler exercise, which
    :func:`attnlib.checks.check_sampler` checks.

    Called on its own, it checks its arguments as :func:`next_token_probs` does
    (``generator`` must be a ``torch.Generator`` or None); inside :meth:`GPT.generate
    <attnlib.gpt.GPT.generate>`, which checked them once, it trusts them. Either way it
    reads the logits, new at every call, by the module's one rule: NaN, +inf or a row with
    no finite logit is a ``ValueError``, at temperature 0 as at any other.

    Shapes:
        logits: ``(B, V)``; returns ``(B, 1)`` token ids.
    """
    if at_the_door():
        _require_sampler_arguments(logits, temperature, top_k, top_p)
        if logits.dim() != 2:
            raise ValueError(f"logits must have shape (B, V), got {tuple(logits.shape)}")
        require_generator("generator", generator)
    require_scores("logits", logits, -1)  # the module's one rule for logits
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = _next_token_probs(logits, temperature, top_k, top_p)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator)  # (B, 1)
