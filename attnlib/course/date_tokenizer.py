"""The date task's character tokenizer and its teacher-forcing batches.

One vocabulary serves the source (a date as a person writes it) and the target (ISO
8601); :func:`make_batch` turns pairs into the encoder input, the decoder input and the
shifted target the loss compares with.

Notebook 09.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnlib._validate import require_token_ids
from attnlib.course.dates import VOCAB_CHARACTERS


class CharTokenizer:
    """Characters to ids and back, one id per character of :data:`VOCAB_CHARACTERS`.

    Ids 0, 1, 2 are the special tokens ``<pad>``, ``<bos>`` (begin), ``<eos>``
    (end); character ``VOCAB_CHARACTERS[i]`` has id ``i + 3``. The vocabulary
    covers every character of every format and case and of the ISO targets, so
    one tokenizer serves both the source and the target side (the target only
    ever uses the digits and ``-``).

    Shapes:
        :meth:`encode_batch` returns ``(B, T_max)`` long, padded on the right with
        :attr:`pad_id`; :meth:`decode_batch` reads ``(B, T)``.
    """

    pad_id = 0
    bos_id = 1
    eos_id = 2
    special_tokens = ("<pad>", "<bos>", "<eos>")

    def __init__(self) -> None:
        self.tokens: tuple[str, ...] = self.special_tokens + tuple(VOCAB_CHARACTERS)
        self._ids = {token: i for i, token in enumerate(self.tokens)}

    @property
    def vocab_size(self) -> int:
        """Number of ids, the three special tokens included (69)."""
        return len(self.tokens)

    def __len__(self) -> int:
        return self.vocab_size

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """The ids of the characters of ``text``, optionally between ``<bos>`` and ``<eos>``.

        Raises a ``ValueError`` naming the first character that is not in the
        vocabulary and its position.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        ids = [self.bos_id] if add_bos else []
        for position, character in enumerate(text):
            try:
                ids.append(self._ids[character])
            except KeyError:
                raise ValueError(
                    f"character {character!r} at position {position} of text {text!r} is not "
                    f"in the vocabulary {VOCAB_CHARACTERS!r}"
                ) from None
        if add_eos:
            ids.append(self.eos_id)
        return ids

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids``: stops at the first ``<eos>``, skips ``<pad>`` and ``<bos>``.

        Shapes:
            ids: a list of ints or a ``(T,)`` integer tensor.
        """
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1 or ids.is_floating_point():
                raise ValueError(
                    f"ids must be a 1-D integer tensor (T,), got dtype {ids.dtype} and shape "
                    f"{tuple(ids.shape)}; use decode_batch for (B, T)"
                )
            ids = ids.tolist()
        characters = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.vocab_size:
                raise ValueError(f"ids must be ints in [0, {self.vocab_size}), got {i!r}")
            if i == self.eos_id:
                break
            if i not in (self.pad_id, self.bos_id):
                characters.append(self.tokens[i])
        return "".join(characters)

    def encode_batch(
        self, texts: Sequence[str], add_bos: bool = False, add_eos: bool = False
    ) -> torch.Tensor:
        """Encode several texts into one tensor, padded with :attr:`pad_id` on the right.

        Shapes:
            returns ``(B, T_max)`` long, ``B = len(texts)``, ``T_max`` the longest
            encoding (``<bos>`` and ``<eos>`` included).
        """
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise TypeError(f"texts must be a sequence of str, got {type(texts).__name__}")
        if not texts:
            raise ValueError("texts must not be empty")
        rows = [self.encode(text, add_bos=add_bos, add_eos=add_eos) for text in texts]
        width = max(len(row) for row in rows)
        padded = [row + [self.pad_id] * (width - len(row)) for row in rows]
        return torch.tensor(padded, dtype=torch.long).reshape(len(rows), width)  # (B, T_max)

    def decode_batch(self, ids: torch.Tensor) -> list[str]:
        """Decode each row of ``ids`` with :meth:`decode` (stop at ``<eos>``, skip pad/bos).

        Shapes:
            ids: ``(B, T)`` integer; returns ``B`` strings.
        """
        require_token_ids("ids", ids)
        return [self.decode(row) for row in ids.tolist()]


def make_batch(
    pairs: Sequence[tuple[str, str]], tokenizer: CharTokenizer
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
    if not isinstance(tokenizer, CharTokenizer):
        raise TypeError(f"tokenizer must be a CharTokenizer, got {type(tokenizer).__name__}")
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or not pairs:
        raise ValueError("pairs must be a non-empty sequence of (input text, target) pairs")
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"each of pairs must be an (input text, target) pair, got {pair!r}")
    sources = [source for source, _ in pairs]
    targets = [target for _, target in pairs]
    src = tokenizer.encode_batch(sources)  # (B, S)
    tgt_in = tokenizer.encode_batch(targets, add_bos=True)  # (B, T)
    tgt_out = tokenizer.encode_batch(targets, add_eos=True)  # (B, T)
    return src, tgt_in, tgt_out
