"""Looking inside a trained encoder: what each head attends to, and how a word's vector
changes from layer to layer.

Notebook 11.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from attnlib._validate_tensors import require_float_tensor, require_min_ndim
from attnlib.sentence_encoder import SentenceEncoder
from attnlib.similarity import cosine_similarity


def previous_token_share(weights: torch.Tensor) -> torch.Tensor:
    r"""Mean weight a query puts on the token just before it (queries 2…T).

    .. math::

        \operatorname{prev}(A) = \frac{1}{T - 1} \sum_{i=2}^{T} A_{i,\, i-1}

    1 for a head that always looks exactly one token back; about ``1/T`` for a head that
    spreads its weight evenly. Use it on one sentence without padding.

    Shapes:
        weights: ``(..., T, T)`` with ``T ≥ 2``, rows are queries; returns ``(...)``.
    """
    require_float_tensor("weights", weights)
    require_min_ndim("weights", weights, 2, "(..., T, T)")
    if weights.shape[-1] != weights.shape[-2] or weights.shape[-1] < 2:
        raise ValueError(f"weights must be (..., T, T) with T >= 2, got {tuple(weights.shape)}")
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


@dataclass(frozen=True, eq=False)
class HeadSummary:
    """Where each head of an encoder puts its weight, averaged over sentences and queries.

    Shapes:
        previous, first, last: ``(L, H)``; ``first`` is the weight on ``[CLS]`` and
        ``last`` the weight on ``[SEP]``; ``previous`` is :func:`previous_token_share`.
    """

    previous: torch.Tensor
    first: torch.Tensor
    last: torch.Tensor


@torch.no_grad()
def summarize_heads(encoder: SentenceEncoder, sentences: Sequence[str]) -> HeadSummary:
    """:class:`HeadSummary` of ``encoder`` over ``sentences`` (each run alone, unpadded)."""
    if isinstance(sentences, str) or len(sentences) == 0:
        raise ValueError("sentences must be a non-empty sequence of strings")
    previous, first, last = [], [], []
    for sentence in sentences:
        input_ids, token_mask = encoder.tokenize([sentence])
        weights = encoder(input_ids, token_mask).attentions[:, 0]  # (L, H, T, T)
        previous.append(previous_token_share(weights))  # (L, H)
        first.append(weights[..., 0].mean(dim=-1))  # (L, H): mean over queries
        last.append(weights[..., -1].mean(dim=-1))
    return HeadSummary(
        previous=torch.stack(previous).mean(dim=0),
        first=torch.stack(first).mean(dim=0),
        last=torch.stack(last).mean(dim=0),
    )


@torch.no_grad()
def contextual_vectors(encoder: SentenceEncoder, sentence: str, word: str) -> torch.Tensor:
    """The vector of ``word`` in ``sentence`` at every layer, embeddings included.

    A word split into several WordPiece pieces gets the mean of its pieces; the first
    occurrence of the word is used.

    Shapes:
        returns ``(L + 1, C)``: row 0 the embedding layer (no context yet), row ``l`` the
        output of layer ``l``.
    """
    pieces = encoder.tokenizer.tokenize(word)
    tokens = encoder.tokens(sentence)
    if not pieces:
        raise ValueError(f"word {word!r} has no WordPiece pieces")
    for start in range(len(tokens) - len(pieces) + 1):
        if tokens[start : start + len(pieces)] == pieces:
            break
    else:
        raise ValueError(f"{word!r} (pieces {pieces}) is not in the tokens {tokens}")
    input_ids, token_mask = encoder.tokenize([sentence])
    hidden = encoder(input_ids, token_mask).hidden_states[:, 0]  # (L + 1, T, C)
    return hidden[:, start : start + len(pieces)].mean(dim=1)  # (L + 1, C)


def layerwise_cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of two words' vectors at each layer.

    Shapes:
        a, b: ``(L + 1, C)`` from :func:`contextual_vectors`; returns ``(L + 1,)``.
    """
    if a.shape != b.shape or a.dim() != 2:
        raise ValueError(f"a and b must both be (L + 1, C), got {tuple(a.shape)}, {tuple(b.shape)}")
    return cosine_similarity(a, b)
