"""Notebook 10, Exercise 7: a sampler (temperature, top-k, top-p, greedy), checked by its draws.

A sampler is random, so the check is statistical. For each case it asks the learner's sampler
for :data:`DRAWS` draws at once (a batch of identical rows), counts how often each token came
and compares the counts with the exact distribution of :func:`attnlib.next_token_probs`. A
token of probability 0 must never come; every other count must lie within a Bernstein bound
of its expected value, chosen so that a right sampler fails the whole check with a probability
below :data:`FALSE_FAILURE` (a union bound over every token of every case). Each usual mistake
(:mod:`.sampler_mistakes`) moves some count far outside its bound in some case; a failing
sampler is named by the mistake whose distribution fits its counts in every case so far.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass

import torch

import attnlib
from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._exercise import (
    Exercise,
    Mistake,
    checker_of,
    failed,
    not_done,
    passed,
    refused,
    register,
)
from attnlib.checks._framework import CheckResult, vec
from attnlib.checks._threads import one_thread
from attnlib.checks.nb10_gpt import sampler_mistakes as wrong
from attnlib.checks.nb10_gpt.sampler_counts import (
    DRAWS,
    first_misfit,
    greedy_tie_broken,
)
from attnlib.sampling import next_token_probs, sample_next_token

Seen = tuple[tuple["SamplingCase", torch.Tensor], ...]
FALSE_FAILURE = 1e-7  # at most this chance that a right sampler fails the check

SAMPLER = register(
    Exercise(
        id="ex7_my_sample",
        notebook="10",
        number=7,
        name="my_sample",
        hints=(
            "The sampler draws from one distribution that temperature, top-k and top-p define "
            "together, and the order in which they act is part of the definition: the "
            "temperature reshapes the logits, top-k removes logits, top-p keeps a share of "
            "probability. Temperature 0 is the limit where no draw is left to make.",
            "Top-k acts on logits (before any softmax) and top-p on probabilities (after it); "
            "both act on what the temperature has made of the logits, and top-p picks among "
            "what top-k kept. None switches a filter off. torch.multinomial draws one index per "
            "row of a (B, V) tensor of probabilities, with the generator you hand it.",
            "At temperature 0, return each row's argmax, keeping its dimension: (B, 1). "
            "Otherwise divide the logits by the temperature, apply your top-k if top_k is given, "
            "take the softmax over the last dimension, apply your top-p if top_p is given, and "
            "draw one token per row with the generator.",
        ),
    )
)

# An answer may not hand the work to attnlib's sampler or its parts, nor to transformers'
# filters.
SAMPLER_IMPLEMENTATIONS = Forbidden(
    python={
        next_token_probs: "attnlib.next_token_probs",
        attnlib.sampling.nucleus: "attnlib.sampling.nucleus",
        sample_next_token: "attnlib.sampling.sample_next_token",
        attnlib.GPT.generate: "GPT.generate",
    },
    paths={
        "attnlib.sampling:_next_token_probs": "attnlib.next_token_probs",
        "attnlib.sampling:_nucleus": "attnlib.sampling.nucleus",
        **{
            f"transformers.generation.logits_process:{name}": f"transformers' {name}"
            for name in ("TopKLogitsWarper", "TopPLogitsWarper")
        },
    },
)


@dataclass(frozen=True)
class SamplingCase:
    """One sampler setting on one logit vector ``(V,)``."""

    description: str
    logits: torch.Tensor
    temperature: float
    top_k: int | None = None
    top_p: float | None = None

    def probs(self, distribution: wrong.Weights | None = None) -> torch.Tensor | None:
        """The exact distribution (or a mistake's), or None when it has none to draw from."""
        if distribution is None:
            return next_token_probs(self.logits, self.temperature, self.top_k, self.top_p)
        w = distribution(self.logits[None], self.temperature, self.top_k, self.top_p)[0]
        if not bool(torch.isfinite(w).all()) or bool((w < 0).any()) or w.sum() <= 0:
            return None
        return w / w.sum()


# Logits in a shuffled vocabulary order (the largest is token 2), with no ties; probabilities
# whose running totals stay at least 0.01 away from every top_p below. At temperature 3 the
# nucleus of the tokens top-k 3 keeps (2 tokens), that of the whole distribution cut to 3 (top-p
# before top-k) and that of the whole distribution (top-k left out) all differ. Greedy decoding
# is checked on two tied largest logits: it may take either, but the same one every time.
LOGITS = vec(0.5, -1.0, 2.0, 0.0, -3.0, 1.0)
NUCLEUS_LOGITS = vec(0.10, 0.40, 0.05, 0.25, 0.20).log()  # sorted: 0.40, 0.25, 0.20, …
TIED_LOGITS = vec(0.5, 2.0, -1.0, 0.0, 2.0, 1.0)  # greedy: token 1 or 4, the same every time

CASES = (
    SamplingCase("temperature 1", LOGITS, 1.0),
    SamplingCase("temperature 0.5 (sharper)", LOGITS, 0.5),
    SamplingCase("temperature 2 (flatter)", LOGITS, 2.0),
    SamplingCase("top-k 3", LOGITS, 1.0, top_k=3),
    SamplingCase("top-p 0.8", NUCLEUS_LOGITS, 1.0, top_p=0.8),
    SamplingCase("top-p 0.7 at temperature 0.5", NUCLEUS_LOGITS, 0.5, top_p=0.7),
    SamplingCase("top-k 3, then top-p 0.71, at temperature 3", LOGITS, 3.0, top_k=3, top_p=0.71),
    SamplingCase("temperature 0 (greedy), two tied largest logits", TIED_LOGITS, 0.0),
)


# Drawn only to name a failing sampler, never to pass or fail one: with both filters on, top-p
# measured on the whole distribution keeps the 2 likeliest tokens here (as top-k left out does),
# top-p skipped keeps top-k's 3, and the right nucleus 1, so the mistakes that the case above
# cannot tell apart differ here.
PROBES = (SamplingCase("top-k 3, then top-p 0.35, at temperature 3", LOGITS, 3.0, 3, 0.35),)


def per_token_delta(cases: tuple[SamplingCase, ...] = CASES) -> float:
    """The false-failure budget of one token's test: FALSE_FAILURE over all tested tokens."""
    return FALSE_FAILURE / sum(int((case.probs() > 0).sum()) for case in cases)  # type: ignore[operator]


def _fits(mistake: Mistake, seen: list[tuple[SamplingCase, torch.Tensor]], delta: float) -> bool:
    distribution = wrong.DISTRIBUTIONS.get(mistake)
    return all(first_misfit(c, case.probs(distribution), delta) is None for case, c in seen)


def _diagnose(
    seen: list[tuple[SamplingCase, torch.Tensor]], delta: float, probed: Seen = ()
) -> Mistake | None:
    """The first mistake whose distribution differs from the right one in the failing case
    and fits the counts of every case so far, preferring one that fits the probes too."""
    case, fitting = seen[-1][0], []
    for mistake, distribution in wrong.DISTRIBUTIONS.items():
        theirs = case.probs(distribution)
        if theirs is None or torch.allclose(theirs, case.probs()):  # type: ignore[arg-type]
            continue  # right here: this mistake cannot explain the failure
        if _fits(mistake, seen, delta):
            fitting.append(mistake)
    also = [m for m in fitting if _fits(m, list(probed), delta)]
    return (also or fitting or [None])[0]


def _probe(fn: Callable[..., object], generator: torch.Generator) -> Seen:
    """The failing sampler's counts on :data:`PROBES` (those it draws without error)."""
    probed = []
    for case in PROBES:
        try:
            rows = case.logits.expand(DRAWS, -1).clone()
            drawn = fn(rows, case.temperature, case.top_k, case.top_p, generator)
        except Exception:  # the learner's bug: this probe tells nothing
            continue
        counts, _ = _counts(drawn, case)
        if counts is not None:
            probed.append((case, counts))
    return tuple(probed)


def _raised_like(
    error: Exception,
    case: SamplingCase,
    seen: list[tuple[SamplingCase, torch.Tensor]],
    delta: float,
) -> Mistake | None:
    """The first mistake that raises the same error on this case and fits the earlier counts."""
    rows = case.logits.expand(64, -1).clone()
    for mistake in wrong.MISTAKES:
        try:
            mistake.fn(rows, case.temperature, case.top_k, case.top_p, torch.Generator())
        except Exception as theirs:
            if type(theirs) is type(error) and _fits(mistake, seen, delta):
                return mistake
    return None


def _one_token_for_all(fn: Callable[..., object], case: SamplingCase) -> bool:
    """Whether, seed after seed, every row gets the same token, though not always the same."""
    rows, firsts = case.logits.expand(64, -1).clone(), set()
    for seed in range(20):
        g = torch.Generator().manual_seed(seed)
        try:
            drawn = torch.as_tensor(fn(rows.clone(), case.temperature, case.top_k, case.top_p, g))
            firsts.add(int(drawn.flatten()[0]) if bool((drawn == drawn.flatten()[0]).all()) else -1)
        except Exception:  # not a tensor of ids: not this mistake
            return False
    return len(firsts) > 1 and -1 not in firsts


def _counts(drawn: object, case: SamplingCase) -> tuple[torch.Tensor | None, str | None]:
    """The draws as counts per token, or why they can't be counted."""
    vocab = case.logits.shape[0]
    if not isinstance(drawn, torch.Tensor):
        return None, f"your sampler returned {type(drawn).__name__}, expected a tensor of ids"
    if tuple(drawn.shape) != (DRAWS, 1):
        return None, (
            f"your sampler returned shape {tuple(drawn.shape)} for logits of shape "
            f"({DRAWS}, {vocab}); expected one token id per row, ({DRAWS}, 1)"
        )
    if drawn.is_floating_point() or drawn.dtype == torch.bool:
        return None, f"your sampler returned dtype {drawn.dtype}; token ids are integers"
    if drawn.min() < 0 or drawn.max() >= vocab:
        return None, f"your sampler returned ids outside [0, {vocab})"
    return torch.bincount(drawn.flatten(), minlength=vocab), None


def _ignores_generator(fn: Callable[..., object]) -> bool:
    """Whether the same seed gave different draws, or different seeds the same draws."""
    rows = LOGITS.expand(200, -1).clone()
    a, b, c = (
        fn(rows.clone(), 1.0, None, None, torch.Generator().manual_seed(seed)) for seed in (1, 1, 2)
    )
    return not torch.equal(a, b) or torch.equal(a, c)  # type: ignore[arg-type]


def _unfinished(error: NotImplementedError, fn: Callable[..., object]) -> str:
    """The task, or which unfinished function the sampler calls."""
    frames = traceback.extract_tb(error.__traceback__)
    where = frames[-1].name if frames else ""
    if where and where != getattr(fn, "__name__", where):
        return f"it calls {where}, which is not done yet"
    return str(error) or " ".join((fn.__doc__ or "").split())


@checker_of(SAMPLER, wrong.MISTAKES)
def check_my_sample(fn: Callable[..., object], seed: int = 0) -> CheckResult:
    """Check ``my_sample(logits, temperature, top_k, top_p, generator)`` by its draws.

    ``seed`` seeds the generator handed to ``fn``. A right sampler fails with probability below
    :data:`FALSE_FAILURE`.

    Shapes:
        logits: ``(B, V)``; returns ``(B, 1)`` token ids.
    """
    if not callable(fn):
        return failed(SAMPLER, fn, "as a whole", f"expected a function, got {type(fn)}", None)
    with torch.random.fork_rng(devices=[]), one_thread():  # the notebook's stay its own
        return _check(fn, seed)


def _check(fn: Callable[..., object], seed: int) -> CheckResult:
    delta, generator = per_token_delta(), torch.Generator().manual_seed(seed)
    seen: list[tuple[SamplingCase, torch.Tensor]] = []
    for case in CASES:
        where = f"case '{case.description}' ({DRAWS:,} draws)"
        rows, watch = case.logits.expand(DRAWS, -1).clone(), CallWatch(SAMPLER_IMPLEMENTATIONS)
        try:
            with watch:
                drawn = fn(rows, case.temperature, case.top_k, case.top_p, generator)
        except NotImplementedError as error:
            return not_done(SAMPLER, fn, _unfinished(error, fn))
        except Exception as error:  # the learner's bug, reported instead of a traceback
            problem = f"your sampler raised {type(error).__name__}: {error}"
            return failed(SAMPLER, fn, where, problem, _raised_like(error, case, seen, delta))
        if watch.seen:
            return refused(SAMPLER, fn, watch.seen)
        counts, problem = _counts(drawn, case)
        if counts is None:
            one_column = torch.is_tensor(drawn) and tuple(drawn.shape) == (DRAWS,)  # type: ignore[union-attr]
            mistake = wrong.GREEDY_WITHOUT_COLUMN if one_column else None
            return failed(SAMPLER, fn, where, str(problem), mistake)
        seen.append((case, counts))
        misfit = first_misfit(counts, case.probs(), delta)
        if misfit is not None and greedy_tie_broken(case.logits, case.temperature, counts):
            misfit = None  # the other of the tied largest logits, every time: greedy too
        if misfit is not None:
            expected = ", ".join(f"{p:.3f}" for p in case.probs().tolist())  # type: ignore[union-attr]
            yours = ", ".join(f"{c / DRAWS:.3f}" for c in counts.tolist())
            problem = (
                f"{misfit}.\n  Expected frequencies: {expected}\n  Your frequencies:     {yours}"
            )
            one = int((counts > 0).sum()) == 1 and _one_token_for_all(fn, case)
            mistake = wrong.FIRST_ROW_ONLY if one else _diagnose(seen, delta, _probe(fn, generator))
            return failed(SAMPLER, fn, where, problem, mistake)
    if _ignores_generator(fn):
        problem = "the same seed gave different tokens (or different seeds the same tokens)"
        return failed(SAMPLER, fn, "the generator", problem, wrong.WITHOUT_GENERATOR)
    return passed(
        SAMPLER,
        fn,
        f"all {len(CASES)} cases ({DRAWS:,} draws each; a right sampler fails this check less "
        f"than once in {1 / FALSE_FAILURE:,.0f} runs)",
    )
