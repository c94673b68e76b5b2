"""Character-level language modelling data: the course's prose and its character tokenizer.

``data/course_text.txt`` holds the markdown cells of notebooks 01–07 (about 99,000
characters), text this project wrote and may use freely, fixed in the package so
that a trained model's samples are the same on every machine.

Notebook 10.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import as_file, files

import torch

from attnlib._validate import require_int, require_text, require_texts
from attnlib._validate_tensors import require_id_sequence
from attnlib.formats.safetensors_file import verify_sha256
from attnlib.tokenizer import pad_ids

# Notebook 10's vocabulary, model and stored outputs depend on every character of the
# corpus, so a changed file must not pass unnoticed. Hashed as text: a Windows checkout may
# have given it \r\n line endings, which read_text turns back into \n.
COURSE_TEXT_SHA256 = "62d1944349618b3add8550ca560055ef6b32b6ab781b24b4a3c0765bced7bba1"


def load_course_text() -> str:
    """The course's prose corpus, as one string.

    Raises:
        ChecksumMismatchError: ``data/course_text.txt`` is not the file
            :data:`COURSE_TEXT_SHA256` records; the message names it.
    """
    with as_file(files("attnlib").joinpath("data/course_text.txt")) as path:
        remedy = "reinstall attnlib or restore it from git"
        verify_sha256(path, COURSE_TEXT_SHA256, remedy=remedy, text=True)
        return path.read_text(encoding="utf-8")


class CharTokenizer:
    """One id per distinct character of a text, in sorted order; no special tokens.

    ``CharTokenizer("hello world").chars`` is ``[" ", "d", "e", "h", "l", "o", "r", "w"]``:
    ``" "`` is id 0 and ``"w"`` id 7. It is a :class:`~attnlib.tokenizer.Tokenizer`.
    The char GPT trains on windows of equal length and never pads, so :attr:`pad_id` is
    0, the first character's id; only the mask of :meth:`encode_batch` tells padding
    from that character.

    Args:
        text: the text whose characters make the vocabulary (not empty).
        max_len: the longest sequence :meth:`encode` returns (longer texts are cropped
            at the end), or ``None`` for no limit.

    Shapes:
        :meth:`encode` returns ``T`` ints; :meth:`decode` takes ``T`` ints or ``(T,)``;
        :meth:`encode_batch` returns ``ids (B, T)`` long and ``mask (B, T)`` bool.
    """

    pad_id = 0

    def __init__(self, text: str, max_len: int | None = None) -> None:
        if not require_text("text", text):
            raise ValueError("text must not be empty: it defines the vocabulary")
        self.chars = sorted(set(text))
        self._ids = {ch: i for i, ch in enumerate(self.chars)}
        self.max_len = None if max_len is None else require_int("max_len", max_len, minimum=1)

    @property
    def vocab_size(self) -> int:
        """Number of distinct characters."""
        return len(self.chars)

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size}, max_len={self.max_len})"

    def encode(self, text: str) -> list[int]:
        """Character ids of ``text``; ``ValueError`` naming an unknown character."""
        require_text("text", text)
        ids = []
        for position, ch in enumerate(text[: self.max_len]):
            try:
                ids.append(self._ids[ch])
            except KeyError:
                raise ValueError(
                    f"character {ch!r} at position {position} is not in the vocabulary"
                ) from None
        return ids

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of character ids.

        Shapes:
            ids: ``T`` ints or a ``(T,)`` integer tensor.
        """
        return "".join(self.chars[i] for i in require_id_sequence("ids", ids, self.vocab_size))

    def encode_batch(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode several texts into one batch, padded on the right with :attr:`pad_id`.

        Shapes:
            returns ``ids (B, T)`` long and ``mask (B, T)`` bool, ``True`` = real token,
            ``B = len(texts)``, ``T`` the longest encoding.
        """
        return pad_ids([self.encode(text) for text in require_texts("texts", texts)], self.pad_id)


def random_windows(
    data: torch.Tensor, length: int, batch_size: int, generator: torch.Generator
) -> torch.Tensor:
    """``batch_size`` windows of ``length`` consecutive ids from random places in ``data``.

    Shapes:
        data: ``(N,)`` with ``N > length``; returns ``(batch_size, length)``.
    """
    if data.dim() != 1 or len(data) <= length:
        raise ValueError(
            f"data must be 1-D and longer than length={length}, got shape {tuple(data.shape)}"
        )
    starts = torch.randint(len(data) - length, (batch_size,), generator=generator)  # (B,)
    offsets = torch.arange(length)  # (L,)
    return data[starts[:, None] + offsets]  # (B, L)
