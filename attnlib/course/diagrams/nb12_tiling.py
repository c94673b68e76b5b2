"""A diagram drawn with code: tiled attention's grid of query tiles against key tiles.

The (T_q, T_k) score matrix cut into tiles of ``tile_size`` rows and columns (the last ones
shorter when the size does not divide T), drawn to scale. Each tile carries the order in which
tiled attention visits it: one query tile at a time, its key tiles from left to right. Beside
each row of tiles, what that query tile keeps from one key tile to the next: the running
maximum m and sum ℓ (one number per query) and the unnormalised output õ (d_v numbers per
query), rescaled by e^(m − m') whenever m grows and divided, õ / ℓ, after the last key tile.
Only one tile of scores exists at a time; the whole matrix never does.

Notebook 12.
"""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
TILE, CURRENT, STATE = "#dbe9f6", "#f8c08a", "#f2ee9c"


def _sub(i: int) -> str:
    return str(i).translate(SUBSCRIPTS)


def _tiles(t: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, t)) for start in range(0, t, size)]


def draw(t_q: int = 10, t_k: int = 10, tile_size: int = 4) -> Figure:
    """The tiles of a (t_q, t_k) score matrix, their order, and what each query tile keeps.

    The tile visited at step ``len(key tiles) + 1`` (the second query tile's first) is shown
    in orange, as if the computation were there.
    """
    for name, value in (("t_q", t_q), ("t_k", t_k), ("tile_size", tile_size)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    rows, cols = _tiles(t_q, tile_size), _tiles(t_k, tile_size)
    fig, ax = plt.subplots(figsize=(0.45 * t_k + 6.0, 0.45 * t_q + 2.4))
    current = (1, 0) if len(rows) > 1 else (0, 0)
    step = 0
    for i, (q0, q1) in enumerate(rows):
        for j, (k0, k1) in enumerate(cols):
            step += 1
            colour = CURRENT if (i, j) == current else TILE
            ax.add_patch(Rectangle((k0, q0), k1 - k0, q1 - q0, facecolor=colour,
                                   edgecolor="black", lw=1.2))  # fmt: skip
            ax.text((k0 + k1) / 2, (q0 + q1) / 2, f"{step}", ha="center", va="center",
                    fontsize=12, fontweight="bold")  # fmt: skip
            ax.text(k0 + 0.12, q0 + 0.12, f"{q1 - q0}×{k1 - k0}", ha="left", va="top",
                    fontsize=7, color="#444444")  # fmt: skip
        middle = (q0 + q1) / 2
        for (a0, a1), (b0, b1) in itertools.pairwise(cols):  # the sweep along the row
            ax.add_patch(FancyArrowPatch(((a0 + a1) / 2 + 0.35, middle),
                                         ((b0 + b1) / 2 - 0.35, middle), arrowstyle="-|>",
                                         mutation_scale=12, lw=1.0, color="#555555"))  # fmt: skip
        box = FancyBboxPatch((t_k + 0.7, q0 + 0.1), 5.6, q1 - q0 - 0.2,
                             boxstyle="round,pad=0.02,rounding_size=0.15", facecolor=STATE,
                             edgecolor="black", lw=1.0)  # fmt: skip
        ax.add_patch(box)
        n = q1 - q0
        ax.text(t_k + 0.9, middle,
                f"query tile Q{_sub(i)} keeps, per query:\n"
                f"m, ℓ: ({n},)   õ: ({n}, d_v)\n"
                f"after key tile {len(cols)}: O = õ / ℓ",
                ha="left", va="center", fontsize=8.5)  # fmt: skip
        ax.text(-0.3, middle, f"Q{_sub(i)}\nrows {q0}–{q1 - 1}", ha="right", va="center",
                fontsize=9)  # fmt: skip
    for j, (k0, k1) in enumerate(cols):
        ax.text((k0 + k1) / 2, -0.35, f"K{_sub(j)}, V{_sub(j)}\nkeys {k0}–{k1 - 1}",
                ha="center", va="bottom", fontsize=9)  # fmt: skip
    ax.text(t_k / 2, t_q + 0.35,
            "each new tile of scores S: m' = max(m, rowmax S),  P = e^(S − m'),\n"
            "ℓ ← e^(m − m')·ℓ + rowsum P,   õ ← e^(m − m')·õ + P·V_tile",
            ha="center", va="top", fontsize=9)  # fmt: skip
    ax.set_xlim(-2.6, t_k + 6.6)
    ax.set_ylim(t_q + 1.9, -1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(
        f"Tiled attention over a {t_q}×{t_k} score matrix in tiles of {tile_size}: "
        "the numbers give the order of the tiles;\none tile of scores at a time (orange), "
        "and each query tile carries m, ℓ, õ from one key tile to the next",
        fontsize=11,
    )
    fig.tight_layout()
    return fig
