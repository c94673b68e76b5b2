"""A diagram drawn with code: a (B, 1, 1, T) padding mask broadcast against (B, H, T, T) scores.

On the left the mask: one row per sentence (B), its two size-1 dimensions (heads, queries) and
T_k keys, True where the key is a real token. On the right what broadcasting makes of it for
scores of shape (B, H, T_q, T_k): sentence b's row is used for every head (dimension 1) and every
query row (dimension 2), so in each head each query of sentence b sees the same keys.

Notebook 07.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

ALLOWED = "#4c8cc8"  # True: may attend
BLOCKED = "#d9d9d9"  # False: blocked (padding)


def _cell(ax: Axes, x: float, y: float, size: float, allowed: bool, *, alpha: float = 1.0) -> None:
    ax.add_patch(
        Rectangle(
            (x, y),
            size,
            size,
            facecolor=ALLOWED if allowed else BLOCKED,
            edgecolor="white" if allowed else "#9a9a9a",
            hatch=None if allowed else "///",
            linewidth=0.8,
            alpha=alpha,
        )
    )


def _grid(
    ax: Axes, x: float, y: float, row: list[bool], rows: int, size: float, alpha: float
) -> None:
    """``rows`` copies of ``row``, the top one at height ``y``."""
    for i in range(rows):
        for j, allowed in enumerate(row):
            _cell(ax, x + j * size, y - i * size, size, allowed, alpha=alpha)
    width, height = len(row) * size, rows * size
    ax.add_patch(
        Rectangle((x, y - height + size), width, height, fill=False, edgecolor="#333333", lw=1)
    )


SIZE, LEFT, RIGHT = 0.8, 0.6, 13.0  # a cell's side; where the mask and the copies start


def _sentence(ax: Axes, b: int, length: int, row: list[bool], top: float, heads: int) -> None:
    """Sentence ``b``'s row of the mask on the left, what the scores see on the right."""
    t = len(row)
    for j, allowed in enumerate(row):
        _cell(ax, LEFT + j * SIZE, top, SIZE, allowed)
    ax.text(LEFT, top + 1.0, f"sentence b = {b}, length {length}", fontsize=9.5)
    for j in range(t):
        ax.text(LEFT + (j + 0.5) * SIZE, top - 0.35, str(j), ha="center", fontsize=8)
    ax.text(LEFT + t * SIZE / 2, top - 0.85, "keys j (T_k)", ha="center", fontsize=8.5)

    # the broadcast copies: one (T_q, T_k) grid per head, drawn as a stack of cards
    for h in reversed(range(heads)):
        shift = 0.45 * h
        _grid(ax, RIGHT + shift, top + 0.9 - shift, row, t, SIZE * 0.75, 0.35 if h else 1.0)
    ax.text(
        RIGHT + t * SIZE * 0.75 + 0.45 * heads + 0.2,
        top + 0.6,
        f"{heads} heads (dim 1):\nthe same grid",
        fontsize=8.5,
        va="top",
    )
    ax.text(RIGHT - 0.25, top + 0.55, "query\nrows\n(T_q)", fontsize=8, ha="right", va="top")
    ax.text(RIGHT + t * SIZE * 0.75 / 2, top + 1.65, "keys (T_k)", ha="center", fontsize=8)

    arrow = FancyArrowPatch(
        (LEFT + t * SIZE + 0.3, top + SIZE / 2),
        (RIGHT - 1.4, top + SIZE / 2 - 0.4),
        arrowstyle="-|>",
        mutation_scale=16,
        color="#444444",
        lw=1.4,
    )
    ax.add_patch(arrow)
    ax.text(
        (LEFT + t * SIZE + RIGHT - 1.1) / 2,
        top - 0.9,
        "row b copied to every head (dim 1)\nand every query row (dim 2)",
        ha="center",
        fontsize=8.5,
    )


def draw(lengths: tuple[int, ...] = (3, 5), heads: int = 3) -> Figure:
    """The mask of sentences of ``lengths`` (padded to the longest), broadcast over ``heads``."""
    t = max(lengths)
    rows = [[j < length for j in range(t)] for length in lengths]
    fig, ax = plt.subplots(figsize=(11, 5.6))
    ax.set_xlim(0, 22)
    ax.set_ylim(-1.2, 11.2)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.suptitle(
        f"A padding mask of shape (B, 1, 1, T_k) = ({len(lengths)}, 1, 1, {t}) broadcast against "
        f"scores (B, H, T_q, T_k) = ({len(lengths)}, {heads}, {t}, {t})",
        fontsize=12,
    )
    ax.text(LEFT, 10.4, "the mask (B, 1, 1, T_k)", fontsize=11, weight="bold")
    ax.text(LEFT, 9.85, "one row of keys per sentence; heads and queries have size 1", fontsize=8.5)
    ax.text(RIGHT, 10.4, "what the scores see: (B, H, T_q, T_k)", fontsize=11, weight="bold")
    for b, row in enumerate(rows):
        _sentence(ax, b, lengths[b], row, 8.2 - 5.0 * b, heads)

    _cell(ax, LEFT, -1.0, 0.5, True)
    ax.text(LEFT + 0.7, -0.85, "True: a real token, may attend", fontsize=9)
    _cell(ax, 7.0, -1.0, 0.5, False)
    ax.text(7.7, -0.85, "False: padding, blocked in every head, for every query", fontsize=9)
    fig.tight_layout()
    return fig
