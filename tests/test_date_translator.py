"""The translator wrapper: API, seeding, save and load (notebook 09 checks its accuracy)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from attnlib import GPT, GPTConfig, Transformer, TransformerConfig, save_checkpoint
from attnlib.checkpoints import CheckpointError
from attnlib.course.date_translator import DateTranslator, train_date_translator


@pytest.fixture(scope="module")
def tiny_translator() -> DateTranslator:
    return train_date_translator(seed=0, steps=5, batch_size=8, d_model=32, num_layers=1)


def test_translate_returns_one_string_per_input(tiny_translator: DateTranslator) -> None:
    out = tiny_translator.translate(["21 November 2026", "01.02.1999"])
    assert len(out) == 2 and all(isinstance(s, str) and len(s) <= 11 for s in out)
    assert tiny_translator.translate([]) == []
    with pytest.raises(TypeError, match="list of strings"):
        tiny_translator.translate("21 November 2026")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'#'"):
        tiny_translator.translate(["#21"])


def test_training_is_reproducible(tiny_translator: DateTranslator) -> None:
    again = train_date_translator(seed=0, steps=5, batch_size=8, d_model=32, num_layers=1)
    assert tiny_translator.history is not None and again.history is not None
    assert tiny_translator.history.losses == again.history.losses


def test_accuracy_counts_exact_matches(tiny_translator: DateTranslator) -> None:
    predictions = tiny_translator.translate(["21 November 2026", "01.02.1999"])
    pairs = [("21 November 2026", predictions[0]), ("01.02.1999", "not-a-date")]
    assert tiny_translator.accuracy(pairs) == 0.5


def test_save_and_load_round_trip(tiny_translator: DateTranslator, tmp_path: Path) -> None:
    path = tiny_translator.save(tmp_path / "dates.pt")
    loaded = DateTranslator.load(path)
    texts = ["the 3rd of march, 1950", "SUNDAY, 1 JANUARY 2000"]
    assert loaded.translate(texts) == tiny_translator.translate(texts)
    assert loaded.translate(texts, beam_size=3) == tiny_translator.translate(texts, beam_size=3)


def test_wrong_models_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="attnlib Transformer"):
        DateTranslator(torch.nn.Linear(2, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="vocabulary"):
        DateTranslator(Transformer(TransformerConfig(src_vocab_size=10, tgt_vocab_size=10)))
    path = save_checkpoint(
        GPT(GPTConfig(vocab_size=10, max_len=8, d_model=8, num_heads=2, num_layers=1)),
        tmp_path / "g.pt",
    )
    with pytest.raises(CheckpointError, match="not a Transformer"):
        DateTranslator.load(path)


def test_the_papers_schedule_peaks_at_lr_after_the_warm_up() -> None:
    run = train_date_translator(
        seed=0,
        steps=8,
        batch_size=4,
        d_model=16,
        num_layers=1,
        lr=1e-3,
        warmup_steps=4,
        label_smoothing=0.1,
        schedule="inverse_sqrt",
    )
    assert run.history is not None
    rates = run.history.learning_rates  # step s = index + 1
    assert rates[3] == pytest.approx(1e-3) and max(rates) == rates[3]
    assert rates[0] == pytest.approx(1e-3 / 4) and rates[7] == pytest.approx(1e-3 * 0.5**0.5)
    linear = train_date_translator(seed=0, steps=8, batch_size=4, d_model=16, num_layers=1)
    assert linear.history is not None and linear.history.learning_rates != rates


def test_an_unknown_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="schedule"):
        train_date_translator(steps=1, schedule="cosine")
