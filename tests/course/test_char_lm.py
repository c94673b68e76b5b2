from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from attnlib import GPTConfig
from attnlib.course import char_data
from attnlib.course.char_data import CharTokenizer, load_course_text, random_windows
from attnlib.course.char_gpt import train_char_gpt
from attnlib.formats.safetensors_file import ChecksumMismatchError


def test_course_text_is_shipped() -> None:
    text = load_course_text()
    assert len(text) > 50_000 and "attention" in text


def test_a_windows_checkout_of_the_course_text_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git on Windows may check text files out with \r\n line endings: the same text.
    text = load_course_text()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "course_text.txt").write_bytes(text.replace("\n", "\r\n").encode())
    monkeypatch.setattr(char_data, "files", lambda _package: tmp_path)
    assert load_course_text() == text


@pytest.mark.parametrize(
    "change",
    [lambda text: text.replace("attention", "Attention", 1), lambda text: text + "\n", str.strip],
    ids=["one letter", "one more newline", "stripped"],
)
def test_a_changed_course_text_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[str], str]
) -> None:
    (tmp_path / "data").mkdir()
    changed = change(load_course_text())
    (tmp_path / "data" / "course_text.txt").write_text(changed, encoding="utf-8")
    monkeypatch.setattr(char_data, "files", lambda _package: tmp_path)
    with pytest.raises(
        ChecksumMismatchError,
        match=r"course_text\.txt has SHA-256 [0-9a-f]{64}, expected 62d19.* restore it from git",
    ):
        load_course_text()


def test_tokenizer_ids_round_trip_and_errors() -> None:
    tokenizer = CharTokenizer("hello world")
    assert tokenizer.chars == sorted(set("hello world")) and tokenizer.vocab_size == 8
    ids = tokenizer.encode("world hello")
    assert ids == [7, 5, 6, 4, 1, 0, 3, 2, 4, 4, 5]  # sorted: " " d e h l o r w
    assert tokenizer.decode(ids) == tokenizer.decode(torch.tensor(ids)) == "world hello"
    assert tokenizer.pad_id == 0 and tokenizer.max_len is None
    with pytest.raises(ValueError, match="'z' at position 1 is not in the vocabulary"):
        tokenizer.encode("hz")
    with pytest.raises(ValueError, match="must not be empty"):
        CharTokenizer("")
    with pytest.raises(TypeError, match="text must be a str"):
        CharTokenizer(["a"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_len must be >= 1"):
        CharTokenizer("ab", max_len=0)


def test_ids_of_the_course_text_are_unchanged() -> None:
    # Notebook 10's model and outputs depend on these ids: one per character, sorted.
    text = load_course_text()
    tokenizer = CharTokenizer(text)
    assert tokenizer.chars == sorted(set(text))
    assert tokenizer.encode(text[:200]) == [tokenizer.chars.index(ch) for ch in text[:200]]


def test_random_windows_are_slices_of_the_data() -> None:
    data = torch.arange(100)
    windows = random_windows(data, 10, 5, torch.Generator().manual_seed(0))
    assert windows.shape == (5, 10)
    torch.testing.assert_close(windows[:, 1:] - windows[:, :-1], torch.ones(5, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="longer than length=100"):
        random_windows(data, 100, 1, torch.Generator())


def test_training_is_seeded_and_lowers_the_loss() -> None:
    text = "abcabcabcabc " * 40
    config = GPTConfig(vocab_size=4, max_len=16, d_model=16, num_heads=2, num_layers=1, dropout=0.0)
    model, vocabulary, history = train_char_gpt(text, config, steps=60, batch_size=8, lr=1e-2)
    again = train_char_gpt(text, config, steps=60, batch_size=8, lr=1e-2)[2]
    assert history.losses == again.losses
    assert sum(history.losses[-5:]) / 5 < 0.5 * history.losses[0]
    prompt = torch.tensor(vocabulary.encode("abc"))[None]  # (1, T)
    completion = vocabulary.decode(model.generate(prompt, 6, temperature=0.0)[0])
    assert completion.startswith("abcabc")
    with pytest.raises(ValueError, match="must equal the number of distinct"):
        train_char_gpt(text, GPTConfig(vocab_size=5, max_len=8), steps=1)
