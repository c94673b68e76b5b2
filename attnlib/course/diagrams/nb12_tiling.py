"""A diagram drawn with code: tiled attention's grid: query tiles against key tiles, and what each step keeps.

Notebook 12. (Placeholder: to be drawn.)
"""

from __future__ import annotations

from matplotlib.figure import Figure


def draw() -> Figure:
    """The diagram as a matplotlib figure."""
    raise NotImplementedError("not drawn yet")
