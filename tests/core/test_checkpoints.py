"""Checkpoints: round trips, atomic writes, and clear errors for files that are not checkpoints."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import torch

from attnlib.checkpoints import (
    CheckpointError,
    CheckpointNotFoundError,
    load_checkpoint,
    load_training_state,
    save_checkpoint,
)
from attnlib.gpt import GPT, GPTConfig
from attnlib.training import TrainingHistory, fit, warmup_scheduler
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
    pattern = f"no checkpoint at {_path_pattern(path)}: no such file"
    with pytest.raises(CheckpointNotFoundError, match=pattern) as error:
        load_checkpoint(path)
    # A FileNotFoundError for code that expects one, a CheckpointError for code that expects that.
    assert isinstance(error.value, FileNotFoundError) and isinstance(error.value, CheckpointError)
    with pytest.raises(
        FileNotFoundError, match=f"no checkpoint at {_path_pattern(tmp_path)}: a dir"
    ):
        load_checkpoint(tmp_path)  # a directory is not a checkpoint either
    optimizer = torch.optim.SGD(_gpt().parameters(), lr=0.1)
    with pytest.raises(CheckpointNotFoundError, match=pattern):
        load_training_state(path, optimizer)


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
    path.write_text("these are not weights\n", encoding="utf-8")
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


def _language_task(model: GPT):
    """Next-token loss on random windows drawn from the generator fit passes in."""

    def loss_on_batch(generator: torch.Generator) -> torch.Tensor:
        return model.loss(torch.randint(0, 13, (4, 11), generator=generator))  # (B, T + 1)

    return loss_on_batch


def _optimizer_for(model: GPT, with_scheduler: bool):
    if with_scheduler:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1.0)
        return optimizer, warmup_scheduler(optimizer, d_model=16, warmup_steps=3, factor=0.5)
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), None


def _dropout_gpt(with_scheduler: bool):
    torch.manual_seed(0)
    model = GPT(dataclasses.replace(GPT_CONFIG, dropout=0.2))  # its random state matters
    return model, *_optimizer_for(model, with_scheduler)


@pytest.mark.parametrize("with_scheduler", [True, False])
@pytest.mark.parametrize("saved_at", [1, 4])
def test_resuming_from_a_checkpoint_gives_the_weights_of_an_uninterrupted_run(
    tmp_path: Path, saved_at: int, with_scheduler: bool
) -> None:
    steps = 9
    model, optimizer, scheduler = _dropout_gpt(with_scheduler)
    whole = fit(model, _language_task(model), steps, optimizer, scheduler, seed=3)

    first, optimizer_1, scheduler_1 = _dropout_gpt(with_scheduler)
    history = fit(first, _language_task(first), saved_at, optimizer_1, scheduler_1, seed=3)
    path = save_checkpoint(
        first, tmp_path / "run.pt", optimizer=optimizer_1, scheduler=scheduler_1, history=history
    )
    del first, optimizer_1, scheduler_1
    torch.manual_seed(12345)  # another session, with random numbers of its own

    resumed = load_checkpoint(path)
    optimizer_2, scheduler_2 = _optimizer_for(resumed, with_scheduler)
    loaded = load_training_state(path, optimizer_2, scheduler_2)
    assert loaded == history and loaded.seed == 3
    fit(resumed, _language_task(resumed), steps, optimizer_2, scheduler_2, seed=3, history=loaded)
    assert loaded.losses == whole.losses and loaded.learning_rates == whole.learning_rates
    for (name, a), (_, b) in zip(
        model.state_dict().items(), resumed.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


def test_the_saved_random_state_is_what_makes_the_resumed_run_equal(tmp_path: Path) -> None:
    # The same resumption with the dropout generator's state replaced parts from the whole run.
    model, optimizer, scheduler = _dropout_gpt(True)
    whole = fit(model, _language_task(model), 6, optimizer, scheduler, seed=3)
    first, optimizer_1, scheduler_1 = _dropout_gpt(True)
    history = fit(first, _language_task(first), 3, optimizer_1, scheduler_1, seed=3)
    path = save_checkpoint(
        first, tmp_path / "run.pt", optimizer=optimizer_1, scheduler=scheduler_1, history=history
    )
    resumed = load_checkpoint(path)
    optimizer_2, scheduler_2 = _optimizer_for(resumed, True)
    loaded = load_training_state(path, optimizer_2, scheduler_2)
    assert loaded.rng_state is not None
    loaded.rng_state["torch"] = torch.Generator().manual_seed(99).get_state()
    fit(resumed, _language_task(resumed), 6, optimizer_2, scheduler_2, seed=3, history=loaded)
    assert loaded.losses[:3] == whole.losses[:3] and loaded.losses[3:] != whole.losses[3:]


def test_a_model_only_checkpoint_is_the_format_of_earlier_versions(tmp_path: Path) -> None:
    path = save_checkpoint(_gpt(), tmp_path / "gpt.pt")
    payload = torch.load(path, weights_only=True)
    assert set(payload) == {"format", "version", "kind", "config", "state_dict"}
    assert payload["version"] == 1
    with pytest.raises(CheckpointError, match="holds a model but no training run"):
        load_training_state(path, torch.optim.SGD(_gpt().parameters(), lr=0.1))


def test_a_checkpoint_with_a_training_run_still_loads_as_a_model(tmp_path: Path) -> None:
    model, optimizer, scheduler = _dropout_gpt(True)
    history = fit(model, _language_task(model), 2, optimizer, scheduler)
    path = save_checkpoint(
        model, tmp_path / "run.pt", optimizer=optimizer, scheduler=scheduler, history=history
    )
    loaded = load_checkpoint(path)
    for (name, a), (_, b) in zip(
        model.state_dict().items(), loaded.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name
    assert torch.load(path, weights_only=True)["training"]["step"] == 2


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: load_checkpoint(None), "path must be a str or a pathlib.Path, got NoneType"),
        (lambda: load_checkpoint(3), "path must be a str or a pathlib.Path, got int"),
        (lambda: save_checkpoint(_gpt(), None), "path must be a str or a pathlib.Path, got None"),
        (
            lambda: load_training_state(None, torch.optim.SGD(_gpt().parameters(), lr=0.1)),
            "path must be a str or a pathlib.Path, got NoneType",
        ),
        (lambda: load_training_state("run.pt", None), "optimizer must be a torch.optim.Optimizer"),
    ],
    ids=["load None", "load int", "save None", "load_training_state None", "optimizer None"],
)
def test_a_path_that_is_not_a_path_is_a_type_error(call, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        call()


def test_an_empty_path_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="path must name a file, got ''"):
        load_checkpoint("")


def _saved_run(tmp_path: Path, with_scheduler: bool = True) -> Path:
    model, optimizer, scheduler = _dropout_gpt(with_scheduler)
    history = fit(model, _language_task(model), 2, optimizer, scheduler)
    return save_checkpoint(
        model, tmp_path / "run.pt", optimizer=optimizer, scheduler=scheduler, history=history
    )


def test_the_training_run_must_be_put_back_into_the_same_kinds(tmp_path: Path) -> None:
    path = _saved_run(tmp_path)
    params = _gpt().parameters
    sgd = torch.optim.SGD(params(), lr=0.1)
    with pytest.raises(
        CheckpointError, match="holds the optimizer state of a AdamW, but optimizer is a SGD"
    ):
        load_training_state(path, sgd)
    adamw = torch.optim.AdamW(params(), lr=1.0)
    with pytest.raises(
        CheckpointError, match="holds the scheduler state of a LambdaLR, but scheduler is None"
    ):
        load_training_state(path, adamw)
    no_schedule = _saved_run(tmp_path / "plain", with_scheduler=False)
    sgd = torch.optim.SGD(params(), lr=0.05, momentum=0.9)
    with pytest.raises(
        CheckpointError, match="holds no scheduler state, but scheduler is a StepLR"
    ):
        load_training_state(no_schedule, sgd, torch.optim.lr_scheduler.StepLR(sgd, 2))
    fewer = torch.optim.AdamW(list(params())[:3], lr=1.0)
    with pytest.raises(
        CheckpointError, match=f"{_path_pattern(path)}'s optimizer state does not fit optimizer"
    ):
        load_training_state(path, fewer, warmup_scheduler(fewer, 16, 3))
    with pytest.raises(ValueError, match="scheduler drives another optimizer than optimizer"):
        load_training_state(path, adamw, warmup_scheduler(sgd, 16, 3))


def test_a_damaged_training_run(tmp_path: Path) -> None:
    path = _saved_run(tmp_path)
    payload = torch.load(path, weights_only=True)
    payload["training"]["step"] = 5
    torch.save(payload, path)
    optimizer = torch.optim.AdamW(_gpt().parameters(), lr=1.0)
    with pytest.raises(
        CheckpointError, match=r"holds a damaged training run.*step 5 of a history of 2"
    ):
        load_training_state(path, optimizer, warmup_scheduler(optimizer, 16, 3))
    del payload["training"]["history"]
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match="damaged training run: KeyError"):
        load_training_state(path, optimizer, warmup_scheduler(optimizer, 16, 3))


@pytest.mark.parametrize(
    ("training", "error", "match"),
    [
        (
            {"optimizer": "adam", "history": TrainingHistory()},
            TypeError,
            "optimizer must be a torch.optim.Optimizer, got str",
        ),
        (
            {"history": TrainingHistory()},
            TypeError,
            "needs optimizer= and history=, got no optimizer",
        ),
        ({"optimizer": "own"}, TypeError, "needs optimizer= and history=, got no history"),
        (
            {"optimizer": "own", "history": [1.0]},
            TypeError,
            "history must be a TrainingHistory, got list",
        ),
        (
            {"optimizer": "other", "history": TrainingHistory()},
            ValueError,
            "none of model's parameters",
        ),
        (
            {"optimizer": "own", "scheduler": "plateau", "history": TrainingHistory()},
            TypeError,
            "ReduceLROnPlateau",
        ),
    ],
    ids=[
        "optimizer str",
        "history only",
        "optimizer only",
        "history list",
        "other model",
        "plateau",
    ],
)
def test_a_training_run_is_saved_whole_or_not_at_all(
    tmp_path: Path, training: dict, error: type, match: str
) -> None:
    model = _gpt()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    others = {
        "own": optimizer,
        "other": torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1),
        "plateau": torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer),
    }
    arguments = {k: others.get(v, v) if isinstance(v, str) else v for k, v in training.items()}
    with pytest.raises(error, match=match):
        save_checkpoint(model, tmp_path / "run.pt", **arguments)
    assert _files(tmp_path) == []
