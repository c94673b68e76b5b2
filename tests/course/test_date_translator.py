"""The translator wrapper: API, seeding, save and load (notebook 09 checks its accuracy)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import reference_translator
import torch

import attnlib
from attnlib import GPT, GPTConfig, Transformer, TransformerConfig, save_checkpoint
from attnlib.checkpoints import CheckpointError
from attnlib.course import date_tokenizer, date_translator, dates
from attnlib.course.date_tokenizer import DateTokenizer
from attnlib.course.date_translator import DateTranslator, train_date_translator
from attnlib.formats.safetensors_file import ChecksumMismatchError, file_sha256


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
        Path(__file__).resolve().parents[2]
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


# The stored reference translator is checked against the digests date_translator records;
# tests/support/reference_translator.py records them (--rehash) and re-saves it (--resave).
PACKAGE = Path(attnlib.__file__).parent
STORED = [date_translator.REFERENCE_WEIGHTS, date_translator.REFERENCE_HISTORY]


def test_the_recorded_digests_are_those_of_the_stored_files() -> None:
    assert sorted(date_translator.REFERENCE_SHA256) == sorted(STORED)
    for name, digest in date_translator.REFERENCE_SHA256.items():
        text = name == date_translator.REFERENCE_HISTORY  # as the loader hashes it
        assert file_sha256(PACKAGE / name, text=text) == digest, (
            f"{name} changed: record its digest with `python tests/support/reference_translator.py "
            "--rehash` (or restore it)"
        )
    assert reference_translator.recorded_digests() == date_translator.REFERENCE_SHA256


def _stored_copy(tmp_path: Path) -> Path:
    """A folder laid out as attnlib is, holding copies of the stored files."""
    (tmp_path / "data").mkdir(parents=True)
    for name in STORED:
        shutil.copyfile(PACKAGE / name, tmp_path / name)
    return tmp_path


def _flip_a_byte(path: Path) -> None:
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0x01
    path.write_bytes(bytes(content))


@pytest.mark.parametrize("name", STORED)
def test_a_changed_stored_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    root = _stored_copy(tmp_path)
    _flip_a_byte(root / name)
    monkeypatch.setattr(date_translator, "files", lambda _package: root)
    message = (
        rf"{re.escape(name)} has SHA-256 [0-9a-f]{{64}}, expected "
        rf"{date_translator.REFERENCE_SHA256[name]}: .* restore the file from git; if it was "
        r"re-saved on purpose, record its digest with "
        r"`python tests/support/reference_translator\.py --rehash`"
    )
    with pytest.raises(ChecksumMismatchError, match=message):
        date_translator.load_reference_translator()


def test_a_windows_checkout_of_the_history_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git on Windows may check text files out with \r\n line endings; the bytes differ,
    # the text does not.
    root = _stored_copy(tmp_path)
    history = root / date_translator.REFERENCE_HISTORY
    history.write_bytes(history.read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.setattr(date_translator, "files", lambda _package: root)
    translator = date_translator.load_reference_translator()
    record = json.loads((PACKAGE / date_translator.REFERENCE_HISTORY).read_text("utf-8"))
    assert translator.history is not None and translator.history.losses == record["losses"]


def _module_copy(tmp_path: Path) -> Path:
    module = tmp_path / "date_translator.py"
    shutil.copyfile(reference_translator.MODULE_FILE, module)
    return module


def test_rehash_records_the_new_digests_and_changes_nothing_else(tmp_path: Path) -> None:
    module, root = _module_copy(tmp_path), _stored_copy(tmp_path / "attnlib")
    before = module.read_text(encoding="utf-8")
    _flip_a_byte(root / date_translator.REFERENCE_WEIGHTS)
    digests = reference_translator.rehash(module, root)
    assert digests == {
        name: file_sha256(root / name, text=name == date_translator.REFERENCE_HISTORY)
        for name in STORED
    }
    assert reference_translator.recorded_digests(module) == digests
    after = module.read_text(encoding="utf-8")
    old = date_translator.REFERENCE_SHA256[date_translator.REFERENCE_WEIGHTS]
    assert after == before.replace(old, digests[date_translator.REFERENCE_WEIGHTS])
    assert reference_translator.rehash(module, root) == digests  # idempotent


def test_rehash_needs_one_entry_per_file(tmp_path: Path) -> None:
    module, root = _module_copy(tmp_path), _stored_copy(tmp_path / "attnlib")
    text = module.read_text(encoding="utf-8")
    module.write_text(text.replace("REFERENCE_HISTORY: ", "HISTORY: "), encoding="utf-8")
    with pytest.raises(ValueError, match="records no REFERENCE_SHA256 digest for"):
        reference_translator.recorded_digests(module)
    with pytest.raises(ValueError, match="has 0 REFERENCE_SHA256 entries for data/date_transl"):
        reference_translator.rehash(module, root)


def _stored_under_old_names(translator: DateTranslator, root: Path, module: Path) -> None:
    """``translator`` stored as the reference, each name prefixed ``old.``, digest recorded."""
    weights = translator.save(root / date_translator.REFERENCE_WEIGHTS)
    payload = torch.load(weights, weights_only=True)
    payload["state_dict"] = {f"old.{k}": v for k, v in payload["state_dict"].items()}
    torch.save(payload, weights)
    reference_translator.rehash(module, root)


def test_resave_keeps_every_weight_under_the_new_names(
    tiny_translator: DateTranslator, tmp_path: Path
) -> None:
    module, root = _module_copy(tmp_path), _stored_copy(tmp_path / "attnlib")
    _stored_under_old_names(tiny_translator, root, module)
    digests = reference_translator.resave([(r"^old\.", "")], module, root)
    weights = root / date_translator.REFERENCE_WEIGHTS
    assert digests[date_translator.REFERENCE_WEIGHTS] == file_sha256(weights)
    assert reference_translator.recorded_digests(module) == digests
    resaved = DateTranslator.load(weights).model.state_dict()
    original = tiny_translator.model.state_dict()
    assert resaved.keys() == original.keys()
    for name, tensor in original.items():
        assert resaved[name].dtype == tensor.dtype and torch.equal(resaved[name], tensor), name


@pytest.mark.parametrize(
    ("renames", "error", "message"),
    [
        ([], CheckpointError, "Unexpected key"),  # still the old names
        ([(r"^old\.", "new.")], CheckpointError, "Missing key"),
        ([(r"^old\..*", "x")], ValueError, "two stored tensors the same name"),
    ],
)
def test_resave_refuses_renames_that_do_not_fit(
    tiny_translator: DateTranslator,
    tmp_path: Path,
    renames: list[tuple[str, str]],
    error: type[Exception],
    message: str,
) -> None:
    module, root = _module_copy(tmp_path), _stored_copy(tmp_path / "attnlib")
    _stored_under_old_names(tiny_translator, root, module)
    recorded = module.read_text(encoding="utf-8")
    with pytest.raises(error, match=message):
        reference_translator.resave(renames, module, root)
    assert module.read_text(encoding="utf-8") == recorded  # nothing recorded


def test_resave_starts_from_the_recorded_file_only(
    tiny_translator: DateTranslator, tmp_path: Path
) -> None:
    module, root = _module_copy(tmp_path), _stored_copy(tmp_path / "attnlib")
    _stored_under_old_names(tiny_translator, root, module)
    _flip_a_byte(root / date_translator.REFERENCE_WEIGHTS)
    with pytest.raises(ChecksumMismatchError, match="restore it from git before re-saving it"):
        reference_translator.resave([(r"^old\.", "")], module, root)


def test_rename_goes_with_resave() -> None:
    with pytest.raises(SystemExit):
        reference_translator.main(["--rename", "a", "b"])
