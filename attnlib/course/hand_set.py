"""A translator whose next-token probabilities are set by hand: notebook 09's beam-search toy.

It ignores its source. After ``<bos>`` it writes ``A`` with 0.6 or ``B`` with 0.4; after
``A``, ``<eos>`` with 0.5; after ``B``, another ``B`` with 0.9 until there are four, then
``<eos>`` with 0.9. Greedy decoding writes ``A <eos>``, the larger sum of log-probabilities;
a beam of two finds ``B B B B <eos>``, the larger mean, which wins under a length penalty.
Like a trained :class:`attnlib.Transformer` it has ``encode`` and ``decode``, all that
:func:`attnlib.beam_search` calls.

Notebook 09.
"""

from __future__ import annotations

import torch

from attnlib.transformer import TransformerConfig

PAD, BOS, EOS, A, B = range(5)


def next_token_probs(prefix: list[int]) -> dict[int, float]:
    """The toy's p(next token | prefix) for a prefix that starts with ``<bos>``."""
    if prefix[-1] == BOS:
        return {A: 0.6, B: 0.4}
    if prefix[-1] == A:
        return {EOS: 0.5, A: 0.3, B: 0.2}
    return {EOS: 0.9, B: 0.1} if len(prefix) == 5 else {B: 0.9, EOS: 0.1}  # after B


class HandSetTranslator(torch.nn.Module):
    """Stands in for a trained Transformer: :func:`next_token_probs`, whatever the source."""

    config = TransformerConfig(src_vocab_size=5, tgt_vocab_size=5, max_len=8, pad_id=PAD)

    def encode(
        self, src: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, None]:
        """A dummy memory and a source mask that allows everything (True = may attend)."""
        ones = torch.ones(src.shape[0], 1, 1, src.shape[1], dtype=torch.bool)  # (B, 1, 1, S)
        return torch.zeros(src.shape[0], 1, 1, dtype=torch.float64), ones, None

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, None, None]:
        """Log-probabilities as logits, ``(N, T, V)``: only the last position is filled in."""
        probs = torch.full((tgt.shape[0], tgt.shape[1], 5), 1e-12, dtype=torch.float64)
        for row, prefix in enumerate(tgt.tolist()):
            for token, p in next_token_probs(prefix).items():
                probs[row, -1, token] = p
        return probs.log(), None, None
