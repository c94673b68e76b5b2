"""The .safetensors reader against files written byte by byte from the format's description."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import math
import os
import struct
from pathlib import Path
from types import ModuleType

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


def raw(header: object, data: bytes = b"") -> bytes:
    """A file from a header written by hand (a dict, or JSON text as it should appear)."""
    text = header if isinstance(header, str) else json.dumps(header)
    encoded = text.encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def f32(offsets: list[object], shape: list[object] | None = None) -> dict[str, object]:
    """An F32 entry of one element (or of ``shape``)."""
    return {"dtype": "F32", "shape": [1] if shape is None else shape, "data_offsets": offsets}


# (content, what our error says, whether the safetensors library refuses it too)
MALFORMED = {
    "too short": (b"\x01\x02", "too short to be", True),
    "header longer than the file": (
        struct.pack("<Q", 10**12) + b"{}",
        "declares a 1000000000000-byte header",
        True,
    ),
    "header one byte past the end": (struct.pack("<Q", 3) + b"{}", "3-byte header in a 10", True),
    "empty header": (struct.pack("<Q", 0), "not JSON", True),
    "header not UTF-8": (struct.pack("<Q", 2) + b"\xff\xfe", "not JSON", True),
    "header in UTF-16": (struct.pack("<Q", 4) + "{}".encode("utf-16-le"), "not JSON", True),
    "header not JSON": (struct.pack("<Q", 4) + b"{no}", "not JSON", True),
    "header a JSON array": (raw([]), "not a JSON object", True),
    "metadata a list": (raw({"__metadata__": ["a"]}), "__metadata__ entry must map", True),
    "metadata value an int": (raw({"__metadata__": {"a": 1}}), "__metadata__ entry must", True),
    "metadata value null": (raw({"__metadata__": {"a": None}}), "__metadata__ entry must", True),
    "entry a list": (raw({"t": [1, 2]}, bytes(4)), "'t' has a malformed entry", True),
    "entry without a shape": (
        raw({"t": {"dtype": "F32", "data_offsets": [0, 4]}}, bytes(4)),
        "'t' has a malformed entry .* needs a dtype, a shape and data_offsets",
        True,
    ),
    "unknown dtype": (raw({"t": {**f32([0, 4]), "dtype": "F99"}}, bytes(4)), "'F99'", True),
    "lower-case dtype": (raw({"t": {**f32([0, 4]), "dtype": "f32"}}, bytes(4)), "'f32'", True),
    "dtype a number": (raw({"t": {**f32([0, 4]), "dtype": 32}}, bytes(4)), "dtype 32,", True),
    "float in the shape": (
        raw({"t": f32([0, 4], [1.0])}, bytes(4)),
        r"'t' has shape \[1\.0\]",
        True,
    ),
    "bool in the shape": (
        raw({"t": f32([0, 4], [True])}, bytes(4)),
        r"'t' has shape \[True\]",
        True,
    ),
    "negative in the shape": (
        raw({"t": f32([0, 4], [-1])}, bytes(4)),
        r"shape \[-1\]: a shape",
        True,
    ),
    "string in the shape": (
        raw({"t": f32([0, 4], ["1"])}, bytes(4)),
        r"'t' has shape \['1'\]",
        True,
    ),
    "shape not a list": (raw({"t": f32([0, 4], 1)}, bytes(4)), "'t' has shape 1: a shape", True),
    "shape too large for torch": (
        raw({"t": f32([0, 0], [0, 2**62, 2])}),
        "'t' has shape .* too large for torch",
        None,  # the library finds 0 bytes; torch cannot make the tensor's strides
    ),
    "element count past 2**64": (
        raw({"t": f32([0, 0], [2**32, 2**32, 0])}),
        "'t' has shape .* too large for torch",
        True,
    ),
    "float offset": (raw({"t": f32([0, 4.0])}, bytes(4)), r"data_offsets \[0, 4\.0\]", True),
    "bool offset": (raw({"t": f32([False, 4])}, bytes(4)), r"data_offsets \[False, 4\]", True),
    "negative offset": (raw({"t": f32([-4, 0])}, bytes(4)), r"data_offsets \[-4, 0\]", True),
    "three offsets": (raw({"t": f32([0, 4, 4])}, bytes(4)), r"data_offsets \[0, 4, 4\]", True),
    "one offset": (raw({"t": f32([4])}, bytes(4)), r"data_offsets \[4\]: they must be", True),
    "offsets too short": (
        raw({"t": f32([0, 12], [2, 2])}, bytes(16)),
        r"'t' of shape \[2, 2\] and dtype F32 needs 16 bytes, its data_offsets \[0, 12\] hold 12",
        True,
    ),
    "offsets too long": (raw({"t": f32([0, 8])}, bytes(8)), "needs 4 bytes", True),
    "end before begin": (raw({"t": f32([8, 4])}, bytes(8)), "hold -4", True),
    "first tensor not at 0": (raw({"t": f32([4, 8])}, bytes(8)), "data begin at 0", True),
    "gap between tensors": (
        raw({"a": f32([0, 4]), "b": f32([8, 12])}, bytes(12)),
        "'b' begins at byte 8 of the data but 'a' ends at 4",
        True,
    ),
    "overlapping tensors": (
        raw({"a": f32([0, 8], [2]), "b": f32([4, 8])}, bytes(8)),
        "'b' begins at byte 4 of the data but 'a' ends at 8: .* without gaps or overlaps",
        True,
    ),
    "two tensors on the same bytes": (
        raw({"a": f32([0, 4]), "b": f32([0, 4])}, bytes(4)),
        "'b' begins at byte 0 of the data but 'a' ends at 4",
        True,
    ),
    "bytes after the last tensor": (
        raw({"t": f32([0, 4])}, bytes(8)),
        "the tensors cover 4 bytes of data, but the file holds 8",
        True,
    ),
    "data but no tensors": (raw({}, b"\x00"), "cover 0 bytes of data, but the file holds 1", True),
    "tensor past the end of the file": (
        raw({"t": f32([0, 8], [2])}, bytes(4)),
        "cover 8 bytes of data, but the file holds 4",
        True,
    ),
}

# Files the format allows, which need no writer's help to go wrong: the reader must give
# what the safetensors library gives.
VALID = {
    "offsets not in name order": raw({"b": f32([4, 8]), "a": f32([0, 4])}, bytes(range(8))),
    "empty tensor between two": raw(
        {"z": f32([4, 4], [0, 3]), "a": f32([0, 4]), "b": f32([4, 8])}, bytes(range(8))
    ),
    "metadata null": raw({"__metadata__": None, "t": f32([0, 4])}, bytes(4)),
    "an unknown key in an entry": raw({"t": {**f32([0, 4]), "note": 1}}, bytes(4)),
    "white space around the header": raw('  {"t": ' + json.dumps(f32([0, 4])) + "}   ", bytes(4)),
    "no tensors at all": raw({}),
    "empty, with huge dimensions": raw({"t": f32([0, 0], [2**62, 2, 0])}),
    "a scalar and an empty tensor": raw(
        {"t": f32([0, 4], []), "u": f32([4, 4], [0])}, bytes(range(4))
    ),
}


@pytest.mark.parametrize(("content", "message", "_"), MALFORMED.values(), ids=list(MALFORMED))
def test_malformed_files_are_refused(
    tmp_path: Path, content: bytes, message: str, _: object
) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(content)
    with pytest.raises(safetensors_file.SafetensorsError, match=message) as caught:
        read_safetensors(path)
    assert str(path) in str(caught.value)  # the message names the file
    with pytest.raises(safetensors_file.SafetensorsError, match=message):
        read_safetensors_header(path)  # the header alone is checked as strictly


def test_a_header_over_the_formats_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.safetensors"
    with path.open("wb") as file:  # sparse: the 100 MB are not written
        file.write(struct.pack("<Q", 100_000_001) + b"{}")
        file.truncate(100_000_100)
    with pytest.raises(safetensors_file.SafetensorsError, match="100000001-byte header"):
        read_safetensors(path)


def test_dtypes_attnlib_does_not_read_are_named(tmp_path: Path) -> None:
    path = tmp_path / "u16.safetensors"  # U16 is in the format, not in DTYPES
    path.write_bytes(raw({"t": {"dtype": "U16", "shape": [2], "data_offsets": [0, 4]}}, bytes(4)))
    with pytest.raises(
        safetensors_file.SafetensorsError, match=r"'t' has dtype 'U16', which attnlib does not"
    ):
        read_safetensors(path)


@pytest.fixture(scope="module")
def library() -> ModuleType:
    """safetensors.torch (the `pretrained` extra), the reference the reader is held to."""
    if importlib.util.find_spec("safetensors") is None:
        if os.environ.get("ATTNLIB_REQUIRE_REFERENCE") == "1":
            pytest.fail("ATTNLIB_REQUIRE_REFERENCE=1 but safetensors is missing")
        pytest.skip("safetensors is not installed: pip install -r requirements.txt")
    return importlib.import_module("safetensors.torch")


@pytest.mark.parametrize(
    "content",
    [content for content, _, refused in MALFORMED.values() if refused],
    ids=[name for name, (_, _, refused) in MALFORMED.items() if refused],
)
def test_the_library_refuses_them_too(library: ModuleType, content: bytes) -> None:
    from safetensors import SafetensorError

    with pytest.raises(SafetensorError):
        library.load(content)


def _same(ours: dict[str, torch.Tensor], theirs: dict[str, torch.Tensor]) -> None:
    assert set(ours) == set(theirs)
    for name, tensor in theirs.items():
        mine = ours[name]
        assert (mine.dtype, mine.shape) == (tensor.dtype, tensor.shape), name
        # Byte for byte, so that NaN payloads and -0.0 count too.
        assert torch.equal(mine.reshape(-1).view(torch.uint8), tensor.reshape(-1).view(torch.uint8))


@pytest.mark.parametrize("content", VALID.values(), ids=list(VALID))
def test_valid_hand_written_files_read_as_the_library_reads_them(
    tmp_path: Path, library: ModuleType, content: bytes
) -> None:
    path = tmp_path / "ok.safetensors"
    path.write_bytes(content)
    _same(read_safetensors(path), library.load(content))


def test_files_the_library_writes_read_identically(tmp_path: Path, library: ModuleType) -> None:
    generator = torch.Generator().manual_seed(0)
    special = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-40])
    tensors = {}
    for i, (name, dtype) in enumerate(DTYPES.items()):
        if dtype == torch.bool:
            values = torch.rand(2, 3, 4, generator=generator) > 0.5
        elif dtype.is_floating_point:
            values = torch.cat([torch.randn(19, generator=generator), special]).to(dtype)
            values = values.reshape(2, 3, 4)
        else:
            low = 0 if dtype == torch.uint8 else -100
            values = torch.randint(low, 100, (2, 3, 4), dtype=dtype, generator=generator)
        shapes = {"": (2, 3, 4), "row": (24,), "scalar": (), "empty": (0,), "empty3": (2, 0, 3)}
        for suffix, shape in shapes.items():
            tensors[f"{name}.{suffix}"] = values.reshape(-1)[: math.prod(shape)].reshape(shape)
        tensors[f"{name}.slice"] = values[:, 1]
        tensors[f"layer.{i}.weight"] = values.transpose(0, 2)
    # The writer wants contiguous tensors that share no memory.
    tensors = {name: tensor.contiguous().clone() for name, tensor in tensors.items()}
    path = tmp_path / "saved.safetensors"
    library.save_file(tensors, path, metadata={"format": "pt", "note": "ünïcode"})
    _same(read_safetensors(path), library.load_file(path))
    header, data_start = read_safetensors_header(path)
    size = struct.unpack("<Q", path.read_bytes()[:8])[0]
    assert data_start == 8 + size
    written = json.loads(path.read_bytes()[8:data_start])
    assert written.pop("__metadata__") == {"format": "pt", "note": "ünïcode"}
    assert header == written


@pytest.mark.parametrize(
    ("expected", "error", "message"),
    [
        (None, TypeError, "expected must be a str, got NoneType"),
        (b"00" * 32, TypeError, "expected must be a str, got bytes"),
        (0, TypeError, "expected must be a str, got int"),
        ("", ValueError, r"expected must be a SHA-256 digest of 64 hex digits, got '' \(0"),
        ("00" * 31, ValueError, r"64 hex digits, got '0+' \(62 characters\)"),
        ("00" * 33, ValueError, r"\(66 characters\)"),
        ("zz" * 32, ValueError, "64 hex digits, got 'zzzz"),
        ("0x" + "0" * 62, ValueError, "64 hex digits, got '0x"),
    ],
)
def test_a_bad_expected_digest_is_refused_before_the_file_is_read(
    tmp_path: Path, expected: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):  # the file does not exist: it is never opened
        safetensors_file.verify_sha256(tmp_path / "absent.bin", expected)  # type: ignore[arg-type]


def test_a_bad_path_is_named() -> None:
    with pytest.raises(TypeError, match=r"path must be a str or a pathlib\.Path, got NoneType"):
        safetensors_file.file_sha256(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"path must be a str or a pathlib\.Path, got int"):
        safetensors_file.verify_sha256(3, "00" * 32)  # type: ignore[arg-type]


def test_text_digests_do_not_depend_on_line_endings(tmp_path: Path) -> None:
    text = "first line\nsecond, with é and \u200b\n\nlast" * 30_000  # several chunks
    unix, windows = tmp_path / "unix.txt", tmp_path / "windows.txt"
    unix.write_bytes(text.encode())
    windows.write_bytes(text.replace("\n", "\r\n").encode())
    digest = hashlib.sha256(text.encode()).hexdigest()
    for chunk_bytes in (7, 4096, 1 << 20):  # a \r\n may straddle two chunks
        assert safetensors_file.file_sha256(unix, chunk_bytes, text=True) == digest
        assert safetensors_file.file_sha256(windows, chunk_bytes, text=True) == digest
    assert safetensors_file.file_sha256(unix) == digest != safetensors_file.file_sha256(windows)
    safetensors_file.verify_sha256(windows, digest, text=True)
    with pytest.raises(safetensors_file.ChecksumMismatchError, match=r"windows\.txt has SHA-256"):
        safetensors_file.verify_sha256(windows, digest)
    broken = tmp_path / "broken.txt"  # not UTF-8: hashed as it is, not an error
    broken.write_bytes(b"ok\xff\xfe\n")
    assert (
        safetensors_file.file_sha256(broken, text=True)
        == hashlib.sha256(b"ok\xff\xfe\n").hexdigest()
    )


def test_sha256_matches_hashlib_and_verification(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    content = bytes(range(256)) * 5000  # more than one read chunk
    path.write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()
    assert safetensors_file.file_sha256(path, chunk_bytes=4096) == digest
    safetensors_file.verify_sha256(path, digest.upper())  # hex case does not matter
    with pytest.raises(safetensors_file.ChecksumMismatchError, match="expected 00"):
        safetensors_file.verify_sha256(path, "00" * 32)
    with pytest.raises(safetensors_file.ChecksumMismatchError, match=r"; restore it from git$"):
        safetensors_file.verify_sha256(path, "00" * 32, remedy="restore it from git")


def test_the_minilm_weight_file_reads_completely() -> None:
    path = minilm_format.minilm_files() / "model.safetensors"
    header, _ = read_safetensors_header(path)
    loaded = read_safetensors(path)
    assert set(loaded) == set(header)
    for name, entry in header.items():
        assert list(loaded[name].shape) == entry["shape"]
    assert loaded["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert torch.isfinite(loaded["encoder.layer.5.output.dense.weight"]).all()
