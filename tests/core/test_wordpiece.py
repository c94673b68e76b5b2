"""The WordPiece tokenizer: hand-worked examples on a tiny vocabulary, then the real one."""

from __future__ import annotations

import importlib.util
import os
import re
import unicodedata
import warnings
from collections.abc import Callable

import pytest
import torch

import attnlib
from attnlib.formats import minilm as minilm_format
from attnlib.formats.wordpiece import DroppedCharactersWarning, WordPieceTokenizer, pre_tokenize

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


# Characters the tokenizer drops, as BERT's does, how the warning names them, the words left.
DROPPED = {
    "NUL, ZWSP, U+FFFD, BEL": (
        "a\x00b\u200bc\ufffdd\x07",
        "U+0000, U+200B ZERO WIDTH SPACE, U+FFFD REPLACEMENT CHARACTER, U+0007",
        ["abcd"],
    ),
    "one character twice": (
        "zero\u200bwidth\u200b",
        "drops: U+200B ZERO WIDTH SPACE. They",
        ["zerowidth"],
    ),
    "soft hyphen": ("soft\u00adhyphen", "U+00AD SOFT HYPHEN", ["softhyphen"]),
    "byte order mark": ("\ufeffcat", "U+FEFF ZERO WIDTH NO-BREAK SPACE", ["cat"]),
    "zero-width joiner": ("a\u200dcat", "U+200D ZERO WIDTH JOINER", ["acat"]),
    "right-to-left override": ("the \u202ecat", "U+202E RIGHT-TO-LEFT OVERRIDE", ["the", "cat"]),
    "private use": ("the \ue000 cat", "drops: U+E000. They", ["the", "cat"]),
    "form feed and DEL": ("a\x0cb\x7f", "U+000C, U+007F", ["ab"]),
    "many": (
        "".join(chr(0xE000 + i) for i in range(10)) + "cat",
        ", ".join(f"U+E00{i}" for i in range(8)) + " and 2 more",
        ["cat"],
    ),
}


def _without_dropped(text: str) -> str:
    """``text`` without control, format or private-use characters (tab and newlines kept)."""
    return "".join(
        c for c in text
        if c in "\t\n\r" or (c != "\ufffd" and unicodedata.category(c) not in ("Cc", "Cf", "Co"))
    )  # fmt: skip


def _one_warning(call: Callable[[], object]) -> tuple[object, warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    assert [w.category for w in caught] == [DroppedCharactersWarning]
    return result, caught[0]


@pytest.mark.parametrize(("text", "named", "words"), DROPPED.values(), ids=list(DROPPED))
def test_dropped_characters_are_named_once_per_call(
    tiny: WordPieceTokenizer, text: str, named: str, words: list[str]
) -> None:
    result, warning = _one_warning(lambda: pre_tokenize(text))
    assert result == words
    message = str(warning.message)
    assert message.startswith(f"text {text!r} has characters that BERT's tokenizer drops: ")
    assert named in message, message
    assert message.endswith(
        "They are dropped here too: the ids are those of the text without them."
    )
    # The pieces and ids are those of the text without them, as before.
    clean = _without_dropped(text)
    for method in (tiny.tokenize, tiny.encode):
        with pytest.warns(DroppedCharactersWarning, match=re.escape(named)):
            got = method(text)
        assert got == method(clean)


@pytest.mark.parametrize(
    "text",
    ["tabs\tand\nnew\r\nlines", "no\u00a0break", "Café naïve", "你好", "ΟΔΟΣ", "", "e\u0301"],
)
def test_texts_with_nothing_dropped_do_not_warn(tiny: WordPieceTokenizer, text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedCharactersWarning)
        pre_tokenize(text)
        tiny.encode(text)
        tiny.encode_batch([text, text])


def test_a_batch_warns_once_naming_every_character(tiny: WordPieceTokenizer) -> None:
    texts = ["the cat", "a\u200bcat", "the\x07 cat\u200b", "a\ufeff"]
    (ids, mask), warning = _one_warning(lambda: tiny.encode_batch(texts))
    assert str(warning.message).startswith(
        "3 of the 4 texts (the first 'a\\u200bcat') have characters that BERT's tokenizer drops: "
        "U+200B ZERO WIDTH SPACE, U+0007, U+FEFF ZERO WIDTH NO-BREAK SPACE. "
    )
    clean = ["the cat", "acat", "the cat", "a"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedCharactersWarning)
        expected_ids, expected_mask = tiny.encode_batch(clean)
    assert torch.equal(ids, expected_ids) and torch.equal(mask, expected_mask)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: pre_tokenize("a\u200bb"),
        lambda t: t.tokenize("a\u200bb"),
        lambda t: t.encode("a\u200bb"),
        lambda t: t.encode_batch(["a\u200bb"]),
    ],
    ids=["pre_tokenize", "tokenize", "encode", "encode_batch"],
)
def test_the_warning_points_at_the_callers_line(
    tiny: WordPieceTokenizer, call: Callable[[WordPieceTokenizer], object]
) -> None:
    _, warning = _one_warning(lambda: call(tiny))
    assert warning.filename == __file__


def test_ids_equal_the_reference_tokenizers_where_characters_are_dropped() -> None:
    # The Rust tokenizer of Hugging Face (the `pretrained` extra) on the model's own
    # tokenizer.json: dropping still gives exactly its ids.
    if importlib.util.find_spec("tokenizers") is None:
        if os.environ.get("ATTNLIB_REQUIRE_REFERENCE") == "1":
            pytest.fail("ATTNLIB_REQUIRE_REFERENCE=1 but tokenizers is missing")
        pytest.skip("tokenizers is not installed: pip install -r requirements.txt")
    from tokenizers import Tokenizer

    folder = minilm_format.minilm_files()
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    reference.no_padding()
    ours = WordPieceTokenizer.from_file(folder / "vocab.txt", max_len=minilm_format.MINILM_MAX_LEN)
    texts = [text for text, _, _ in DROPPED.values()]
    texts += ["Zero\u200bwidth\u200c joiners\u2060 and\u00ad soft\u00adhyphens", "\x85next\x1fline"]
    for text in texts:
        with pytest.warns(DroppedCharactersWarning):
            ids = ours.encode(text)
        assert ids == reference.encode(text).ids, text
