"""A diagram drawn with code: splitting the model width into heads and merging them back, beside
the wrong plain view that mixes positions into heads.

One sequence of T = 3 tokens, each C = 8 wide, is cut into H = 2 heads of D = 4. Every entry is
coloured by the token it belongs to and labelled with its dim. Top: ``view (B, T, H, D)`` and
``transpose(1, 2)`` give each head a (T, D) table whose rows are whole tokens, and the merge
(transpose back, reshape) restores x. Bottom: ``view (B, H, T, D)`` straight from x has the same
shape, but reads the numbers in memory order, so a head's "token" rows hold pieces of other
tokens.

Notebook 05.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

T, C, H = 3, 8, 2
D = C // H
TOKEN_COLOURS = ("#9ecae1", "#fdae6b", "#a1d99b")  # token 0 blue, token 1 orange, token 2 green
Entry = tuple[int, int]  # (token, dim)


def _x() -> list[list[Entry]]:
    return [[(t, c) for c in range(C)] for t in range(T)]


def _right_heads() -> list[list[list[Entry]]]:
    """head h, row t: dims hD … (h+1)D − 1 of token t."""
    return [[[(t, h * D + d) for d in range(D)] for t in range(T)] for h in range(H)]


def _plain_view_heads() -> list[list[list[Entry]]]:
    """The numbers of x in memory order, read as (H, T, D)."""
    flat = [entry for row in _x() for entry in row]
    return [[flat[(h * T + t) * D : (h * T + t + 1) * D] for t in range(T)] for h in range(H)]


def _grid(
    ax, left: float, top: float, rows: list[list[Entry]], title: str, rows_named: bool
) -> None:
    for i, row in enumerate(rows):
        for j, (token, dim) in enumerate(row):
            y = top - i - 1
            ax.add_patch(
                Rectangle((left + j, y), 1, 1, facecolor=TOKEN_COLOURS[token], edgecolor="black")
            )
            ax.text(left + j + 0.5, y + 0.5, str(dim), ha="center", va="center", fontsize=9)
        if rows_named:
            ax.text(left - 0.15, top - i - 0.5, f"t={i}", ha="right", va="center", fontsize=8)
    ax.text(left + len(rows[0]) / 2, top + 0.3, title, ha="center", va="bottom", fontsize=9)


def _arrow(ax, y: float, x_from: float, x_to: float, label: str) -> None:
    ax.add_patch(
        FancyArrowPatch((x_from, y), (x_to, y), arrowstyle="-|>", mutation_scale=14, linewidth=1.4)
    )
    ax.text((x_from + x_to) / 2, y + 0.25, label, ha="center", va="bottom", fontsize=8.5)


def _band(ax, top: float, heads: list[list[list[Entry]]], how: str, names: tuple[str, str]) -> None:
    """x, an arrow labelled ``how``, then the two heads."""
    _grid(ax, 0, top, _x(), "x (B, T, C): row t is token t", rows_named=True)
    _arrow(ax, top - 1.5, 8.3, 12.4, how)
    _grid(ax, 13.5, top, heads[0], names[0], rows_named=True)
    _grid(ax, 19.2, top, heads[1], names[1], rows_named=True)


def _wrong_band(ax, low: float) -> None:
    """The plain view without a transpose: the right shape, rows that mix tokens; and the
    key to the colours."""
    _band(
        ax,
        low,
        _plain_view_heads(),
        "view (B, H, T, D)\nwithout a transpose",
        ("head 0 (wrong)", "head 1 (wrong)"),
    )
    ax.text(
        18.35,
        low - 3.75,
        "the same shape, but rows mix tokens ✗",
        ha="center",
        fontsize=9,
        color="darkred",
    )
    ax.text(
        24.2,
        low - 1.2,
        f"view reads x in memory order: head 0 takes\nthe first T·D = {T * D} numbers, all of "
        "token 0\nand half of token 1. Its row t=1 holds\ntoken 0's dims 4–7: positions are "
        "mixed\ninto heads.",
        ha="left",
        va="center",
        fontsize=9,
        linespacing=1.35,
    )
    for token, colour in enumerate(TOKEN_COLOURS):
        left = 24.2 + 3.6 * token
        ax.add_patch(Rectangle((left, -1.3), 0.7, 0.7, facecolor=colour, edgecolor="black"))
        ax.text(left + 0.9, -0.95, f"token {token}", va="center", fontsize=8.5)


def draw() -> Figure:
    """The split and merge of heads (top) beside the plain view without transpose (bottom)."""
    fig = plt.figure(figsize=(13, 5.0))  # a pyplot figure, so that plt.show() shows it
    ax = fig.add_axes((0.01, 0.0, 0.98, 0.9))
    ax.set_xlim(-1.2, 36.2)
    ax.set_ylim(-1.4, 9.9)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.suptitle(
        f"Splitting the width C = {C} of T = {T} tokens into H = {H} heads of D = {D}, and "
        "merging them back\n(colour: the token an entry belongs to; number: its dim)",
        fontsize=12,
    )

    top = 8.6
    _band(
        ax,
        top,
        _right_heads(),
        "view (B, T, H, D)\ntranspose(1, 2)",
        (f"head 0: dims 0–{D - 1}", f"head 1: dims {D}–{C - 1}"),
    )
    ax.text(
        18.35,
        top - 3.75,
        "(B, H, T, D): row t of every head is token t ✓",
        ha="center",
        fontsize=9,
        color="darkgreen",
    )
    _arrow(ax, top - 1.5, 23.6, 27.3, "merge: transpose(1, 2)\nreshape (B, T, C)")
    _grid(ax, 27.8, top, _x(), "back to x: the heads concatenated", rows_named=False)

    _wrong_band(ax, 3.0)
    return fig
