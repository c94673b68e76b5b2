"""The date task's character tokenizer and its teacher-forcing batches.

One vocabulary serves the source (a date as a person writes it) and the target (ISO
8601); :func:`make_batch` turns pairs into the encoder input, the decoder input and the
shifted target the loss compares with.

Notebook 09.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnlib._validate import require_int, require_text, require_texts
from attnlib._validate_tensors import require_id_sequence, require_token_ids
from attnlib.course.dates import VOCAB_CHARACTERS
from attnlib.tokenizer import pad_ids


class DateTokenizer:
    """Characters to ids and back, one id per character of :data:`VOCAB_CHARACTERS`.

    Ids 0, 1, 2 are the special tokens ``<pad>``, ``<bos>`` (begin), ``<eos>``
    (end); character ``VOCAB_CHARACTERS[i]`` has id ``i + 3``. The vocabulary
    covers every character of every format and case and of the ISO targets, so
    one tokenizer serves both the source and the target side (the target only
    ever uses the digits and ``-``). It is a :class:`~attnlib.tokenizer.Tokenizer`;
    ``add_bos`` / ``add_eos`` and :meth:`decode_batch` are its extras.

    Args:
        max_len: the longest sequence :meth:`encode` returns, ``<bos>`` and ``<eos>``
            included (longer texts are cropped at the end), or ``None`` for no limit.

    Shapes:
        :meth:`encode_batch` returns ``ids (B, T)`` long, padded on the right with
        :attr:`pad_id`, and ``mask (B, T)`` bool; :meth:`decode_batch` reads ``(B, T)``.
    """

    pad_id = 0
    bos_id = 1
    eos_id = 2
    special_tokens = ("<pad>", "<bos>", "<eos>")

    def __init__(self, max_len: int | None = None) -> None:
        self.tokens: tuple[str, ...] = self.special_tokens + tuple(VOCAB_CHARACTERS)
        self._ids = {token: i for i, token in enumerate(self.tokens)}
        # At least 2, so that <bos> and <eos> always fit.
        self.max_len = None if max_len is None else require_int("max_len", max_len, minimum=2)

    @property
    def vocab_size(self) -> int:
        """Number of ids, the three special tokens included (69)."""
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"DateTokenizer(vocab_size={self.vocab_size}, max_len={self.max_len})"

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """The ids of the characters of ``text``, optionally between ``<bos>`` and ``<eos>``.

        Raises a ``ValueError`` naming the first character that is not in the
        vocabulary and its position.
        """
        require_text("text", text)
        room = None if self.max_len is None else self.max_len - add_bos - add_eos
        ids = []
        for position, character in enumerate(text[:room]):
            try:
                ids.append(self._ids[character])
            except KeyError:
                raise ValueError(
                    f"character {character!r} at position {position} of text {text!r} is not "
                    f"in the vocabulary {VOCAB_CHARACTERS!r}"
                ) from None
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids``: stops at the first ``<eos>``, skips ``<pad>`` and ``<bos>``.

        Shapes:
            ids: ``T`` ints or a ``(T,)`` integer tensor (:meth:`decode_batch` reads
            ``(B, T)``).
        """
        characters = []
        for i in require_id_sequence("ids", ids, self.vocab_size):
            if i == self.eos_id:
                break
            if i not in (self.pad_id, self.bos_id):
                characters.append(self.tokens[i])
        return "".join(characters)

    def encode_batch(
        self, texts: Sequence[str], add_bos: bool = False, add_eos: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode several texts into one batch, padded with :attr:`pad_id` on the right.

        Shapes:
            returns ``ids (B, T)`` long and ``mask (B, T)`` bool, ``True`` = real token
            (``<bos>`` and ``<eos>`` included), ``B = len(texts)``, ``T`` the longest
            encoding.
        """
        texts = require_texts("texts", texts)
        return pad_ids([self.encode(t, add_bos, add_eos) for t in texts], self.pad_id)

    def decode_batch(self, ids: torch.Tensor) -> list[str]:
        """Decode each row of ``ids`` with :meth:`decode` (stop at ``<eos>``, skip pad/bos).

        Shapes:
            ids: ``(B, T)`` integer; returns ``B`` strings.
        """
        require_token_ids("ids", ids, self.vocab_size)
        return [self.decode(row) for row in ids.tolist()]


def make_batch(
    pairs: Sequence[tuple[str, str]], tokenizer: DateTokenizer
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tensors for training with teacher forcing from ``(input text, target)`` pairs.

    * ``src``: the input characters, with no ``<bos>`` or ``<eos>``: every source
      position is a character of the text, so a cross-attention map lines up
      with the text as written. The encoder finds the end from the padding
      (``padding_mask_from_ids(src, tokenizer.pad_id)``).
    * ``tgt_in = <bos> + target``: what the decoder reads.
    * ``tgt_out = target + <eos>``: what it must predict, one step ahead, so
      ``tgt_out[:, t] == tgt_in[:, t + 1]`` wherever both are real tokens.

    All three are padded with ``tokenizer.pad_id`` on the right; ignore it in the
    loss with ``cross_entropy(..., ignore_index=tokenizer.pad_id)``. For ISO
    targets ``T = TARGET_LENGTH + 1 = 11`` and there is no target padding.

    Shapes:
        returns ``src (B, S)``, ``tgt_in (B, T)``, ``tgt_out (B, T)``, all long,
        with ``B = len(pairs)``, ``S`` the longest input and ``T`` the longest
        target plus one.
    """
    if not isinstance(tokenizer, DateTokenizer):
        raise TypeError(f"tokenizer must be a DateTokenizer, got {type(tokenizer).__name__}")
    if not isinstance(pairs, list | tuple):
        raise TypeError(f"pairs must be a list of (input text, target) pairs, got {pairs!r:.60}")
    if not pairs:
        raise ValueError("pairs must be a non-empty list of (input text, target) pairs")
    for pair in pairs:
        if not isinstance(pair, tuple | list):
            raise TypeError(f"each of pairs must be an (input text, target) pair, got {pair!r}")
        if len(pair) != 2:
            raise ValueError(f"each of pairs must be an (input text, target) pair, got {pair!r}")
    sources = [source for source, _ in pairs]
    targets = [target for _, target in pairs]
    src, _ = tokenizer.encode_batch(sources)  # (B, S)
    tgt_in, _ = tokenizer.encode_batch(targets, add_bos=True)  # (B, T)
    tgt_out, _ = tokenizer.encode_batch(targets, add_eos=True)  # (B, T)
    return src, tgt_in, tgt_out
