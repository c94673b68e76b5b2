"""The decoding checkers of notebook 10: each passes a right sampler and names each wrong one."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from attnlib import checks
from attnlib.checks import sampling
from attnlib.checks.sampling_mistakes import MISTAKES, NUCLEUS_MISTAKES, TOP_K_MISTAKES
from attnlib.sampling import next_token_probs
from benchmarks.sampler_checker import right_sampler, sampler_of


@pytest.mark.parametrize("seed", range(5))
def test_a_right_sampler_passes(seed: int) -> None:
    result = checks.check_sampler(right_sampler, seed=seed)
    assert result.passed, result.message
    assert "10,000,000 runs" in result.message


def test_a_sampler_returning_ids_of_shape_n_passes_too() -> None:
    result = checks.check_sampler(lambda *args: right_sampler(*args)[:, 0])
    assert result.passed, result.message


@pytest.mark.parametrize("mistake", list(MISTAKES))
@pytest.mark.parametrize("seed", [0, 1])
def test_each_mistake_fails_and_is_named(mistake: str, seed: int) -> None:
    result = checks.check_sampler(sampler_of(MISTAKES[mistake]), seed=seed)
    assert not result.passed
    assert f"likely cause: {mistake}" in result.message, result.message
    assert "expected frequencies" in result.message


def test_greedy_must_be_the_argmax() -> None:
    def random_at_zero(logits, temperature, top_k, top_p, generator):  # type: ignore[no-untyped-def]
        return right_sampler(logits, temperature or 1.0, top_k, top_p, generator)

    result = checks.check_sampler(random_at_zero)
    assert not result.passed and "temperature 0 (greedy)" in result.message
    assert "should never come" in result.message


def test_dividing_by_a_zero_temperature_is_explained() -> None:
    def divides(logits, temperature, top_k, top_p, generator):  # type: ignore[no-untyped-def]
        probs = next_token_probs(logits / temperature, 1.0, top_k, top_p)  # NaN at T = 0
        return torch.multinomial(probs, 1, generator=generator)

    result = checks.check_sampler(divides)
    assert not result.passed and "raised" in result.message
    assert "at temperature 0 take the argmax" in result.message


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
    result = checks.check_sampler(lambda logits, *rest: returns(logits))
    assert not result.passed and says in result.message, result.message


def test_an_unfinished_sampler_is_not_done_yet() -> None:
    def stub(logits, temperature, top_k, top_p, generator):  # type: ignore[no-untyped-def]
        """Draw one token per row."""
        raise NotImplementedError

    result = checks.check_sampler(stub)
    assert not result.passed and not result.done
    assert "not done yet (Draw one token per row.)" in result.message


def test_the_bound_is_bernsteins_and_holds_against_the_exact_binomial_tail() -> None:
    delta = sampling.per_token_delta()
    tested = sum(int((case.probs() > 0).sum()) for case in sampling.CASES)
    assert math.isclose(delta * tested, sampling.FALSE_FAILURE) and sampling.FALSE_FAILURE <= 1e-6
    n = sampling.DRAWS
    counts = torch.arange(n + 1, dtype=torch.float64)
    for p in (0.003, 0.05, 0.281, 0.5, 0.719, 0.98):
        t = sampling.allowed_deviation(p, n, delta)
        log_pmf = torch.distributions.Binomial(n, torch.tensor(p, dtype=torch.float64)).log_prob(
            counts
        )
        tail = log_pmf[(counts - n * p).abs() > t].exp().sum().item()
        assert tail < delta  # the exact chance of a false failure is below the budget
        assert t < 0.03 * n  # and the bound is tight enough to see a 3-point shift
    assert sampling.allowed_deviation(0.0, n, delta) == 0.0


def test_every_case_sits_well_away_from_its_top_p_boundary() -> None:
    for case in sampling.CASES:
        if case.top_p is None:
            continue
        before = next_token_probs(case.logits, case.temperature, case.top_k)
        running = before.sort(descending=True).values.cumsum(-1)
        assert (running - case.top_p).abs().min() > 0.01, case.description


def test_top_p_probs_passes_the_right_function_and_names_each_mistake() -> None:
    def right(probs, top_p):  # type: ignore[no-untyped-def]
        return next_token_probs(probs.log(), 1.0, None, top_p)

    assert checks.check_top_p_probs(right).passed
    for mistake, wrong in NUCLEUS_MISTAKES.items():
        result = checks.check_top_p_probs(wrong)
        assert not result.passed
        assert f"likely cause: your function {mistake}" in result.message, result.message

    def stub(probs, top_p):  # type: ignore[no-untyped-def]
        """Keep the nucleus."""
        raise NotImplementedError

    assert not checks.check_top_p_probs(stub).done


@pytest.mark.parametrize("mistake", list(TOP_K_MISTAKES))
def test_top_k_logits_names_each_mistake(mistake: str) -> None:
    result = checks.check_top_k_logits(TOP_K_MISTAKES[mistake])
    assert not result.passed and result.done
    assert f"\n  likely cause: {mistake}\n  hint: " in result.message, result.message


def test_top_k_logits_names_no_cause_for_an_unknown_mistake_or_a_crash() -> None:
    def only_the_top_k(logits, k):  # type: ignore[no-untyped-def]
        return logits.topk(k, dim=-1).values  # (B, k): not the whole row

    def no_keepdim(logits, k):  # type: ignore[no-untyped-def]
        return logits.masked_fill(logits < logits.topk(k, dim=-1).values[:, -1], -torch.inf)

    for wrong, says in ((only_the_top_k, "shape (3, 1)"), (no_keepdim, "raised RuntimeError")):
        result = checks.check_top_k_logits(wrong)
        assert not result.passed and says in result.message, result.message
        assert "likely cause" not in result.message
    assert "has shape (B, 1)" in checks.check_top_k_logits(no_keepdim).message
