"""Notebook 10, Exercise 8 (optional): the KV-cache checker against its table of mistakes.

Right cached loops written differently (attnlib's KVCache, the learner's own key and value
tensors, the prompt fed one token at a time) must pass; each mistake, written here again as a
learner would write it, must fail and be named; loops that let the model run itself must be
refused; and the diagram of section 7 must draw.
"""

from __future__ import annotations

import itertools

import matplotlib
import pytest
import torch

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks._threads import one_thread
from attnlib.checks.nb10_gpt import cached_generation
from attnlib.checks.nb10_gpt.cache_mistakes import MISTAKES
from attnlib.course import diagrams
from attnlib.gpt import GPT

matplotlib.use("Agg")
Tensor = torch.Tensor


def _named(report: object) -> str:
    text = str(report)
    if "The mistake: " not in text:
        return ""
    return text.split("The mistake: ", 1)[1].split("\n")[0].removesuffix(".")


def with_kv_cache(gpt, idx, n):  # type: ignore[no-untyped-def]
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    for _ in range(n):
        start, length = len(caches[0]), new.shape[1]
        x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + length))
        mask = attnlib.causal_mask(length, start + length)
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, mask, cache)
        new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


def own_tensors(gpt, idx, n):  # type: ignore[no-untyped-def]
    """The learner's own keys and values, and the block written out around them."""
    keys: list[Tensor | None] = [None] * len(gpt.blocks)
    values: list[Tensor | None] = [None] * len(gpt.blocks)
    new = idx
    for _ in range(n):
        start = 0 if keys[0] is None else keys[0].shape[-2]
        length = new.shape[1]
        x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, start + length))
        mask = attnlib.causal_mask(length, start + length)
        for i, block in enumerate(gpt.blocks):
            attention, h = block.attention, block.norm_1(x)
            q, k, v = (
                attnlib.split_heads(w(h), attention.num_heads)
                for w in (attention.w_q, attention.w_k, attention.w_v)
            )
            keys[i] = k if keys[i] is None else torch.cat([keys[i], k], dim=-2)
            values[i] = v if values[i] is None else torch.cat([values[i], v], dim=-2)
            heads, _ = attnlib.scaled_dot_product_attention(q, keys[i], values[i], mask)
            x = x + attention.w_o(attnlib.merge_heads(heads))
            x = x + block.feed_forward(block.norm_2(x))
        new = gpt.head(gpt.final_norm(x))[:, -1].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


def token_by_token(gpt, idx, n):  # type: ignore[no-untyped-def]
    """The prompt fed one token at a time through the cache: no mask needed at all."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    for t in range(idx.shape[1] + n - 1):
        x = gpt.token_embedding(idx[:, t : t + 1]) + gpt.position_embedding(torch.tensor([t]))
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, None, cache)
        if t >= idx.shape[1] - 1:
            new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx


def preallocated(gpt, idx, n):  # type: ignore[no-untyped-def]
    """Right: the output tensor allocated first, a while loop, the mask left out for one token."""
    batch, length = idx.shape
    out = torch.zeros(batch, length + n, dtype=torch.long)
    out[:, :length] = idx
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    done, new = length, idx
    while done < length + n:
        start = len(caches[0])
        places = torch.arange(start, start + new.shape[1])
        x = gpt.token_embedding(new) + gpt.position_embedding(places)
        mask = attnlib.causal_mask(new.shape[1]) if start == 0 else None
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, mask, cache)
        out[:, done] = gpt.head(gpt.final_norm(x))[:, -1].argmax(-1)
        new, done = out[:, done : done + 1], done + 1
    return out


RIGHT = {
    "KVCache": with_kv_cache,
    "own tensors": own_tensors,
    "token by token": token_by_token,
    "preallocated": preallocated,
}


@pytest.mark.parametrize("name", RIGHT)
def test_right_cached_loops_pass(name: str) -> None:
    report = checks.check_my_generate_cached(RIGHT[name])
    assert report.passed, report


def _loop(**wrong):  # type: ignore[no-untyped-def]
    """with_kv_cache with one learner's mistake in it."""

    def generate(gpt, idx, n):  # type: ignore[no-untyped-def]
        caches = [attnlib.KVCache() for _ in gpt.blocks]
        new = idx
        for step in range(n):
            if wrong.get("fresh caches"):
                caches = [attnlib.KVCache() for _ in gpt.blocks]
            start, length = len(caches[0]), new.shape[1]
            where = {"zero": 0, "after append": idx.shape[1] - length + 1}.get(
                wrong.get("position", ""), start
            )
            if wrong.get("position") == "after append" and step == 0:
                where = 0
            x = gpt.token_embedding(new)
            if not wrong.get("no positions"):
                x = x + gpt.position_embedding(torch.arange(where, where + length))
            mask = attnlib.causal_mask(length, start + length)
            if step > 0 and wrong.get("mask") == "first row":
                mask = attnlib.causal_mask(start + length)[:1]
            if step == 0 and wrong.get("mask") == "none on the prompt":
                mask = None
            for block, cache in zip(gpt.blocks, caches, strict=True):
                x, _ = block(x, mask, cache)
            h = x[:, 0] if wrong.get("first position") else x[:, -1]
            logits = gpt.head(h) if wrong.get("no final norm") else gpt.head(gpt.final_norm(h))
            new = logits.argmax(dim=-1, keepdim=not wrong.get("no keepdim"))
            idx = torch.cat([idx, new], dim=1)
            if wrong.get("whole text"):
                new = idx
        return idx[:, -n:] if wrong.get("only new") else idx

    return generate


def prompt_only_cache(gpt, idx, n):  # type: ignore[no-untyped-def]
    """Keys and values of the new tokens computed, used once, never stored."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
    for block, cache in zip(gpt.blocks, caches, strict=True):
        x, _ = block(x, attnlib.causal_mask(idx.shape[1]), cache)
    stored = [(c.keys, c.values) for c in caches]
    idx = torch.cat([idx, gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)], dim=1)
    for _ in range(n - 1):
        position = idx.shape[1] - 1
        x = gpt.token_embedding(idx[:, -1:]) + gpt.position_embedding(torch.tensor([position]))
        for block, (k, v) in zip(gpt.blocks, stored, strict=True):
            cache = attnlib.KVCache()
            cache.keys, cache.values = k, v  # the prompt's only: the copy is thrown away
            x, _ = block(x, None, cache)
        idx = torch.cat([idx, gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)], 1)
    return idx


def fresh_caches_every_step(gpt, idx, n):  # type: ignore[no-untyped-def]
    for _ in range(n):
        caches = [attnlib.KVCache() for _ in gpt.blocks]
        x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(idx.shape[1]))
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, attnlib.causal_mask(idx.shape[1]), cache)
        idx = torch.cat([idx, gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)], 1)
    return idx


def one_cache(gpt, idx, n):  # type: ignore[no-untyped-def]
    cache, step_input, done = attnlib.KVCache(), idx, 0
    for _ in range(n):
        length = step_input.shape[1]
        x = gpt.token_embedding(step_input) + gpt.position_embedding(
            torch.arange(done, done + length)
        )
        for block in gpt.blocks:
            x, _ = block(x, attnlib.causal_mask(length, len(cache) + length), cache)
        done += length
        step_input = gpt.head(gpt.final_norm(x[:, -1])).argmax(-1, keepdim=True)
        idx = torch.cat([idx, step_input], dim=1)
    return idx


def steps_from_one(gpt, idx, n):  # type: ignore[no-untyped-def]
    """Steps counted from 1, like the new tokens: range(1, n) runs n − 1 of them."""
    caches = [attnlib.KVCache() for _ in gpt.blocks]
    new = idx
    for _step in range(1, n):
        start = idx.shape[1] - new.shape[1]
        x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(start, idx.shape[1]))
        mask = attnlib.causal_mask(new.shape[1], len(caches[0]) + new.shape[1])
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, mask, cache)
        new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


WRONG = {
    "position 0": (_loop(position="zero"), "position 0 instead"),
    "position from idx after the append": (_loop(position="after append"), "one too far"),
    "fresh caches": (_loop(**{"fresh caches": True}), "emptied the caches"),
    "never stored": (prompt_only_cache, "never kept the new tokens"),
    "first row of the mask": (_loop(mask="first row"), "the first row of the causal mask"),
    "prompt unmasked": (_loop(mask="none on the prompt"), "ran the prompt without"),
    "the whole text again": (_loop(**{"whole text": True}), "fed the whole text again"),
    "first position": (_loop(**{"first position": True}), "first position's logits"),
    "no final norm": (_loop(**{"no final norm": True}), "final LayerNorm"),
    "no positions": (_loop(**{"no positions": True}), "left out the position embedding"),
    "only the new tokens": (_loop(**{"only new": True}), "only the n new tokens"),
    "argmax without keepdim": (_loop(**{"no keepdim": True}), "without keeping its dimension"),
    "fresh caches filled every step": (fresh_caches_every_step, "saved nothing"),
    "one cache for every layer": (one_cache, "one cache for every layer"),
    "steps counted from 1": (steps_from_one, "generated n − 1 new tokens"),
}


@pytest.mark.parametrize("name", WRONG)
def test_each_cache_mistake_is_caught_and_named(name: str) -> None:
    fn, words = WRONG[name]
    report = checks.check_my_generate_cached(fn)
    assert not report.passed and words in _named(report), report


@pytest.mark.slow
def test_every_mistake_of_the_table_is_named_when_made() -> None:
    for mistake in known_mistakes("ex8_my_generate_cached"):
        report = checks.check_my_generate_cached(mistake.fn)
        assert _named(report) == mistake.name, (mistake.name, str(report))


def test_the_table_s_wrong_tokens_differ_from_each_other_on_the_check_s_cases() -> None:
    # Each mistake must be told apart from the others by its tokens (or its error).
    model, cases = cached_generation.build_model(), cached_generation.prompts()
    outcomes = {}
    for mistake in MISTAKES[:-2]:  # the last two: only the new tokens, and right tokens
        runs = []
        for _, idx, n in cases:
            try:
                with one_thread():
                    runs.append(tuple(mistake.fn(model, idx, n).flatten().tolist()))
            except Exception as error:  # the same error, on the same case, is the same outcome
                runs.append((type(error).__name__,))
        outcomes[mistake.name] = tuple(runs)
    for (a, ra), (b, rb) in itertools.combinations(outcomes.items(), 2):
        assert ra != rb, (a, b)


def recomputes_with_the_model(gpt, idx, n):  # type: ignore[no-untyped-def]
    for _ in range(n):
        idx = torch.cat([idx, gpt(idx)[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    return idx


@pytest.mark.parametrize(
    "cheat",
    [
        lambda gpt, idx, n: gpt.generate(idx, n, temperature=0.0),
        lambda gpt, idx, n: GPT.generate(gpt, idx, n, 0.0),
        recomputes_with_the_model,
    ],
    ids=["gpt.generate", "GPT.generate", "gpt(idx)"],
)
def test_a_loop_that_lets_the_model_run_itself_is_refused(cheat) -> None:  # type: ignore[no-untyped-def]
    report = checks.check_my_generate_cached(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_an_optional_check_reports_a_stub_as_optional_and_a_crash_without_a_trace() -> None:
    def stub(gpt, idx, n):  # type: ignore[no-untyped-def]
        raise NotImplementedError()

    report = checks.check_my_generate_cached(stub)
    assert not report.done and "optional exercise" in str(report)
    crash = str(checks.check_my_generate_cached(lambda gpt, idx, n: idx.foo))
    assert "raised AttributeError" in crash and "Traceback" not in crash


def test_the_check_leaves_the_notebooks_random_numbers_alone() -> None:
    # (How long a check takes is printed by `python -m benchmarks.checkers`, not tested.)
    torch.manual_seed(11)
    before = torch.rand(3)
    torch.manual_seed(11)
    assert checks.check_my_generate_cached(with_kv_cache).passed
    assert torch.equal(torch.rand(3), before)


def test_count_key_positions_counts_each_layers_projected_positions() -> None:
    model = cached_generation.build_model()
    with checks.count_key_positions(model) as counted:
        model(torch.zeros(1, 5, dtype=torch.long))
    assert counted == [5, 5]
    model(torch.zeros(1, 5, dtype=torch.long))  # the hooks are gone after the with
    assert counted == [5, 5]


def test_the_kv_cache_diagram_draws_every_step_and_refuses_nonsense() -> None:
    fig = diagrams.nb10_kv_cache.draw(prompt_length=2, new_tokens=4)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(t.startswith("step ") for t in texts) == 4
    assert "computes k, v of 2 positions\nreads 0 from the cache" in texts
    assert "computes k, v of 1 position\nreads 4 from the cache" in texts
    assert fig.axes[0].get_title()
    with pytest.raises(ValueError, match="at least 1"):
        diagrams.nb10_kv_cache.draw(prompt_length=0)
