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

    size, left = 0.8, 0.6
    tops = [8.2 - 5.0 * b for b in range(len(lengths))]
    ax.text(left, 10.4, "the mask (B, 1, 1, T_k)", fontsize=11, weight="bold")
    ax.text(left, 9.85, "one row of keys per sentence; heads and queries have size 1", fontsize=8.5)
    ax.text(13.0, 10.4, "what the scores see: (B, H, T_q, T_k)", fontsize=11, weight="bold")
    for b, (row, top) in enumerate(zip(rows, tops, strict=True)):
        for j, allowed in enumerate(row):
            _cell(ax, left + j * size, top, size, allowed)
        ax.text(left, top + 1.0, f"sentence b = {b}, length {lengths[b]}", fontsize=9.5)
        for j in range(t):
            ax.text(left + (j + 0.5) * size, top - 0.35, str(j), ha="center", fontsize=8)
        ax.text(left + t * size / 2, top - 0.85, "keys j (T_k)", ha="center", fontsize=8.5)

        # the broadcast copies: one (T_q, T_k) grid per head, drawn as a stack of cards
        x0 = 13.0
        for h in reversed(range(heads)):
            shift = 0.45 * h
            _grid(ax, x0 + shift, top + 0.9 - shift, row, t, size * 0.75, 0.35 if h else 1.0)
        ax.text(
            x0 + t * size * 0.75 + 0.45 * heads + 0.2,
            top + 0.6,
            f"{heads} heads (dim 1):\nthe same grid",
            fontsize=8.5,
            va="top",
        )
        ax.text(x0 - 0.25, top + 0.55, "query\nrows\n(T_q)", fontsize=8, ha="right", va="top")
        ax.text(x0 + t * size * 0.75 / 2, top + 1.65, "keys (T_k)", ha="center", fontsize=8)

        arrow = FancyArrowPatch(
            (left + t * size + 0.3, top + size / 2),
            (x0 - 1.4, top + size / 2 - 0.4),
            arrowstyle="-|>",
            mutation_scale=16,
            color="#444444",
            lw=1.4,
        )
        ax.add_patch(arrow)
        ax.text(
            (left + t * size + x0 - 1.1) / 2,
            top - 0.9,
            "row b copied to every head (dim 1)\nand every query row (dim 2)",
            ha="center",
            fontsize=8.5,
        )

    _cell(ax, left, -1.0, 0.5, True)
    ax.text(left + 0.7, -0.85, "True: a real token, may attend", fontsize=9)
    _cell(ax, 7.0, -1.0, 0.5, False)
    ax.text(7.7, -0.85, "False: padding, blocked in every head, for every query", fontsize=9)
    fig.tight_layout()
    return fig
