"""A diagram drawn with code: which inputs each output depends on, in an RNN and in attention.

Two grids side by side, one row per output and one column per input token. Left, the RNN of
section 1 (h_t = tanh(W h_{t−1} + U x_t)): output t depends only on the inputs up to t, and
input j reaches it through t − j + 1 updates, one after another. Right, naive self-attention:
every output depends on every input, the future included, through one step that handles all
positions at once. Each cell shows the number of sequential steps, or a dash where there is no
dependency; the darker the cell, the longer the path. :func:`dependency_steps` gives the same
numbers as a tensor, so that notebook 03 can check them by experiment.

Notebook 03.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
KINDS = ("rnn", "attention")


def dependency_steps(kind: str, n: int) -> torch.Tensor:
    """(n, n) ints: entry [t, j] is how many sequential steps lead from input j to output t,
    0 where output t does not depend on input j.

    ``kind="rnn"``: h_t depends on x_j for j ≤ t, through t − j + 1 updates.
    ``kind="attention"``: every output depends on every input, through 1 step.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if kind == "attention":
        return torch.ones(n, n, dtype=torch.int64)
    t = torch.arange(n)
    gap = t[:, None] - t[None, :]  # t − j
    return torch.where(gap >= 0, gap + 1, 0)


def _grid(ax: Axes, steps: torch.Tensor, tokens: Sequence[str], output: str, title: str) -> None:
    n = len(tokens)
    colours = ListedColormap(
        ["white", *plt.get_cmap("Blues")([0.25 + 0.65 * i / max(n - 1, 1) for i in range(n)])]
    )
    ax.imshow(steps.numpy(), cmap=colours, vmin=-0.5, vmax=n + 0.5)
    for t in range(n):
        for j in range(n):
            value = int(steps[t, j])
            label = str(value) if value else "–"
            ax.text(j, t, label, ha="center", va="center", fontsize=12,
                    color="white" if value > 0.6 * n else "black")  # fmt: skip
    ax.set_xticks(range(n), labels=[f"x{str(j).translate(SUBSCRIPTS)}\n{w}" for j, w in
                                    enumerate(tokens)])  # fmt: skip
    ax.set_yticks(range(n), labels=[f"{output}{str(t).translate(SUBSCRIPTS)}" for t in range(n)])
    ax.set_xticks([i - 0.5 for i in range(1, n)], minor=True)
    ax.set_yticks([i - 0.5 for i in range(1, n)], minor=True)
    ax.grid(which="minor", color="grey", linewidth=0.8)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("input token")
    ax.set_ylabel("output")
    ax.set_title(title, fontsize=11)


def draw(tokens: Sequence[str] = ("the", "cat", "sat", "down")) -> Figure:
    """The two dependency grids for a sentence of ``tokens`` (section 1's, by default)."""
    n = len(tokens)
    if n < 1:
        raise ValueError("tokens must name at least one token")
    fig, (rnn_ax, attention_ax) = plt.subplots(1, 2, figsize=(4.2 + 1.5 * n, 1.2 * n + 1.9))
    _grid(
        rnn_ax, dependency_steps("rnn", n), tokens, "h",
        f"RNN: h_t sees x_0 … x_t only,\nthrough up to {n} updates one after another",
    )  # fmt: skip
    _grid(
        attention_ax, dependency_steps("attention", n), tokens, "out",
        "Naive self-attention: every output sees every input,\nthe future too, in 1 step",
    )  # fmt: skip
    fig.suptitle(
        "Which inputs each output depends on, and through how many sequential steps "
        "(– : not at all)",
        fontsize=12,
    )
    fig.tight_layout()
    return fig
