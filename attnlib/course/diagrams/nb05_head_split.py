"""A diagram drawn with code: splitting the model width into heads and merging them back, beside the wrong plain view that mixes positions.

Notebook 05. (Placeholder: to be drawn.)
"""

from __future__ import annotations

from matplotlib.figure import Figure


def draw() -> Figure:
    """The diagram as a matplotlib figure."""
    raise NotImplementedError("not drawn yet")
