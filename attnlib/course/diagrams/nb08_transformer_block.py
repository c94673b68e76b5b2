"""A diagram drawn with code: the Transformer block of the paper's Figure 1, with post-norm and pre-norm wiring.

Notebook 08. (Placeholder: to be drawn.)
"""

from __future__ import annotations

from matplotlib.figure import Figure


def draw() -> Figure:
    """The diagram as a matplotlib figure."""
    raise NotImplementedError("not drawn yet")
