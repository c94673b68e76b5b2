"""Checkers for notebook 10's decoding exercises: top-p by its exact result, a sampler by its draws.

A sampler is random, so :func:`check_sampler` is statistical. For each case it asks the
learner's sampler for many draws at once (a batch of identical rows), counts how often each
token came, and compares the counts with the exact distribution of
:func:`attnlib.sampling.next_token_probs`. A token the exact distribution gives no mass must
never come. For every other token the count must lie within a Bernstein bound of its
expected value, chosen so that a correct sampler fails the whole check with a probability
below :data:`FALSE_FAILURE` (a union bound over every token of every case). The cases are
built so that each usual mistake moves some token's count far outside its bound; when a
check fails, the counts are compared with each mistake's own distribution to name it.

Notebook 10.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from attnlib.checks._framework import CheckResult, compare_outputs, not_done, vec
from attnlib.checks.sampling_mistakes import MISTAKES, NUCLEUS_MISTAKES, Distribution
from attnlib.sampling import next_token_probs, nucleus

DRAWS = 20_000  # draws per case
FALSE_FAILURE = 1e-7  # at most this chance that a correct sampler fails check_sampler

# sample(logits (N, V), temperature, top_k, top_p, generator) -> ids (N, 1) or (N,)
Sampler = Callable[..., object]


@dataclass(frozen=True)
class SamplingCase:
    """One sampler setting on one logit vector ``(V,)``."""

    description: str
    logits: torch.Tensor
    temperature: float
    top_k: int | None = None
    top_p: float | None = None

    def probs(self, distribution: Distribution = next_token_probs) -> torch.Tensor:
        return distribution(self.logits, self.temperature, self.top_k, self.top_p)


# Logits in a shuffled vocabulary order (the largest is token 2), with no ties; probabilities
# whose running totals stay at least 0.01 away from every top_p below.
_LOGITS = vec(0.5, -1.0, 2.0, 0.0, -3.0, 1.0)
_NUCLEUS_LOGITS = vec(0.10, 0.40, 0.05, 0.25, 0.20).log()  # sorted: 0.40, 0.25, 0.20, …

CASES = (
    SamplingCase("temperature 1", _LOGITS, 1.0),
    SamplingCase("temperature 0.5 (sharper)", _LOGITS, 0.5),
    SamplingCase("temperature 2 (flatter)", _LOGITS, 2.0),
    SamplingCase("top-k 3", _LOGITS, 1.0, top_k=3),
    SamplingCase("top-p 0.8", _NUCLEUS_LOGITS, 1.0, top_p=0.8),
    SamplingCase("top-p 0.7 at temperature 0.5", _NUCLEUS_LOGITS, 0.5, top_p=0.7),
    SamplingCase("top-k 4, then top-p 0.78", _LOGITS, 1.0, top_k=4, top_p=0.78),
    SamplingCase("temperature 0 (greedy)", _LOGITS, 0.0),
)


def allowed_deviation(p: float, draws: int, delta: float) -> float:
    r"""How far a Binomial(draws, p) count strays from draws·p with probability below delta.

    Bernstein's inequality for a sum of independent terms bounded by 1:
    :math:`P(|X - Np| \ge t) \le 2\exp\!\big(-\tfrac{t^2/2}{Np(1-p) + t/3}\big)`; setting the
    right side to ``delta`` and solving for :math:`t` gives
    :math:`t = L/3 + \sqrt{L^2/9 + 2L\,Np(1-p)}` with :math:`L = \ln(2/\delta)`.
    """
    if p <= 0.0:
        return 0.0  # a token of probability 0 never comes
    log_term = math.log(2 / delta)
    return log_term / 3 + math.sqrt(log_term**2 / 9 + 2 * log_term * draws * p * (1 - p))


def per_token_delta(cases: tuple[SamplingCase, ...] = CASES) -> float:
    """The false-failure budget of one token's test: FALSE_FAILURE over all tested tokens."""
    return FALSE_FAILURE / sum(int((case.probs() > 0).sum()) for case in cases)


def _first_misfit(counts: torch.Tensor, probs: torch.Tensor, delta: float) -> str | None:
    """``None`` when every count is within its bound of ``probs``, else which token is not."""
    for token, (count, p) in enumerate(zip(counts.tolist(), probs.tolist(), strict=True)):
        expected = DRAWS * p
        if abs(count - expected) > allowed_deviation(p, DRAWS, delta):
            if p == 0.0:
                return f"token {token} came {count} times, but it should never come"
            return (
                f"token {token} came {count} times; about {expected:.0f} expected "
                f"(± {allowed_deviation(p, DRAWS, delta):.0f})"
            )
    return None


def _counts(
    fn: Sampler, case: SamplingCase, generator: torch.Generator
) -> tuple[torch.Tensor | None, str | None]:
    """The learner's draws for ``case`` as counts per token, or why they can't be counted."""
    rows = case.logits.expand(DRAWS, -1).clone()  # (N, V): one draw per row
    drawn = fn(rows, case.temperature, case.top_k, case.top_p, generator)
    if not isinstance(drawn, torch.Tensor):
        return None, f"your sampler returned {type(drawn).__name__}, expected a tensor of ids"
    if drawn.shape not in ((DRAWS,), (DRAWS, 1)):
        return None, (
            f"your sampler returned shape {tuple(drawn.shape)} for logits of shape "
            f"{tuple(rows.shape)}; expected one token id per row, ({DRAWS}, 1) or ({DRAWS},)"
        )
    if drawn.is_floating_point() or drawn.dtype == torch.bool:
        return None, f"your sampler returned dtype {drawn.dtype}; token ids are integers"
    vocab = case.logits.shape[0]
    if drawn.min() < 0 or drawn.max() >= vocab:
        return None, f"your sampler returned ids outside [0, {vocab})"
    return torch.bincount(drawn.flatten(), minlength=vocab), None


def _diagnose(seen: list[tuple[SamplingCase, torch.Tensor]], delta: float) -> str | None:
    """The first mistake whose distribution fits the counts of every case seen so far."""
    case, _ = seen[-1]
    for mistake, distribution in MISTAKES.items():
        if torch.allclose(case.probs(distribution), case.probs()):
            continue  # this mistake samples correctly here: it can't explain the failure
        if all(_first_misfit(c, past.probs(distribution), delta) is None for past, c in seen):
            return mistake
    return None


def check_sampler(fn: Sampler, seed: int = 0) -> CheckResult:
    """Check ``sample(logits, temperature, top_k, top_p, generator)`` by its draws.

    ``logits`` is ``(N, V)`` and the sampler returns one id per row, ``(N, 1)`` or ``(N,)``.
    Each case draws :data:`DRAWS` tokens and compares their counts with the exact
    distribution; a correct sampler fails with probability below :data:`FALSE_FAILURE`.
    ``seed`` seeds the generator handed to ``fn``.
    """
    name = "sampler"
    if not callable(fn):
        return CheckResult(name, False, f"✗ {name}: expected a function, got {type(fn).__name__}")
    delta = per_token_delta()
    generator = torch.Generator().manual_seed(seed)
    seen: list[tuple[SamplingCase, torch.Tensor]] = []
    for case in CASES:
        try:
            counts, problem = _counts(fn, case, generator)
        except NotImplementedError as error:
            return not_done(name, fn, error)
        except Exception as error:  # the learner's bug, reported instead of a traceback
            message = (
                f"✗ {name}, case '{case.description}': your sampler raised "
                f"{type(error).__name__}: {error}"
            )
            if case.temperature == 0:
                message += "\n  hint: at temperature 0 take the argmax; never divide by 0"
            return CheckResult(name, False, message)
        if counts is None:
            return CheckResult(name, False, f"✗ {name}, case '{case.description}': {problem}")
        seen.append((case, counts))
        misfit = _first_misfit(counts, case.probs(), delta)
        if misfit is not None:
            mistake = _diagnose(seen, delta)
            why = f"\n  likely cause: {mistake}" if mistake else ""
            expected = ", ".join(f"{p:.3f}" for p in case.probs().tolist())
            seen = ", ".join(f"{c / DRAWS:.3f}" for c in counts.tolist())
            return CheckResult(
                name,
                False,
                f"✗ {name}, case '{case.description}' ({DRAWS:,} draws): {misfit}.{why}\n"
                f"  expected frequencies: {expected}\n  your frequencies:     {seen}",
            )
    return CheckResult(
        name,
        True,
        f"✓ {name} matches the exact distribution in all {len(CASES)} cases "
        f"({DRAWS:,} draws each; a correct sampler fails this check less than once in "
        f"{1 / FALSE_FAILURE:,.0f} runs).",
    )


def check_top_p_probs(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``top_p(probs, top_p)``: keep the smallest likeliest set reaching top_p, renormalised.

    ``probs`` is ``(B, V)`` with rows summing to 1; the result has the same shape.
    """
    name = "top_p_probs"
    rows = torch.stack([_NUCLEUS_LOGITS.softmax(-1), _LOGITS[:5].softmax(-1)])  # (2, 5)
    hint = (
        "sort descending; a token stays when the tokens ranked above it hold less than top_p "
        "(its cumsum minus its own probability < top_p); zero the rest, divide by the sum."
    )
    for top_p in (0.8, 0.5, 0.3, 1.0):
        try:
            got = fn(rows.clone(), top_p)
        except NotImplementedError as error:
            return not_done(name, fn, error)
        except Exception as error:  # the learner's bug, reported instead of a traceback
            message = f"✗ {name}, top_p = {top_p}: your function raised {type(error).__name__}"
            return CheckResult(name, False, f"{message}: {error}\n  hint: {hint}")
        problem = compare_outputs(got, nucleus(rows, top_p), "the result", atol=1e-6, rtol=1e-5)
        if problem is not None:
            likely = [
                f"\n  likely cause: your function {mistake}"
                for mistake, wrong in NUCLEUS_MISTAKES.items()
                if compare_outputs(got, wrong(rows, top_p), "", atol=1e-6, rtol=1e-5) is None
            ]
            cause = likely[0] if likely else ""
            return CheckResult(
                name, False, f"✗ {name}, top_p = {top_p}: {problem}{cause}\n  hint: {hint}"
            )
    return CheckResult(name, True, f"✓ {name} is correct on all 4 cases.")
