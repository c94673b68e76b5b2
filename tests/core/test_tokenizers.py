"""The three tokenizers share one interface, attnlib.tokenizer.Tokenizer, and agree on it.

Each test runs on the date translator's DateTokenizer (notebook 09), the char GPT's
CharTokenizer (notebook 10) and BERT's WordPieceTokenizer (notebook 11, on a tiny
vocabulary), with texts each of them can spell.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch

from attnlib.course.char_data import CharTokenizer
from attnlib.course.date_tokenizer import DateTokenizer
from attnlib.formats.wordpiece import DroppedCharactersWarning, WordPieceTokenizer
from attnlib.tokenizer import Tokenizer, pad_ids

TINY_VOCABULARY = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]",
    "un", "##aff", "##able", "token", "##s", "the", "cat", "a", "hello", ",", "!",
]  # fmt: skip
LONG_TEXT = "the cat " * 10


@dataclass(frozen=True)
class Case:
    """How to build one tokenizer, and texts it spells back exactly."""

    make: Callable[..., Tokenizer]
    texts: tuple[str, ...]
    default_max_len: int | None


CASES = {
    "date": Case(DateTokenizer, ("21 Nov 2026", "2026-11-21", "Saturday, November 21, 2026"), None),
    "char": Case(
        lambda **kwargs: CharTokenizer("the cat sat on a mat, unaffable tokens!", **kwargs),
        ("the cat", "a mat, on", "unaffable tokens!"),
        None,
    ),
    "wordpiece": Case(
        lambda **kwargs: WordPieceTokenizer(TINY_VOCABULARY, **kwargs),
        ("the cat", "unaffable tokens", "hello , a cat !"),
        512,
    ),
}


@pytest.fixture(params=list(CASES))
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


def test_each_is_a_tokenizer(case: Case) -> None:
    tokenizer = case.make()
    assert isinstance(tokenizer, Tokenizer)
    assert isinstance(tokenizer.vocab_size, int) and 0 <= tokenizer.pad_id < tokenizer.vocab_size
    assert tokenizer.max_len == case.default_max_len
    assert not isinstance("not a tokenizer", Tokenizer)


def test_round_trip(case: Case) -> None:
    tokenizer = case.make()
    for text in case.texts:
        ids = tokenizer.encode(text)
        assert isinstance(ids, list) and all(type(i) is int for i in ids)
        assert all(0 <= i < tokenizer.vocab_size for i in ids)
        assert tokenizer.decode(ids) == text
        assert tokenizer.decode(tuple(ids)) == text
        assert tokenizer.decode(torch.tensor(ids)) == text


def test_encode_batch_pads_on_the_right_with_a_true_means_real_mask(case: Case) -> None:
    tokenizer = case.make()
    texts = list(case.texts)
    ids, mask = tokenizer.encode_batch(texts)
    rows = [tokenizer.encode(text) for text in texts]
    width = max(len(row) for row in rows)
    assert ids.shape == mask.shape == (len(texts), width)
    assert ids.dtype == torch.long and mask.dtype == torch.bool
    for b, (text, row) in enumerate(zip(texts, rows, strict=True)):
        assert ids[b, : len(row)].tolist() == row  # a row does not depend on the batch
        assert (ids[b, len(row) :] == tokenizer.pad_id).all()
        assert mask[b].tolist() == [True] * len(row) + [False] * (width - len(row))
        assert tokenizer.decode(ids[b][mask[b]]) == text
    assert torch.equal(tokenizer.encode_batch(tuple(texts))[0], ids)


def test_empty_batch_gives_empty_tensors(case: Case) -> None:
    ids, mask = case.make().encode_batch([])
    assert ids.shape == mask.shape == (0, 0)
    assert ids.dtype == torch.long and mask.dtype == torch.bool


def test_a_batch_holding_an_empty_text(case: Case) -> None:
    tokenizer = case.make()
    text = case.texts[0]
    ids, mask = tokenizer.encode_batch(["", text])
    framing = tokenizer.encode("")  # [] for the characters, [CLS] [SEP] for WordPiece
    assert mask[0].sum() == len(framing) and ids[0, : len(framing)].tolist() == framing
    assert tokenizer.decode(ids[0][mask[0]]) == ""
    assert tokenizer.decode(ids[1][mask[1]]) == text


def test_text_longer_than_max_len_is_cropped_at_the_end(case: Case) -> None:
    full = case.make()
    short = case.make(max_len=5)
    assert short.max_len == 5
    ids = short.encode(LONG_TEXT)
    assert len(ids) == 5 < len(full.encode(LONG_TEXT))
    assert full.decode(full.encode(LONG_TEXT)).startswith(short.decode(ids))
    batch, mask = short.encode_batch([LONG_TEXT, "a"])
    assert batch.shape == (2, 5) and mask[0].all() and batch[0].tolist() == ids


def test_wordpiece_drops_characters_alike_in_a_batch_and_alone() -> None:
    # WordPiece drops control and zero-width characters, as BERT does, and says so once per
    # call; a batch row is still exactly what encode gives for its text, cropped alike.
    tokenizer = CASES["wordpiece"].make(max_len=6)
    texts = ["the\u200b cat", "un\x07affable tokens !", LONG_TEXT + "\ufeff", "a cat"]
    with pytest.warns(DroppedCharactersWarning, match="3 of the 4 texts"):
        ids, mask = tokenizer.encode_batch(texts)
    for b, text in enumerate(texts[:3]):
        with pytest.warns(DroppedCharactersWarning, match=r"^text '"):
            row = tokenizer.encode(text)
        assert ids[b][mask[b]].tolist() == row
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedCharactersWarning)  # nothing dropped: no warning
        assert ids[3][mask[3]].tolist() == tokenizer.encode(texts[3])


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda t: t.encode_batch("the cat"), TypeError),  # one text, not a batch
        (lambda t: t.encode_batch(["the cat", 3]), TypeError),
        (lambda t: t.encode_batch(None), TypeError),
        (lambda t: t.encode(["the cat"]), TypeError),
        (lambda t: t.decode("the cat"), TypeError),
        (lambda t: t.decode([1.0]), TypeError),
        (lambda t: t.decode(torch.ones(2)), TypeError),  # float ids
        (lambda t: t.decode(torch.ones(2, 2, dtype=torch.long)), ValueError),  # a batch
        (lambda t: t.decode([t.vocab_size]), ValueError),
        (lambda t: t.decode([-1]), ValueError),
    ],
)
def test_the_same_mistake_raises_the_same_exception(
    case: Case, call: Callable[[Tokenizer], object], error: type[Exception]
) -> None:
    tokenizer = case.make()
    with pytest.raises(error):
        call(tokenizer)


def test_a_bad_max_len(case: Case) -> None:
    with pytest.raises(ValueError, match="max_len must be >= "):
        case.make(max_len=0)
    with pytest.raises(TypeError, match="max_len must be an int"):
        case.make(max_len=5.0)


def test_pad_ids_hand_worked() -> None:
    ids, mask = pad_ids([[5, 6, 7], [8], []], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0], [0, 0, 0]]
    assert mask.tolist() == [[True] * 3, [True, False, False], [False] * 3]
