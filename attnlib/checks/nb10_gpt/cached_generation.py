"""Notebook 10, Exercise 8 (optional): greedy generation with a KV cache, written by the learner.

The learner's ``my_generate_cached(gpt, idx, n)`` runs on a small GPT the checker builds
(float64, fixed random weights; prompts whose length plus ``n`` fit in ``max_len``). It must
return exactly the tokens of greedy generation without a cache, built from the model's parts
(calling the model itself or its ``generate`` is refused), and it must cache: a forward hook
on every layer's key projection counts the positions whose keys that layer computes, each
position at most once (``T + n``) against ``T + (T + 1) + … + (T + n − 1)`` without a cache.
Wrong tokens are named by running the usual wrong loops (:mod:`.cache_mistakes`) on the same
model and prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

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
from attnlib.checks._framework import CheckResult, fixed_generator, randn64, task_of
from attnlib.checks._outcomes import Outcome, same_behaviour
from attnlib.checks._threads import one_thread
from attnlib.checks.nb10_gpt.cache_mistakes import MISTAKES, NO_CACHE, ONLY_NEW, VARIANTS
from attnlib.gpt import GPT, GPTConfig

CONFIG = GPTConfig(vocab_size=13, max_len=24, d_model=16, num_heads=2, num_layers=2, dropout=0.0)
CASES = (  # (description, batch, prompt length, new tokens): prompt + new ≤ max_len
    ("a prompt of 1 token, 12 new", 1, 1, 12),
    ("a prompt of 7 tokens, 10 new", 1, 7, 10),
    ("a batch of 2 prompts of 4 tokens, 9 new each", 2, 4, 9),
    ("a prompt of 12 tokens, 12 new (up to max_len)", 1, 12, 12),
)

CACHED_GENERATION = register(
    Exercise(
        id="ex8_my_generate_cached",
        notebook="10",
        number=8,
        name="my_generate_cached",
        optional=True,
        hints=(
            "Under the causal mask the keys and values of a position never change once "
            "computed, in any layer: keep them, one cache per layer, for the whole loop. Then "
            "each step runs only what is new through the model: the whole prompt at the first "
            "step, one token at every later step.",
            "What is new needs three things the full forward pass got for free: its places in "
            "the text (the cached positions come first), a mask with a row per new position and "
            "a column per cached or new position, and the head applied to the last position "
            "only. Each block takes its layer's cache as a third argument and appends to it.",
            "Before the loop: one attnlib.KVCache per block. In each step: read how many "
            "positions the caches hold before the blocks run; add the token embedding of the "
            "new tokens and the position embedding of their places from there on; the mask is "
            "causal_mask(T_new, T_cached + T_new); run each block with its cache; apply "
            "final_norm and the head to the last position; take the argmax (keeping the "
            "dimension), append it to the text, and feed it alone next.",
        ),
    )
)

# An answer may not let the model run itself: its forward pass or generate.
MODEL_IMPLEMENTATIONS = Forbidden(
    python={
        GPT.generate: "gpt.generate",
        GPT._run: "the model's own forward pass, gpt(...)",
    }
)


def build_model() -> GPT:
    """The checker's GPT: float64, eval mode, fixed random weights.

    The scales (small token embeddings, large position embeddings and sublayer weights) keep
    its greedy text from repeating one token, so that each mistake gives tokens of its own
    and the right tokens win every step by a margin far above rounding.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = GPT(CONFIG).double().eval()
    g = fixed_generator()
    with torch.no_grad():
        for name, parameter in model.named_parameters():  # the tied head once
            noise = randn64(*parameter.shape, generator=g)
            if "norm" in name:
                parameter.copy_((1.0 if name.endswith("weight") else 0.0) + 0.3 * noise)
            elif name.startswith("token_embedding"):
                parameter.copy_(0.5 * noise)
            elif name.startswith("position_embedding"):
                parameter.copy_(2.0 * noise)
            elif parameter.dim() == 2:
                parameter.copy_(2.0 * noise / parameter.shape[1] ** 0.5)
            else:
                parameter.copy_(0.1 * noise)
    return model


def prompts() -> list[tuple[str, torch.Tensor, int]]:
    """(description, prompt ids (B, T), new tokens) of every case, the same on every run."""
    g = torch.Generator().manual_seed(7)
    return [
        (description, torch.randint(CONFIG.vocab_size, (batch, length), generator=g), n)
        for description, batch, length, n in CASES
    ]


Run = tuple[torch.Tensor, int, Outcome]  # a prompt (B, T), n, and what the learner's gave


@contextmanager
def count_key_positions(gpt: GPT) -> Iterator[list[int]]:
    """Count, per layer, the positions whose keys the layer projects inside the ``with``.

    A forward hook on each block's ``attention.w_k`` adds the length of every input it sees;
    the hooks are removed on leaving the ``with``.

    Shapes:
        yields a list of ``num_layers`` ints, updated as the model runs.
    """
    counted = [0] * len(gpt.blocks)

    def counter(layer: int) -> Callable[..., None]:
        def hook(module: Any, args: tuple[torch.Tensor, ...], output: Any) -> None:
            counted[layer] += args[0].shape[-2]  # (B, T, C): T positions

        return hook

    handles = [
        block.attention.w_k.register_forward_hook(counter(i)) for i, block in enumerate(gpt.blocks)
    ]
    try:
        yield counted
    finally:
        for handle in handles:
            handle.remove()


def _uncached(length: int, n: int) -> int:
    """Key positions per layer without a cache: T + (T + 1) + … + (T + n − 1)."""
    return n * length + n * (n - 1) // 2


def _problem(outcome: Outcome, expected: torch.Tensor, n: int) -> str | None:
    if outcome.error is not None:
        return f"your function raised {type(outcome.error).__name__}: {outcome.error}"
    got = outcome.value
    if not isinstance(got, torch.Tensor):
        return f"your function returned {type(got).__name__}, expected a tensor of token ids"
    if tuple(got.shape) != tuple(expected.shape):
        return f"your function returned shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    if got.is_floating_point() or got.dtype == torch.bool:
        return f"your function returned dtype {got.dtype}; token ids are integers"
    if torch.equal(got, expected):
        return None
    row, position = (int(i) for i in torch.nonzero(got != expected)[0])
    length = expected.shape[1] - n
    return (
        f"your tokens differ from generation without a cache first at position {position} of "
        f"sequence {row}: new tokens expected {expected[row, length:].tolist()}, yours "
        f"{got[row, length:].tolist()}"
    )


def _same_tokens(generate: Callable[..., torch.Tensor], model: GPT, runs: list[Run]) -> bool:
    """Whether ``generate`` gives the learner's tokens (or error) on every case."""
    for idx, n, outcome in runs:
        try:
            theirs = Outcome(value=generate(model, idx.clone(), n))
        except Exception as error:
            theirs = Outcome(error=error)
        if not same_behaviour(outcome, theirs, (0, 0)):
            return False
    return True


def _only_new(outcome: Outcome, n: int) -> bool:
    got = outcome.value
    return isinstance(got, torch.Tensor) and got.dim() == 2 and got.shape[1] == n


def _recognise(model: GPT, runs: list[Run]) -> Mistake | None:
    """The first mistake, made in any of its usual ways, whose tokens are the learner's on every
    case (the same error where the learner's raised)."""
    for mistake in MISTAKES:
        if mistake is NO_CACHE:
            continue  # right tokens: told apart by the count
        ways = (mistake.fn, *VARIANTS.get(mistake.name, ()))
        if any(_same_tokens(way, model, runs) for way in ways):
            return mistake
    return None


@checker_of(CACHED_GENERATION, MISTAKES)
def check_my_generate_cached(fn: Callable[[GPT, torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``my_generate_cached(gpt, idx, n)``: greedy, with a KV cache, the tokens of no cache.

    The result is the prompt followed by ``n`` greedy tokens; each layer may compute the keys
    of at most ``T + n`` positions (each position once).

    Shapes:
        idx: ``(B, T)`` with ``T + n ≤ gpt.config.max_len``; returns ``(B, T + n)``.
    """
    ex = CACHED_GENERATION
    if not callable(fn):
        return failed(ex, fn, "as a whole", f"expected a function, got {type(fn)}", None)
    with torch.random.fork_rng(devices=[]), one_thread():  # the notebook's stay its own
        model = build_model()
        runs, counts = [], []
        for description, idx, n in prompts():
            watch = CallWatch(MODEL_IMPLEMENTATIONS)
            try:
                with torch.no_grad(), count_key_positions(model) as counted, watch:
                    outcome = Outcome(value=fn(model, idx.clone(), n))
            except NotImplementedError as error:
                return not_done(ex, fn, str(error) or task_of(fn))
            except Exception as error:  # the learner's bug, reported instead of a traceback
                outcome = Outcome(error=error)
            if watch.seen:
                return refused(ex, fn, watch.seen)
            runs.append((idx, n, outcome))
            counts.append((description, idx.shape[1], n, list(counted)))
        expected = [GPT.generate(model, idx, n, 0.0, use_cache=False) for idx, n, _ in runs]
        problems = [_problem(o, e, n) for (_, n, o), e in zip(runs, expected, strict=True)]
        if any(problems):
            first = next(i for i, p in enumerate(problems) if p)
            _, n, outcome = runs[first]
            mistake = _recognise(model, runs)
            if mistake is None and all(_only_new(o, k) for _, k, o in runs):
                mistake = ONLY_NEW  # the shape of the new tokens alone, whatever they are
            return failed(ex, fn, f"case '{counts[first][0]}'", str(problems[first]), mistake)
    for description, length, n, counted in counts:
        if min(counted) == 0:
            problem = "the right tokens, but the check saw no keys computed in a layer"
            return failed(ex, fn, f"case '{description}'", problem, None)
        if max(counted) > length + n:
            problem = (
                f"the right tokens, but a layer computed the keys of {max(counted)} positions; "
                f"with a cache it is each position once, at most {length + n}, and without "
                f"one {_uncached(length, n)}"
            )
            return failed(ex, fn, f"case '{description}'", problem, NO_CACHE)
    computed = sum(max(c) for *_, c in counts)
    uncached = sum(_uncached(length, n) for _, length, n, _ in counts)
    return passed(
        ex,
        fn,
        f"all {len(CASES)} cases: the tokens of generation without a cache, each layer "
        f"computing the keys of {computed} positions where recomputing them every step takes "
        f"{uncached}",
    )
