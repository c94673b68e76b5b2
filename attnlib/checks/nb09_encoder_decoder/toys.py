"""Small models whose next-token probabilities the beam-search check knows: notebook 09.

A :class:`TableModel` is the course's hand-set translator (:mod:`attnlib.course.hand_set`,
whose ``encode`` it keeps) with another rule: it has what a beam search calls, and answers
with next-token probabilities given by a function of the prefix (``<bos>`` first), at every
position as a causal decoder does. Its logits are log-probabilities plus a different constant
at each position, so an answer that adds up logits instead of log-probabilities goes wrong on
it. The tokens no rule names get tiny, distinct probabilities: no tie between candidates can
make two right answers disagree.

Notebook 09.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch

from attnlib.course import hand_set
from attnlib.transformer import Transformer, TransformerConfig

Rule = Callable[[list[int]], dict[int, float]]
PAD, BOS, EOS, A, B, C = range(6)


class TableModel(hand_set.HandSetTranslator):
    """A translator whose ``p(next | prefix)`` is ``rule(prefix)``, whatever the source: the
    course's hand-set translator (its ``encode``) with another rule and every position's
    logits."""

    def __init__(self, rule: Rule, vocab_size: int, name: str) -> None:
        super().__init__()
        self.rule, self.name = rule, name
        self.config = TransformerConfig(
            src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, max_len=16, pad_id=PAD
        )

    def __repr__(self) -> str:
        return self.name

    def _log_probs(self, prefix: list[int]) -> torch.Tensor:
        vocab = self.config.tgt_vocab_size
        probs = torch.tensor([1e-6 * (1 + k / 7) for k in range(vocab)], dtype=torch.float64)
        for token, p in self.rule(prefix).items():
            probs[token] = p
        return (probs / probs.sum()).log()

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, None, None]:
        """Logits ``(N, T, V)``: row t holds log p(next | tgt[:t + 1]) plus a constant."""
        rows = []
        for prefix in tgt.tolist():
            rows.append(
                torch.stack(
                    [self._log_probs(prefix[: t + 1]) + 0.7 * t for t in range(len(prefix))]
                )
            )
        return torch.stack(rows), None, None  # (N, T, V)


def _pruning_trap(prefix: list[int]) -> dict[int, float]:
    """<eos> at once has the best sum of a short output; A's children overtake it only when
    scores are normalised during the search, and then end badly."""
    body = prefix[1:]
    if not body:
        return {EOS: 0.368, A: 0.6, B: 0.02, C: 0.012}
    if body == [A]:
        return {B: 0.55, C: 0.45}
    return {EOS: 0.22, A: 0.27, B: 0.25, C: 0.26}


def _late_bloomer(prefix: list[int]) -> dict[int, float]:
    """The likeliest first token leads nowhere; the second leads to a sure, long output, and
    a short output ends first with the best sum, so stopping early or dropping it matters."""
    body = prefix[1:]
    if not body:
        return {A: 0.5, B: 0.3, EOS: 0.2}
    if body[0] == A:
        return {EOS: 0.2, A: 0.3, C: 0.5} if len(body) < 4 else {EOS: 0.4, C: 0.6}
    if len(body) < 4:
        return {B: 0.95, EOS: 0.05}
    return {EOS: 0.97, C: 0.03}


@cache
def toy(name: str) -> TableModel:
    # The hand-set toy is notebook 09's own (A <eos> has the larger sum, B B B B <eos> the
    # larger mean; after an <eos> it goes on as after a B, which a right answer never asks).
    rules = {
        "hand-set": (hand_set.next_token_probs, 5),
        "trap": (_pruning_trap, 6),
        "late": (_late_bloomer, 6),
    }
    rule, vocab = rules[name]
    return TableModel(rule, vocab, f"the {name} toy")


@cache
def random_transformer(seed: int) -> Transformer:
    """An untrained float64 Transformer with large weights: confident, varied outputs that end
    at all sorts of lengths (11 target tokens, pad 0, <bos> 1, <eos> 2)."""
    generator = torch.Generator().manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=9,
        tgt_vocab_size=11,
        d_model=8,
        num_heads=2,
        num_encoder_layers=1,
        num_decoder_layers=1,
        d_ff=16,
        dropout=0.0,
        max_len=12,
        pad_id=0,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = Transformer(config).double().eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=torch.float64))
            parameter.mul_(0.7)
    return model
