"""Device selection: the CPU unless asked, ATTNLIB_DEVICE, "auto", and clear errors."""

from __future__ import annotations

import pytest
import torch

import attnlib
from attnlib import resolve_device
from attnlib._device import DEVICE_VARIABLE
from attnlib.course import char_gpt, date_translator


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
        char_gpt.train_char_gpt(steps=1)


def test_nonsense_is_refused() -> None:
    with pytest.raises(ValueError, match="not a torch device"):
        resolve_device("gpu please")


def test_training_helpers_take_a_device_and_return_cpu_models() -> None:
    model, _, history = char_gpt.train_char_gpt(steps=2, device="cpu")
    assert len(history.losses) == 2
    assert {p.device.type for p in model.parameters()} == {"cpu"}
    translator = date_translator.train_date_translator(steps=2, device="cpu")
    assert {p.device.type for p in translator.model.parameters()} == {"cpu"}


def test_minilm_on_an_explicit_device(minilm: attnlib.SentenceEncoder) -> None:
    on_cpu = attnlib.load_minilm(verify_checksums=False, device="cpu")
    torch.testing.assert_close(on_cpu.encode(["a test"]), minilm.encode(["a test"]))


def test_training_dtype_is_float64_on_the_cpu_and_float32_elsewhere() -> None:
    from attnlib._device import training_dtype

    assert training_dtype(torch.device("cpu")) == torch.float64
    assert training_dtype(torch.device("cuda")) == torch.float32
    assert training_dtype(torch.device("mps")) == torch.float32
    assert training_dtype(torch.device("cpu"), torch.float32) == torch.float32
    with pytest.raises(ValueError, match="MPS device has no float64"):
        training_dtype(torch.device("mps"), torch.float64)
    with pytest.raises(TypeError, match=r"floating-point torch\.dtype"):
        training_dtype(torch.device("cpu"), torch.int64)


def test_default_dtype_builds_modules_in_it_and_always_restores() -> None:
    from attnlib._device import default_dtype

    before = torch.get_default_dtype()
    with default_dtype(torch.float64):
        assert torch.nn.Linear(2, 2).weight.dtype == torch.float64
    assert torch.get_default_dtype() == before
    with pytest.raises(RuntimeError, match="inside"), default_dtype(torch.float64):
        raise RuntimeError("inside")
    assert torch.get_default_dtype() == before


@pytest.mark.parametrize("dtype", [None, torch.float32])
def test_training_helpers_train_in_float64_unless_told(dtype: torch.dtype | None) -> None:
    expected = torch.float64 if dtype is None else dtype
    model, _, _ = char_gpt.train_char_gpt(steps=2, dtype=dtype)
    assert {p.dtype for p in model.parameters()} == {expected}
    translator = date_translator.train_date_translator(steps=2, dtype=dtype)
    assert {p.dtype for p in translator.model.parameters()} == {expected}
    assert translator.translate(["21.11.2026"])[0].isascii()  # decoding runs in that dtype
    assert torch.get_default_dtype() == torch.float32  # the global default is left alone
