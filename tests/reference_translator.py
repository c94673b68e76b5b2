"""The reference date translator that notebook 09 studies.

``python tests/reference_translator.py`` trains ``train_date_translator(seed=0)`` (the
notebook's recipe, in float64) and writes ``attnlib/data/date_translator.pt`` and, beside
it, ``date_translator.json`` with the run's losses and learning rates.
``tests/test_reference_translator.py`` checks that the stored run is still the recipe's:
a fresh run must reproduce its first 100 losses (the part of training that no machine's
rounding changes), so a change to the recipe cannot leave a stale reference behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from attnlib.course import date_translator

DATA = Path(__file__).resolve().parents[1] / "attnlib"
WEIGHTS_FILE = DATA / date_translator.REFERENCE_WEIGHTS
HISTORY_FILE = DATA / date_translator.REFERENCE_HISTORY
SEED = 0


def main() -> None:
    translator = date_translator.train_date_translator(seed=SEED)
    history = translator.history
    assert history is not None
    translator.save(WEIGHTS_FILE)
    record = {
        "recipe": f"attnlib.course.date_translator.train_date_translator(seed={SEED})",
        "torch": torch.__version__,
        "losses": history.losses,
        "learning_rates": history.learning_rates,
    }
    HISTORY_FILE.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {WEIGHTS_FILE} and {HISTORY_FILE} ({len(history.losses)} steps)")


if __name__ == "__main__":
    main()
