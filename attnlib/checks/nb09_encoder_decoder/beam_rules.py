"""Beam search for one source as plainly as possible, and the ways learners get it wrong.

:func:`plain_beam_search` follows the exercise's rules (those of ``attnlib.beam_search``
with ``penalty="gnmt"``); each field of :class:`Rules` changes one of them the way a learner
does by mistake. The check's table of mistakes (:data:`MISTAKES`) is these variants.

Notebook 09.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from attnlib.checks._exercise import Mistake


@dataclass(frozen=True)
class Rules:
    """The choices a beam search makes; the defaults are the exercise's."""

    penalty: str = "gnmt"  # "gnmt", "power" (|y|^α), "none", "precedence" ((5+|y|)/6^α), "times"
    length: str = "tokens"  # |y|: "tokens" (with <eos>), "no_eos", "with_bos"
    keep_finished: bool = True  # an ended hypothesis stays among the candidates
    extend_finished: bool = False  # an ended hypothesis is extended like any other
    prune: str = "raw"  # "raw" sum, or "normalised" score
    stop: str = "all"  # stop when "all" kept hypotheses ended, or the "best" one
    position: int = -1  # the decoder position whose logits give the next token
    scores: str = "log_softmax"  # what is added up: "log_softmax", "logits", "probs"
    returned: str = "normalised"  # the score returned: "normalised" or "raw"
    one_step_short: bool = False  # max_len - 1 steps
    with_bos: bool = False  # the returned tokens start with <bos>
    greedy: bool = False  # one hypothesis, whatever beam_size
    aside: bool = False  # ended hypotheses leave the beam for a list of their own


RIGHT = Rules()


@torch.no_grad()
def plain_beam_search(
    model: torch.nn.Module,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_len: int,
    beam_size: int,
    alpha: float,
    rules: Rules = RIGHT,
) -> tuple[list[int], float]:
    """Beam search for one source ``(1, S)``; ``(tokens, score)`` as the exercise asks."""

    def ended(tokens: list[int]) -> bool:
        return bool(tokens) and tokens[-1] == eos_id and not rules.extend_finished

    def length(tokens: list[int]) -> int:
        if rules.length == "no_eos" and tokens and tokens[-1] == eos_id:
            return len(tokens) - 1
        return len(tokens) + (rules.length == "with_bos")

    def normalised(tokens: list[int], total: float) -> float:
        n = length(tokens)
        if rules.penalty == "none":
            return total
        if rules.penalty == "power":
            return total / max(n, 1) ** alpha
        if rules.penalty == "precedence":
            return total / ((5 + n) / 6**alpha)
        if rules.penalty == "times":
            return total * ((5 + n) / 6) ** alpha
        return total / ((5 + n) / 6) ** alpha

    memory, src_mask, _ = model.encode(src)
    beams: list[tuple[list[int], float]] = [([], 0.0)]
    put_aside: list[tuple[list[int], float]] = []  # (rules.aside only)
    width = 1 if rules.greedy else beam_size
    for _ in range(max_len - 1 if rules.one_step_short else max_len):
        candidates = [beam for beam in beams if ended(beam[0]) and rules.keep_finished]
        growing = [beam for beam in beams if not ended(beam[0])]
        if growing:  # all of the same length: one call of the decoder for all
            n = len(growing)
            tgt = torch.tensor([[bos_id, *tokens] for tokens, _ in growing])  # (n, t)
            logits, _, _ = model.decode(
                tgt, memory.expand(n, *memory.shape[1:]), src_mask.expand(n, *src_mask.shape[1:])
            )
            row = logits[:, rules.position].double()  # (n, V)
            if rules.scores == "log_softmax":
                row = F.log_softmax(row, dim=-1)
            elif rules.scores == "probs":
                row = F.softmax(row, dim=-1)
            for (tokens, total), values in zip(growing, row.tolist(), strict=True):
                candidates += [([*tokens, v], total + s) for v, s in enumerate(values)]
        if not candidates:
            break
        if rules.prune == "raw":
            beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:width]
        else:
            beams = sorted(candidates, key=lambda c: normalised(*c), reverse=True)[:width]
        if rules.aside:  # the ended leave the beam: the next step fills their places
            put_aside += [beam for beam in beams if ended(beam[0])]
            beams = [beam for beam in beams if not ended(beam[0])]
            if not beams or len(put_aside) >= width:
                break
            continue
        done = [ended(tokens) for tokens, _ in beams]
        if all(done) or (rules.stop == "best" and done[0]):
            break
    tokens, total = max(put_aside + beams, key=lambda c: normalised(*c))
    score = normalised(tokens, total) if rules.returned == "normalised" else total
    return ([bos_id, *tokens] if rules.with_bos else tokens), score


def _mistake(name: str, why: str, **changes: object) -> Mistake:
    return Mistake(name, why, partial(plain_beam_search, rules=Rules(**changes)))  # type: ignore[arg-type]


MISTAKES = (
    _mistake(
        "pruned the beam by the length-normalised score instead of the raw sum",
        "normalising during the search lets long unfinished hypotheses push out a short "
        "finished one that the final comparison would have chosen: the penalty only judges the "
        "finished race, the pruning must compare sums.",
        prune="normalised",
    ),
    _mistake(
        "chose the winner by the raw sum of log-probabilities, with no length penalty",
        "a sum of log-probabilities only falls as a hypothesis grows, so without the penalty "
        "the shortest hypothesis tends to win whatever α is.",
        penalty="none",
    ),
    _mistake(
        "divided by |y|^α (attnlib's default penalty) instead of GNMT's ((5 + |y|) / 6)^α",
        "the exercise asks for GNMT's penalty: the two agree only for α = 0.",
        penalty="power",
    ),
    _mistake(
        "raised only the 6 to the power α, not the whole fraction (5 + |y|) / 6",
        "the penalty is the fraction raised to α; with the power on 6 alone every score changes "
        "and longer outputs are favoured far too much.",
        penalty="precedence",
    ),
    _mistake(
        "multiplied the sum by the length penalty instead of dividing it",
        "the sums are negative: multiplying by a penalty that grows with |y| makes long "
        "hypotheses worse, the opposite of what the penalty is for.",
        penalty="times",
    ),
    _mistake(
        "left the <eos> out of |y|",
        "|y| counts every token the model chose, the <eos> included: without it finished "
        "and unfinished hypotheses of the same length are penalised differently.",
        length="no_eos",
    ),
    _mistake(
        "counted the <bos> in |y|",
        "the <bos> is given, not chosen, and has no log-probability in the sum: |y| counts "
        "the tokens after it.",
        length="with_bos",
    ),
    _mistake(
        "dropped the hypotheses that ended with <eos> instead of keeping them as candidates",
        "a finished hypothesis must stay in the race, unchanged: dropped, a short output such "
        "as A <eos> can never win, even with α = 0.",
        keep_finished=False,
    ),
    _mistake(
        "kept extending hypotheses after their <eos>",
        "after <eos> a hypothesis is finished: extending it adds log-probabilities of tokens "
        "that are never written and puts tokens after the <eos>.",
        extend_finished=True,
    ),
    _mistake(
        "stopped as soon as the best kept hypothesis ended, not when all of them had",
        "an unfinished hypothesis can still overtake a finished one once the length penalty "
        "judges them: the search ends when every kept hypothesis has ended (or at max_len).",
        stop="best",
    ),
    _mistake(
        "read the next-token logits at the first position instead of the last",
        "the decoder returns logits for every position of its input; the distribution of the "
        "next token is the one at the last position, after the whole prefix.",
        position=0,
    ),
    _mistake(
        "added up raw logits instead of log-probabilities",
        "logits are log-probabilities plus a constant that changes from step to step and from "
        "hypothesis to hypothesis: only after log_softmax are the sums comparable.",
        scores="logits",
    ),
    _mistake(
        "added up probabilities instead of log-probabilities",
        "the probability of a sequence is the product of its tokens' probabilities, so it is "
        "the logarithms that add up.",
        scores="probs",
    ),
    _mistake(
        "returned the raw sum as the score instead of the normalised score",
        "the winner is chosen by its normalised score, and that is the score to return.",
        returned="raw",
    ),
    _mistake(
        "ran one step fewer than max_len",
        "an output may be max_len tokens long, the <eos> included: the last step is needed.",
        one_step_short=True,
    ),
    _mistake(
        "returned the tokens with the <bos> in front",
        "the output starts after the <bos>: it is given to the decoder, not written by it.",
        with_bos=True,
    ),
    _mistake(
        "moved the hypotheses that ended out of the beam, so that they no longer take a place",
        "in this search a finished hypothesis keeps its place among the beam_size survivors "
        "as long as its sum is among the best; set aside, it lets other hypotheses take its "
        "place and the search explores, and returns, something else.",
        aside=True,
    ),
    _mistake(
        "kept one hypothesis at each step, whatever beam_size",
        "that is greedy decoding: beam_size hypotheses must survive each step.",
        greedy=True,
    ),
)
