"""Notebook 09, Exercise 3: beam search for one source, with GNMT's length penalty.

The learner's search runs on models whose next-token probabilities the check knows (the
hand-set toy of §8 and two more toys, each built to expose a mistake: :mod:`.toys`), on
untrained Transformers with confident, varied outputs, and on the stored date translator. Its
tokens and score are compared with :func:`~.beam_rules.plain_beam_search`'s (itself tested
against ``attnlib.beam_search_with_scores(..., penalty="gnmt")``); the mistakes of
:data:`~.beam_mistakes.MISTAKES` are the same search with one rule changed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks.nb09_encoder_decoder import toys
from attnlib.checks.nb09_encoder_decoder.answers import check_converted
from attnlib.checks.nb09_encoder_decoder.beam_mistakes import MISTAKES
from attnlib.checks.nb09_encoder_decoder.beam_rules import plain_beam_search
from attnlib.course.date_translator import DateTranslator, load_reference_translator

BEAM_SEARCH_GNMT = register(
    Exercise(
        id="ex3_beam_search_gnmt",
        notebook="09",
        number=3,
        name="beam_search_gnmt",
        hints=(
            "A beam is a short list of hypotheses, each its tokens so far and the sum of their "
            "log-probabilities. Every step replaces the list by the best beam_size of all "
            "one-token extensions, a finished hypothesis competing as it is; the length penalty "
            "only judges the hypotheses left at the end.",
            "The model's log p(v | y_<t, x) for every next token v is the log_softmax of the "
            "decoder's logits at the last position of <bos> followed by the tokens so far. "
            "Pruning compares raw sums (all open hypotheses have the same length then); a "
            "hypothesis that ended with <eos> is kept unchanged and never extended; the search "
            "ends when every kept hypothesis has ended, or after max_new_tokens steps.",
            "Run your search by hand on the toy of §8 with beam 2: after step 2 the beam holds "
            "B B (sum ln 0.4 + ln 0.9) and A <eos> (ln 0.6 + ln 0.5), and at the end A <eos> and "
            "B B B B <eos>. |y| counts the tokens after <bos>, the <eos> included (2 and 5 "
            "here), and the whole fraction (5 + |y|) / 6 is raised to α before it divides the "
            "sum. With α = 0.6 the winner is B B B B <eos>, with score ≈ −0.985.",
        ),
    )
)

BEAM_SEARCH_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.beam_search: "attnlib.beam_search",
        attnlib.beam_search_with_scores: "attnlib.beam_search_with_scores",
        attnlib.greedy_decode: "attnlib.greedy_decode",
        DateTranslator.translate: "DateTranslator.translate",
    }
)


def reference_beam_search_gnmt(
    model: Any,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_new_tokens: int,
    beam_size: int,
    alpha: float,
) -> tuple[list[int], float]:
    """attnlib's beam search with GNMT's penalty, called as the exercise's function is:
    ``(tokens, score)`` for one source ``(1, S)``, tokens up to the first <eos>."""
    out, score = attnlib.beam_search_with_scores(
        model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty="gnmt"
    )
    tokens = out[0].tolist()
    if eos_id in tokens:
        tokens = tokens[: tokens.index(eos_id) + 1]
    return tokens, float(score[0])


@cache
def _translator() -> DateTranslator:
    return load_reference_translator()


@cache
def _cases() -> list[Case]:
    toy_src = torch.zeros(1, 1, dtype=torch.long)
    specs: list[tuple[str, Any, tuple[Any, ...]]] = []
    for k, alpha, note in (
        (1, 0.6, " (greedy)"),
        (2, 0.0, " (raw sums)"),
        (2, 0.6, ""),
        (3, 1.0, ""),
    ):
        specs.append(
            (
                f"the toy of §8, beam {k}, α = {alpha}{note}",
                toys.toy("hand-set"),
                (toy_src, 1, 2, 6, k, alpha),
            )
        )
    specs += [
        ("a toy whose empty output has the best sum, beam 2, α = 2",
         toys.toy("trap"), (toy_src, 1, 2, 6, 2, 2.0)),
        ("a toy whose likeliest first token leads nowhere, beam 2, α = 0.6",
         toys.toy("late"), (toy_src, 1, 2, 7, 2, 0.6)),
        ("the same toy, beam 3, α = 0", toys.toy("late"), (toy_src, 1, 2, 7, 3, 0.0)),
    ]  # fmt: skip
    generator = torch.Generator().manual_seed(0)
    sources = [torch.randint(3, 9, (1, 5), generator=generator) for _ in range(3)]  # (1, S)
    # The last: a finished output (2 tokens) is among the best sums from step 2 on and keeps
    # its place; a search that sets it aside goes on with another, which wins under α = 3.
    for seed, k, alpha, max_new_tokens in (
        (0, 3, 0.6, 7),
        (1, 2, 1.5, 5),
        (2, 3, 1.0, 6),
        (1, 2, 3.0, 8),
    ):
        src = sources[seed]
        what = (
            f"an untrained Transformer (seed {seed}), beam {k}, α = {alpha}, "
            f"max_new_tokens {max_new_tokens}"
        )
        specs.append((what, toys.random_transformer(seed), (src, 1, 2, max_new_tokens, k, alpha)))
    translator = _translator()
    tok = translator.tokenizer
    src, _ = tok.encode_batch(["the 3rd of march, 1999"])  # (1, S)
    args = (src, tok.bos_id, tok.eos_id, 11, 4, 0.6)
    specs.append(
        ("the date translator, 'the 3rd of march, 1999', beam 4, α = 0.6", translator.model, args)
    )
    with torch.no_grad():
        return [
            Case(what, (model, *args), plain_beam_search(model, *args))
            for what, model, args in specs
        ]


def _as_ids(tokens: Any) -> list[int]:
    if isinstance(tokens, torch.Tensor):
        tokens = tokens.flatten().tolist()
    if not isinstance(tokens, (list, tuple)):
        raise TypeError(f"the tokens should be a list of ids, got {type(tokens).__name__}")
    return [int(t) for t in tokens]


def _pair(got: Any) -> tuple[list[int], float]:
    """The answer as (list of ints, float)."""
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        size = f" of length {len(got)}" if isinstance(got, (tuple, list)) else ""
        raise TypeError(
            f"beam_search_gnmt should return a pair (tokens, score), got {type(got).__name__}{size}"
        )
    return _as_ids(got[0]), float(got[1])


@checker_of(BEAM_SEARCH_GNMT, MISTAKES)
def check_beam_search_gnmt(fn: Callable[..., Any]) -> CheckResult:
    """Check ``beam_search_gnmt(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha)``:
    ``(tokens, score)`` for one source ``(1, S)``, on toys, untrained Transformers and the
    stored date translator."""
    return check_converted(
        BEAM_SEARCH_GNMT,
        fn,
        _pair,
        _cases,
        MISTAKES,
        forbidden=BEAM_SEARCH_IMPLEMENTATIONS,
        atol=1e-6,
        rtol=1e-6,
        output_names=("tokens", "score"),
    )
