"""BERT's WordPiece tokenizer: text to sub-word ids, in plain Python over a ``vocab.txt``.

Two stages, as the uncased BERT models were trained with:

1. **Pre-tokenization** splits text into words: drop control characters, put spaces
   around every CJK ideograph, lower-case, strip accents (``é`` → ``e``), split on
   whitespace, and make every punctuation character a word of its own. BERT drops control,
   zero-width and private-use characters silently; here each call that drops some warns.
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
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch

from attnlib._validate import require_int, require_text, require_texts
from attnlib._validate_tensors import require_id_sequence
from attnlib.tokenizer import pad_ids

UNKNOWN, CLASSIFY, SEPARATOR, PADDING = "[UNK]", "[CLS]", "[SEP]", "[PAD]"
_MAX_WORD_CHARS = 100  # longer "words" (URLs, base64…) become [UNK] outright
_MAX_LISTED = 8  # a warning names at most this many of the characters dropped


class DroppedCharactersWarning(UserWarning):
    """A text had characters that BERT drops: control, zero-width, private-use, U+FFFD."""


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


def _describe(chars: Iterable[str]) -> str:
    """``"U+200B ZERO WIDTH SPACE, U+0007"``: each distinct character once, in order."""
    distinct = list(dict.fromkeys(chars))
    named = [f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in distinct[:_MAX_LISTED]]
    more = len(distinct) - _MAX_LISTED
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def _warn_dropped(subject: str, dropped: Sequence[str], stacklevel: int = 3) -> None:
    # stacklevel: the line that called the public function, not the function itself.
    warnings.warn(
        f"{subject} characters that BERT's tokenizer drops: {_describe(dropped)}. They are "
        "dropped here too: the ids are those of the text without them.",
        DroppedCharactersWarning,
        stacklevel=stacklevel,
    )


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:60]) + "…"  # repr escapes U+200B


def _pre_tokenize(text: str, lowercase: bool) -> tuple[list[str], list[str]]:
    """The words of ``text`` (see :func:`pre_tokenize`) and the characters dropped from it."""
    cleaned, dropped = [], []
    for char in text:
        if char in ("\x00", "\ufffd") or _is_control(char):
            dropped.append(char)
        elif _is_whitespace(char):
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
    return words, dropped


def pre_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split ``text`` into words and punctuation, normalised as uncased BERT expects.

    ``pre_tokenize("Héllo, wörld!")`` is ``["hello", ",", "world", "!"]``.

    Warns:
        DroppedCharactersWarning: once, naming the characters dropped, if there are any.
    """
    words, dropped = _pre_tokenize(text, lowercase)
    if dropped:
        _warn_dropped(f"text {_shown(text)} has", dropped)
    return words


class WordPieceTokenizer:
    """Text to WordPiece ids and back, for uncased BERT vocabularies.

    A :class:`~attnlib.tokenizer.Tokenizer`; :meth:`tokenize` (text to pieces),
    :meth:`split_word` and :meth:`ids_to_pieces` are its extras.

    Args:
        vocabulary: the pieces, in id order (line ``i`` of ``vocab.txt`` has id ``i``);
            it must contain ``[UNK]``, ``[CLS]``, ``[SEP]`` and ``[PAD]``.
        max_len: longest sequence :meth:`encode` returns, ``[CLS]`` and ``[SEP]``
            included; longer texts are cropped at the end.
        lowercase: lower-case and strip accents (the uncased models need it).

    Shapes:
        :meth:`encode` returns ``T`` ints; :meth:`decode` takes ``T`` ints or ``(T,)``;
        :meth:`encode_batch` returns ``ids (B, T)`` long and ``mask (B, T)`` bool.

    Warns:
        DroppedCharactersWarning: :meth:`tokenize`, :meth:`encode` and :meth:`encode_batch`,
            once per call that drops characters (see :func:`pre_tokenize`).
    """

    def __init__(
        self, vocabulary: Sequence[str], max_len: int = 512, lowercase: bool = True
    ) -> None:
        self.pieces: list[str] = list(vocabulary)
        self.ids = {piece: i for i, piece in enumerate(self.pieces)}
        missing = [t for t in (UNKNOWN, CLASSIFY, SEPARATOR, PADDING) if t not in self.ids]
        if missing:
            raise ValueError(f"vocabulary lacks the special tokens {missing}")
        # At least 2, so that [CLS] and [SEP] always fit.
        self.max_len = require_int("max_len", max_len, minimum=2)
        self.lowercase = lowercase
        self.unk_id = self.ids[UNKNOWN]
        self.cls_id = self.ids[CLASSIFY]
        self.sep_id = self.ids[SEPARATOR]
        self.pad_id = self.ids[PADDING]

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **kwargs: object) -> WordPieceTokenizer:
        """Read a ``vocab.txt`` (one piece per line, line number = id)."""
        text = Path(path).read_text(encoding="utf-8")
        return cls(text.splitlines(), **kwargs)  # type: ignore[arg-type]

    @property
    def vocab_size(self) -> int:
        """Number of pieces (30,522 in the standard uncased BERT vocabulary)."""
        return len(self.pieces)

    def __repr__(self) -> str:
        return f"WordPieceTokenizer(vocab_size={self.vocab_size}, max_len={self.max_len})"

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

    def _split(self, text: str) -> tuple[list[str], list[str]]:
        """The pieces of ``text`` and the characters dropped from it (no warning)."""
        words, dropped = _pre_tokenize(text, self.lowercase)
        return [piece for word in words for piece in self.split_word(word)], dropped

    def _framed(self, pieces: list[str]) -> list[int]:
        return [self.cls_id, *(self.ids[p] for p in pieces[: self.max_len - 2]), self.sep_id]

    def _pieces(self, text: str) -> list[str]:
        require_text("text", text)
        pieces, dropped = self._split(text)
        if dropped:  # stacklevel 4: past this method and tokenize or encode
            _warn_dropped(f"text {_shown(text)} has", dropped, stacklevel=4)
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece pieces of ``text``, without ``[CLS]``/``[SEP]`` and not cropped."""
        return self._pieces(text)

    def encode(self, text: str) -> list[int]:
        """``[CLS] pieces… [SEP]`` as ids, cropped to :attr:`max_len` ids in all."""
        return self._framed(self._pieces(text))

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The text of ``ids``, as the tokenizer normalised it.

        ``[CLS]``, ``[SEP]`` and ``[PAD]`` are dropped, a ``##`` piece is joined to the
        piece before it, and the other pieces are separated by one space:
        ``decode(encode("Don't!"))`` is ``"don ' t !"``. So ``decode(encode(text)) ==
        text`` for a lower-case text of words in the vocabulary separated by spaces.

        Shapes:
            ids: ``T`` ints or a ``(T,)`` integer tensor.
        """
        words: list[str] = []
        for i in require_id_sequence("ids", ids, self.vocab_size):
            piece = self.pieces[i]
            if i in (self.cls_id, self.sep_id, self.pad_id):
                continue
            if piece.startswith("##") and words:
                words[-1] += piece[2:]
            else:
                words.append(piece)
        return " ".join(words)

    def encode_batch(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode several texts into one batch, padded on the right with ``[PAD]``.

        Shapes:
            returns ``ids (B, T)`` long and ``mask (B, T)`` bool, ``True`` = a real token
            (may be attended to), ``B = len(texts)``, ``T`` the longest encoding.
        """
        texts = require_texts("texts", texts)
        rows, affected, dropped = [], [], []
        for text in texts:
            pieces, chars = self._split(text)
            rows.append(self._framed(pieces))
            if chars:
                affected.append(text)
                dropped += chars
        if dropped:
            counted = f"{len(affected)} of the {len(texts)} texts"
            _warn_dropped(f"{counted} (the first {_shown(affected[0])}) have", dropped)
        return pad_ids(rows, self.pad_id)

    def ids_to_pieces(self, ids: Sequence[int] | torch.Tensor) -> list[str]:
        """The piece of each id (``[CLS]``, ``##`` continuations and ``[PAD]`` included).

        Shapes:
            ids: ``T`` ints or a ``(T,)`` integer tensor; returns ``T`` strings.
        """
        return [self.pieces[i] for i in require_id_sequence("ids", ids, self.vocab_size)]
