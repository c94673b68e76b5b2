"""A diagram drawn with code: a (B, 1, 1, T) padding mask broadcast against (B, H, T, T) scores.

Notebook 07. (Placeholder: to be drawn.)
"""

from __future__ import annotations

from matplotlib.figure import Figure


def draw() -> Figure:
    """The diagram as a matplotlib figure."""
    raise NotImplementedError("not drawn yet")
