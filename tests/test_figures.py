"""Every figure command runs and writes a non-empty PNG, the same bytes twice."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from script_loader import load_script

FIGURE_SCRIPT = Path(__file__).resolve().parent.parent / "figures" / "make_figures.py"


make_figures = load_script(FIGURE_SCRIPT)


@pytest.mark.parametrize("name", sorted(make_figures.FIGURES))
def test_figure_is_written_deterministically(name: str, tmp_path: Path) -> None:
    paths = []
    for attempt in range(2):
        fig = make_figures.FIGURES[name]()
        for ax in fig.axes:
            if ax.get_label() != "<colorbar>":
                assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        path = tmp_path / f"{attempt}_{name}"
        fig.savefig(path, dpi=make_figures.DPI, metadata={"Software": None})
        plt.close(fig)
        paths.append(path)
    first = paths[0].read_bytes()
    assert first.startswith(b"\x89PNG") and len(first) > 10_000
    assert first == paths[1].read_bytes()


def test_every_figure_is_stored() -> None:
    for name in make_figures.FIGURES:
        assert (FIGURE_SCRIPT.parent / name).is_file(), f"figures/{name} missing: `make figures`"


def test_unknown_figure_name_is_rejected() -> None:
    with pytest.raises(SystemExit, match="unknown figure"):
        make_figures.main(["nope.png"])


def test_every_stored_png_has_a_command_and_the_readme_shows_the_key_ones() -> None:
    stored = {path.name for path in FIGURE_SCRIPT.parent.glob("*.png")}
    assert stored == set(make_figures.FIGURES), "a PNG in figures/ that make figures cannot redraw"
    readme = (FIGURE_SCRIPT.parent.parent / "README.md").read_text(encoding="utf-8")
    for name in stored:
        assert f"(figures/{name})" in readme, f"README does not show {name}"
