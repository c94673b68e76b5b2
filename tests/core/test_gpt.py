"""GPT, its KV cache and generation: cached = recomputed, causality, sampling and errors."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib.gpt import GPT, GPTConfig
from attnlib.kv_cache import KVCache
from attnlib.masks import causal_mask
from attnlib.multi_head import MultiHeadAttention

SMALL = GPTConfig(vocab_size=17, max_len=8, d_model=16, num_heads=4, num_layers=2, dropout=0.0)


def _model(seed: int = 0, **changes) -> GPT:
    """A GPT whose weights are larger than GPT-2's init, so its next-token choices are clear-cut."""
    torch.manual_seed(seed)
    model = GPT(dataclasses.replace(SMALL, **changes))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.5)
    return model.eval()


@functools.cache
def _shared_model() -> GPT:
    return _model(seed=100)


def _ids(shape: tuple[int, ...], seed: int, vocab_size: int = 17) -> torch.Tensor:
    return torch.randint(0, vocab_size, shape, generator=torch.Generator().manual_seed(seed))


def _greedy_by_hand(model: GPT, idx: torch.Tensor, steps: int) -> torch.Tensor:
    """Recompute the whole (cropped) context every step and take the argmax."""
    for _ in range(steps):
        logits = model(idx[:, -model.config.max_len :])
        idx = torch.cat([idx, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return idx


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(("prompt", "steps"), [(1, 5), (3, 5), (3, 12), (8, 4), (11, 3), (2, 0)])
def test_greedy_generation_with_cache_equals_without(seed: int, prompt: int, steps: int) -> None:
    """Includes runs that pass max_len=8 (the window slides and the cache is dropped)."""
    model = _model(seed)
    idx = _ids((2, prompt), seed=seed + 10)
    cached = model.generate(idx, steps, temperature=0, use_cache=True)
    recomputed = model.generate(idx, steps, temperature=0, use_cache=False)
    assert cached.shape == (2, prompt + steps)
    assert torch.equal(cached, recomputed)
    assert torch.equal(cached, _greedy_by_hand(model, idx, steps))
    assert torch.equal(cached[:, :prompt], idx)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("top_k", [None, 4])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_sampling_with_a_seeded_generator_is_the_same_with_and_without_cache(
    seed: int, top_k: int | None, temperature: float
) -> None:
    model = _model(seed)
    idx = _ids((2, 2), seed=seed + 20)
    runs = [
        model.generate(
            idx,
            10,  # past max_len
            temperature=temperature,
            top_k=top_k,
            use_cache=use_cache,
            generator=torch.Generator().manual_seed(seed),
        )
        for use_cache in (True, False, True)
    ]
    assert torch.equal(runs[0], runs[1]) and torch.equal(runs[0], runs[2])
    other = model.generate(idx, 10, generator=torch.Generator().manual_seed(seed + 1000))
    assert not torch.equal(other, runs[0])  # the seed matters


@settings(max_examples=30)
@given(t=st.integers(0, 6), seed=st.integers(0, 2**31 - 1))
def test_changing_later_tokens_changes_no_earlier_logit(t: int, seed: int) -> None:
    model = _shared_model()
    idx = _ids((2, 8), seed=seed)
    changed = idx.clone()
    changed[:, t + 1 :] = _ids((2, 7 - t), seed=seed + 1)
    torch.testing.assert_close(model(changed)[:, : t + 1], model(idx)[:, : t + 1])


def test_changing_an_earlier_token_changes_later_logits() -> None:
    model = _model()
    idx = _ids((1, 6), seed=30)
    changed = idx.clone()
    changed[0, 2] = (idx[0, 2] + 1) % 17
    assert not torch.allclose(model(changed)[:, 2:], model(idx)[:, 2:], atol=1e-4)


def test_kv_cache_append_len_and_clear() -> None:
    cache = KVCache()
    assert len(cache) == 0 and cache.keys is None
    k1, v1 = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)
    keys, values = cache.append(k1, v1)
    assert len(cache) == 4 and torch.equal(keys, k1) and torch.equal(values, v1)
    k2, v2 = torch.randn(2, 3, 1, 5), torch.randn(2, 3, 1, 5)
    keys, values = cache.append(k2, v2)
    assert len(cache) == 5 and keys.shape == values.shape == (2, 3, 5, 5)
    assert torch.equal(keys, torch.cat([k1, k2], dim=2))
    assert torch.equal(values, torch.cat([v1, v2], dim=2))
    cache.clear()
    assert len(cache) == 0 and cache.keys is None and cache.values is None
    cache.append(k2, v2)
    assert len(cache) == 1


@pytest.mark.parametrize("lengths", [[1] * 40, [5, 1, 1, 7, 1, 30, 2], [64, 64, 1]])
def test_kv_cache_holds_what_torch_cat_would_and_never_changes_what_it_returned(
    lengths: list[int],
) -> None:
    """The cache keeps room beyond what it holds and writes the next positions there: every
    append must still equal concatenating everything, and the tensors an earlier append
    returned (and the first keys given, which it keeps) must not change."""
    generator = torch.Generator().manual_seed(0)
    cache, given_keys, given_values, returned = KVCache(), [], [], []
    for length in lengths:
        keys, values = (torch.randn(2, 3, length, 4, generator=generator) for _ in range(2))
        given_keys.append(keys.clone())
        given_values.append(values.clone())
        returned.append(cache.append(keys, values))  # kept as returned: no copy
    for step, (keys, values) in enumerate(returned):
        assert torch.equal(keys, torch.cat(given_keys[: step + 1], dim=2))
        assert torch.equal(values, torch.cat(given_values[: step + 1], dim=2))
    assert len(cache) == sum(lengths)


def test_kv_cache_does_not_write_into_tensors_it_returned_or_was_given() -> None:
    cache = KVCache()
    first_keys, first_values = torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4)
    keys_then, values_then = cache.append(first_keys, first_values)
    for _ in range(5):
        cache.append(torch.ones(1, 2, 1, 4), torch.ones(1, 2, 1, 4))
    assert not first_keys.any() and not first_values.any()
    assert keys_then.shape == (1, 2, 3, 4) and not keys_then.any() and not values_then.any()
    # Set back by hand (a learner's cache that forgets steps): appending must not write
    # into the tensors set, only after them.
    kept_keys, kept_values = cache.keys, cache.values
    kept = kept_keys.clone()
    cache.keys, cache.values = kept_keys[:, :, :4], kept_values[:, :, :4]
    assert len(cache) == 4
    keys, _ = cache.append(torch.full((1, 2, 1, 4), 7.0), torch.full((1, 2, 1, 4), 7.0))
    assert torch.equal(kept_keys, kept) and keys.shape == (1, 2, 5, 4)
    assert torch.equal(keys[:, :, 4], torch.full((1, 2, 4), 7.0))


def test_kv_cache_keeps_the_graph_of_every_step_when_keys_need_gradients() -> None:
    """With gradients on, the earlier steps' keys stay as autograd saved them (squaring saves
    its input: writing the next step into the same buffer would break the backward pass)."""
    source = torch.randn(1, 1, 6, 3, requires_grad=True)
    cache, total = KVCache(), torch.zeros(())
    for t in range(6):
        keys, values = cache.append(source[:, :, t : t + 1] * 2, source[:, :, t : t + 1] * 3)
        total = total + (keys.pow(2).sum() + values.pow(2).sum()) * (t + 1)
    total.backward()
    # position t is read by steps t…5, weighted (t+1)+…+6, as (2x)² + (3x)²: slope 26x each
    read_by = torch.tensor([float(sum(range(t + 1, 7))) for t in range(6)])  # (T,)
    expected = 26 * source.detach()[0, 0] * read_by[:, None]  # (T, 3)
    assert torch.allclose(source.grad[0, 0], expected)


def test_generate_returns_a_tensor_that_autograd_can_use() -> None:
    """Generation runs in inference mode; what it returns must still train."""
    model = _model().train()
    out = model.generate(_ids((2, 3), seed=0), 4, temperature=0)
    assert not out.is_inference() and model.training
    model.loss(out).backward()
    assert model.token_embedding.weight.grad is not None


@pytest.mark.parametrize(
    ("shape", "match"),
    [
        (
            (3, 3, 1, 5),
            r"new keys of shape \(3, 3, 1, 5\) do not continue the cached keys of shape "
            r"\(2, 3, 4, 5\)",
        ),
        ((2, 2, 1, 5), "do not continue"),
        ((2, 3, 1, 6), "do not continue"),
    ],
)
def test_kv_cache_rejects_keys_that_do_not_continue_it(shape: tuple[int, ...], match: str) -> None:
    cache = KVCache()
    cache.append(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=match):
        cache.append(torch.randn(shape), torch.randn(shape))
    assert len(cache) == 4 and cache.values.shape == (2, 3, 4, 5)  # unchanged


def test_kv_cache_rejects_keys_and_values_of_different_shapes() -> None:
    cache = KVCache()
    message = r"keys and values must share one shape \(B, H, T_new, D\), got keys \(2, 3, 4, 5\)"
    with pytest.raises(ValueError, match=message):
        cache.append(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 3, 5))
    assert len(cache) == 0
    cache.append(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match="values \\(2, 3, 1, 6\\)"):
        cache.append(torch.randn(2, 3, 1, 5), torch.randn(2, 3, 1, 6))
    assert len(cache) == 4 and cache.keys.shape == cache.values.shape  # nothing half-stored
    with pytest.raises(ValueError, match="must share one shape"):
        cache.append(torch.randn(3, 4, 5), torch.randn(3, 4, 5))


@pytest.mark.parametrize(
    ("dtype", "match"),
    [
        (
            torch.float64,
            r"new keys and values of dtype torch\.float64 cannot be appended to a "
            r"cache that holds torch\.float32",
        ),
        (torch.float16, r"of dtype torch\.float16 .* holds torch\.float32: convert them"),
    ],
)
def test_kv_cache_refuses_another_dtype_instead_of_promoting(
    dtype: torch.dtype, match: str
) -> None:
    cache = KVCache()
    cache.append(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5))
    new = torch.randn(2, 3, 1, 5, dtype=dtype)
    with pytest.raises(TypeError, match=match):
        cache.append(new, new.clone())
    assert len(cache) == 4 and cache.keys.dtype == cache.values.dtype == torch.float32


@pytest.mark.parametrize(
    ("keys", "values", "error", "match"),
    [
        (
            torch.randn(2, 3, 1, 5),
            torch.randn(2, 3, 1, 5, dtype=torch.float64),
            TypeError,
            r"keys and values must share a dtype, got keys torch\.float32 and values "
            r"torch\.float64",
        ),
        (
            torch.randn(2, 3, 1, 5, device="meta"),
            torch.randn(2, 3, 1, 5),
            ValueError,
            "keys and values must be on one device, got keys on meta and values on cpu",
        ),
        (
            torch.ones(2, 3, 1, 5, dtype=torch.long),
            torch.randn(2, 3, 1, 5),
            TypeError,
            "keys must have a floating",
        ),
        (torch.randn(2, 3, 1, 5), [[1.0]], TypeError, "values must be a torch.Tensor, got list"),
    ],
)
@pytest.mark.parametrize("cached", [False, True])
def test_kv_cache_refuses_keys_and_values_that_do_not_match(
    keys, values, error: type, match: str, cached: bool
) -> None:
    cache = KVCache()
    if cached:
        cache.append(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5))
    with pytest.raises(error, match=match):
        cache.append(keys, values)
    assert len(cache) == (4 if cached else 0)


def test_kv_cache_refuses_another_device() -> None:
    cache = KVCache()
    cache.append(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5))
    new = torch.randn(2, 3, 1, 5, device="meta")  # a second device every machine has
    with pytest.raises(
        ValueError, match="new keys and values on meta cannot be appended to a cache on cpu"
    ):
        cache.append(new, new)
    assert len(cache) == 4 and cache.keys.device.type == "cpu"


@pytest.mark.parametrize("chunks", [[1] * 6, [2, 1, 3], [4, 2], [6]])
def test_attention_with_a_cache_equals_full_causal_attention(chunks: list[int]) -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).double().eval()
    x = torch.randn(2, 6, 16, dtype=torch.float64)
    full, full_weights = mha(x, mask=causal_mask(6))
    cache, start = KVCache(), 0
    for size in chunks:
        piece = x[:, start : start + size]  # (B, T_new, C)
        mask = causal_mask(size, start + size)  # the new queries are the last of the keys
        out, weights = mha(piece, mask=mask, cache=cache)
        torch.testing.assert_close(out, full[:, start : start + size])
        torch.testing.assert_close(
            weights, full_weights[:, :, start : start + size, : start + size]
        )
        start += size
        assert len(cache) == start


def test_attention_with_a_cache_one_token_at_a_time_needs_no_mask() -> None:
    """A single newest query may see every cached key: that is already causal."""
    torch.manual_seed(1)
    mha = MultiHeadAttention(8, 2).double()
    x = torch.randn(1, 5, 8, dtype=torch.float64)
    full, _ = mha(x, mask=causal_mask(5))
    cache = KVCache()
    steps = [mha(x[:, t : t + 1], cache=cache)[0] for t in range(5)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full)


def test_attention_with_a_cache_and_a_mask_that_ignores_it() -> None:
    mha = MultiHeadAttention(8, 2)
    cache = KVCache()
    mha(torch.randn(1, 3, 8), cache=cache)
    with pytest.raises(ValueError, match="does not broadcast"):
        mha(torch.randn(1, 2, 8), mask=causal_mask(2), cache=cache)  # needs (2, 5)


def test_temperature_zero_is_argmax_and_top_k_one_is_greedy() -> None:
    model = _model(seed=5)
    idx = _ids((2, 3), seed=40)
    greedy = model.generate(idx, 6, temperature=0)
    assert torch.equal(greedy, _greedy_by_hand(model, idx, 6))
    for temperature in (0.5, 1.0, 3.0):
        top_1 = model.generate(
            idx, 6, temperature=temperature, top_k=1, generator=torch.Generator().manual_seed(0)
        )
        assert torch.equal(top_1, greedy)
    assert torch.equal(model.generate(idx, 6, temperature=0, top_k=5), greedy)


@pytest.mark.parametrize("temperature", [1.0, 0.5, 2.0])
def test_samples_follow_the_tempered_softmax(temperature: float) -> None:
    model = _model(seed=6)
    context = _ids((1, 3), seed=41)
    probs = torch.softmax(model(context)[0, -1].double() / temperature, dim=-1)  # (V,)
    draws = model.generate(
        context.expand(6000, 3),
        1,
        temperature=temperature,
        generator=torch.Generator().manual_seed(1),
    )[:, -1]
    frequencies = torch.bincount(draws, minlength=17).double() / 6000
    torch.testing.assert_close(frequencies, probs, atol=0.025, rtol=0)


def test_top_k_draws_only_the_k_most_likely_tokens() -> None:
    model = _model(seed=7)
    context = _ids((1, 4), seed=42)
    top_3 = set(model(context)[0, -1].topk(3).indices.tolist())
    draws = model.generate(
        context.expand(500, 4),
        1,
        temperature=2.0,
        top_k=3,
        generator=torch.Generator().manual_seed(2),
    )[:, -1]
    assert set(draws.tolist()) == top_3  # all three drawn at temperature 2, nothing else
    many = model.generate(context.expand(3, 4), 1, top_k=1000, generator=torch.Generator())
    assert many.shape == (3, 5)  # top_k above the vocabulary size is the whole vocabulary


def test_generate_restores_the_training_mode_and_disables_dropout() -> None:
    model = _model(dropout=0.5).train()
    idx = _ids((2, 3), seed=43)
    first = model.generate(idx, 4, temperature=0)
    assert model.training
    assert torch.equal(first, model.generate(idx, 4, temperature=0))
    model.eval()
    assert torch.equal(first, model.generate(idx, 4, temperature=0))
    assert not model.training


def test_loss_is_cross_entropy_of_the_next_token() -> None:
    model = _model(seed=8).double()
    idx = _ids((3, 7), seed=44)
    logits = model(idx)[:, :-1]  # (B, T-1, V): position t predicts token t + 1
    expected = F.cross_entropy(logits.reshape(-1, 17), idx[:, 1:].reshape(-1))
    torch.testing.assert_close(model.loss(idx), expected)
    by_hand = -torch.log_softmax(logits, -1).gather(-1, idx[:, 1:, None]).mean()
    torch.testing.assert_close(model.loss(idx), by_hand)
    model.loss(idx).backward()
    assert model.token_embedding.weight.grad is not None


def test_head_is_tied_to_the_token_embedding_and_init_is_small() -> None:
    torch.manual_seed(0)
    model = GPT(SMALL)
    assert model.head.weight is model.token_embedding.weight
    assert model.token_embedding.weight.std().item() == pytest.approx(0.02, rel=0.2)
    assert all((block.attention.w_q.bias == 0).all() for block in model.blocks)
    torch.testing.assert_close(  # near-uniform initial predictions
        torch.softmax(model.eval()(_ids((1, 4), seed=45)), -1),
        torch.full((1, 4, 17), 1 / 17),
        atol=0.02,
        rtol=0,
    )


def test_attention_weights_shapes_and_causality() -> None:
    model = _model()
    weights = model.attention_weights(_ids((2, 5), seed=46))
    assert len(weights) == SMALL.num_layers
    for w in weights:
        assert w.shape == (2, SMALL.num_heads, 5, 5) and not w.requires_grad
        assert (w.triu(diagonal=1) == 0).all()
        torch.testing.assert_close(w.sum(-1), torch.ones(2, 4, 5))


def test_bad_generate_arguments() -> None:
    model = _model()
    idx = _ids((2, 3), seed=47)
    with pytest.raises(ValueError, match=r"temperature must be >= 0 and finite, got -0\.5"):
        model.generate(idx, 2, temperature=-0.5)
    with pytest.raises(TypeError, match="temperature must be a number, got str"):
        model.generate(idx, 2, temperature="hot")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="top_k must be a positive int, got 0"):
        model.generate(idx, 2, top_k=0)
    with pytest.raises(ValueError, match="idx must hold at least one token"):
        model.generate(idx[:, :0], 2)
    with pytest.raises(ValueError, match=r"idx must have shape \(B, T\), got \(3,\)"):
        model.generate(idx[0], 2)
    with pytest.raises(TypeError, match=r"idx must be integer token ids, got dtype torch\.float32"):
        model.generate(idx.float(), 2)
    with pytest.raises(TypeError, match=r"idx must be a torch\.Tensor, got list"):
        model.generate([[1, 2]], 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_new_tokens must be >= 0, got -1"):
        model.generate(idx, -1)
    with pytest.raises(TypeError, match="max_new_tokens must be an int, got float"):
        model.generate(idx, 2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"idx holds ids outside \[0, 17\)"):
        model.generate(torch.full((1, 2), 17), 2)
    assert model.training is False


def test_bad_forward_inputs() -> None:
    model = _model()
    too_long = r"idx must hold 1 to 8 tokens \(max_len\), got shape \(1, 9\)"
    with pytest.raises(ValueError, match=too_long):
        model(_ids((1, 9), seed=48))
    with pytest.raises(ValueError, match=too_long):
        model.attention_weights(_ids((1, 9), seed=48))
    with pytest.raises(
        ValueError, match=r"idx must hold 1 to 8 tokens \(max_len\), got shape \(1, 0\)"
    ):
        model(_ids((1, 0), seed=48))
    with pytest.raises(TypeError, match=r"idx must be integer token ids, got dtype torch\.float32"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"idx must have shape \(B, T\), got \(4,\)"):
        model(torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"idx holds ids outside \[0, 17\)"):
        model(torch.tensor([[0, -1]]))


def test_loss_takes_up_to_max_len_plus_one_tokens_and_checks_every_target() -> None:
    model = _model()
    model.loss(_ids((2, 9), seed=49))  # 8 inputs, 8 targets
    with pytest.raises(
        ValueError, match=r"idx must hold 2 to 9 tokens \(max_len\), got shape \(2, 10\)"
    ):
        model.loss(_ids((2, 10), seed=49))
    with pytest.raises(ValueError, match=r"idx must hold 2 to 9 tokens"):
        model.loss(_ids((2, 1), seed=49))
    last_target_bad = torch.tensor([[1, 2, 17]])  # only the target is out of the vocabulary
    with pytest.raises(ValueError, match=r"idx holds ids outside \[0, 17\)"):
        model.loss(last_target_bad)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"d_model": 18}, r"d_model \(18\) must be divisible by num_heads \(4\)"),
        ({"vocab_size": 0}, "vocab_size must be a positive int, got 0"),
        ({"max_len": 0}, "max_len must be a positive int, got 0"),
        ({"num_layers": 0}, "num_layers must be a positive int, got 0"),
        ({"num_heads": 0}, "num_heads must be a positive int, got 0"),
        ({"dropout": 1.0}, r"dropout must be in \[0, 1\), got 1.0"),
    ],
)
def test_bad_config(changes: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dataclasses.replace(SMALL, **changes)
    with pytest.raises(TypeError, match="max_len must be an int, got float"):
        dataclasses.replace(SMALL, max_len=8.0)


def _tokens_per_call(model: GPT) -> tuple[list[int], object]:
    """Record how many tokens each forward pass of ``model`` embeds."""
    seen: list[int] = []
    hook = model.token_embedding.register_forward_hook(
        lambda _module, args, _out: seen.append(args[0].shape[1])
    )
    return seen, hook


@pytest.mark.parametrize("prompt", [1, 3, 8, 11])
def test_generating_past_max_len_gives_the_same_tokens_with_and_without_cache(prompt: int) -> None:
    model = _model(seed=9)
    idx = _ids((3, prompt), seed=50)
    steps = 3 * SMALL.max_len  # the window slides for most of them
    cached = model.generate(idx, steps, temperature=0, use_cache=True)
    assert torch.equal(cached, model.generate(idx, steps, temperature=0, use_cache=False))
    assert torch.equal(cached, _greedy_by_hand(model, idx, steps))


def test_the_cache_is_used_while_the_context_fits_and_dropped_once_it_slides() -> None:
    model = _model(seed=10)
    seen, hook = _tokens_per_call(model)
    model.generate(_ids((2, 3), seed=51), 10, temperature=0, use_cache=True)
    # The prompt (3), then one new token per step until the 8 positions are full, then
    # the whole window of max_len = 8 every step: learned positions shift when it slides.
    assert seen == [3, 1, 1, 1, 1, 1, 8, 8, 8, 8]
    seen.clear()
    model.generate(_ids((2, 3), seed=51), 10, temperature=0, use_cache=False)
    assert seen == [3, 4, 5, 6, 7, 8, 8, 8, 8, 8]
    seen.clear()
    model.generate(_ids((2, 12), seed=51), 2, temperature=0, use_cache=True)
    assert seen == [8, 8]  # a prompt longer than max_len: cropped, no cache to reuse
    seen.clear()
    model.generate(_ids((2, 3), seed=51), 0)
    assert seen == []
    hook.remove()


def test_generate_checks_the_prompt_once_not_every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    import attnlib.gpt
    from attnlib._validate_tensors import require_token_ids

    calls = []

    def counting(*args, **kwargs):
        calls.append(args[0])
        return require_token_ids(*args, **kwargs)

    monkeypatch.setattr(attnlib.gpt, "require_token_ids", counting)
    model = _model()
    for use_cache in (True, False):
        calls.clear()
        model.generate(_ids((2, 3), seed=52), 12, temperature=0, use_cache=use_cache)
        assert calls == ["idx"]


def test_next_token_probs_is_what_generate_samples_from() -> None:
    from attnlib.sampling import next_token_probs

    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0], [0.0, 3.0, 1.0, 2.0]])
    torch.testing.assert_close(next_token_probs(logits, 0.5), torch.softmax(logits / 0.5, -1))
    top2 = next_token_probs(logits, 1.0, top_k=2)
    assert ((top2 > 0).sum(-1) == 2).all()
    torch.testing.assert_close(top2.sum(-1), torch.ones(2))
    assert next_token_probs(logits, 0.0).argmax(-1).tolist() == [0, 1]
