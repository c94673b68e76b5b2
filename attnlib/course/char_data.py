"""Character-level language modelling data: the course's own prose as a small, free corpus.

``data/course_text.txt`` holds the markdown cells of notebooks 01–07 (about 99,000
characters), text this project wrote and may use freely, fixed in the package so
that a trained model's samples are the same on every machine.

Notebook 10.
"""

from __future__ import annotations

from importlib.resources import files

import torch


def load_course_text() -> str:
    """The course's prose corpus, as one string."""
    return files("attnlib").joinpath("data/course_text.txt").read_text(encoding="utf-8")


class CharVocabulary:
    """One id per distinct character of a text, in sorted order.

    Shapes:
        ``encode`` returns ``(len(text),)`` long; ``decode`` takes any 1-D ids.
    """

    def __init__(self, text: str) -> None:
        if not text:
            raise ValueError("text must not be empty")
        self.chars = sorted(set(text))
        self._ids = {ch: i for i, ch in enumerate(self.chars)}

    @property
    def size(self) -> int:
        """Number of distinct characters."""
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """Character ids of ``text``; ``ValueError`` naming an unknown character."""
        try:
            return torch.tensor([self._ids[ch] for ch in text], dtype=torch.long)
        except KeyError as error:
            raise ValueError(f"character {error.args[0]!r} is not in the vocabulary") from None

    def decode(self, ids: torch.Tensor | list[int]) -> str:
        """The text of character ids."""
        return "".join(self.chars[i] for i in torch.as_tensor(ids).tolist())


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
