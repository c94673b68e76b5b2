"""The character-level GPT: training time and loss, and what the KV cache buys.

`python -m benchmarks.gpt` trains `train_char_gpt()` with its defaults on the course's
prose and prints the time and the loss, then times greedy generation of 500 tokens
with and without the KV cache (alternating repetitions in one run, medians) on an
untrained model of width 96 and 3 layers whose context (1024) holds all 500 tokens: the
speed-up is the ratio of the two, and the cached decoding step the cached time per token.
"""

from __future__ import annotations

import inspect
import statistics
import time

import torch

from attnlib import GPT, GPTConfig
from attnlib.course.char_gpt import train_char_gpt
from benchmarks import command_line, results

NEW_TOKENS = 500
REPETITIONS = 3
TIMED_WIDTH, TIMED_LAYERS = 96, 3


def time_generation(
    model: GPT, prompt: torch.Tensor, use_cache: bool
) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    out = model.generate(prompt, NEW_TOKENS, temperature=0.0, use_cache=use_cache)
    return time.perf_counter() - start, out


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser("gpt", __doc__, writes="benchmarks/results/gpt.json")
    args = parser.parse_args(argv)
    print(f"torch threads: {torch.get_num_threads()}")
    model, vocabulary, history = train_char_gpt(seed=0)
    tail = history.losses[-50:]
    print(
        f"training: {len(history.losses)} steps in {history.seconds:.1f} s, "
        f"loss {history.losses[0]:.2f} -> {sum(tail) / len(tail):.3f} (mean of the last 50 steps)"
    )

    # The cache saves the model's work on every earlier token, so its gain grows with the
    # model: time it on a fixed size (the first edition's char GPT), not on whatever
    # train_char_gpt happens to train.
    config = GPTConfig(
        vocab_size=vocabulary.vocab_size,
        max_len=1024,
        d_model=TIMED_WIDTH,
        num_heads=4,
        num_layers=TIMED_LAYERS,
        dropout=0.0,
    )
    torch.manual_seed(0)
    timed = GPT(config).eval()
    prompt = torch.tensor(vocabulary.encode("Attention is"))[None]  # (1, T)
    with_cache, without_cache = [], []
    for _ in range(REPETITIONS):
        seconds, cached_tokens = time_generation(timed, prompt, use_cache=True)
        with_cache.append(seconds)
        seconds, plain_tokens = time_generation(timed, prompt, use_cache=False)
        without_cache.append(seconds)
        assert torch.equal(cached_tokens, plain_tokens), "the cache changed the tokens"
    cached, plain = statistics.median(with_cache), statistics.median(without_cache)
    print(
        f"generate {NEW_TOKENS} tokens: {plain:.2f} s without the KV cache, "
        f"{cached:.2f} s with it: {plain / cached:.1f}x faster (same tokens); "
        f"cached decoding step {1e3 * cached / NEW_TOKENS:.2f} ms"
    )
    trained = model.config
    if args.no_save:
        return
    results.save(
        "gpt",
        {
            "d_model": trained.d_model,
            "num_layers": trained.num_layers,
            "context": trained.max_len,
            "parameters": sum(p.numel() for p in model.parameters()),
            "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
            "steps": len(history.losses),
            "batch_size": inspect.signature(train_char_gpt).parameters["batch_size"].default,
            "seconds": history.seconds,
            "first_loss": history.losses[0],
            "last_50_loss": sum(tail) / len(tail),
            "kv_cache": {
                "new_tokens": NEW_TOKENS,
                "d_model": TIMED_WIDTH,
                "num_layers": TIMED_LAYERS,
                "context": config.max_len,
                "seconds_without": plain,
                "seconds_with": cached,
            },
        },
    )


if __name__ == "__main__":
    main()
