"""Notebook 10, Exercise 8: the usual wrong KV-cached loops, each written as a learner would.

Each is ``generate(gpt, idx, n) -> (B, T + n)``, greedy, like the exercise. :func:`cached_loop`
is the loop with one switch per mistake; :func:`recomputes_with_blocks` gives the right tokens
without saving anything, which only the count of projected keys tells apart.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Mistake
from attnlib.gpt import GPT
from attnlib.kv_cache import KVCache
from attnlib.masks import causal_mask

Tensor = torch.Tensor
Generate = Callable[[GPT, Tensor, int], Tensor]


@torch.no_grad()
def cached_loop(
    gpt: GPT,
    idx: Tensor,
    n: int,
    *,
    position: str = "in the text",
    mask_of_new: str = "last rows",
    prompt_masked: bool = True,
    keep: str = "all",
    feed: str = "newest",
    read: int = -1,
    final_norm: bool = True,
    positions_added: bool = True,
    keepdim: bool = True,
) -> Tensor:
    """Greedy generation with one KV cache per block; each keyword switches one mistake on.

    ``position``: where the new tokens sit ("in the text": after every token before them;
    "after the cache": after what the caches hold, the same when they hold everything; "from
    0"; "one too far");
    ``keep``: what the caches hold between steps ("all", "prompt": the new tokens' keys are
    never stored, "nothing": emptied after each step); ``feed``: "newest" token or the "whole"
    text at every step; ``read``: the position whose logits pick the next token.
    """
    caches = [KVCache() for _ in gpt.blocks]
    after_prompt: list[tuple[Tensor | None, Tensor | None]] = []
    new = idx  # the prompt first, then the newest token
    for step in range(n):
        if step > 0 and keep == "prompt":  # back to what the prompt left
            for cache, (keys, values) in zip(caches, after_prompt, strict=True):
                cache.keys, cache.values = keys, values
        if step > 0 and keep == "nothing":
            caches = [KVCache() for _ in gpt.blocks]
        start, length = len(caches[0]), new.shape[1]
        before = idx.shape[1] - length  # the tokens of the text before the new ones
        first = {
            "in the text": before,
            "after the cache": start,
            "from 0": 0,
            "one too far": before + (step > 0),
        }
        positions = torch.arange(first[position], first[position] + length)  # (T_new,)
        x = gpt.token_embedding(new)  # (B, T_new, C)
        if positions_added:
            x = x + gpt.position_embedding(positions)
        mask: Tensor | None = causal_mask(length, start + length)  # (T_new, T_cached + T_new)
        if step == 0 and not prompt_masked:
            mask = None
        if step > 0 and mask_of_new == "first rows":
            mask = causal_mask(start + length)[:length]  # position 0's row: key 0 only
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, mask, cache)  # (B, T_new, C)
        if step == 0:
            after_prompt = [(cache.keys, cache.values) for cache in caches]
        h = x[:, read]  # (B, C)
        logits = gpt.head(gpt.final_norm(h) if final_norm else h)  # (B, V)
        next_token = logits.argmax(dim=-1, keepdim=keepdim)  # (B, 1)
        idx = torch.cat([idx, next_token], dim=1)  # (B, T + step + 1)
        new = next_token if feed == "newest" else idx
    return idx


@torch.no_grad()
def recomputes_with_blocks(gpt: GPT, idx: Tensor, n: int) -> Tensor:
    """The right tokens, no saving: fresh caches filled with the whole text at every step."""
    for _ in range(n):
        caches = [KVCache() for _ in gpt.blocks]
        length = idx.shape[1]
        x = gpt.token_embedding(idx) + gpt.position_embedding(torch.arange(length))
        for block, cache in zip(gpt.blocks, caches, strict=True):
            x, _ = block(x, causal_mask(length), cache)
        next_token = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_token], dim=1)
    return idx


@torch.no_grad()
def one_cache_for_all_layers(gpt: GPT, idx: Tensor, n: int, mask_per_block: bool = True) -> Tensor:
    """One KVCache that every block appends to, as if the model had a single layer."""
    cache, new = KVCache(), idx
    for _ in range(n):
        length = new.shape[1]
        before = idx.shape[1] - length  # the new tokens' places in the text
        x = gpt.token_embedding(new) + gpt.position_embedding(torch.arange(before, idx.shape[1]))
        mask = causal_mask(length, len(cache) + length)
        for block in gpt.blocks:
            if mask_per_block:  # the cache has grown by the block before
                mask = causal_mask(length, len(cache) + length)
            x, _ = block(x, mask, cache)
        new = gpt.head(gpt.final_norm(x[:, -1])).argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, new], dim=1)
    return idx


def only_new_tokens(gpt: GPT, idx: Tensor, n: int) -> Tensor:
    return cached_loop(gpt, idx, n)[:, idx.shape[1] :]


def _with(**mistake: object) -> Generate:
    return lambda gpt, idx, n: cached_loop(gpt, idx, n, **mistake)  # type: ignore[arg-type]


ONE_CACHE = "used one cache for every layer instead of one per layer"
NOT_KEPT, NOT_APPENDED, WHOLE_TEXT = (
    "emptied the caches after each step",
    "never kept the new tokens' keys and values: each step saw the prompt and itself only",
    "fed the whole text again at every step while the caches kept everything",
)

NO_CACHE = Mistake(
    "saved nothing: the keys and values of earlier positions were computed again at every step",
    "the tokens are right, but the point of the cache is to compute each position's keys and "
    "values once: after the prompt, only the newest token runs through the model.",
    recomputes_with_blocks,
)
ONLY_NEW = Mistake(
    "returned only the n new tokens, without the prompt",
    "generation returns the whole text, the prompt followed by the new tokens: (B, T + n).",
    only_new_tokens,
)

MISTAKES = (
    Mistake(
        "gave each new token position 0 instead of its place in the text",
        "the position embedding tells the model where a token stands: the newest token comes "
        "after every cached position, not at the start of the text.",
        _with(position="from 0"),
    ),
    Mistake(
        "gave each new token a position one too far",
        "positions count from 0: after T cached positions (0 … T − 1) the new token stands "
        "at T, which is how many positions the cache held before this step.",
        _with(position="one too far"),
    ),
    Mistake(
        NOT_KEPT,
        "each new token then attends to itself alone: the keys and values of every earlier "
        "position must stay in the caches for the whole loop.",
        _with(keep="nothing"),
    ),
    Mistake(
        NOT_APPENDED,
        "every step's keys and values are needed by all later steps: what a step appends "
        "must still be there at the next one.",
        _with(keep="prompt"),
    ),
    Mistake(
        "gave the new token the first row of the causal mask (key 0 only) instead of the last",
        "the newest token is the last position: it may attend to every cached position and "
        "to itself.",
        _with(mask_of_new="first rows"),
    ),
    Mistake(
        "ran the prompt without the causal mask",
        "the prompt's keys and values must be those of a causal pass: without the mask each "
        "prompt position saw the ones after it, and the cache keeps what it saw.",
        _with(prompt_masked=False),
    ),
    Mistake(
        WHOLE_TEXT,
        "the caches already hold every earlier position: feeding them again appends them a "
        "second time, at new positions, so the text the model sees grows wrong.",
        _with(feed="whole"),
    ),
    Mistake(
        "picked the next token from the first position's logits instead of the last's",
        "the next token follows the last position of the text; the first position predicts "
        "the prompt's second token.",
        _with(read=0),
    ),
    Mistake(
        "left out the final LayerNorm before the head",
        "the model's head reads the last block's output through gpt.final_norm, as its "
        "forward pass does.",
        _with(final_norm=False),
    ),
    Mistake(
        "left out the position embedding",
        "the model's input at each position is its token embedding plus its position "
        "embedding; without the second, it cannot tell where a token stands.",
        _with(positions_added=False),
    ),
    Mistake(
        "took the argmax without keeping its dimension",
        "the next tokens then have shape (B,), which torch.cat cannot append to the text of "
        "shape (B, T): each needs a column of its own, (B, 1).",
        _with(keepdim=False),
    ),
    Mistake(
        ONE_CACHE,
        "each layer projects its own keys and values from its own input: with one cache for "
        "all, a layer's queries attend to the keys of every layer, not of its own.",
        one_cache_for_all_layers,
    ),
    Mistake(
        "generated n − 1 new tokens: the loop stops one step early",
        "the result holds the prompt and n new tokens, (B, T + n): the loop runs n steps, the "
        "first on the prompt and one for each token after it.",
        lambda gpt, idx, n: cached_loop(gpt, idx, n - 1),
    ),
    ONLY_NEW,
    NO_CACHE,
)

# Other ways learners make the same mistakes: the new tokens placed after what the caches hold,
# which is wrong as well once the caches lose positions or hold them twice.
VARIANTS: dict[str, tuple[Generate, ...]] = {
    NOT_KEPT: (_with(keep="nothing", position="after the cache"),),
    NOT_APPENDED: (_with(keep="prompt", position="after the cache"),),
    WHOLE_TEXT: (_with(feed="whole", position="after the cache"),),
    ONE_CACHE: (lambda gpt, idx, n: one_cache_for_all_layers(gpt, idx, n, mask_per_block=False),),
}
