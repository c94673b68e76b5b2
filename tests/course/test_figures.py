"""Every figure command runs and writes a non-empty PNG, the same bytes twice."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from script_loader import load_script

from attnlib.course.playgrounds import SHOW_CALL as PLAYGROUND_CALL

FIGURE_SCRIPT = Path(__file__).resolve().parents[2] / "figures" / "make_figures.py"
# docs/notebooks.md, "The course in pictures": every figure and diagram, each with its notebook.
GALLERY = (FIGURE_SCRIPT.parents[1] / "docs" / "notebooks.md").read_text(encoding="utf-8")


make_figures = load_script(FIGURE_SCRIPT)


def _drawn_twice(draw: Callable[[], Figure], check: Callable[[Figure], None], tmp: Path) -> None:
    """Draw twice, ``check`` each figure, and assert both PNGs are the same real image."""
    pngs = []
    for attempt in range(2):
        fig = draw()
        check(fig)
        path = tmp / f"{attempt}.png"
        fig.savefig(path, dpi=make_figures.DPI, metadata={"Software": None})
        plt.close(fig)
        pngs.append(path.read_bytes())
    assert pngs[0].startswith(b"\x89PNG") and len(pngs[0]) > 10_000
    assert pngs[0] == pngs[1]


def _labelled_axes(fig: Figure) -> None:
    for ax in fig.axes:
        if ax.get_label() != "<colorbar>":
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def _titled(fig: Figure) -> None:
    """A diagram of boxes and arrows has no axes to label, but it has a title."""
    assert any([fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]), "no title"


# Drawing it trains the date translator (minutes): `make unit` draws it, `make unit-fast` does not.
SLOW_FIGURES = {"date_cross_attention.png"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_FIGURES else name
        for name in sorted(make_figures.FIGURES)
    ],
)
def test_figure_is_written_deterministically(name: str, tmp_path: Path) -> None:
    _drawn_twice(make_figures.FIGURES[name], _labelled_axes, tmp_path)


@pytest.mark.parametrize("name", sorted(make_figures.DIAGRAMS))
def test_diagram_is_titled_and_written_deterministically(name: str, tmp_path: Path) -> None:
    _drawn_twice(make_figures.DIAGRAMS[name], _titled, tmp_path)


def test_every_diagram_is_stored_shown_in_the_gallery_and_drawn_in_its_notebook() -> None:
    stored = {f"diagrams/{p.name}" for p in (FIGURE_SCRIPT.parent / "diagrams").glob("*.png")}
    assert stored == set(make_figures.DIAGRAMS), "figures/diagrams/ differs from `make figures`"
    notebooks = FIGURE_SCRIPT.parent.parent / "instructors" / "notebooks"
    for name in stored:
        assert f"(../figures/{name})" in GALLERY, f"docs/notebooks.md does not show {name}"
    for module in {draw.__module__ for draw in make_figures.DIAGRAMS.values()}:
        short = module.rsplit(".", 1)[-1]  # nb08_transformer_block
        path = next(notebooks.glob(f"{short[2:4]}_*.ipynb"))
        assert f"diagrams.{short}.draw(" in path.read_text(encoding="utf-8"), (
            f"{path.name} does not draw {module}"
        )


def test_every_figure_is_stored() -> None:
    for name in make_figures.FIGURES:
        assert (FIGURE_SCRIPT.parent / name).is_file(), f"figures/{name} missing: `make figures`"


def test_unknown_figure_name_is_rejected() -> None:
    with pytest.raises(SystemExit, match="unknown figure"):
        make_figures.main(["nope.png"])


def test_every_stored_png_has_a_command_and_is_shown() -> None:
    stored = {path.name for path in FIGURE_SCRIPT.parent.glob("*.png")}
    assert stored == set(make_figures.FIGURES), "a PNG in figures/ that make figures cannot redraw"
    for name in stored:
        assert f"(../figures/{name})" in GALLERY, f"docs/notebooks.md does not show {name}"
    readme = (FIGURE_SCRIPT.parent.parent / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\)", readme)
    assert shown and set(shown) <= stored, "the README shows none of the course's figures"


def _playgrounds_in_notebooks() -> set[str]:
    """``NN-kind.png`` for each playground a notebook shows (the browser test's screenshot)."""
    found = set()
    for path in (FIGURE_SCRIPT.parent.parent / "instructors" / "notebooks").glob(
        "[0-9][0-9]_*.ipynb"
    ):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "code":
                for kind in PLAYGROUND_CALL.findall("".join(cell["source"])):
                    found.add(f"{path.name[:2]}-{kind}.png")
    return found


def test_the_guide_shows_a_screenshot_of_every_playground() -> None:
    shots = FIGURE_SCRIPT.parent / "playgrounds"
    expected = _playgrounds_in_notebooks()
    assert {"09-dates.png", "10-sampler.png", "11-minilm_views.png"} <= expected
    guide = (FIGURE_SCRIPT.parent.parent / "instructors" / "README.md").read_text(encoding="utf-8")
    for name in sorted(expected):
        shot = shots / name
        assert shot.is_file(), f"figures/playgrounds/{name} missing: `make screenshots`"
        assert shot.read_bytes().startswith(b"\x89PNG"), f"figures/playgrounds/{name} is no PNG"
        assert f"(../figures/playgrounds/{name})" in guide, f"the guide does not show {name}"
    stale = {path.name for path in shots.glob("*.png")} - expected
    assert not stale, f"screenshots of playgrounds no notebook shows: {sorted(stale)}"
