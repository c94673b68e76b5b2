"""The mistakes learners make on notebook 09's Exercise 3 (beam search with GNMT's penalty).

Each is :func:`~.beam_rules.plain_beam_search` with the fields of :class:`~.beam_rules.Rules`
that the mistake changes; a mistake made several usual ways has one entry per way, all with the
same name.

Notebook 09.
"""

from __future__ import annotations

from functools import partial

from attnlib.checks._exercise import Mistake
from attnlib.checks.nb09_encoder_decoder.beam_rules import Rules, plain_beam_search


def _mistake(name: str, why: str, **changes: object) -> Mistake:
    return Mistake(name, why, partial(plain_beam_search, rules=Rules(**changes)))  # type: ignore[arg-type]


# Three mistakes made several usual ways (each a table entry of the same name).
EXTENDED = (
    "kept extending hypotheses after their <eos>",
    "after <eos> a hypothesis is finished: extending it adds log-probabilities of tokens that "
    "are never written and puts tokens after the <eos>.",
)
ASIDE = (
    "moved the hypotheses that ended out of the beam, so that they no longer take a place",
    "in this search a finished hypothesis keeps its place among the beam_size survivors as "
    "long as its sum is among the best; set aside, it lets other hypotheses take its place and "
    "the search explores, and returns, something else.",
)

PRECEDENCE = (
    "raised only the 6 to the power α, not the whole fraction (5 + |y|) / 6",
    "the penalty is the fraction raised to α; with the power on 6 alone every score changes "
    "and longer outputs are favoured far too much.",
)

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
        "chose the winner by its raw sum, and only then divided its score by the penalty",
        "the length penalty is there to judge the finished hypotheses against each other: the "
        "winner is the one whose normalised score is best, which need not be the one with the "
        "best sum (the sums favour short outputs).",
        choose="raw",
    ),
    _mistake(
        "divided by |y|^α (attnlib's default penalty) instead of GNMT's ((5 + |y|) / 6)^α",
        "the exercise asks for GNMT's penalty: the two agree only for α = 0.",
        penalty="power",
    ),
    _mistake(*PRECEDENCE, penalty="precedence"),
    _mistake(*PRECEDENCE, penalty="divided twice"),  # sum / (5 + |y|) / 6**α
    _mistake(
        "raised only 5 + |y| to the power α and divided by 6 after, not the whole fraction",
        "the penalty is ((5 + |y|) / 6)^α, the fraction raised to α: with the 6 left outside "
        "the power, every score is divided by a penalty 6^(1 − α) times too small (at α = 0.6, "
        "about half), and the scores no longer compare with attnlib's.",
        penalty="power over 6",
    ),
    _mistake(
        "multiplied the fraction (5 + |y|) / 6 by α instead of raising it to the power α",
        "α is an exponent: ((5 + |y|) / 6)^α grows slower than the fraction itself for α < 1. "
        "Times α, the penalty grows in a straight line with |y| and favours long outputs "
        "another way.",
        penalty="times alpha",
    ),
    _mistake(
        "divided only |y| by 6 (5 + |y| / 6), not the sum 5 + |y|",
        "the penalty's fraction is (5 + |y|) / 6, the whole sum over 6: a division binds "
        "tighter than the addition, so without brackets only |y| is divided.",
        penalty="length over 6",
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
        *EXTENDED,
        extend_finished=True,
    ),
    _mistake(
        *EXTENDED,
        extend_finished=True,
        stop="contain",
    ),
    _mistake(
        *EXTENDED,
        extend_finished=True,
        stop="end",
    ),
    _mistake(
        "stopped as soon as the best kept hypothesis ended, not when all of them had",
        "an unfinished hypothesis can still overtake a finished one once the length penalty "
        "judges them: the search ends when every kept hypothesis has ended (or after "
        "max_new_tokens steps).",
        stop="best",
    ),
    _mistake(
        "read the next-token logits at the first position instead of the last",
        "the decoder returns logits for every position of its input; the distribution of the "
        "next token is the one at the last position, after the whole prefix.",
        position=0,
    ),
    _mistake(
        "gave the decoder only the last token instead of <bos> and the whole prefix",
        "the decoder remembers nothing from one call to the next: it must read <bos> and every "
        "token written so far, and its last position gives the next token's distribution. "
        "Given one token, it predicts as if the output had just begun with it.",
        last_token_only=True,
    ),
    _mistake(
        "took the log_softmax along the positions instead of along the vocabulary",
        "each position's logits are scores of the V tokens: the log_softmax that turns them "
        "into log p(v | prefix) runs along the vocabulary, the last dimension.",
        scores="positions",
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
        "ran one step fewer than max_new_tokens",
        "an output may be max_new_tokens tokens long, the <eos> included: the last step is needed.",
        one_step_short=True,
    ),
    _mistake(
        "ran one step more than max_new_tokens",
        "max_new_tokens bounds the output: at most max_new_tokens tokens after the <bos>, "
        "the <eos> included, so the search stops after max_new_tokens steps.",
        one_step_long=True,
    ),
    _mistake(
        "left the <eos> off the returned tokens",
        "the output ends with its <eos> when the model wrote one: it is a token the model "
        "chose, whose log-probability is in the score.",
        strip_eos=True,
    ),
    _mistake(
        "returned the tokens with the <bos> in front",
        "the output starts after the <bos>: it is given to the decoder, not written by it.",
        with_bos=True,
    ),
    _mistake(
        *ASIDE,
        aside=True,
    ),
    _mistake(
        *ASIDE,
        refill=True,
    ),
    _mistake(
        "kept one hypothesis at each step, whatever beam_size",
        "that is greedy decoding: beam_size hypotheses must survive each step.",
        greedy=True,
    ),
)
