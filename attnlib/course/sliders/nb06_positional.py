"""The sinusoidal encoding at a position: the slider of notebook 06.

Notebook 06.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib.course.plots import (
    plot_heatmap,
)
from attnlib.positional import sinusoidal_encoding


@dataclass(frozen=True, eq=False)
class EncodingAt:
    """One entry of the sinusoidal encoding table and the wave it lies on."""

    encoding: torch.Tensor
    position: int
    dimension: int
    value: float
    wavelength: float


def encoding_at(
    position: int, dimension: int, max_len: int = 64, d_model: int = 64, base: float = 10000.0
) -> EncodingAt:
    r"""``PE[position, dimension]`` of a ``(max_len, d_model)`` table, with its wavelength.

    Dims ``2i`` and ``2i+1`` oscillate with wavelength :math:`2\pi \cdot \text{base}^{2i/d}`:
    from 2π ≈ 6.3 positions for the first pair up to nearly ``base``·2π for the last.

    Shapes:
        encoding: ``(max_len, d_model)``.
    """
    if not 0 <= position < max_len:
        raise ValueError(f"position must be in [0, max_len={max_len}), got {position}")
    if not 0 <= dimension < d_model:
        raise ValueError(f"dimension must be in [0, d_model={d_model}), got {dimension}")
    encoding = sinusoidal_encoding(max_len, d_model, base)
    pair = dimension // 2
    return EncodingAt(
        encoding=encoding,
        position=position,
        dimension=dimension,
        value=float(encoding[position, dimension]),
        wavelength=2 * math.pi * base ** (2 * pair / d_model),
    )


def show_encoding_at(
    position: int, dimension: int, max_len: int = 64, d_model: int = 64, base: float = 10000.0
) -> Figure:
    """Heatmap of the whole table with the chosen entry marked, and that dimension as a wave."""
    view = encoding_at(position, dimension, max_len, d_model, base)
    fig, (table, wave) = plt.subplots(1, 2, figsize=(12, 4.2))
    plot_heatmap(
        view.encoding,
        title=f"PE table (base {base:g}): PE[{position}, {dimension}] = {view.value:+.3f}",
        xlabel="dimension",
        ylabel="position",
        ax=table,
        annotate=False,
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
        colorbar_label="PE value",
    )
    table.plot(
        [dimension],
        [position],
        marker="s",
        markersize=9,
        markerfacecolor="none",
        markeredgecolor="black",
        markeredgewidth=2,
    )
    positions = torch.arange(max_len)
    wave.plot(positions, view.encoding[:, dimension], color="tab:purple")
    wave.plot([position], [view.value], "o", color="black")
    kind = "sin" if dimension % 2 == 0 else "cos"
    wave.set_title(f"dimension {dimension} ({kind}): wavelength {view.wavelength:.1f} positions")
    wave.set_xlabel("position")
    wave.set_ylabel("PE value")
    wave.set_ylim(-1.1, 1.1)
    fig.tight_layout()
    return fig
