"""Sampling: finite and right in float16, float32 and float64 at any temperature; top-p (nucleus)
by hand, against another formulation, as properties, in generate."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib.course.sliders import sampling_distribution
from attnlib.gpt import GPT, GPTConfig
from attnlib.sampling import next_token_probs, nucleus, sample_next_token

PROBS = torch.tensor([0.10, 0.40, 0.05, 0.25, 0.20], dtype=torch.float64)


def _nucleus_from_the_tail(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """An independent formulation: sort ascending and drop the tail that holds at most 1 − top_p.

    Tokens sorted from least to most likely are dropped while their running total stays
    within 1 − top_p; the most likely token always stays.
    """
    ascending, order = probs.sort(dim=-1)
    drop_sorted = ascending.cumsum(dim=-1) <= 1 - top_p
    drop_sorted[..., -1] = False
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    kept = probs.masked_fill(drop, 0.0)
    return kept / kept.sum(dim=-1, keepdim=True)


@pytest.mark.parametrize(
    ("top_p", "kept"),
    [
        (0.3, [1]),  # 0.40 alone reaches 0.3
        (0.5, [1, 3]),  # 0.40 < 0.5, so 0.25 joins: 0.65
        (0.8, [1, 3, 4]),  # 0.65 < 0.8, so 0.20 joins: 0.85
        (0.9, [0, 1, 3, 4]),  # 0.85 < 0.9: 0.95
        (0.99, [0, 1, 2, 3, 4]),
    ],
)
def test_nucleus_by_hand(top_p: float, kept: list[int]) -> None:
    out = nucleus(PROBS, top_p)
    assert torch.nonzero(out).flatten().tolist() == kept
    expected = torch.zeros(5, dtype=torch.float64)
    expected[kept] = PROBS[kept] / PROBS[kept].sum()
    torch.testing.assert_close(out, expected)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    vocab=st.integers(1, 40),
    top_p=st.floats(0.01, 0.99),
    scale=st.floats(0.1, 5.0),
)
def test_nucleus_is_the_smallest_set_reaching_top_p(
    seed: int, vocab: int, top_p: float, scale: float
) -> None:
    g = torch.Generator().manual_seed(seed)
    probs = torch.softmax(torch.randn(3, vocab, generator=g, dtype=torch.float64) * scale, -1)
    out = nucleus(probs, top_p)
    torch.testing.assert_close(out, _nucleus_from_the_tail(probs, top_p))
    assert not out.isnan().any()
    torch.testing.assert_close(out.sum(-1), torch.ones(3, dtype=torch.float64))
    kept = out > 0
    kept_mass = (probs * kept).sum(-1)  # (3,)
    smallest_kept = probs.masked_fill(~kept, torch.inf).min(-1).values  # (3,)
    assert (kept_mass >= top_p - 1e-12).all()  # it reaches top_p …
    assert (kept_mass - smallest_kept < top_p + 1e-12).all()  # … and nothing in it is spare
    assert kept.gather(-1, probs.argmax(-1, keepdim=True)).all()  # the likeliest always stays


def test_next_token_probs_applies_temperature_then_top_k_then_top_p() -> None:
    logits = torch.tensor([[0.5, -1.0, 2.0, 0.0, -3.0, 1.0]], dtype=torch.float64)
    for temperature, top_k, top_p in [(0.5, None, 0.7), (1.0, 4, 0.78), (2.0, 3, 0.5)]:
        tempered = logits / temperature
        if top_k is not None:
            kth = tempered.topk(top_k, dim=-1).values[..., -1:]
            tempered = tempered.masked_fill(tempered < kth, -torch.inf)
        expected = _nucleus_from_the_tail(torch.softmax(tempered, -1), top_p)
        torch.testing.assert_close(next_token_probs(logits, temperature, top_k, top_p), expected)
    unfiltered = next_token_probs(logits, 1.0)
    torch.testing.assert_close(next_token_probs(logits, 1.0, top_p=1.0), unfiltered)
    assert next_token_probs(logits, 0.0, top_p=0.1).argmax(-1).item() == 2  # greedy


def test_top_p_in_float32_has_no_nan_and_keeps_the_argmax_at_a_tiny_top_p() -> None:
    logits = torch.randn(4, 100, generator=torch.Generator().manual_seed(0)) * 10
    out = next_token_probs(logits, 1.0, top_p=1e-6)
    assert not out.isnan().any()
    assert torch.equal(out.argmax(-1), logits.argmax(-1)) and ((out > 0).sum(-1) == 1).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("temperature", [1e-3, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("top_k", [None, 3])
def test_next_token_probs_is_finite_and_right_in_every_dtype_at_any_temperature(
    dtype: torch.dtype, temperature: float, top_k: int | None
) -> None:
    g = torch.Generator().manual_seed(0)
    ordinary = torch.randn(3, 50, generator=g, dtype=torch.float64) * 4  # (3, V)
    far = torch.tensor([[70.0, 0.0] + [-5.0] * 48])  # 70 / 0.001 = 70,000 > float16's 65,504
    large = torch.tensor([[60000.0, -60000.0] + [0.0] * 48])  # z - max overflows float16
    logits = torch.cat([ordinary, far, large]).to(dtype)  # (5, V)
    probs = next_token_probs(logits, temperature, top_k=top_k)
    assert probs.dtype == dtype and probs.isfinite().all()
    # The float64 recomputation, from the same (rounded) logits: shifted, divided, normalised.
    z = logits.double()
    scaled = (z - z.amax(-1, keepdim=True)) / temperature
    if top_k is not None:
        kth = z.topk(top_k, dim=-1).values[..., -1:]
        scaled = scaled.masked_fill(z < kth, -math.inf)
    expected = torch.softmax(scaled, -1)
    # float16 goes through float32 and is rounded once: half a unit in its last place of a
    # probability <= 1. float32 and float64 compute in their own dtype: a few of its roundings.
    tolerance = {torch.float16: 2**-11, torch.float32: 2**-21, torch.float64: 2**-50}[dtype]
    torch.testing.assert_close(probs.double(), expected, atol=tolerance, rtol=0)
    torch.testing.assert_close(probs.double().sum(-1), torch.ones(5, dtype=torch.float64),
                               atol=probs.shape[-1] * tolerance, rtol=0)  # fmt: skip
    assert torch.equal(probs[3].argmax(), torch.tensor(0))  # the 70 keeps the mass at T = 0.001


def test_the_sliders_helper_and_sample_next_token_keep_the_float16_promise() -> None:
    logits = torch.tensor([70.0, 0.0], dtype=torch.float16)
    p = sampling_distribution(logits, 0.001)
    assert p.dtype == torch.float16 and p.tolist() == [1.0, 0.0]
    draws = sample_next_token(logits.expand(100, 2), 0.001, generator=torch.Generator())
    assert (draws == 0).all()


def test_sample_next_token_draws_only_from_the_nucleus() -> None:
    logits = PROBS.log().expand(5000, 5)  # (N, V)
    draws = sample_next_token(logits, 1.0, top_p=0.8, generator=torch.Generator().manual_seed(0))
    assert set(draws.flatten().tolist()) == {1, 3, 4}


def test_generate_takes_top_p_and_refuses_a_bad_one() -> None:
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, max_len=8, d_model=16, num_heads=2, num_layers=1)).eval()
    idx = torch.tensor([[1, 2, 3]])
    greedy = model.generate(idx, 5, temperature=0)
    tiny_p = model.generate(idx, 5, top_p=1e-9, generator=torch.Generator().manual_seed(0))
    assert torch.equal(tiny_p, greedy)  # a nucleus of one token is greedy
    sampled = model.generate(idx, 5, top_p=0.9, generator=torch.Generator().manual_seed(0))
    again = model.generate(idx, 5, top_p=0.9, generator=torch.Generator().manual_seed(0))
    assert torch.equal(sampled, again) and sampled.shape == (1, 8)
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\]"):
            model.generate(idx, 1, top_p=bad)
    with pytest.raises(TypeError, match="top_p must be a number"):
        model.generate(idx, 1, top_p="0.9")  # type: ignore[arg-type]


# --- bad input ---------------------------------------------------------------------------

LOGITS = torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 0.0, -2.0, 3.0]])  # (B, V)


@pytest.mark.parametrize("fn", [next_token_probs, sample_next_token])
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"temperature": -1.0}, ValueError, "temperature must be >= 0 and finite, got -1.0"),
        ({"temperature": math.inf}, ValueError, "temperature must be >= 0 and finite, got inf"),
        ({"temperature": math.nan}, ValueError, "temperature must be >= 0 and finite, got nan"),
        ({"temperature": "1"}, TypeError, "temperature must be a number, got str"),
        ({"temperature": None}, TypeError, "temperature must be a number, got NoneType"),
        ({"top_k": 0}, ValueError, "top_k must be a positive int, got 0"),
        ({"top_k": -2}, ValueError, "top_k must be a positive int, got -2"),
        ({"top_k": "3"}, TypeError, "top_k must be an int, got str"),
        ({"top_k": 2.0}, TypeError, "top_k must be an int, got float"),
        ({"top_p": 1.5}, ValueError, r"top_p must be in \(0, 1\], got 1.5"),
        ({"top_p": 0.0}, ValueError, r"top_p must be in \(0, 1\], got 0.0"),
        ({"top_p": math.nan}, ValueError, r"top_p must be in \(0, 1\], got nan"),
        ({"top_p": "0.9"}, TypeError, "top_p must be a number, got str"),
        (
            {"logits": LOGITS.long()},
            TypeError,
            "logits must have a floating-point dtype, got torch.int64",
        ),
        ({"logits": [[0.5, 1.0]]}, TypeError, "logits must be a torch.Tensor, got list"),
        ({"logits": torch.tensor(1.0)}, ValueError, r"logits must have shape \(\.\.\., V\)"),
    ],
)
def test_sampler_refuses_bad_arguments(fn, kwargs: dict, error: type, match: str) -> None:
    arguments = {"logits": LOGITS, "temperature": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        fn(**arguments)


@pytest.mark.parametrize(
    ("logits", "match"),
    [
        (
            [[0.5, math.nan, 1.0]],
            r"logits holds NaN \(1 of 3 values, the first at index \(0, 1\)\)",
        ),
        ([[0.5, math.inf, 1.0]], r"logits holds \+inf \(1 of 3 values"),
        (
            [[0.5, 1.0], [-math.inf, -math.inf]],
            r"logits has 1 row\(s\) .* the first logits\[1, :\]",
        ),
    ],
)
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_next_token_probs_refuses_logits_with_no_distribution(
    logits: list, match: str, temperature: float
) -> None:
    with pytest.raises(ValueError, match=match):
        next_token_probs(torch.tensor(logits), temperature)


def test_minus_inf_logits_beside_finite_ones_are_tokens_left_out() -> None:
    logits = torch.tensor([[0.0, -math.inf, math.log(3.0)]])
    torch.testing.assert_close(next_token_probs(logits, 1.0), torch.tensor([[0.25, 0.0, 0.75]]))
    assert next_token_probs(logits, 1.0, top_k=10).sum() == 1  # a top_k above V keeps all


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"logits": LOGITS[None]}, ValueError, r"logits must have shape \(B, V\), got \(1, 2, 4\)"),
        ({"logits": LOGITS[0]}, ValueError, r"logits must have shape \(B, V\), got \(4,\)"),
        ({"generator": 0}, TypeError, "generator must be a torch.Generator or None, got int"),
    ],
)
def test_sample_next_token_refuses_bad_arguments(kwargs: dict, error: type, match: str) -> None:
    arguments = {"logits": LOGITS, "temperature": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        sample_next_token(**arguments)


@pytest.mark.parametrize(
    ("probs", "top_p", "error", "match"),
    [
        (PROBS, 1.5, ValueError, r"top_p must be in \(0, 1\], got 1.5"),
        (PROBS, 0.0, ValueError, r"top_p must be in \(0, 1\], got 0.0"),
        (PROBS, None, TypeError, "top_p must be a number, got NoneType"),
        (PROBS.tolist(), 0.9, TypeError, "probs must be a torch.Tensor, got list"),
        (torch.tensor([1, 0]), 0.9, TypeError, "probs must have a floating-point dtype"),
        (torch.tensor(1.0), 0.9, ValueError, r"probs must have shape \(\.\.\., V\)"),
        (
            torch.tensor([0.5, -0.5, 1.0]),
            0.9,
            ValueError,
            r"probs must hold .* in \[0, 1\], got values from -0.5 to 1",
        ),
        (torch.tensor([0.5, math.nan]), 0.9, ValueError, r"probs holds NaN \(1 of 2 values"),
        (torch.tensor([0.5, 2.0]), 0.9, ValueError, "probs must hold probabilities in"),
    ],
)
def test_nucleus_refuses_bad_arguments(probs, top_p, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        nucleus(probs, top_p)
