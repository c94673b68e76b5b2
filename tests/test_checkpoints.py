"""Checkpoints: round trips, atomic writes, and clear errors for files that are not checkpoints."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

from attnlib.checkpoints import CheckpointError, load_checkpoint, save_checkpoint
from attnlib.gpt import GPT, GPTConfig
from attnlib.transformer import Transformer, TransformerConfig

TRANSFORMER = TransformerConfig(
    src_vocab_size=12,
    tgt_vocab_size=10,
    d_model=16,
    num_heads=2,
    num_encoder_layers=1,
    num_decoder_layers=2,
    d_ff=24,
    dropout=0.1,
    max_len=20,
)
GPT_CONFIG = GPTConfig(vocab_size=13, max_len=10, d_model=16, num_heads=4, num_layers=2)


def _transformer(**changes) -> Transformer:
    torch.manual_seed(0)
    return Transformer(dataclasses.replace(TRANSFORMER, **changes))


def _gpt() -> GPT:
    torch.manual_seed(0)
    return GPT(GPT_CONFIG)


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def _path_pattern(path: Path) -> str:
    return re.escape(str(path))


@pytest.mark.parametrize("tie_embeddings", [False, True])
@pytest.mark.parametrize("norm_first", [True, False])
def test_transformer_round_trip(tmp_path: Path, tie_embeddings: bool, norm_first: bool) -> None:
    model = _transformer(tie_embeddings=tie_embeddings, norm_first=norm_first).train()
    path = tmp_path / "model.pt"
    assert save_checkpoint(model, path) == path
    loaded = load_checkpoint(path)
    assert isinstance(loaded, Transformer) and loaded.config == model.config
    assert not loaded.training  # comes back ready to evaluate
    assert (loaded.output.weight is loaded.tgt_embedding.weight) == tie_embeddings
    src = torch.randint(1, 12, (2, 5), generator=torch.Generator().manual_seed(1))
    tgt = torch.randint(1, 10, (2, 4), generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(loaded(src, tgt), model.eval()(src, tgt), rtol=0, atol=0)
    for (name, a), (_, b) in zip(
        model.state_dict().items(), loaded.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert _files(tmp_path) == ["model.pt"]  # no temporary file left behind


def test_gpt_round_trip(tmp_path: Path) -> None:
    model = _gpt()
    path = tmp_path / "nested" / "dir" / "gpt.pt"  # parent directories are created
    save_checkpoint(model, str(path))  # a str path works too
    loaded = load_checkpoint(str(path))
    assert isinstance(loaded, GPT) and loaded.config == GPT_CONFIG
    assert loaded.head.weight is loaded.token_embedding.weight  # tying survives the trip
    idx = torch.randint(0, 13, (2, 6), generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(loaded(idx), model.eval()(idx), rtol=0, atol=0)
    assert torch.equal(
        loaded.generate(idx, 3, temperature=0), model.generate(idx, 3, temperature=0)
    )
    assert _files(path.parent) == ["gpt.pt"]


def test_saving_over_an_existing_checkpoint_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    save_checkpoint(_gpt(), path)
    torch.manual_seed(5)
    other = GPT(GPT_CONFIG)
    save_checkpoint(other, path)
    loaded = load_checkpoint(path)
    assert torch.equal(loaded.token_embedding.weight, other.token_embedding.weight)
    assert _files(tmp_path) == ["model.pt"]


def test_a_failed_save_leaves_the_existing_checkpoint_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "model.pt"
    original = _gpt()
    save_checkpoint(original, path)
    before = path.read_bytes()

    def broken_save(obj, file, *args, **kwargs) -> None:
        file.write(b"half a checkpoint")  # some bytes reach the temporary file first
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    torch.manual_seed(9)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(GPT(GPT_CONFIG), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert _files(tmp_path) == ["model.pt"]  # the temporary file is gone
    loaded = load_checkpoint(path)
    assert torch.equal(loaded.token_embedding.weight, original.token_embedding.weight)


def test_a_failed_first_save_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_save(*args, **kwargs) -> None:
        raise KeyboardInterrupt  # even an interrupt cleans up

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(_gpt(), tmp_path / "model.pt")
    assert _files(tmp_path) == []


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.pt"
    with pytest.raises(CheckpointError, match=f"no checkpoint at {_path_pattern(path)}"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        load_checkpoint(tmp_path)  # a directory is not a checkpoint either


def test_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    save_checkpoint(_transformer(), path)
    data = path.read_bytes()
    for size in (len(data) // 2, 10, 0):
        path.write_bytes(data[:size])
        with pytest.raises(CheckpointError, match=_path_pattern(path)) as error:
            load_checkpoint(path)
        assert "not a readable attnlib checkpoint" in str(error.value)


def test_a_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are not weights\n")
    with pytest.raises(CheckpointError, match=f"{_path_pattern(path)} is not a readable"):
        load_checkpoint(path)


@pytest.mark.parametrize(
    "payload",
    [
        torch.zeros(3),  # a plain tensor
        {"weight": torch.zeros(3)},  # a bare state dict
        [1, 2, 3],
        {"format": "something-else", "version": 1},
    ],
)
def test_foreign_torch_files(tmp_path: Path, payload: object) -> None:
    path = tmp_path / "foreign.pt"
    torch.save(payload, path)
    with pytest.raises(
        CheckpointError, match=f"{_path_pattern(path)} is not an attnlib checkpoint"
    ):
        load_checkpoint(path)


def _save_edited(tmp_path: Path, **edits) -> Path:
    """A real checkpoint with some top-level fields replaced."""
    path = tmp_path / "edited.pt"
    save_checkpoint(_transformer(), path)
    payload = torch.load(path, weights_only=True)
    payload.update(edits)
    torch.save(payload, path)
    return path


@pytest.mark.parametrize(
    ("edits", "match"),
    [
        ({"version": 2}, "has version 2 and kind 'Transformer'; this attnlib reads version 1"),
        ({"kind": "BERT"}, "has version 1 and kind 'BERT'"),
        ({"config": {"d_model": 16, "colour": "red"}}, "does not match its own config"),
        (
            {"config": {**dataclasses.asdict(TRANSFORMER), "d_model": 15}},
            "does not match its own config",
        ),
        ({"state_dict": {}}, "does not match its own config"),
    ],
)
def test_checkpoints_that_do_not_fit(tmp_path: Path, edits: dict, match: str) -> None:
    path = _save_edited(tmp_path, **edits)
    with pytest.raises(CheckpointError, match=match) as error:
        load_checkpoint(path)
    assert str(path) in str(error.value)


def test_missing_state_dict(tmp_path: Path) -> None:
    path = _save_edited(tmp_path)
    payload = torch.load(path, weights_only=True)
    del payload["state_dict"]
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match="does not match its own config"):
        load_checkpoint(path)


def test_checkpoint_error_is_a_value_error() -> None:
    assert issubclass(CheckpointError, ValueError)
    with pytest.raises(ValueError, match="no checkpoint"):
        load_checkpoint("/nonexistent/attnlib/model.pt")


def test_only_transformers_and_gpts_are_saved(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="model must be a Transformer or a GPT, got Linear"):
        save_checkpoint(torch.nn.Linear(2, 2), tmp_path / "linear.pt")  # type: ignore[arg-type]

    class MyGPT(GPT):
        pass

    with pytest.raises(TypeError, match="got MyGPT"):
        save_checkpoint(MyGPT(GPT_CONFIG), tmp_path / "sub.pt")
    assert _files(tmp_path) == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_checkpoint_comes_back_in_its_own_dtype(tmp_path: Path, dtype: torch.dtype) -> None:
    # The course trains in float64: loading into float32 would round every weight.
    model = _gpt().to(dtype)
    loaded = load_checkpoint(save_checkpoint(model, tmp_path / "gpt.pt"))
    assert {p.dtype for p in loaded.parameters()} == {dtype}
    for (name, a), (_, b) in zip(
        model.state_dict().items(), loaded.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert torch.get_default_dtype() == torch.float32
