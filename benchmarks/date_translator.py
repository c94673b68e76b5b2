"""Train the date translator with its defaults; print the time and held-out accuracy.

`python -m benchmarks.date_translator` (about a minute on 2 CPU cores) stores the figures in
`benchmarks/results/date_translator.json` (`--no-save`: printed only). The held-out dates
come from `split_dates(1000, seed=0)` and are never used in training.

`python -m benchmarks.date_translator --recipes` (fifteen runs, about ten minutes) compares
the recipes behind notebook 09 over seeds 0 to 4 at the default 600 steps: the notebook's
training loop (label smoothing 0.1, linear warm-up and linear decay), the same with the
paper's inverse-square-root tail after the warm-up (scaled to the same peak), and the
stored reference translator's recipe (no smoothing). For each run it prints the held-out
exact-match accuracy (greedy, 1000 and 4000 held-out pairs), the held-out teacher-forced
cross-entropy (unsmoothed, so the recipes are comparable) and the mean training loss of
the last 50 steps (smoothed when the recipe smooths); then each recipe's mean and worst
seed.
"""

from __future__ import annotations

import inspect

import torch

from attnlib import label_smoothed_cross_entropy
from attnlib.course import date_tokenizer, date_translator, dates
from benchmarks import command_line, results

RECIPES = {  # name -> keyword arguments of train_date_translator
    "linear, eps 0.1 (notebook 09's loop)": {"label_smoothing": 0.1},
    "inverse-sqrt, eps 0.1": {"label_smoothing": 0.1, "schedule": "inverse_sqrt"},
    "linear, eps 0.0 (the reference)": {"label_smoothing": 0.0},
}
SEEDS = (0, 1, 2, 3, 4)


def measure_defaults(save: bool = True) -> None:
    """Train with the defaults, print the time and the accuracies, and store them if ``save``."""
    print(f"torch threads: {torch.get_num_threads()}")
    translator = date_translator.train_date_translator(seed=0)
    history = translator.history
    assert history is not None
    _, heldout_dates = dates.split_dates(1000, seed=0)
    pairs = dates.sample_pairs(1000, seed=123, dates=heldout_dates)
    print(
        f"training: {len(history.losses)} steps in {history.seconds:.1f} s, "
        f"final loss {history.losses[-1]:.4f}"
    )
    accuracy = {}
    for beam_size in (1, 4):
        accuracy[beam_size] = translator.accuracy(pairs, beam_size=beam_size)
        print(
            f"held-out exact match (1,000 unseen dates, beam {beam_size}): "
            f"{accuracy[beam_size]:.3f}"
        )
    by_format = {}
    for fmt in dates.FORMATS:
        subset = dates.sample_pairs(200, seed=7, dates=heldout_dates, formats=(fmt,))
        by_format[fmt] = translator.accuracy(subset)
        print(f"  {fmt:24s} {by_format[fmt]:.3f}")
    model = translator.model
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(
            date_translator.train_date_translator
        ).parameters.items()
    }
    if not save:
        return
    results.save(
        "date_translator",
        {
            "parameters": sum(p.numel() for p in model.parameters()),
            "steps": len(history.losses),
            "batch_size": defaults["batch_size"],
            "d_model": defaults["d_model"],
            "num_layers": defaults["num_layers"],
            "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
            "seconds": history.seconds,
            "final_loss": history.losses[-1],
            "heldout_pairs": len(pairs),
            "accuracy_greedy": accuracy[1],
            "accuracy_beam4": accuracy[4],
            "accuracy_by_format": by_format,
        },
    )


def heldout_loss(translator: date_translator.DateTranslator, pairs) -> float:
    """Plain (unsmoothed) teacher-forced cross-entropy per character on ``pairs``."""
    tok = translator.tokenizer
    src, tgt_in, tgt_out = date_tokenizer.make_batch(pairs, tok)
    with torch.no_grad():
        logits = translator.model(src, tgt_in)  # (B, T, V)
        return label_smoothed_cross_entropy(logits, tgt_out, 0.0, tok.pad_id).item()


def compare_recipes() -> None:
    print(f"torch threads: {torch.get_num_threads()}")
    _, heldout_dates = dates.split_dates(1000, seed=0)
    notebook_pairs = dates.sample_pairs(1000, seed=123, dates=heldout_dates)  # 09 §7's test
    pairs = notebook_pairs + dates.sample_pairs(3000, seed=456, dates=heldout_dates)
    summary: dict[str, list[tuple[float, float, float]]] = {}
    for seed in SEEDS:  # seed by seed, so that a first comparison comes early
        for name, kwargs in RECIPES.items():
            translator = date_translator.train_date_translator(seed=seed, **kwargs)
            history = translator.history
            assert history is not None
            notebook_accuracy = translator.accuracy(notebook_pairs)
            accuracy = translator.accuracy(pairs)
            loss = heldout_loss(translator, pairs)
            tail = sum(history.losses[-50:]) / 50
            summary.setdefault(name, []).append((notebook_accuracy, accuracy, loss))
            print(
                f"{name:38s} seed {seed}: held-out exact match {notebook_accuracy:.3f} on "
                f"09's 1000, {accuracy:.4f} on 4000 "
                f"({round((1 - accuracy) * len(pairs))} errors), "
                f"held-out loss {loss:.4f}, last-50 training loss {tail:.4f}, "
                f"{history.seconds:.0f} s",
                flush=True,
            )
    print("mean over seeds", SEEDS)
    for name, rows in summary.items():
        mean = [sum(row[i] for row in rows) / len(rows) for i in range(3)]
        print(
            f"{name:38s} exact match on 09's 1000: mean {mean[0]:.3f}, worst seed "
            f"{min(r[0] for r in rows):.3f}; on 4000: mean {mean[1]:.4f}, worst seed "
            f"{min(r[1] for r in rows):.4f}; held-out loss {mean[2]:.4f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser(
        "date_translator", __doc__, writes="benchmarks/results/date_translator.json"
    )
    parser.add_argument(
        "--recipes",
        action="store_true",
        help="compare notebook 09's recipes over seeds 0 to 4 instead (writes no file)",
    )
    args = parser.parse_args(argv)
    if args.recipes:
        compare_recipes()
    else:
        measure_defaults(save=not args.no_save)


if __name__ == "__main__":
    main()
