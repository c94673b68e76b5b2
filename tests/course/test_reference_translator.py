"""The stored reference translator of notebook 09 is the recipe's run, and is as good as claimed."""

from __future__ import annotations

import json

import pytest
import torch
from reference_translator import HISTORY_FILE, SEED

import attnlib
from attnlib.course import date_translator, dates

# Steps over which every machine's float64 run agrees (see load_reference_translator).
STEPS_NO_MACHINE_CHANGES = 100


@pytest.fixture(scope="module")
def reference() -> date_translator.DateTranslator:
    return date_translator.load_reference_translator()


def test_the_reference_is_the_default_recipe_in_float64(
    reference: date_translator.DateTranslator,
) -> None:
    fresh = date_translator.train_date_translator(seed=SEED, steps=1)
    assert reference.model.config == fresh.model.config
    assert {p.dtype for p in reference.model.parameters()} == {torch.float64}
    assert reference.history is not None
    assert len(reference.history.losses) == len(reference.history.learning_rates) == 600
    record = json.loads(HISTORY_FILE.read_text(encoding="utf-8"))
    assert record["recipe"] == f"attnlib.course.date_translator.train_date_translator(seed={SEED})"


@pytest.mark.slow  # trains the translator again: `make unit` runs it, `make unit-fast` does not
def test_a_fresh_run_reproduces_the_stored_losses_until_rounding_can_matter(
    reference: date_translator.DateTranslator,
) -> None:
    # Regenerate with `python tests/support/reference_translator.py` when this fails after a
    # change to the recipe (learning rate, initialisation, data, model).
    fresh = date_translator.train_date_translator(seed=SEED, steps=600)
    assert reference.history is not None and fresh.history is not None
    stored = torch.tensor(reference.history.losses[:STEPS_NO_MACHINE_CHANGES])
    rerun = torch.tensor(fresh.history.losses[:STEPS_NO_MACHINE_CHANGES])
    torch.testing.assert_close(rerun, stored, rtol=1e-9, atol=1e-12)
    assert fresh.history.learning_rates == reference.history.learning_rates


def test_the_reference_translates_unseen_dates(reference: date_translator.DateTranslator) -> None:
    _, heldout = dates.split_dates(1000, seed=0)
    assert reference.accuracy(dates.sample_pairs(500, seed=123, dates=heldout)) >= 0.99
    assert reference.translate(["the 21st of november, 2026", "3 MAR 1999"]) == [
        "2026-11-21",
        "1999-03-03",
    ]


def test_it_is_exported_and_independent_of_the_caller(
    reference: date_translator.DateTranslator,
) -> None:
    again = attnlib.course.date_translator.load_reference_translator()
    assert again is not reference
    for name, tensor in reference.model.state_dict().items():
        assert torch.equal(tensor, again.model.state_dict()[name]), name
