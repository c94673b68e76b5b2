"""A diagram drawn with code: the KV cache, what each generation step computes and what it reuses.

One row per step of greedy generation in one attention layer. The first step runs the whole
prompt, under the causal mask, and computes the keys and values of every prompt position; each
later step runs only the newest token, computes its key and value (orange), appends them to
the cache and reads those of every earlier position from it (blue). The newest position's
query attends to all of them, to every cached key and to its own, and picks the next token.
Positions not generated yet are dashed. On the right, how many positions' keys and values the
step computes and how many it reads.

Notebook 10.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch

COMPUTED, CACHED, QUERY, LATER = "#f8c08a", "#a9d3ee", "#f2ee9c", "white"
BOX_W, BOX_H, ROW = 0.78, 0.62, 1.75  # a position's box; the drop from one step to the next
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def _sub(i: int) -> str:
    return str(i).translate(SUBSCRIPTS)


def _box(ax: Axes, x: float, y: float, colour: str, text: str, dashed: bool = False) -> None:
    patch = FancyBboxPatch(
        (x - BOX_W / 2, y - BOX_H / 2), BOX_W, BOX_H,
        boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=colour,
        edgecolor="grey" if dashed else "black", lw=1.0, linestyle="--" if dashed else "-",
        zorder=3,
    )  # fmt: skip
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=9, zorder=4,
            color="grey" if dashed else "black")  # fmt: skip


def _step(ax: Axes, y: float, step: int, prompt_length: int, total: int) -> None:
    """One row: the step's keys and values, its query, and what it attends to."""
    newest = prompt_length - 1 + step  # the position whose query picks the next token
    first_new = 0 if step == 0 else newest
    for position in range(total):
        if position > newest:
            _box(ax, position, y, LATER, f"t{_sub(position)}", dashed=True)
        else:
            colour = COMPUTED if position >= first_new else CACHED
            _box(ax, position, y, colour, f"k{_sub(position)} v{_sub(position)}")
    qy = y + 0.95
    _box(ax, newest, qy, QUERY, f"q{_sub(newest)}")
    for position in range(newest + 1):
        arrow = FancyArrowPatch(
            (newest - 0.12 * (newest > position), qy - BOX_H / 2),
            (position, y + BOX_H / 2),
            arrowstyle="-|>", mutation_scale=9, lw=0.8, color="#555555",
            connectionstyle=f"arc3,rad={0.0 if position == newest else 0.12}", zorder=2,
        )  # fmt: skip
        ax.add_patch(arrow)
    ax.text(newest + BOX_W / 2 + 0.1, qy, f"→ t{_sub(newest + 1)}", ha="left", va="center",
            fontsize=9)  # fmt: skip
    fed = "the prompt, causally" if step == 0 else f"token t{_sub(newest)} alone"
    ax.text(-0.75, y + 0.35, f"step {step + 1}", ha="right", va="center", fontsize=10,
            fontweight="bold")  # fmt: skip
    ax.text(-0.75, y - 0.15, f"runs {fed}", ha="right", va="center", fontsize=9)
    computed = newest + 1 - first_new
    ax.text(
        total - 0.35, y + 0.15,
        f"computes k, v of {computed} position{'s' if computed > 1 else ''}\n"
        f"reads {first_new} from the cache",
        ha="left", va="center", fontsize=9,
    )  # fmt: skip


def draw(prompt_length: int = 3, new_tokens: int = 3) -> Figure:
    """The KV cache over ``new_tokens`` generation steps after a prompt of ``prompt_length``.

    Each row is a step; each box a position's key and value in one attention layer: orange when
    the step computes them, blue when it reads them from the cache, dashed when the position is
    not generated yet. The yellow box is the query of the newest position, with an arrow to
    every key it attends to.
    """
    if prompt_length < 1 or new_tokens < 1:
        raise ValueError(
            f"prompt_length and new_tokens must be at least 1, got {prompt_length}, {new_tokens}"
        )
    total = prompt_length + new_tokens
    # One step per new token: the prompt's, then one per token fed back (the last never is).
    fig, ax = plt.subplots(figsize=(1.1 * total + 4.4, ROW * new_tokens + 1.4))
    for step in range(new_tokens):
        _step(ax, -ROW * step, step, prompt_length, total)
    legend = [
        Patch(facecolor=COMPUTED, edgecolor="black", label="key and value computed at this step"),
        Patch(facecolor=CACHED, edgecolor="black", label="key and value read from the cache"),
        Patch(facecolor=QUERY, edgecolor="black", label="the newest position's query"),
        Patch(facecolor=LATER, edgecolor="grey", linestyle="--", label="not generated yet"),
    ]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=2,
              fontsize=9, frameon=False)  # fmt: skip
    ax.set_xlim(-2.6, total + 2.3)
    ax.set_ylim(-ROW * (new_tokens - 1) - 0.7, 1.6)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(
        "The KV cache in one attention layer: each step computes the keys and values of its new "
        "positions only,\nreads the others from the cache, and the newest query attends to all "
        "of them",
        fontsize=11,
    )
    fig.tight_layout()
    return fig
