"""The .safetensors reader against files written byte by byte from the format's description."""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
import torch

from attnlib.formats import minilm as minilm_format
from attnlib.formats import safetensors_file
from attnlib.formats.safetensors_file import DTYPES, read_safetensors, read_safetensors_header

NAMES = {dtype: name for name, dtype in DTYPES.items()}


def write_file(path: Path, tensors: dict[str, torch.Tensor], pad_header: int = 0) -> Path:
    """Lay a file out by hand: length prefix, JSON header, then each tensor's raw bytes."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, tensor in tensors.items():
        flat = tensor.contiguous().reshape(-1)
        raw = flat.view(torch.uint8).numpy().tobytes() if tensor.numel() else b""
        header[name] = {
            "dtype": NAMES[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    encoded = json.dumps(header).encode() + b" " * pad_header
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))
    return path


@pytest.mark.parametrize("dtype", list(DTYPES.values()), ids=list(DTYPES))
def test_round_trip_of_every_dtype(tmp_path: Path, dtype: torch.dtype) -> None:
    generator = torch.Generator().manual_seed(0)
    if dtype == torch.bool:
        tensor = torch.rand(3, 4, generator=generator) > 0.5
    elif dtype.is_floating_point:
        tensor = torch.randn(3, 4, generator=generator).to(dtype)
    else:
        tensor = torch.randint(-100 if dtype != torch.uint8 else 0, 100, (3, 4), dtype=dtype)
    loaded = read_safetensors(write_file(tmp_path / "x.safetensors", {"t": tensor}))
    assert loaded["t"].dtype == dtype and torch.equal(loaded["t"], tensor)


def test_several_tensors_shapes_and_padding(tmp_path: Path) -> None:
    tensors = {
        "matrix": torch.arange(12, dtype=torch.float32).reshape(3, 4),
        "scalar": torch.tensor(2.5, dtype=torch.float64),
        "empty": torch.empty(0, 5),
        "ids": torch.arange(7),
    }
    # Writers pad the header with spaces to align the data; the reader must not care.
    loaded = read_safetensors(write_file(tmp_path / "x.safetensors", tensors, pad_header=5))
    assert set(loaded) == set(tensors)  # "__metadata__" is not a tensor
    for name, tensor in tensors.items():
        assert loaded[name].shape == tensor.shape and torch.equal(loaded[name], tensor)


def test_loaded_tensors_own_their_memory(tmp_path: Path) -> None:
    loaded = read_safetensors(write_file(tmp_path / "x.safetensors", {"a": torch.zeros(4)}))
    loaded["a"] += 1  # writable, and not a view of a buffer that may go away
    assert torch.equal(loaded["a"], torch.ones(4))


def test_header_offsets(tmp_path: Path) -> None:
    path = write_file(tmp_path / "x.safetensors", {"a": torch.zeros(2, 3)})
    header, data_start = read_safetensors_header(path)
    assert header["a"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert data_start == path.stat().st_size - 24


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x01\x02", "too short"),
        (struct.pack("<Q", 10**12) + b"{}", "header"),
        (struct.pack("<Q", 4) + b"{no}", "not JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
    ],
)
def test_malformed_files_are_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(safetensors_file.SafetensorsError, match=message):
        read_safetensors(path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}, "needs 16 bytes"),
        ({"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 64]}, "needs 16 bytes"),
        ({"dtype": "F99", "shape": [2], "data_offsets": [0, 8]}, "malformed"),
        ({"dtype": "F32", "shape": [2]}, "malformed"),
    ],
)
def test_inconsistent_entries_are_refused(tmp_path: Path, entry: dict, message: str) -> None:
    header = json.dumps({"t": entry}).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(16))
    with pytest.raises(safetensors_file.SafetensorsError, match=message):
        read_safetensors(path)


def test_sha256_matches_hashlib_and_verification(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    content = bytes(range(256)) * 5000  # more than one read chunk
    path.write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()
    assert safetensors_file.file_sha256(path, chunk_bytes=4096) == digest
    safetensors_file.verify_sha256(path, digest.upper())  # hex case does not matter
    with pytest.raises(safetensors_file.ChecksumMismatchError, match="expected 00"):
        safetensors_file.verify_sha256(path, "00" * 32)


def test_the_minilm_weight_file_reads_completely() -> None:
    path = minilm_format.minilm_files() / "model.safetensors"
    header, _ = read_safetensors_header(path)
    loaded = read_safetensors(path)
    assert set(loaded) == set(header)
    for name, entry in header.items():
        assert list(loaded[name].shape) == entry["shape"]
    assert loaded["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert torch.isfinite(loaded["encoder.layer.5.output.dense.weight"]).all()
