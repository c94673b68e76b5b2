"""Plot helpers: every plot gets a title and labelled axes.

Each function draws on ``ax`` (or a new figure) and returns the ``Axes``, so a
notebook can combine them; notebook cells end with ``plt.show()``.

Notebooks 01 to 12.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes


def _as_numpy(values: torch.Tensor | np.ndarray | Sequence[float], name: str) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().float().numpy()
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a tensor, array or sequence of numbers") from error


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_heatmap(
    matrix: torch.Tensor | np.ndarray,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    ax: Axes | None = None,
    annotate: bool = True,
    cmap: str = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar_label: str = "value",
) -> Axes:
    """A matrix as a coloured grid with optional token labels and values in each cell.

    Shapes:
        matrix: ``(rows, cols)``; ``row_labels`` has ``rows`` entries, ``col_labels`` ``cols``.
    """
    values = _as_numpy(matrix, "matrix")
    if values.ndim != 2:
        raise ValueError(f"matrix must have shape (rows, cols), got shape {values.shape}")
    rows, cols = values.shape
    if row_labels is not None and len(row_labels) != rows:
        raise ValueError(f"row_labels has {len(row_labels)} entries, matrix has {rows} rows")
    if col_labels is not None and len(col_labels) != cols:
        raise ValueError(f"col_labels has {len(col_labels)} entries, matrix has {cols} columns")
    ax = _new_axes(ax, (1.0 + 0.7 * cols, 0.8 + 0.55 * rows))
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.figure.colorbar(image, ax=ax, label=colorbar_label)
    # Unlabelled axes keep matplotlib's own ticks: a tick per cell crowds a large table.
    if col_labels is not None:
        ax.set_xticks(range(cols), labels=list(col_labels))
        ax.tick_params(axis="x", labelrotation=45)
    if row_labels is not None:
        ax.set_yticks(range(rows), labels=list(row_labels))
    if annotate and rows * cols <= 400:
        cell_colours = image.cmap(image.norm(values))  # (rows, cols, 4) RGBA
        # Perceived brightness of each cell decides black or white text (works for any cmap).
        luminance = cell_colours[..., :3] @ np.array([0.299, 0.587, 0.114])
        for r in range(rows):
            for c in range(cols):
                colour = "black" if luminance[r, c] > 0.5 else "white"
                ax.text(c, r, f"{values[r, c]:.2f}", ha="center", va="center", color=colour)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def plot_attention(
    weights: torch.Tensor | np.ndarray,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    title: str = "Attention weights",
    ax: Axes | None = None,
    annotate: bool = True,
) -> Axes:
    """Attention weights as a heatmap: row = the query attending, column = the key attended to.

    The colour scale is fixed to [0, 1] so heatmaps can be compared.

    Shapes:
        weights: ``(T_q, T_k)``; key labels default to the query labels (self-attention).
    """
    if key_labels is None:
        key_labels = query_labels
    return plot_heatmap(
        weights,
        query_labels,
        key_labels,
        title=title,
        xlabel="key (attended to)",
        ylabel="query (attending)",
        ax=ax,
        annotate=annotate,
        vmin=0.0,
        vmax=1.0,
        colorbar_label="weight",
    )


def plot_distribution(
    probs: torch.Tensor | np.ndarray | Sequence[float],
    labels: Sequence[str] | None = None,
    *,
    title: str,
    xlabel: str = "item",
    ylabel: str = "probability",
    ax: Axes | None = None,
    ylim: tuple[float, float] | None = (0.0, 1.12),
    color: str = "tab:blue",
) -> Axes:
    """A discrete distribution as a bar chart, each bar labelled with its value.

    Shapes:
        probs: ``(n,)``; ``labels`` has ``n`` entries (default ``0 … n-1``).
    """
    values = _as_numpy(probs, "probs")
    if values.ndim != 1:
        raise ValueError(f"probs must have shape (n,), got shape {values.shape}")
    if labels is None:
        labels = [str(i) for i in range(len(values))]
    if len(labels) != len(values):
        raise ValueError(f"labels has {len(labels)} entries, probs has {len(values)}")
    ax = _new_axes(ax, (max(4.0, 0.6 * len(values) + 2), 3.2))
    bars = ax.bar(range(len(values)), values, color=color)
    ax.bar_label(bars, labels=[f"{v:.3f}" for v in values], fontsize=8)
    ax.set_xticks(range(len(values)), labels=list(labels))
    if ylim is not None:
        ax.set_ylim(*ylim)  # the default leaves room above 1 for the bar labels
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def plot_vectors_2d(
    vectors: dict[str, torch.Tensor | np.ndarray | Sequence[float]],
    *,
    title: str,
    ax: Axes | None = None,
    xlabel: str = "x₁",
    ylabel: str = "x₂",
) -> Axes:
    """Named 2-D vectors as arrows from the origin, on equal axes.

    Shapes:
        each vector: ``(2,)``.
    """
    ax = _new_axes(ax, (4.5, 4.5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    extent = 1.0
    for i, (name, vector) in enumerate(vectors.items()):
        xy = _as_numpy(vector, name)
        if xy.shape != (2,):
            raise ValueError(f"vector {name!r} must have shape (2,), got shape {xy.shape}")
        colour = colours[i % len(colours)]
        ax.annotate(
            "",
            xy=(xy[0], xy[1]),
            xytext=(0, 0),
            arrowprops={"arrowstyle": "->", "color": colour, "lw": 2},
        )
        ax.text(xy[0] * 1.08, xy[1] * 1.08, name, color=colour, fontsize=11)
        extent = max(extent, float(np.abs(xy).max()))
    limit = 1.25 * extent
    ax.set_xlim(-limit, limit)
    ax.set_ylim(-limit, limit)
    ax.set_aspect("equal")
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def plot_attention_lines(
    weights: torch.Tensor | np.ndarray,
    tokens: Sequence[str],
    *,
    title: str,
    ax: Axes | None = None,
    min_weight: float = 0.02,
    color: str = "tab:blue",
) -> Axes:
    """Attention as lines from each query token (left) to the key tokens (right).

    A line's opacity and width grow with its weight; weights below ``min_weight`` are
    not drawn. A previous-token head shows as parallel lines sloping up one row; a
    "sink" as a fan converging on one key.

    Shapes:
        weights: ``(T, T)`` (rows are queries); ``tokens`` has ``T`` entries.
    """
    values = _as_numpy(weights, "weights")
    if values.ndim != 2 or values.shape[0] != values.shape[1]:
        raise ValueError(f"weights must have shape (T, T), got shape {values.shape}")
    length = values.shape[0]
    if len(tokens) != length:
        raise ValueError(f"tokens has {len(tokens)} entries, weights is {length} × {length}")
    ax = _new_axes(ax, (4.5, 0.8 + 0.32 * length))
    for query in range(length):
        for key in range(length):
            weight = float(values[query, key])
            if weight >= min_weight:
                ax.plot(
                    [0.0, 1.0],
                    [query, key],
                    color=color,
                    alpha=min(1.0, 0.15 + 0.85 * weight),
                    linewidth=0.5 + 3.5 * weight,
                )
    for row, token in enumerate(tokens):
        ax.text(-0.04, row, token, ha="right", va="center", fontsize=9)
        ax.text(1.04, row, token, ha="left", va="center", fontsize=9)
    ax.set_xlim(-0.6, 1.6)
    ax.set_ylim(length - 0.5, -0.5)  # first token at the top, as in the heatmap
    ax.set_xticks([0.0, 1.0], labels=["query", "key"])
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_title(title)
    ax.set_xlabel("line width and opacity: weight")
    ax.set_ylabel("token position")
    return ax


def format_table(
    matrix: torch.Tensor | np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str] | None = None,
    digits: int = 2,
) -> str:
    """A matrix as aligned text, one labelled row per line, each value to ``digits`` decimals.

    For printing scores and weights: a table shows which row and column a number belongs
    to, and the few digits a lesson needs are the same on every machine, where a float32
    value printed to its last digits is not. A value that rounds to zero prints as ``0``
    digits without a sign, so ``-1e-9`` and ``1e-9`` look alike.

    Shapes:
        matrix: ``(rows, cols)``; ``row_labels`` has ``rows`` entries, ``col_labels``
        (default: ``row_labels``) ``cols``.
    """
    values = _as_numpy(matrix, "matrix").astype(np.float64)
    if values.ndim != 2:
        raise ValueError(f"matrix must have shape (rows, cols), got shape {values.shape}")
    col_labels = row_labels if col_labels is None else col_labels
    if len(row_labels) != values.shape[0] or len(col_labels) != values.shape[1]:
        raise ValueError(
            f"matrix of shape {values.shape} needs {values.shape[0]} row labels and "
            f"{values.shape[1]} column labels, got {len(row_labels)} and {len(col_labels)}"
        )
    if digits < 0:
        raise ValueError(f"digits must be >= 0, got {digits}")
    cells = [[f"{round(v, digits) + 0.0:.{digits}f}" for v in row] for row in values]
    width = max(len(text) for text in [*col_labels, *(c for row in cells for c in row)])
    label_width = max(len(label) for label in row_labels)
    lines = [" " * label_width + "".join(f"  {label:>{width}}" for label in col_labels)]
    for label, row in zip(row_labels, cells, strict=True):
        lines.append(f"{label:<{label_width}}" + "".join(f"  {text:>{width}}" for text in row))
    return "\n".join(lines)
