"""docs/measurements.md quotes the benchmarks' last stored runs, written by
`python -m benchmarks.measurements`, and nothing typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import measurements, results


def test_the_page_quotes_the_stored_figures() -> None:
    text = measurements.PAGE.read_text(encoding="utf-8")
    assert measurements.regenerate(text) == text, "run `python -m benchmarks.measurements`"


def test_a_changed_figure_makes_the_page_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    stored = results.load("minilm")
    changed = {**stored, "seconds_attnlib": stored["seconds_attnlib"] * 2}
    monkeypatch.setattr(results, "load", lambda name: changed if name == "minilm" else {})
    page = measurements.minilm()
    assert f"{stored['seconds_attnlib'] / stored['seconds_reference'] * 2:.2f}×" in page


def test_check_fails_on_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "measurements.md"
    text = measurements.PAGE.read_text(encoding="utf-8")
    page.write_text(
        text.replace("<!-- end generated: minilm -->", "| 1 |\n<!-- end generated: minilm -->"),
        encoding="utf-8",
    )
    monkeypatch.setattr(measurements, "PAGE", page)
    monkeypatch.setattr(measurements, "ROOT", tmp_path)
    assert measurements.main(["--check"]) == 1
    assert measurements.main([]) == 0
    assert page.read_text(encoding="utf-8") == text
    assert measurements.main(["--check"]) == 0


def test_a_page_without_a_block_is_refused() -> None:
    with pytest.raises(ValueError, match="generated blocks"):
        measurements.regenerate("<!-- generated: minilm -->\n<!-- end generated: minilm -->\n")


@pytest.mark.parametrize(
    "name", ["equivalence", "date_translator", "gpt", "minilm", "notebook_times"]
)
def test_every_stored_run_names_its_machine(name: str) -> None:
    assert "threads" in results.load(name)["machine"]


def test_a_missing_run_says_which_benchmark_makes_it() -> None:
    with pytest.raises(FileNotFoundError, match=r"python -m benchmarks\.nothing"):
        results.load("nothing")


def test_saving_writes_the_figures_with_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results, "RESULTS", tmp_path)
    path = results.save("example", {"seconds": 1.5})
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved == {"machine": results.machine(), "seconds": 1.5}
