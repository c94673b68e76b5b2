"""The usual mistakes of a KV-cached generation loop, each written as the loop that makes it.

:func:`attnlib.checks.check_kv_cache` runs these on its own model to name the mistake a
failing learner's tokens match, and the tests prove that each one fails the check with its
name. Each is greedy, ``mistake(gpt, idx, n) -> (B, T + n)``, like the exercise.

Notebook 10.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from attnlib.gpt import GPT
from attnlib.kv_cache import KVCache
from attnlib.masks import causal_mask

# generate(gpt, idx (B, T), n) -> (B, T + n): the prompt followed by n greedy tokens
Generate = Callable[[GPT, torch.Tensor, int], torch.Tensor]


@torch.no_grad()
def cached_greedy(
    gpt: GPT,
    idx: torch.Tensor,
    n: int,
    *,
    position_shift: int | None = 0,
    new_token_sees_first_key_only: bool = False,
    prompt_masked: bool = True,
    keep: str = "all",
) -> torch.Tensor:
    """Greedy generation with a KV cache per layer; the keywords switch one mistake on each.

    ``position_shift`` moves each new token's position (``None`` = position 0 whatever the
    cache holds); ``keep`` says what the caches hold between steps: ``"all"`` (right),
    ``"prompt"`` (the new tokens' keys and values are never stored) or ``"nothing"`` (the
    caches are emptied after each step).

    Shapes:
        idx: ``(B, T)`` with ``T + n ≤ max_len``; returns ``(B, T + n)``.
    """
    caches = [KVCache() for _ in gpt.blocks]
    prompt_caches: list[KVCache] = []
    new = idx  # the prompt first, then the newest token
    for step in range(n):
        if step > 0 and keep == "prompt":
            caches = copy.deepcopy(prompt_caches)  # what the prompt left, nothing since
        if step > 0 and keep == "nothing":
            caches = [KVCache() for _ in gpt.blocks]
        start, length = len(caches[0]), new.shape[1]
        first = 0 if position_shift is None else start + (position_shift if step else 0)
        positions = torch.arange(first, first + length)  # (T_new,)
        x = gpt.token_embedding(new) + gpt.position_embedding(positions)  # (B, T_new, C)
        mask = causal_mask(length, start + length)  # (T_new, T_cached + T_new)
        if step == 0 and not prompt_masked:
            mask = None
        if step > 0 and new_token_sees_first_key_only:
            mask = causal_mask(start + length)[:length]  # the first rows: key 0 only
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, mask, cache)  # (B, T_new, C)
        if step == 0:
            prompt_caches = copy.deepcopy(caches)
        logits = gpt.head(gpt.final_norm(x[:, -1]))  # (B, V)
        new = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
        idx = torch.cat([idx, new], dim=1)  # (B, T + step + 1)
    return idx


@torch.no_grad()
def recomputes_everything(gpt: GPT, idx: torch.Tensor, n: int) -> torch.Tensor:
    """The right tokens without a cache: the whole sequence runs through the model every step."""
    for _ in range(n):
        logits = gpt(idx)[:, -1]  # (B, V)
        idx = torch.cat([idx, logits.argmax(dim=-1, keepdim=True)], dim=1)  # (B, T + 1)
    return idx


def _with(**mistake: object) -> Generate:
    return lambda gpt, idx, n: cached_greedy(gpt, idx, n, **mistake)  # type: ignore[arg-type]


NOT_OFFSET = "the new token was given position 0 instead of its place in the text"
ONE_TOO_FAR = "the new token's position is one too far (len(cache) + 1 instead of len(cache))"
NOT_KEPT = (
    "the caches were emptied after each step: each new token attends to itself alone, "
    "not to the keys and values of the tokens before it"
)
NOT_APPENDED = (
    "the new tokens' keys and values were never appended to the cache: each step attends "
    "to the prompt and itself, not to the tokens generated before it"
)
FIRST_ROW = (
    "the new token's mask is the first row of the causal mask (it may attend to position 0 "
    "only) instead of the last (every cached position and itself)"
)
PROMPT_UNMASKED = "the prompt ran without the causal mask, so its keys and values saw the future"
NO_CACHE = "no caching: the keys and values of earlier positions were computed again every step"

# Each mistake whose tokens differ from the right ones, as the loop that makes it; named
# when a failing learner's tokens match its tokens in every case so far.
MISTAKES: dict[str, Generate] = {
    NOT_OFFSET: _with(position_shift=None),
    ONE_TOO_FAR: _with(position_shift=1),
    NOT_KEPT: _with(keep="nothing"),
    NOT_APPENDED: _with(keep="prompt"),
    FIRST_ROW: _with(new_token_sees_first_key_only=True),
    PROMPT_UNMASKED: _with(prompt_masked=False),
}

# The mistake that gives the right tokens: the check names it by counting positions.
SLOW_MISTAKES: dict[str, Generate] = {NO_CACHE: recomputes_everything}
