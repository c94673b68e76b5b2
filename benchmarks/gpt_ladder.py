"""What each part of a GPT adds, measured: ``python -m benchmarks.gpt_ladder``.

Trains every rung of :mod:`attnlib.course.gpt_ladder` (bigram, one attention head, several
heads, a feed-forward network, residuals and LayerNorm) as notebook 10 does, on the first 90 %
of the course's prose, and prints each rung's validation loss on the last 10 %, its size and
its training time, the weight each head of the rungs without residuals gives the current
character (:func:`attnlib.course.gpt_ladder.own_position_weights`), then the loss of bigram
probabilities counted on the training text (the first rung's floor) and the whole ladder's
time. Stores the figures in ``benchmarks/results/gpt_ladder.json``.

``--seeds 0 1 2 3 4`` trains the ladder once per seed and prints, for each rung, the spread of
its loss over them: the notebook asserts only what holds for every seed. ``--set steps=600
batch_size=128`` changes the ladder's configuration (for trying; only a run of the default
configuration is stored).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace

import torch

from attnlib.course import char_data, gpt_ladder
from benchmarks import command_line, results


def split() -> tuple[torch.Tensor, torch.Tensor, int]:
    """The notebook's split: the first 90 % of the course's prose to train on, the rest."""
    text = char_data.load_course_text()
    vocabulary = char_data.CharTokenizer(text)
    data = torch.tensor(vocabulary.encode(text))
    n_train = int(0.9 * len(data))
    return data[:n_train], data[n_train:], vocabulary.vocab_size


def run(
    config: gpt_ladder.LadderConfig,
) -> tuple[list[gpt_ladder.Rung], float, dict[str, list[float]], float, float]:
    """The ladder's rungs, the counted bigram's validation loss, the weight each head of the
    rungs without residuals gives the current character, and the wall-clock and CPU seconds
    the ladder took."""
    train, val, vocab_size = split()
    start, cpu = time.perf_counter(), time.process_time()
    rungs = []
    for name in gpt_ladder.RUNGS:
        rung = gpt_ladder.train_rung(name, train, val, vocab_size, config)
        print(
            f"  {rung.name:<24}{rung.parameters:>8,} parameters   validation {rung.val_loss:.3f}"
            f"   training {rung.train_loss:.3f}   {rung.seconds:5.1f} s",
            flush=True,
        )
        rungs.append(rung)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    windows = gpt_ladder.validation_windows(val, config)
    own_weights = {
        rung.name: gpt_ladder.own_position_weights(rung.model, windows).tolist()
        for rung in rungs
        if isinstance(rung.model, gpt_ladder.AttentionStack)
    }
    for name, own in own_weights.items():
        print(f"  {name:<24}weight on the current character: {_rounded(own)}")
    counted = gpt_ladder.bigram_counts_loss(train, windows, vocab_size)
    print(f"  {'bigram, counted':<24}{'':>19}validation {counted:.3f}")
    # On a busy machine the wall-clock time grows with the load; the CPU time much less.
    print(f"  the whole ladder: {seconds:.1f} s ({cpu:.1f} s of CPU time)")
    return rungs, counted, own_weights, seconds, cpu


def _rounded(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main(argv: list[str] | None = None) -> int:
    parser = command_line.benchmark_parser(
        "gpt_ladder", __doc__, writes="benchmarks/results/gpt_ladder.json"
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="one ladder per seed")
    parser.add_argument(
        "--set", nargs="+", default=[], metavar="NAME=VALUE", help="change LadderConfig fields"
    )
    args = parser.parse_args(argv)
    config = gpt_ladder.LadderConfig()
    for setting in args.set:
        name, _, value = setting.partition("=")
        kind = type(getattr(config, name))
        config = replace(config, **{name: kind(value)})
    print(f"torch threads: {torch.get_num_threads()}; {config}")
    by_seed = {}
    for seed in args.seeds:
        print(f"seed {seed}:")
        by_seed[seed] = run(replace(config, seed=seed))
    if len(args.seeds) > 1:
        print("over the seeds (lowest – highest validation loss):")
        for i, name in enumerate(gpt_ladder.RUNGS):
            losses = [found[0][i].val_loss for found in by_seed.values()]
            print(f"  {name:<24}{min(losses):.3f} – {max(losses):.3f}")
    if config == gpt_ladder.LadderConfig() and 0 in by_seed and not args.no_save:
        rungs, counted, own_weights, seconds, cpu = by_seed[0]
        results.save(
            "gpt_ladder",
            {
                "config": asdict(config),
                "rungs": [rung.figures() for rung in rungs],
                "bigram_counted_val_loss": counted,
                "own_position_weights": own_weights,
                "seconds": seconds,
                "cpu_seconds": cpu,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
