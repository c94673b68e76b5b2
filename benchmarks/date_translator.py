"""Train the date translator with its defaults; print the time and held-out accuracy.

`python -m benchmarks.date_translator` (about a minute on 2 CPU cores). The held-out
dates come from `split_dates(1000, seed=0)` and are never used in training.
"""

from __future__ import annotations

import torch

from attnlib.course import date_translator, dates


def main() -> None:
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
    for beam_size in (1, 4):
        accuracy = translator.accuracy(pairs, beam_size=beam_size)
        print(f"held-out exact match (1,000 unseen dates, beam {beam_size}): {accuracy:.3f}")
    for fmt in dates.FORMATS:
        subset = dates.sample_pairs(200, seed=7, dates=heldout_dates, formats=(fmt,))
        print(f"  {fmt:24s} {translator.accuracy(subset):.3f}")


if __name__ == "__main__":
    main()
