"""Device selection: the CPU unless asked, ATTNLIB_DEVICE, "auto", and clear errors."""

from __future__ import annotations

import pytest
import torch

import attnlib
from attnlib import resolve_device
from attnlib.device import DEVICE_VARIABLE


def test_cpu_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEVICE_VARIABLE, raising=False)
    assert resolve_device() == torch.device("cpu")
    monkeypatch.setenv(DEVICE_VARIABLE, "  ")
    assert resolve_device() == torch.device("cpu")


def test_environment_variable_and_explicit_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEVICE_VARIABLE, "cpu")
    assert resolve_device() == torch.device("cpu")
    monkeypatch.setenv(DEVICE_VARIABLE, "auto")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available() and torch.backends.mps.is_available():
        expected = "mps"
    assert resolve_device().type == expected
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")  # explicit beats env


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_unavailable_device_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(RuntimeError, match="not available on this machine"):
        resolve_device("cuda")
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda:0")
    with pytest.raises(RuntimeError, match=f"unset {DEVICE_VARIABLE}"):
        attnlib.train_char_gpt(steps=1)


def test_nonsense_is_refused() -> None:
    with pytest.raises(ValueError, match="not a torch device"):
        resolve_device("gpu please")


def test_training_helpers_take_a_device_and_return_cpu_models() -> None:
    model, _, history = attnlib.train_char_gpt(steps=2, device="cpu")
    assert len(history.losses) == 2
    assert {p.device.type for p in model.parameters()} == {"cpu"}
    translator = attnlib.dates.train_date_translator(steps=2, device="cpu")
    assert {p.device.type for p in translator.model.parameters()} == {"cpu"}


def test_minilm_on_an_explicit_device(minilm: attnlib.SentenceEncoder) -> None:
    on_cpu = attnlib.load_minilm(verify_checksums=False, device="cpu")
    torch.testing.assert_close(on_cpu.encode(["a test"]), minilm.encode(["a test"]))
