"""Notebook 10, Exercise 7: the statistical sampler check against its table of mistakes.

Right samplers written differently (inverse CDF, the Gumbel-max trick, loops) must pass; each
mistake, written here again as a learner would write it, must fail and be named; samplers that
call attnlib's must be refused; and the bound must keep a right sampler's chance of failing
below one in ten million.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
from right_sampler import right_sampler

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks.nb10_gpt import sampler, sampler_counts
from attnlib.course import sliders
from attnlib.sampling import next_token_probs, sample_next_token

Tensor = torch.Tensor
INF = float("inf")


def _named(report: object) -> str:
    text = str(report)
    if "The mistake: " not in text:
        return ""
    return text.split("The mistake: ", 1)[1].split("\n")[0].removesuffix(".")


def top_k(z: Tensor, k: int) -> Tensor:
    return z.masked_fill(z < z.topk(k, dim=-1).values[..., -1:], -INF)


def top_p(probs: Tensor, p: float) -> Tensor:
    ranked, order = probs.sort(dim=-1, descending=True)
    keep = torch.zeros_like(ranked, dtype=torch.bool).scatter(
        -1, order, ranked.cumsum(-1) - ranked < p
    )
    kept = probs * keep
    return kept / kept.sum(-1, keepdim=True)


def inverse_cdf(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return logits.topk(1, dim=-1).indices
    z = logits / temperature
    if k is not None:
        z = top_k(z, k)
    probs = torch.exp(z - z.amax(-1, keepdim=True))
    probs = probs / probs.sum(-1, keepdim=True)
    if p is not None:
        probs = top_p(probs, p)
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=probs.dtype)
    ids = (probs.cumsum(-1) < u).sum(-1, keepdim=True)
    return ids.clamp(max=probs.shape[-1] - 1)


def gumbel_max(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return torch.argmax(logits, dim=1).unsqueeze(1)
    z = logits / temperature
    if k is not None:
        z = top_k(z, k)
    if p is not None:
        z = top_p(torch.softmax(z, -1), p).log()
    noise = -torch.log(-torch.log(torch.rand(z.shape, generator=generator, dtype=z.dtype)))
    return (z + noise).argmax(dim=-1, keepdim=True)


def last_of_the_tied(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:  # greedy; of tied logits, the last
        return logits.shape[-1] - 1 - logits.flip(-1).argmax(dim=-1, keepdim=True)
    return right_sampler(logits, temperature, k, p, generator)


RIGHT = {
    "the exercise's": right_sampler,
    "inverse CDF": inverse_cdf,
    "Gumbel-max": gumbel_max,
    "greedy takes the last of tied logits": last_of_the_tied,
}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", RIGHT)
def test_right_samplers_pass(name: str, seed: int) -> None:
    report = checks.check_my_sample(RIGHT[name], seed=seed)
    assert report.passed, report
    assert "10,000,000 runs" in str(report)


def _sampler(
    weights: Callable[[Tensor, float, int | None, float | None], Tensor],
) -> Callable[..., Tensor]:
    def sample(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
        if temperature == 0:
            return logits.argmax(dim=-1, keepdim=True)
        return torch.multinomial(weights(logits, temperature, k, p), 1, generator=generator)

    return sample


def _filters(z: Tensor, k: int | None, p: float | None) -> Tensor:
    if k is not None:
        z = top_k(z, k)
    probs = z.softmax(-1)
    return probs if p is None else top_p(probs, p)


def _filled(z: Tensor, k: int | None, p: float | None, fill: float | str) -> Tensor:
    """The filters with top-k's removed logits set to ``fill`` (a number, or the row's smallest
    logit) instead of -inf."""
    if k is not None:
        removed = z < z.topk(k, dim=-1).values[..., -1:]
        low = z.amin(-1, keepdim=True).expand_as(z) if fill == "min" else torch.full_like(z, fill)
        z = torch.where(removed, low, z)
    probs = z.softmax(-1)
    return probs if p is None else top_p(probs, p)


def nucleus_logits_zeroed(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    z = z / t
    if k is not None:
        z = top_k(z, k)
    if p is None:
        return z.softmax(-1)
    keep = top_p(z.softmax(-1), p) > 0
    return torch.where(keep, z, torch.zeros_like(z)).softmax(-1)  # 0, not -inf, for the rest


def k_plus_one(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    z = z / t
    if k is not None:
        z = z.masked_fill(z < z.sort(-1, descending=True).values[..., k : k + 1], -INF)
    probs = z.softmax(-1)
    return probs if p is None else top_p(probs, p)


def k_minus_one(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    z = z / t
    if k is not None:
        z = z.masked_fill(z <= z.topk(k).values[..., -1:], -INF)
    probs = z.softmax(-1)
    return probs if p is None else top_p(probs, p)


def nucleus_drops_crossing(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    probs = _filters(z / t, k, None)
    if p is not None:
        ranked, order = probs.sort(-1, descending=True)
        keep = ranked.cumsum(-1) <= p
        keep[..., 0] = True  # the likeliest always stays
        probs = probs * torch.zeros_like(keep).scatter(-1, order, keep)
    return probs


def nucleus_sorted(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    probs = _filters(z / t, k, None)
    if p is not None:
        ranked = probs.sort(-1, descending=True).values
        probs = ranked * (ranked.cumsum(-1) - ranked < p)
    return probs


def nucleus_first(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    if p is None:
        return _filters(z / t, k, None)
    kept = _filters(z, k, p) > 0  # the nucleus at temperature 1
    return (z / t).masked_fill(~kept, -INF).softmax(-1)


def top_k_on_probabilities(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    probs = (z / t).softmax(-1)
    if k is not None:
        probs = probs.masked_fill(probs < probs.topk(k).values[..., -1:], 0.0)
    if p is not None:
        ranked, order = probs.sort(-1, descending=True)
        keep = torch.zeros_like(ranked, dtype=torch.bool).scatter(
            -1, order, ranked.cumsum(-1) - ranked < p
        )
        probs = probs * keep
    return probs


def no_greedy(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature > 0:
        logits = logits / temperature
    return torch.multinomial(_filters(logits, k, p), 1, generator=generator)


def divides_at_zero(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    probs = _filters(logits / temperature, k, p)
    return torch.multinomial(probs, 1, generator=generator)


def squeezed(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return logits.argmax(-1)
    return right_sampler(logits, temperature, k, p, generator)


def own_generator(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    return right_sampler(logits, temperature, k, p, torch.Generator().manual_seed(0))


def top_k_or_top_p(z: Tensor, t: float, k: int | None, p: float | None) -> Tensor:
    z = z / t
    if p is not None:  # top-p if given, else top-k
        return top_p(z.softmax(-1), p)
    return (z if k is None else top_k(z, k)).softmax(-1)


def one_draw(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return logits.argmax(-1, keepdim=True)
    probs = _filters(logits[:1] / temperature, k, p)  # (1, V): the first row
    return torch.multinomial(probs, 1, generator=generator).repeat(logits.shape[0], 1)


def draws_at_zero(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:  # the limit of softmax(z / T): the tied largest share the mass
        top = (logits == logits.max(-1, keepdim=True).values).double()
        probs = top / top.sum(-1, keepdim=True)
    else:
        probs = _filters(logits / temperature, k, p)
    return torch.multinomial(probs, 1, generator=generator)


def top_k_places(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
    if temperature == 0:
        return logits.argmax(-1, keepdim=True)
    z = logits / temperature
    if k is not None:
        z = z.topk(k, dim=-1).values  # (B, k): the k largest
    probs = z.softmax(-1)
    if p is not None:
        probs = top_p(probs, p)
    return torch.multinomial(probs, 1, generator=generator)


WRONG: dict[str, tuple[Callable[..., Tensor], str]] = {
    "a draw among tied logits at T = 0": (draws_at_zero, "drew from the limit"),
    "a place among the top k": (top_k_places, "place among the top k"),
    "no temperature with a filter": (
        _sampler(lambda z, t, k, p: _filters(z if k or p else z / t, k, p)),
        "left the temperature out when top-k or top-p is on",
    ),
    "T after softmax": (
        _sampler(lambda z, t, k, p: _filters(z, k, p) / t),
        "the temperature changes nothing",
    ),
    "times T": (_sampler(lambda z, t, k, p: _filters(z * t, k, p)), "multiplied the logits"),
    "no greedy branch": (no_greedy, "drew at random at temperature 0"),
    "divides at 0": (divides_at_zero, "divided by the temperature at T = 0"),
    "k + 1": (_sampler(k_plus_one), "kept k + 1 tokens"),
    "k - 1": (_sampler(k_minus_one), "kept k − 1 tokens"),
    "crossing token dropped": (_sampler(nucleus_drops_crossing), "carries the total past"),
    "sorted order": (_sampler(nucleus_sorted), "left in sorted order"),
    "top-p before the temperature": (_sampler(nucleus_first), "before the temperature"),
    "top-k on probabilities": (_sampler(top_k_on_probabilities), "on the whole distribution"),
    "top-k forgotten": (_sampler(lambda z, t, k, p: _filters(z / t, None, p)), "top_k was never"),
    "top-p forgotten": (_sampler(lambda z, t, k, p: _filters(z / t, k, None)), "top_p was never"),
    "softmax over the batch": (
        _sampler(lambda z, t, k, p: torch.softmax(z / t, dim=0)),
        "along dim 0",
    ),
    "always greedy": (lambda z, t, k, p, g: torch.argmax(z, -1, keepdim=True), "always took"),
    "multinomial of logits": (
        lambda z, t, k, p, g: torch.multinomial(z if t == 0 else z / t, 1, generator=g),
        "drew from the scaled logits",
    ),
    "(B,) at T = 0": (squeezed, "shape (B,)"),
    "global generator": (
        lambda z, t, k, p, g: right_sampler(z, t, k, p, None),
        "without the generator",
    ),
    "a generator of its own": (own_generator, "without the generator"),
    "top-k or top-p": (_sampler(top_k_or_top_p), "top-k only when top_p was not given"),
    "top-k, else top-p": (
        _sampler(lambda z, t, k, p: _filters(z / t, k, p if k is None else None)),
        "top-p only when top_k was not given",
    ),
    "one draw for the batch": (one_draw, "from the first row, instead of one per row"),
    "top-k fills 0": (_sampler(lambda z, t, k, p: _filled(z / t, k, p, 0.0)), "top-k filled"),
    "top-k fills -1": (_sampler(lambda z, t, k, p: _filled(z / t, k, p, -1.0)), "top-k filled"),
    "top-k fills the row's smallest logit": (
        _sampler(lambda z, t, k, p: _filled(z / t, k, p, "min")),
        "top-k filled the removed logits with a finite number",
    ),
    "top-p sets the dropped logits to 0": (
        _sampler(nucleus_logits_zeroed),
        "top-p set the dropped tokens' logits to a finite number",
    ),
}


@pytest.mark.parametrize("name", WRONG)
def test_each_sampler_mistake_is_caught_and_named(name: str) -> None:
    fn, words = WRONG[name]
    report = checks.check_my_sample(fn)
    assert not report.passed and words in _named(report), report


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_every_mistake_of_the_table_is_named_when_made(seed: int) -> None:
    for mistake in known_mistakes("ex7_my_sample"):
        report = checks.check_my_sample(mistake.fn, seed=seed)
        assert _named(report) == mistake.name, (mistake.name, str(report))


@pytest.mark.parametrize(
    "cheat",
    [
        sample_next_token,
        lambda z, t, k, p, g: torch.multinomial(next_token_probs(z, t, k, p), 1, generator=g),
        lambda z, t, k, p, g: (
            right_sampler(z, t, k, None, g)
            if p is None
            else torch.multinomial(attnlib.sampling.nucleus(z.softmax(-1), p), 1, generator=g)
        ),
        lambda z, t, k, p, g: torch.multinomial(
            torch.stack([sliders.sampling_distribution(row, t, k) for row in z]), 1, generator=g
        ),
    ],
    ids=["sample_next_token", "next_token_probs", "nucleus", "sliders.sampling_distribution"],
)
def test_a_sampler_that_calls_attnlibs_is_refused(cheat: Callable[..., Tensor]) -> None:
    report = checks.check_my_sample(cheat)
    assert not report.passed and "does not accept it" in str(report), report


@pytest.mark.parametrize(
    ("returns", "says"),
    [
        (lambda logits: [0] * logits.shape[0], "returned list"),
        (lambda logits: torch.zeros(logits.shape[0], 2, dtype=torch.long), "shape"),
        (lambda logits: torch.zeros(logits.shape[0], 1), "dtype torch.float32"),
        (lambda logits: torch.full((logits.shape[0], 1), 99), "outside [0, 6)"),
    ],
)
def test_a_malformed_result_is_described(returns: Callable[..., object], says: str) -> None:
    report = checks.check_my_sample(lambda logits, *rest: returns(logits))
    assert not report.passed and says in str(report), report


def test_an_unfinished_sampler_or_helper_is_not_done_yet() -> None:
    def my_top_k_logits(logits: Tensor, k: int) -> Tensor:
        raise NotImplementedError()

    def my_sample(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
        """Draw one token per row."""
        return my_top_k_logits(logits, k or 1)

    report = checks.check_my_sample(my_sample)
    assert not report.done and "it calls my_top_k_logits, which is not done yet" in str(report)

    def stub(logits, temperature, k, p, generator):  # type: ignore[no-untyped-def]
        """Draw one token per row."""
        raise NotImplementedError()

    report = checks.check_my_sample(stub)
    assert not report.done and "not done yet. Your task: Draw one token per row." in str(report)


def test_the_bound_is_bernsteins_and_holds_against_the_exact_binomial_tail() -> None:
    delta = sampler.per_token_delta()
    tested = sum(int((case.probs() > 0).sum()) for case in sampler.CASES)  # type: ignore[operator]
    assert math.isclose(delta * tested, sampler.FALSE_FAILURE) and sampler.FALSE_FAILURE <= 1e-6
    n = sampler.DRAWS
    counts = torch.arange(n + 1, dtype=torch.float64)
    for p in (0.003, 0.05, 0.281, 0.5, 0.719, 0.98):
        t = sampler_counts.allowed_deviation(p, n, delta)
        binomial = torch.distributions.Binomial(n, torch.tensor(p, dtype=torch.float64))
        tail = binomial.log_prob(counts)[(counts - n * p).abs() > t].exp().sum().item()
        assert tail < delta  # the exact chance of a false failure is below the budget
        assert t < 0.03 * n  # and the bound is tight enough to see a 3-point shift
    assert sampler_counts.allowed_deviation(0.0, n, delta) == 0.0


def test_every_case_sits_well_away_from_its_top_p_boundary() -> None:
    for case in sampler.CASES:
        if case.top_p is None:
            continue
        before = next_token_probs(case.logits, case.temperature, case.top_k)
        running = before.sort(descending=True).values.cumsum(-1)
        assert (running - case.top_p).abs().min() > 0.01, case.description


def test_the_check_leaves_the_notebooks_random_numbers_alone() -> None:
    torch.manual_seed(5)
    before = torch.rand(3)
    torch.manual_seed(5)
    assert checks.check_my_sample(WRONG["global generator"][0]).message
    assert torch.equal(torch.rand(3), before)
