"""The WordPiece tokenizer: hand-worked examples on a tiny vocabulary, then the real one."""

from __future__ import annotations

import unicodedata

import pytest
import torch

import attnlib
from attnlib.formats import minilm as minilm_format
from attnlib.formats.wordpiece import WordPieceTokenizer, pre_tokenize

TINY_VOCABULARY = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]",
    "un", "##aff", "##able", "##a", "##ff", "a", "token", "##ization", "##s",
    "the", "cat", ",", "!", "'", "t", "don", "你", "好", "cafe", "hello",
]  # fmt: skip


@pytest.fixture
def tiny() -> WordPieceTokenizer:
    return WordPieceTokenizer(TINY_VOCABULARY, max_len=8)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hello, World!", ["hello", ",", "world", "!"]),
        ("Café naïve ÅNGSTRÖM", ["cafe", "naive", "angstrom"]),  # lower-cased, accents gone
        ("ΟΔΟΣ", ["οδοσ"]),  # lower-cased letter by letter: no final sigma (ς)
        ("don't", ["don", "'", "t"]),
        ("你好world", ["你", "好", "world"]),  # every CJK ideograph is a word
        # Kana and hangul are not split per character; accent stripping decomposes
        # (NFD) hangul syllables into their jamo, as the reference tokenizer does.
        ("カタカナ한국어", [unicodedata.normalize("NFD", "カタカナ한국어")]),
        ("tabs\tand\nnew\u00a0lines", ["tabs", "and", "new", "lines"]),
        ("a\x00b\u200bc\ufffdd\x07", ["abcd"]),  # NUL, zero-width space, U+FFFD, BEL dropped
        ("$5+3^2 `x`", ["$", "5", "+", "3", "^", "2", "`", "x", "`"]),  # ASCII symbols split
        ("«quoted»—dash…", ["«", "quoted", "»", "—", "dash", "…"]),
        ("", []),
        ("   ", []),
    ],
)
def test_pre_tokenize(text: str, words: list[str]) -> None:
    assert pre_tokenize(text) == words


def test_pre_tokenize_cased_keeps_case_and_accents() -> None:
    assert pre_tokenize("Café, OK", lowercase=False) == ["Café", ",", "OK"]


@pytest.mark.parametrize(
    ("word", "pieces"),
    [
        ("unaffable", ["un", "##aff", "##able"]),  # longest match first: ##aff, not ##a ##ff
        ("tokenization", ["token", "##ization"]),
        ("tokens", ["token", "##s"]),
        ("a", ["a"]),
        ("xyz", ["[UNK]"]),
        ("tokenx", ["[UNK]"]),  # a word that cannot be covered is [UNK] as a whole
        ("a" * 101, ["[UNK]"]),  # longer than 100 characters
    ],
)
def test_split_word(tiny: WordPieceTokenizer, word: str, pieces: list[str]) -> None:
    assert tiny.split_word(word) == pieces


def test_encode_frames_and_crops(tiny: WordPieceTokenizer) -> None:
    assert tiny.encode("The cat!") == [2, 13, 14, 16, 3]
    long = tiny.encode("the cat " * 10)
    assert len(long) == 8 and long[0] == 2 and long[-1] == 3 and long[1:7] == [13, 14] * 3
    assert tiny.encode("") == [2, 3]


def test_batch_is_padded_with_a_true_means_real_mask(tiny: WordPieceTokenizer) -> None:
    input_ids, attention_mask = tiny.encode_batch(["the cat", "unaffable tokens !"])
    assert input_ids.dtype == torch.long and attention_mask.dtype == torch.bool
    assert input_ids.tolist() == [[2, 13, 14, 3, 0, 0, 0, 0], [2, 4, 5, 6, 10, 12, 16, 3]]
    assert attention_mask.tolist() == [[True] * 4 + [False] * 4, [True] * 8]
    assert tiny.ids_to_pieces(input_ids[0]) == ["[CLS]", "the", "cat", "[SEP]"] + ["[PAD]"] * 4
    assert (tiny.pad_id, tiny.unk_id, tiny.cls_id, tiny.sep_id) == (0, 1, 2, 3)


@pytest.mark.parametrize(
    ("ids", "text"),
    [
        ([2, 13, 14, 16, 3], "the cat !"),  # [CLS] and [SEP] dropped
        ([2, 4, 5, 6, 10, 12, 3, 0, 0], "unaffable tokens"),  # ## pieces joined, [PAD] dropped
        ([5, 13, 1], "##aff the [UNK]"),  # a leading ## piece has nothing to join
        ([], ""),
    ],
)
def test_decode_joins_pieces(tiny: WordPieceTokenizer, ids: list[int], text: str) -> None:
    assert tiny.decode(ids) == tiny.decode(torch.tensor(ids, dtype=torch.long)) == text


def test_bad_input(tiny: WordPieceTokenizer) -> None:
    with pytest.raises(TypeError, match="texts must be a list of str"):
        tiny.encode_batch("the cat")
    with pytest.raises(TypeError, match="text must be a str"):
        tiny.encode(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text must be a str"):
        tiny.tokenize(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"outside \[0, 24\)"):
        tiny.decode([24])
    with pytest.raises(ValueError, match="special tokens"):
        WordPieceTokenizer(["a", "b"])
    with pytest.raises(ValueError, match="max_len must be >= 2"):
        WordPieceTokenizer(TINY_VOCABULARY, max_len=1)


def test_real_vocabulary_on_the_stored_reference_ids() -> None:
    # Ids computed by the reference (Rust) tokenizer, stored with the package; the live
    # comparison over many more strings is in test_minilm_reference.py.
    tokenizer = WordPieceTokenizer.from_file(
        minilm_format.minilm_files() / "vocab.txt", max_len=minilm_format.MINILM_MAX_LEN
    )
    reference = minilm_format.load_minilm_reference()
    assert tokenizer.vocab_size == 30522 and tokenizer.cls_id == 101
    for sentence, ids in zip(reference.sentences, reference.token_ids, strict=True):
        assert tokenizer.encode(sentence) == ids, sentence
    assert max(len(ids) for ids in reference.token_ids) == 256  # the truncated long text


def test_real_vocabulary_examples(minilm: attnlib.SentenceEncoder) -> None:
    assert minilm.tokens("I love bears") == ["[CLS]", "i", "love", "bears", "[SEP]"]
    assert minilm.tokenizer.encode("I love bears") == [101, 1045, 2293, 6468, 102]
    assert minilm.tokenizer.tokenize("tokenization") == ["token", "##ization"]
    assert minilm.tokenizer.decode(minilm.tokenizer.encode("Tokenization, Café!")) == (
        "tokenization , cafe !"
    )
    assert minilm.tokenizer.max_len == 256
