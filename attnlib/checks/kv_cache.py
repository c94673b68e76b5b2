"""Checker for notebook 10's optional exercise: greedy generation with a KV cache.

The learner's ``generate(gpt, idx, n)`` runs on a small GPT the checker builds (float64,
fixed random weights, prompts whose length plus ``n`` fit in ``max_len``, so no cropping).
It must return exactly the tokens of greedy generation without a cache, and it must cache:
forward hooks on every layer's key projection count the positions whose keys that layer
computes. With a cache that is each position once, the prompt and then one new token a
step (at most ``T + n``); without one it is ``T + (T + 1) + … + (T + n − 1)``. Wrong tokens
are named by running the usual wrong loops (:mod:`attnlib.checks.kv_cache_mistakes`) on the
same model and prompts.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from attnlib.checks._framework import CheckResult, fixed_generator, not_done, randn64
from attnlib.checks.kv_cache_mistakes import (
    FIRST_ROW,
    MISTAKES,
    NO_CACHE,
    NOT_APPENDED,
    NOT_KEPT,
    NOT_OFFSET,
    ONE_TOO_FAR,
    PROMPT_UNMASKED,
)
from attnlib.gpt import GPT, GPTConfig

NAME = "kv_cache"
CONFIG = GPTConfig(vocab_size=13, max_len=24, d_model=16, num_heads=2, num_layers=2, dropout=0.0)
CASES = (  # (description, batch, prompt length, new tokens): prompt + new ≤ max_len
    ("a prompt of 1 token, 12 new", 1, 1, 12),
    ("a prompt of 7 tokens, 10 new", 1, 7, 10),
    ("a batch of 2 prompts of 4 tokens, 9 new each", 2, 4, 9),
    ("a prompt of 12 tokens, 12 new (up to max_len)", 1, 12, 12),
)

LOOP = (
    "make one attnlib.KVCache per block before the loop; run the prompt once with "
    "attnlib.causal_mask(T), then feed only the newest token, (B, 1), at position "
    "len(cache); each block call block(x, mask, cache) appends its keys and values."
)
HINTS = {
    NOT_OFFSET: "a token fed after `start = len(caches[0])` cached positions sits at position "
    "start: positions = torch.arange(start, start + T_new), not torch.arange(T_new).",
    ONE_TOO_FAR: "positions count from 0: after T cached positions (0 … T − 1) the new token "
    "is at position T = len(cache), read before the blocks append to the cache.",
    NOT_KEPT: "create the caches once, before the loop, and hand each block the same cache "
    "at every step: the keys and values of every earlier position stay there.",
    NOT_APPENDED: "each step's new keys and values must stay for the later steps: let the "
    "block append them (block(x, mask, cache)), or, with tensors of your own, assign the "
    "concatenation back to your cache.",
    FIRST_ROW: "the new token is the last position, so its mask row is the last one: "
    "attnlib.causal_mask(1, len(cache) + 1), all True (or no mask for one new token); "
    "causal_mask(T)[:1] is the first position's row.",
    PROMPT_UNMASKED: "the prompt's positions need the causal mask, as in training: "
    "attnlib.causal_mask(T). Only a single new token, the last position, may go without it.",
    NO_CACHE: "run the prompt once, then feed only the newest token with the caches holding "
    "every earlier key and value; calling gpt(idx) on the whole text each step, or filling "
    "fresh caches with it, recomputes them.",
}


def build_model() -> GPT:
    """The checker's GPT: float64, eval mode, fixed random weights.

    The scales (small token embeddings, large position embeddings and sublayer weights) keep
    its greedy text from repeating one token, so that each mistake gives tokens of its own
    (a test proves it) and the right tokens win every step by a margin far above rounding.
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


def cases() -> list[tuple[str, torch.Tensor, int]]:
    """(description, prompt ids (B, T), new tokens) of every case, the same on every run."""
    g = torch.Generator().manual_seed(7)
    return [
        (description, torch.randint(CONFIG.vocab_size, (batch, length), generator=g), n)
        for description, batch, length, n in CASES
    ]


@contextmanager
def key_positions(gpt: GPT) -> Iterator[list[int]]:
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


def _no_generate(*args: object, **kwargs: object) -> None:
    raise RuntimeError(
        "the check's model has no generate(): write the loop yourself, from its "
        "token_embedding, position_embedding, blocks, final_norm and head"
    )


def _fail(message: str, hint: str, cause: str | None = None) -> CheckResult:
    why = f"\n  likely cause: {cause}" if cause else ""
    return CheckResult(NAME, False, f"✗ {NAME}, {message}{why}\n  hint: {hint}")


def _malformed(got: object, expected: torch.Tensor, n: int) -> str | None:
    if not isinstance(got, torch.Tensor):
        return f"your function returned {type(got).__name__}, expected a tensor of token ids"
    if tuple(got.shape) == (expected.shape[0], n):
        return f"your function returned only the {n} new tokens, shape {tuple(got.shape)}"
    if tuple(got.shape) != tuple(expected.shape):
        return f"your function returned shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    if got.is_floating_point() or got.dtype == torch.bool:
        return f"your function returned dtype {got.dtype}; token ids are integers"
    return None


def _first_difference(got: torch.Tensor, expected: torch.Tensor, prompt_length: int) -> str:
    row, position = (int(i) for i in torch.nonzero(got != expected)[0])
    return (
        f"your tokens differ from generation without a cache first at position {position} "
        f"of sequence {row}: got {int(got[row, position])}, expected "
        f"{int(expected[row, position])} (new tokens expected "
        f"{expected[row, prompt_length:].tolist()}, yours {got[row, prompt_length:].tolist()})"
    )


def _diagnose(model: GPT, runs: list[Run]) -> str | None:
    """The mistake whose tokens equal the learner's in every case."""
    for mistake, generate in MISTAKES.items():
        if all(torch.equal(generate(model, run.idx, run.n), run.got) for run in runs):
            return mistake
    return None


def check_kv_cache(fn: Callable[[GPT, torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``generate(gpt, idx, n)``: greedy, with a KV cache, the tokens of no cache.

    The result is the prompt followed by ``n`` greedy tokens. Each layer may compute the
    keys of at most ``T + n`` positions (each position once).

    Shapes:
        idx: ``(B, T)`` with ``T + n ≤ gpt.config.max_len``; returns ``(B, T + n)``.
    """
    if not callable(fn):
        return CheckResult(NAME, False, f"✗ {NAME}: expected a function, got {type(fn).__name__}")
    with torch.random.fork_rng(devices=[]):  # the notebook's random numbers stay its own
        return _check(fn)


@dataclass(frozen=True)
class Run:
    """One case as the learner's function ran it."""

    description: str
    idx: torch.Tensor  # (B, T): the prompt
    n: int
    got: torch.Tensor  # (B, T + n): the learner's tokens
    expected: torch.Tensor  # (B, T + n): greedy without a cache
    counted: list[int]  # per layer: the positions whose keys it computed


def _check(fn: Callable[[GPT, torch.Tensor, int], torch.Tensor]) -> CheckResult:
    model = build_model()
    model.generate = _no_generate  # type: ignore[method-assign]
    runs: list[Run] = []
    for description, idx, n in cases():
        case = f"case '{description}'"
        expected = GPT.generate(model, idx, n, temperature=0.0, use_cache=False)
        with torch.no_grad(), key_positions(model) as counted:
            try:
                got = fn(model, idx.clone(), n)
            except NotImplementedError as error:
                return not_done(NAME, fn, error)
            except Exception as error:  # the learner's bug, reported instead of a traceback
                return _fail(f"{case}: your function raised {type(error).__name__}: {error}", LOOP)
        problem = _malformed(got, expected, n)
        if problem is not None:
            return _fail(
                f"{case}: {problem}", "return the prompt followed by the n new tokens: (B, T + n)."
            )
        runs.append(Run(description, idx, n, got, expected, counted))
    wrong = [run for run in runs if not torch.equal(run.got, run.expected)]
    if wrong:
        cause = _diagnose(model, runs)  # all the cases together tell the mistakes apart
        run = wrong[0]
        difference = _first_difference(run.got, run.expected, run.idx.shape[1])
        return _fail(f"case '{run.description}': {difference}", HINTS.get(cause, LOOP), cause)
    for run in runs:
        problem = _not_cached(run)
        if problem is not None:
            return problem
    computed = sum(max(run.counted) for run in runs)
    uncached = sum(_uncached(run) for run in runs)
    return CheckResult(
        NAME,
        True,
        f"✓ {NAME} is correct on all {len(CASES)} cases: the same tokens as generation "
        f"without a cache, each layer computing the keys of {computed} positions where "
        f"recomputing them every step takes {uncached}.",
    )


def _uncached(run: Run) -> int:
    """Key positions per layer without a cache: T + (T + 1) + … + (T + n − 1)."""
    return run.n * run.idx.shape[1] + run.n * (run.n - 1) // 2


def _not_cached(run: Run) -> CheckResult | None:
    case, length = f"case '{run.description}'", run.idx.shape[1]
    if min(run.counted) == 0:
        return _fail(
            f"{case}: the right tokens, but the check saw no keys computed in layer "
            f"{run.counted.index(0)}",
            "run the model's own blocks, gpt.blocks[i](x, mask, cache): the check counts "
            "the positions their attention projects to keys.",
        )
    if max(run.counted) > length + run.n:
        layer = run.counted.index(max(run.counted))
        return _fail(
            f"{case}: the right tokens, but layer {layer} computed the keys of "
            f"{max(run.counted)} positions; with a cache it is each position once, at most "
            f"{length + run.n} (the prompt's {length}, then one a step), and without one "
            f"{_uncached(run)}",
            HINTS[NO_CACHE],
            NO_CACHE,
        )
    return None
