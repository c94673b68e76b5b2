"""Beam search for one source as plainly as possible, with the rules learners change.

:func:`plain_beam_search` follows the exercise's rules (those of ``attnlib.beam_search``
with ``penalty="gnmt"``); each field of :class:`Rules` changes one of them the way a learner
does by mistake. The check's table of mistakes (:mod:`.beam_mistakes`) is these variants.

Notebook 09.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Rules:
    """The choices a beam search makes; the defaults are the exercise's."""

    # "gnmt", "power" (|y|^α), "none", "precedence" ((5+|y|)/6^α), "divided twice" (sum / (5+|y|)
    # / 6^α), "times", "power over 6" ((5+|y|)^α / 6), "times alpha" ((5+|y|)/6 · α),
    # "length over 6" ((5 + |y|/6)^α)
    penalty: str = "gnmt"
    length: str = "tokens"  # |y|: "tokens" (with <eos>), "no_eos", "with_bos"
    keep_finished: bool = True  # an ended hypothesis stays among the candidates
    extend_finished: bool = False  # an ended hypothesis is extended like any other
    prune: str = "raw"  # "raw" sum, or "normalised" score
    # stop when "all" kept hypotheses ended, or the "best" one; with extend_finished, when all
    # "contain" an <eos> or all "end" with one
    stop: str = "all"
    position: int = -1  # the decoder position whose logits give the next token
    last_token_only: bool = False  # the decoder reads the last token alone, not <bos> + prefix
    # what is added up: "log_softmax", "logits", "probs", or "positions" (a log_softmax taken
    # along the positions instead of the vocabulary)
    scores: str = "log_softmax"
    returned: str = "normalised"  # the score returned: "normalised" or "raw"
    choose: str = "normalised"  # the winner is the best "normalised" score, or the best "raw" sum
    one_step_short: bool = False  # max_new_tokens - 1 steps
    one_step_long: bool = False  # max_new_tokens + 1 steps
    with_bos: bool = False  # the returned tokens start with <bos>
    strip_eos: bool = False  # the returned tokens lose their <eos> (the score keeps it)
    greedy: bool = False  # one hypothesis, whatever beam_size
    aside: bool = False  # ended hypotheses leave the beam for a list of their own
    refill: bool = False  # ... and beam_size open hypotheses go on at every step


RIGHT = Rules()


def _ended(tokens: list[int], eos_id: int, rules: Rules) -> bool:
    return bool(tokens) and tokens[-1] == eos_id and not rules.extend_finished


def _length(tokens: list[int], eos_id: int, rules: Rules) -> int:
    if rules.length == "no_eos" and tokens and tokens[-1] == eos_id:
        return len(tokens) - 1
    return len(tokens) + (rules.length == "with_bos")


def _normalised(tokens: list[int], total: float, eos_id: int, alpha: float, rules: Rules) -> float:
    n = _length(tokens, eos_id, rules)
    if rules.penalty == "none":
        return total
    if rules.penalty == "power":
        return total / max(n, 1) ** alpha
    if rules.penalty == "precedence":
        return total / ((5 + n) / 6**alpha)
    if rules.penalty == "divided twice":
        return total / (5 + n) / 6**alpha
    if rules.penalty == "times":
        return total * ((5 + n) / 6) ** alpha
    if rules.penalty == "power over 6":  # (5 + |y|)^α / 6
        return total / ((5 + n) ** alpha / 6)
    if rules.penalty == "times alpha":  # (5 + |y|) / 6 · α
        return total / ((5 + n) / 6 * alpha)
    if rules.penalty == "length over 6":  # (5 + |y| / 6)^α
        return total / (5 + n / 6) ** alpha
    return total / ((5 + n) / 6) ** alpha


def _next_token_scores(
    model: torch.nn.Module,
    prefixes: list[list[int]],
    bos_id: int,
    memory: torch.Tensor,
    src_mask: torch.Tensor,
    rules: Rules,
) -> list[list[float]]:
    """For each prefix (all of one length: one call of the decoder for all), what the search
    adds up for each next token."""
    n = len(prefixes)
    tgt = torch.tensor([[bos_id, *tokens] for tokens in prefixes])  # (n, t)
    if rules.last_token_only:
        tgt = tgt[:, -1:]  # (n, 1): <bos> at the first step, then the last token
    logits, _, _ = model.decode(
        tgt, memory.expand(n, *memory.shape[1:]), src_mask.expand(n, *src_mask.shape[1:])
    )
    full = logits.double()  # (n, t, V)
    if rules.scores == "positions":
        full = F.log_softmax(full, dim=1)
    row = full[:, rules.position]  # (n, V)
    if rules.scores == "log_softmax":
        row = F.log_softmax(row, dim=-1)
    elif rules.scores == "probs":
        row = F.softmax(row, dim=-1)
    return row.tolist()


@torch.no_grad()
def plain_beam_search(
    model: torch.nn.Module,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_new_tokens: int,
    beam_size: int,
    alpha: float,
    rules: Rules = RIGHT,
) -> tuple[list[int], float]:
    """Beam search for one source ``(1, S)``; ``(tokens, score)`` as the exercise asks."""
    ended = partial(_ended, eos_id=eos_id, rules=rules)
    normalised = partial(_normalised, eos_id=eos_id, alpha=alpha, rules=rules)
    memory, src_mask, _ = model.encode(src)
    beams: list[tuple[list[int], float]] = [([], 0.0)]
    put_aside: list[tuple[list[int], float]] = []  # (rules.aside only)
    width = 1 if rules.greedy else beam_size
    steps = max_new_tokens - rules.one_step_short + rules.one_step_long
    for _ in range(steps):
        candidates = [beam for beam in beams if ended(beam[0]) and rules.keep_finished]
        growing = [beam for beam in beams if not ended(beam[0])]
        if growing:
            rows = _next_token_scores(
                model, [t for t, _ in growing], bos_id, memory, src_mask, rules
            )
            for (tokens, total), values in zip(growing, rows, strict=True):
                candidates += [([*tokens, v], total + s) for v, s in enumerate(values)]
        if not candidates:
            break
        if rules.prune == "raw":
            beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:width]
        else:
            beams = sorted(candidates, key=lambda c: normalised(*c), reverse=True)[:width]
        if rules.refill:  # the ended are set aside as they come; beam_size open ones go on
            beams = []
            for tokens, total in sorted(candidates, key=lambda c: c[1], reverse=True):
                if len(beams) == width:
                    break
                (put_aside if ended(tokens) else beams).append((tokens, total))
            if not beams:
                break
            continue
        if rules.aside:  # the ended leave the beam: the next step fills their places
            put_aside += [beam for beam in beams if ended(beam[0])]
            beams = [beam for beam in beams if not ended(beam[0])]
            if not beams or len(put_aside) >= width:
                break
            continue
        done = [
            eos_id in tokens
            if rules.stop == "contain"
            else tokens[-1] == eos_id
            if rules.stop == "end"
            else ended(tokens)
            for tokens, _ in beams
        ]
        if all(done) or (rules.stop == "best" and done[0]):
            break
    by = (lambda c: c[1]) if rules.choose == "raw" else (lambda c: normalised(*c))
    tokens, total = max(put_aside + beams, key=by)
    score = normalised(tokens, total) if rules.returned == "normalised" else total
    if rules.strip_eos and tokens[-1:] == [eos_id]:
        tokens = tokens[:-1]
    return ([bos_id, *tokens] if rules.with_bos else tokens), score
