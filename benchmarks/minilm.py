"""all-MiniLM-L6-v2: attnlib's encoder against sentence-transformers, same sentences, one run.

`python -m benchmarks.minilm` encodes the same batch of sentences with both (alternating
repetitions, medians), prints sentences per second and the ratio of the two times, and
the largest differences of the embeddings and of the attention weights. Needs
sentence-transformers, which `requirements.txt` installs (the `pretrained` extra).
"""

from __future__ import annotations

import os
import random
import statistics
import time

import torch

import attnlib
from attnlib.course import char_data
from attnlib.formats import minilm
from benchmarks import command_line, results

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = 512
BATCH_SIZE = 32
REPETITIONS = 5


def benchmark_sentences(count: int = SENTENCES, seed: int = 0) -> list[str]:
    """Sentences of 5–40 words drawn from the course's own prose (a realistic length mix)."""
    words = char_data.load_course_text().split()
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, k=rng.randint(5, 40))) for _ in range(count)]


def timed(encode: object, sentences: list[str]) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    embeddings = encode(sentences)  # type: ignore[operator]
    return time.perf_counter() - start, embeddings


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser(
        "minilm", __doc__, writes="benchmarks/results/minilm.json"
    )
    args = parser.parse_args(argv)
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel

    print(f"torch {torch.__version__}, threads: {torch.get_num_threads()}")
    ours = attnlib.load_minilm()
    reference = SentenceTransformer(str(minilm.minilm_files()), device="cpu")
    sentences = benchmark_sentences()

    def encode_ours(texts: list[str]) -> torch.Tensor:
        return ours.encode(texts, batch_size=BATCH_SIZE)

    def encode_reference(texts: list[str]) -> torch.Tensor:
        return reference.encode(
            texts, batch_size=BATCH_SIZE, normalize_embeddings=True, convert_to_tensor=True
        ).cpu()

    encode_ours(sentences[:BATCH_SIZE])  # warm-up: first-call allocations
    encode_reference(sentences[:BATCH_SIZE])
    our_times, reference_times = [], []
    for _ in range(REPETITIONS):
        seconds, our_embeddings = timed(encode_ours, sentences)
        our_times.append(seconds)
        seconds, reference_embeddings = timed(encode_reference, sentences)
        reference_times.append(seconds)
    ours_s, reference_s = statistics.median(our_times), statistics.median(reference_times)
    print(f"encode {len(sentences)} sentences, batch {BATCH_SIZE}, median of {REPETITIONS}:")
    print(f"  attnlib               {ours_s:6.2f} s  {len(sentences) / ours_s:7.1f} sentences/s")
    print(
        f"  sentence-transformers {reference_s:6.2f} s  "
        f"{len(sentences) / reference_s:7.1f} sentences/s"
    )
    print(f"  attnlib time / reference time: {ours_s / reference_s:.2f}x")

    embedding_diff = (our_embeddings - reference_embeddings).abs().max().item()
    bert = AutoModel.from_pretrained(str(minilm.minilm_files()), attn_implementation="eager")
    input_ids, real = ours.tokenize(sentences[:BATCH_SIZE])
    with torch.no_grad():
        their_weights = torch.stack(
            bert.eval()(
                input_ids=input_ids, attention_mask=real.long(), output_attentions=True
            ).attentions
        )  # (L, B, H, T, T)
        our_weights = ours(input_ids, real).attentions
    query_is_real = real[None, :, None, :, None]  # padding queries are never pooled
    weight_diff = ((our_weights - their_weights).abs() * query_is_real).max().item()
    print(f"max |difference|: embeddings {embedding_diff:.1e} ({len(sentences)} sentences),")
    print(f"  attention weights {weight_diff:.1e} (the first batch, every layer and head)")
    if args.no_save:
        return
    results.save(
        "minilm",
        {
            "sentences": len(sentences),
            "batch_size": BATCH_SIZE,
            "repetitions": REPETITIONS,
            "seconds_attnlib": ours_s,
            "seconds_reference": reference_s,
            "embedding_difference": embedding_diff,
            "attention_weight_difference": weight_diff,
        },
    )


if __name__ == "__main__":
    main()
