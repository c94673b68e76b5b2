"""The interface every attnlib tokenizer has, and the padding they share.

A tokenizer turns text into integer ids and back. The course has three: characters for
the date translator (:class:`~attnlib.course.date_tokenizer.DateTokenizer`), characters
for the char GPT (:class:`~attnlib.course.char_data.CharTokenizer`) and BERT's sub-word
pieces (:class:`~attnlib.formats.wordpiece.WordPieceTokenizer`). All three satisfy
:class:`Tokenizer`, so code written against one runs with the others:

.. code-block:: python

    ids = tokenizer.encode("some text")            # list[int]
    text = tokenizer.decode(ids)                   # str
    ids, mask = tokenizer.encode_batch(["a", "bc"])  # (B, T) long, (B, T) bool

A batch is padded on the right with ``pad_id``; the mask is ``True`` for a real token,
the polarity of every attnlib mask.

Notebooks 09, 10 and 11.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class Tokenizer(Protocol):
    """What a tokenizer offers: ``encode``, ``decode``, ``encode_batch`` and three sizes.

    * ``vocab_size``: the number of ids (every id is in ``[0, vocab_size)``);
    * ``pad_id``: the id that fills a batch's rows after their last real token;
    * ``max_len``: the longest id sequence it returns (longer texts are cropped at the
      end), or ``None`` for no limit.

    ``isinstance(obj, Tokenizer)`` checks that these members exist, not what they do;
    ``tests/core/test_tokenizers.py`` checks that the three tokenizers agree on what they do.

    Shapes:
        ``encode`` returns ``T`` ints; ``decode`` takes ``T`` ints or a ``(T,)`` integer
        tensor; ``encode_batch`` returns ``ids (B, T)`` long and ``mask (B, T)`` bool,
        ``B = len(texts)`` and ``T`` the longest encoding (``(0, 0)`` for no texts).
    """

    @property
    def vocab_size(self) -> int: ...

    @property
    def pad_id(self) -> int: ...

    @property
    def max_len(self) -> int | None: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str: ...

    def encode_batch(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]: ...


def pad_ids(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack id lists of different lengths into one batch, padded on the right.

    ``pad_ids([[5, 6, 7], [8]], pad_id=0)`` gives ids ``[[5, 6, 7], [8, 0, 0]]`` and mask
    ``[[True, True, True], [True, False, False]]``. The mask, not the id, tells padding
    apart: a tokenizer may use a real token's id as ``pad_id``.

    Shapes:
        rows: ``B`` lists of ids; returns ``ids (B, T)`` long and ``mask (B, T)`` bool,
        ``True`` = real token, ``T`` the longest row (``(0, 0)`` when ``B = 0``).
    """
    width = max((len(row) for row in rows), default=0)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)  # (B, T)
    mask = torch.zeros((len(rows), width), dtype=torch.bool)  # (B, T)
    for b, row in enumerate(rows):
        ids[b, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[b, : len(row)] = True
    return ids, mask
