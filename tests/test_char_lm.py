from __future__ import annotations

import pytest
import torch

from attnlib import GPTConfig
from attnlib.course.char_data import CharVocabulary, load_course_text, random_windows
from attnlib.course.char_gpt import train_char_gpt


def test_course_text_is_shipped() -> None:
    text = load_course_text()
    assert len(text) > 50_000 and "attention" in text


def test_vocabulary_round_trip_and_errors() -> None:
    vocabulary = CharVocabulary("hello world")
    assert vocabulary.chars == sorted(set("hello world")) and vocabulary.size == 8
    ids = vocabulary.encode("world hello")
    assert ids.dtype == torch.long and vocabulary.decode(ids) == "world hello"
    with pytest.raises(ValueError, match="'z' is not in the vocabulary"):
        vocabulary.encode("z")
    with pytest.raises(ValueError, match="must not be empty"):
        CharVocabulary("")


def test_random_windows_are_slices_of_the_data() -> None:
    data = torch.arange(100)
    windows = random_windows(data, 10, 5, torch.Generator().manual_seed(0))
    assert windows.shape == (5, 10)
    torch.testing.assert_close(windows[:, 1:] - windows[:, :-1], torch.ones(5, 9, dtype=torch.long))
    with pytest.raises(ValueError, match="longer than length=100"):
        random_windows(data, 100, 1, torch.Generator())


def test_training_is_seeded_and_lowers_the_loss() -> None:
    text = "abcabcabcabc " * 40
    config = GPTConfig(
        vocab_size=4, block_size=16, d_model=16, num_heads=2, num_layers=1, dropout=0.0
    )
    model, vocabulary, history = train_char_gpt(text, config, steps=60, batch_size=8, lr=1e-2)
    again = train_char_gpt(text, config, steps=60, batch_size=8, lr=1e-2)[2]
    assert history.losses == again.losses
    assert sum(history.losses[-5:]) / 5 < 0.5 * history.losses[0]
    prompt = vocabulary.encode("abc")[None]
    completion = vocabulary.decode(model.generate(prompt, 6, temperature=0.0)[0])
    assert completion.startswith("abcabc")
    with pytest.raises(ValueError, match="must equal the number of distinct"):
        train_char_gpt(text, GPTConfig(vocab_size=5, block_size=8), steps=1)
