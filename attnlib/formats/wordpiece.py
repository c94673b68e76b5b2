"""BERT's WordPiece tokenizer: text to sub-word ids, in plain Python over a ``vocab.txt``.

Two stages, as the uncased BERT models were trained with:

1. **Pre-tokenization** splits text into words: drop control characters, put spaces
   around every CJK ideograph, lower-case, strip accents (``é`` → ``e``), split on
   whitespace, and make every punctuation character a word of its own.
2. **WordPiece** splits each word greedily into the longest piece in the vocabulary,
   then the longest continuation piece (spelled with a ``##`` prefix), and so on:
   ``"tokenization"`` → ``["token", "##ization"]``. A word that cannot be covered
   becomes ``[UNK]``.

A sentence is then framed as ``[CLS] pieces… [SEP]``; ``[CLS]`` is id 101 and ``[SEP]``
102 in the standard BERT vocabulary.

Notebook 11.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import torch

from attnlib._validate import require_positive_int

UNKNOWN, CLASSIFY, SEPARATOR, PADDING = "[UNK]", "[CLS]", "[SEP]", "[PAD]"
_MAX_WORD_CHARS = 100  # longer "words" (URLs, base64…) become [UNK] outright

# CJK ideograph blocks: each such character is a word of its own. (Hiragana, katakana
# and hangul are not in these blocks and are treated like any other letters.) Extension E
# is taken from U+2B920, not U+2B820, because the reference tokenizer does so.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    # Control, format and private-use characters are dropped. Tab, newline and carriage
    # return count as whitespace instead. Unassigned code points (category Cn) are kept,
    # as the reference tokenizer keeps them: they end up inside an [UNK] word.
    return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf", "Co")


def _is_punctuation(char: str) -> bool:
    # Every non-alphanumeric printable ASCII character counts ("$", "+", "^", "`" are
    # symbols in Unicode, but BERT splits them off too), plus Unicode punctuation.
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(char for char in decomposed if unicodedata.category(char) != "Mn")


def pre_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split ``text`` into words and punctuation, normalised as uncased BERT expects.

    ``pre_tokenize("Héllo, wörld!")`` is ``["hello", ",", "world", "!"]``.
    """
    cleaned = []
    for char in text:
        if char in ("\x00", "\ufffd") or _is_control(char):
            continue
        if _is_whitespace(char):
            cleaned.append(" ")
        elif _is_cjk(char):
            cleaned.append(f" {char} ")
        else:
            cleaned.append(char)
    words = []
    for word in "".join(cleaned).split():
        if lowercase:
            # Character by character, as the reference tokenizer does: str.lower() on
            # the whole word would turn a word-final Σ into ς, a different piece.
            word = _strip_accents("".join(char.lower() for char in word))
        piece = ""
        for char in word:
            if _is_punctuation(char):
                if piece:
                    words.append(piece)
                words.append(char)
                piece = ""
            else:
                piece += char
        if piece:
            words.append(piece)
    return words


class WordPieceTokenizer:
    """Text to WordPiece ids and back, for uncased BERT vocabularies.

    Args:
        vocabulary: the pieces, in id order (line ``i`` of ``vocab.txt`` has id ``i``);
            it must contain ``[UNK]``, ``[CLS]``, ``[SEP]`` and ``[PAD]``.
        max_length: longest sequence :meth:`encode` returns, ``[CLS]`` and ``[SEP]``
            included; longer texts are truncated at the end.
        lowercase: lower-case and strip accents (the uncased models need it).
    """

    def __init__(
        self, vocabulary: Sequence[str], max_length: int = 512, lowercase: bool = True
    ) -> None:
        self.pieces: list[str] = list(vocabulary)
        self.ids = {piece: i for i, piece in enumerate(self.pieces)}
        missing = [t for t in (UNKNOWN, CLASSIFY, SEPARATOR, PADDING) if t not in self.ids]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {missing}")
        self.max_length = require_positive_int("max_length", max_length)
        if max_length < 2:
            raise ValueError(f"max_length must leave room for [CLS] and [SEP], got {max_length}")
        self.lowercase = lowercase
        self.unknown_id = self.ids[UNKNOWN]
        self.classify_id = self.ids[CLASSIFY]
        self.separator_id = self.ids[SEPARATOR]
        self.padding_id = self.ids[PADDING]

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **kwargs: object) -> WordPieceTokenizer:
        """Read a ``vocab.txt`` (one piece per line, line number = id)."""
        text = Path(path).read_text(encoding="utf-8")
        return cls(text.splitlines(), **kwargs)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return len(self.pieces)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer({len(self)} pieces, max_length={self.max_length})"

    def split_word(self, word: str) -> list[str]:
        """Greedy longest-match-first WordPiece split of one pre-tokenized word.

        ``split_word("unaffable")`` might give ``["una", "##ffa", "##ble"]``; a word that
        cannot be covered by the vocabulary gives ``["[UNK]"]``.
        """
        if len(word) > _MAX_WORD_CHARS:
            return [UNKNOWN]
        pieces = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.ids:
                    pieces.append(candidate)
                    start = end
                    break
            else:
                return [UNKNOWN]
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece pieces of ``text``, without ``[CLS]``/``[SEP]`` and not truncated."""
        return [
            piece for word in pre_tokenize(text, self.lowercase) for piece in self.split_word(word)
        ]

    def encode(self, text: str) -> list[int]:
        """``[CLS] pieces… [SEP]`` as ids, truncated to :attr:`max_length` ids in all."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        pieces = self.tokenize(text)[: self.max_length - 2]
        return [self.classify_id, *(self.ids[p] for p in pieces), self.separator_id]

    def __call__(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode and pad a batch.

        Shapes:
            returns ``input_ids (N, T)`` long, padded with ``[PAD]``, and
            ``attention_mask (N, T)`` bool, ``True`` = a real token (may be attended to),
            where ``T`` is the longest encoded text.
        """
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings; wrap a single text in a list")
        return self.pad([self.encode(text) for text in texts])

    def pad(self, encoded: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Pad already encoded texts (from :meth:`encode`) into one batch.

        Shapes:
            returns ``input_ids (N, T)`` long and ``attention_mask (N, T)`` bool, ``True`` =
            a real token, where ``T`` is the longest of ``encoded``.
        """
        if len(encoded) == 0:
            raise ValueError("texts must contain at least one text")
        length = max(len(ids) for ids in encoded)
        input_ids = torch.full((len(encoded), length), self.padding_id, dtype=torch.long)
        attention_mask = torch.zeros((len(encoded), length), dtype=torch.bool)
        for row, ids in enumerate(encoded):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            attention_mask[row, : len(ids)] = True
        return input_ids, attention_mask

    def decode_ids(self, ids: Sequence[int] | torch.Tensor) -> list[str]:
        """The piece of each id (``[CLS]``, ``##`` continuations and ``[PAD]`` included)."""
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        return [self.pieces[i] for i in ids]
