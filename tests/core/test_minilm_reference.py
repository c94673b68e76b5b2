"""attnlib's all-MiniLM-L6-v2 against sentence-transformers and transformers, run live.

The reference libraries come with the `pretrained` extra, which `requirements.txt`
installs (`pip install -e '.[pretrained]'` alone). Without them these tests are skipped;
with ATTNLIB_REQUIRE_REFERENCE=1 (set by `make test`) their absence is a failure, so
CI cannot stop comparing silently.
"""

from __future__ import annotations

import importlib.util
import os
import random

import numpy as np
import pytest
import torch

from attnlib import SentenceEncoder
from attnlib.formats import minilm as minilm_format
from attnlib.formats import safetensors_file

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before huggingface_hub is imported

if importlib.util.find_spec("sentence_transformers") is None:
    if os.environ.get("ATTNLIB_REQUIRE_REFERENCE") == "1":
        raise ImportError(
            "ATTNLIB_REQUIRE_REFERENCE=1 but sentence-transformers is missing: "
            "pip install -r requirements.txt (make test does)"
        )
    pytest.skip(
        "sentence-transformers is not installed: pip install -r requirements.txt",
        allow_module_level=True,
    )

import sentence_transformers
import transformers
from minilm_activations import ACTIVATIONS_FILE, compute_activations
from minilm_reference import REFERENCE_FILE, compute_reference

# Text a course might feed the model: several scripts, punctuation, numbers, markup.
MORE_SENTENCES = [
    "Attention is all you need.",
    "Die Katze schläft auf dem Sofa, während es draußen regnet.",
    "El niño comió una manzana después de la escuela.",
    "Привет, как дела? Всё хорошо!",
    "Το μοντέλο διαβάζει ολόκληρη την πρόταση.",
    "人工知能は言語を理解できますか？",
    "모델은 문장 전체를 읽습니다.",
    "السلام عليكم ورحمة الله",
    "<div class='x'>HTML &amp; entities</div> #hashtag @user https://example.org/a?b=c",
    "C'est l'été — «déjà vu» !",
    "GPU-accelerated matrix multiply at 3.2×10⁹ FLOP/s… or so.",
    "",
]

# Ranges of characters whose Unicode properties have been stable for decades. (The
# reference tokenizer's Unicode tables are older than Python's: on about 500 characters
# added or re-categorised since Unicode 11, such as U+061D, the two differ.)
COMMON_RANGES = [
    (0x20, 0x7E), (0xA0, 0x17F), (0x391, 0x3C9), (0x400, 0x45F), (0x5D0, 0x5EA),
    (0x621, 0x64A), (0x905, 0x939), (0x2010, 0x2027), (0x2030, 0x205E), (0x20A0, 0x20B5),
    (0x3041, 0x3096), (0x30A1, 0x30FA), (0x4E00, 0x9FA5), (0xAC00, 0xD7A3), (0xFF01, 0xFF5E),
]  # fmt: skip


@pytest.fixture(scope="module")
def reference_model() -> sentence_transformers.SentenceTransformer:
    return sentence_transformers.SentenceTransformer(
        str(minilm_format.minilm_files()), device="cpu"
    )


def random_texts(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        mostly, sometimes = rng.choice(COMMON_RANGES), rng.choice(COMMON_RANGES)
        characters = [
            chr(rng.randint(*(mostly if rng.random() < 0.7 else sometimes)))
            for _ in range(rng.randint(1, 30))
        ]
        texts.append("".join(characters))
    return texts


def test_embeddings_equal_sentence_transformers(
    minilm: SentenceEncoder, reference_model: sentence_transformers.SentenceTransformer
) -> None:
    stored = minilm_format.load_minilm_reference()
    sentences = [*stored.sentences, *MORE_SENTENCES]
    expected = reference_model.encode(sentences, normalize_embeddings=True, convert_to_tensor=True)
    got = minilm.encode(sentences)
    assert (got - expected.cpu()).abs().max() < 1e-5


def test_attention_and_hidden_states_equal_transformers(minilm: SentenceEncoder) -> None:
    bert = transformers.AutoModel.from_pretrained(
        str(minilm_format.minilm_files()), attn_implementation="eager"
    ).eval()
    texts = ["The quick brown fox jumps over the lazy dog.", "Short one.", MORE_SENTENCES[8]]
    input_ids, real = minilm.tokenize(texts)  # a padded batch
    with torch.no_grad():
        theirs = bert(
            input_ids=input_ids,
            attention_mask=real.long(),
            output_attentions=True,
            output_hidden_states=True,
        )
        ours = minilm(input_ids, real)
    their_weights = torch.stack(theirs.attentions)  # (L, B, H, T, T)
    their_hidden = torch.stack(theirs.hidden_states)  # (L + 1, B, T, C)
    # Padding queries are never pooled; compare the rows of real tokens.
    query_is_real = real[None, :, None, :, None]
    assert ((ours.attentions - their_weights).abs() * query_is_real).max() < 5e-5
    assert (ours.hidden_states - their_hidden)[:, real].abs().max() < 5e-5


# Some random texts hold a soft hyphen (U+00AD), which both tokenizers drop; ours says so.
@pytest.mark.filterwarnings("ignore::attnlib.formats.wordpiece.DroppedCharactersWarning")
def test_tokenizer_equals_the_reference_tokenizer(
    minilm: SentenceEncoder, reference_model: sentence_transformers.SentenceTransformer
) -> None:
    texts = [*minilm_format.load_minilm_reference().sentences, *MORE_SENTENCES, *random_texts(2000)]
    expected = reference_model.tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    mismatches = [
        (text, ids) for text, ids in zip(texts, expected, strict=True)
        if minilm.tokenizer.encode(text) != ids
    ]  # fmt: skip
    assert not mismatches, mismatches[:3]


def test_stored_reference_is_current() -> None:
    # Regenerate with `python tests/support/minilm_reference.py` when this fails. The stored file
    # was written with one thread, as `make test` runs; other thread counts sum in another
    # order, which moves float32 results by up to about 1e-6 (seen: 1.04e-6).
    live = compute_reference()
    with np.load(REFERENCE_FILE, allow_pickle=False) as stored:
        assert stored["sentences"].tolist() == live["sentences"].tolist()
        assert np.array_equal(stored["token_ids"], live["token_ids"])
        assert np.array_equal(stored["token_counts"], live["token_counts"])
        assert np.abs(stored["embeddings"] - live["embeddings"]).max() < 2e-6
        assert np.abs(stored["attentions"] - live["attentions"]).max() < 2e-6


def test_stored_activations_are_current() -> None:
    # Regenerate with `python tests/support/minilm_activations.py` when this fails. Inside the
    # layers values reach about 200 (the feed-forward outputs), so float32 sums taken in
    # another order move them by a few 1e-6 relative; the capstone's checker allows 5e-5.
    live = compute_activations()
    with np.load(ACTIVATIONS_FILE, allow_pickle=False) as stored:
        assert sorted(stored.files) == sorted(live)
        assert stored["sentences"].tolist() == live["sentences"].tolist()
        assert np.array_equal(stored["input_ids"], live["input_ids"])
        assert np.array_equal(stored["token_mask"], live["token_mask"])
        assert not stored["token_mask"].all(), "the batch must have padding"
        for name in ("embeddings", "attention", "norm_1", "feed_forward", "output"):
            assert np.allclose(stored[name], live[name], atol=1e-5, rtol=1e-5), name
        assert np.abs(stored["sentence_embeddings"] - live["sentence_embeddings"]).max() < 2e-6


def test_stored_activations_are_what_attnlibs_own_minilm_computes() -> None:
    # The same recording through attnlib's BertModel: the fixture and attnlib agree, so
    # a learner's module that matches one matches the other.
    recorded = minilm_format.load_minilm_activations()
    model = minilm_format.load_minilm(verify_checksums=False)
    with torch.no_grad():
        out = model(recorded.input_ids, recorded.token_mask)
    mask = recorded.token_mask
    reference = torch.cat([recorded.embeddings[None], recorded.output])  # (L + 1, B, T, C)
    assert torch.allclose(out.hidden_states[:, mask], reference[:, mask], atol=2e-5, rtol=1e-5)
    assert (out.embeddings - recorded.sentence_embeddings).abs().max() < 2e-6


def test_weights_read_as_the_safetensors_library_reads_them() -> None:
    from safetensors.torch import load_file

    path = minilm_format.minilm_files() / "model.safetensors"
    theirs = load_file(path)
    ours = safetensors_file.read_safetensors(path)
    assert set(ours) == set(theirs)
    for name, tensor in theirs.items():
        assert ours[name].dtype == tensor.dtype and torch.equal(ours[name], tensor), name
