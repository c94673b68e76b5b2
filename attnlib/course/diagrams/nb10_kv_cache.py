"""A diagram drawn with code: the KV cache: what each generation step computes and what it reuses.

Notebook 10. (Placeholder: to be drawn.)
"""

from __future__ import annotations

from matplotlib.figure import Figure


def draw() -> Figure:
    """The diagram as a matplotlib figure."""
    raise NotImplementedError("not drawn yet")
