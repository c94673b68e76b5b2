"""The translator wrapper: API, seeding, save and load (notebook 09 checks its accuracy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import attnlib
from attnlib import GPT, GPTConfig, Transformer, TransformerConfig, save_checkpoint
from attnlib.checkpoints import CheckpointError
from attnlib.course import date_tokenizer, date_translator, dates
from attnlib.course.date_tokenizer import DateTokenizer
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


def _notebook_09_loop_source() -> str:
    """The code of notebook 09's training loop (§6), as the learner sees it."""
    path = (
        Path(__file__).resolve().parents[1]
        / "instructors"
        / "notebooks"
        / "09_encoder_decoder.ipynb"
    )
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    loops = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    loops = [s for s in loops if s.startswith("smoothing, peak_lr, warmup, n_steps, batch_size =")]
    assert len(loops) == 1, "notebook 09 should have one training-loop cell"
    return loops[0]


def test_notebook_09s_loop_is_train_date_translator_with_smoothing_to_the_last_bit() -> None:
    # The notebook says its loop, packaged, is train_date_translator(label_smoothing=0.1).
    # Run the notebook's own cell, shortened, beside the packaged recipe on the same seed.
    source = _notebook_09_loop_source()
    first_line, rest = source.split("\n", 1)
    assert first_line.endswith("= 0.1, 6e-3, 60, 600, 64"), first_line
    steps, warmup, batch_size = 12, 4, 8
    shortened = f"smoothing, peak_lr, warmup, n_steps, batch_size = 0.1, 6e-3, {warmup}, "
    shortened += f"{steps}, {batch_size}\n{rest.replace('print(', 'str(')}"
    tok = DateTokenizer()
    config = TransformerConfig(
        src_vocab_size=tok.vocab_size,
        tgt_vocab_size=tok.vocab_size,
        d_model=64,
        num_heads=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        d_ff=256,
        dropout=0.0,
        max_len=32,
        pad_id=tok.pad_id,
    )
    namespace = {
        "torch": torch,
        "attnlib": attnlib,
        "dates": dates,
        "date_tokenizer": date_tokenizer,
        "date_translator": date_translator,
        "tok": tok,
        "config": config,
        "train_dates": dates.split_dates(1000, seed=0)[0],
    }
    exec(compile(shortened, "notebook 09, §6", "exec"), namespace)
    packaged = train_date_translator(
        seed=0, steps=steps, batch_size=batch_size, warmup_steps=warmup, label_smoothing=0.1
    )
    assert packaged.history is not None
    assert namespace["my_losses"] == packaged.history.losses  # exactly, not approximately
    assert namespace["my_lrs"] == packaged.history.learning_rates
    mine = namespace["my_model"].state_dict()
    for name, tensor in packaged.model.state_dict().items():
        assert torch.equal(mine[name], tensor), name
