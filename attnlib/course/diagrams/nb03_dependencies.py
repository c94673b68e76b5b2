"""A diagram drawn with code: the dependency matrix: which inputs each output of an RNN and of naive self-attention depends on, and through how many steps.

Notebook 03. (Placeholder: to be drawn.)
"""

from __future__ import annotations

from matplotlib.figure import Figure


def draw() -> Figure:
    """The diagram as a matplotlib figure."""
    raise NotImplementedError("not drawn yet")
