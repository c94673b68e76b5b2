"""check_kv_cache passes a cached greedy loop and names each usual mistake of one."""

from __future__ import annotations

import itertools

import pytest
import torch

import attnlib
from attnlib import checks
from attnlib.checks import kv_cache
from attnlib.checks.kv_cache_mistakes import MISTAKES, NO_CACHE, SLOW_MISTAKES
from attnlib.gpt import GPT


def _right(gpt, idx, n):
    """The exercise's solution: one KVCache per block, the prompt once, then one token a step."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    for _ in range(n):
        start, length = len(caches[0]), new.shape[1]
        positions = torch.arange(start, start + length)  # (T_new,)
        x = gpt.token_embedding(new) + gpt.position_embedding(positions)  # (B, T_new, C)
        mask = attnlib.causal_mask(length, start + length)  # (T_new, T_cached + T_new)
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, mask, cache)
        new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)  # (B, 1)
        idx = torch.cat([idx, new], dim=1)
    return idx


def _own_lists(gpt, idx, n):
    """A right loop with the learner's own key and value tensors and attention written out."""
    keys, values = [None] * len(gpt.blocks), [None] * len(gpt.blocks)
    new = idx
    for _ in range(n):
        start = 0 if keys[0] is None else keys[0].shape[-2]
        length = new.shape[1]
        x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + length))
        mask = attnlib.causal_mask(length, start + length)
        for i, block in enumerate(gpt.blocks):
            attention, h = block.attention, block.norm_1(x)
            q, k, v = (
                attnlib.split_heads(w(h), attention.num_heads)  # (B, H, T_new, D)
                for w in (attention.w_q, attention.w_k, attention.w_v)
            )
            keys[i] = k if keys[i] is None else torch.cat([keys[i], k], dim=-2)  # (B, H, T, D)
            values[i] = v if values[i] is None else torch.cat([values[i], v], dim=-2)
            heads, _ = attnlib.scaled_dot_product_attention(q, keys[i], values[i], mask)
            x = x + attention.w_o(attnlib.merge_heads(heads))
            x = x + block.feed_forward(block.norm_2(x))
        new = gpt.head(gpt.final_norm(x))[:, -1].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


def _token_by_token(gpt, idx, n):
    """Also right: the prompt fed one token at a time through the cache, no mask needed."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    for t in range(idx.shape[1] + n - 1):
        x = gpt.token_embedding(idx[:, t : t + 1]) + gpt.position_embedding(torch.tensor([t]))
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, None, cache)
        if t >= idx.shape[1] - 1:
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def _fresh_caches_every_step(gpt, idx, n):
    """Right tokens, no saving: new caches filled with the whole text at every step."""
    for _ in range(n):
        caches = [attnlib.KVCache() for _ in gpt.blocks]
        x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, attnlib.causal_mask(idx.shape[1]), cache)
        new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


@pytest.mark.parametrize("right", [_right, _own_lists, _token_by_token])
def test_a_right_loop_passes(right) -> None:
    result = checks.check_kv_cache(right)
    assert result.passed and result.done, result.message
    assert result.message.startswith("✓ kv_cache is correct on all 4 cases")
    assert "63 positions where recomputing them every step takes 475" in result.message


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_mistake_fails_with_its_name(mistake: str) -> None:
    result = checks.check_kv_cache(MISTAKES[mistake])
    assert not result.passed and result.done
    assert f"likely cause: {mistake}" in result.message, result.message
    assert f"hint: {kv_cache.HINTS[mistake]}" in result.message
    assert "your tokens differ from generation without a cache" in result.message


@pytest.mark.parametrize(
    "uncached", [*SLOW_MISTAKES.values(), _fresh_caches_every_step], ids=["gpt(idx)", "fresh"]
)
def test_the_right_tokens_without_caching_fail_as_no_caching(uncached) -> None:
    result = checks.check_kv_cache(uncached)
    assert not result.passed and result.done
    assert f"likely cause: {NO_CACHE}" in result.message, result.message
    assert "the right tokens, but layer 0 computed the keys of 78 positions" in result.message


def test_a_stub_is_not_done_yet_with_its_task() -> None:
    def stub(gpt, idx, n):
        """Append n greedy tokens to idx with a KV cache."""
        raise NotImplementedError()

    result = checks.check_kv_cache(stub)
    assert not result.passed and not result.done
    assert result.message.startswith(
        "… kv_cache: not done yet (Append n greedy tokens to idx with a KV cache.)"
    )


def _square_mask(gpt, idx, n):
    """A new query given the whole (T, T) causal mask: attnlib refuses the shape."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    for _ in range(n):
        start, length = len(caches[0]), new.shape[1]
        x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + length))
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, attnlib.causal_mask(start + length), cache)
        new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (lambda gpt, idx, n: 1 / 0, "your function raised ZeroDivisionError: division by zero"),
        (_square_mask, "your function raised ValueError: mask"),
        (
            lambda gpt, idx, n: gpt.generate(idx, n, temperature=0.0),
            "raised RuntimeError: the check's model has no generate()",
        ),
    ],
    ids=["crash", "square mask", "generate"],
)
def test_an_exception_is_a_report_not_a_traceback(fn, says: str) -> None:
    result = checks.check_kv_cache(fn)
    assert not result.passed and result.done
    assert result.message.startswith("✗ kv_cache, case 'a prompt of 1 token, 12 new'")
    assert says in result.message and "\n  hint: " in result.message, result.message
    assert "Traceback" not in result.message
    with pytest.raises(checks.CheckFailedError):
        result.assert_passed()


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (lambda gpt, idx, n: _right(gpt, idx, n).tolist(), "returned list"),
        (lambda gpt, idx, n: _right(gpt, idx, n)[:, idx.shape[1] :], "only the 12 new tokens"),
        (lambda gpt, idx, n: _right(gpt, idx, n)[:, :-2], "shape (1, 11), expected (1, 13)"),
        (lambda gpt, idx, n: _right(gpt, idx, n).double(), "dtype torch.float64"),
    ],
)
def test_a_malformed_result_is_described(fn, says: str) -> None:
    result = checks.check_kv_cache(fn)
    assert not result.passed and says in result.message, result.message


def test_not_a_function_and_the_global_random_state_is_left_alone() -> None:
    assert "expected a function" in checks.check_kv_cache(3).message
    torch.manual_seed(5)
    before = torch.random.get_rng_state()
    checks.check_kv_cache(_right)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_the_hooks_are_removed_and_count_each_layer() -> None:
    model = kv_cache.build_model()
    idx = torch.zeros(1, 5, dtype=torch.long)
    with torch.no_grad(), kv_cache.key_positions(model) as counted:
        model(idx)
        _right(model, idx, 3)
    assert counted == [5 + 5 + 2] * len(model.blocks)
    assert all(not block.attention.w_k._forward_hooks for block in model.blocks)


def test_the_right_tokens_win_every_step_by_far_more_than_rounding() -> None:
    model = kv_cache.build_model()
    for _, idx, n in kv_cache.cases():
        assert idx.shape[1] + n <= model.config.max_len  # no cropping in any case
        tokens = GPT.generate(model, idx, n, temperature=0.0, use_cache=False)
        with torch.no_grad():
            for t in range(idx.shape[1], tokens.shape[1]):
                top2 = model(tokens[:, :t])[:, -1].topk(2, dim=-1).values  # (B, 2)
                assert (top2[:, 0] - top2[:, 1]).min() > 1e-3


def test_every_mistake_gives_tokens_of_its_own() -> None:
    # So that a failing learner's tokens can match at most one mistake.
    model = kv_cache.build_model()
    runs = {"right": _right, **MISTAKES}
    with torch.no_grad():
        tokens = {
            name: [fn(model, idx, n) for _, idx, n in kv_cache.cases()] for name, fn in runs.items()
        }
    for a, b in itertools.combinations(runs, 2):
        assert not all(map(torch.equal, tokens[a], tokens[b])), (a, b)
