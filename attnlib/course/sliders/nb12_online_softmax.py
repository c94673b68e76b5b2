"""The online softmax, tile by tile: the slider of notebook 12.

Notebook 12.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate import require_int, require_positive_int
from attnlib._validate_tensors import require_float_tensor
from attnlib.softmax import softmax
from attnlib.tiled_attention import OnlineSoftmaxState, online_softmax_step


@dataclass(frozen=True, eq=False)
class OnlineSoftmaxProgress:
    """The online softmax of a score vector after its first ``tiles_seen`` tiles.

    Shapes:
        scores, estimate, final: ``(n,)``; ``estimate`` is :math:`e^{s - m}/\\ell` with the
        running values (0 for scores not yet read); ``final`` the true softmax.
    """

    scores: torch.Tensor
    tile_size: int
    tiles_seen: int
    running_max: float
    running_sum: float
    estimate: torch.Tensor
    final: torch.Tensor


def online_softmax_progress(
    scores: torch.Tensor, tile_size: int, tiles_seen: int
) -> OnlineSoftmaxProgress:
    r"""Run :func:`attnlib.tiled_attention.online_softmax_step` over the first tiles.

    .. math::

        \text{estimate}_j = e^{s_j - m} / \ell \text{ for the scores read so far, else } 0

    After the last tile the estimate equals the softmax; before it, the scores read so
    far are already in the right proportions, only the normaliser is not final.

    Shapes:
        scores: ``(n,)``; the result's ``estimate`` and ``final``: ``(n,)``.
    """
    require_float_tensor("scores", scores)
    if scores.dim() != 1:
        raise ValueError(f"scores must have shape (n,), got {tuple(scores.shape)}")
    require_positive_int("tile_size", tile_size)
    total_tiles = math.ceil(scores.shape[0] / tile_size)
    if not 0 <= require_int("tiles_seen", tiles_seen) <= total_tiles:
        raise ValueError(f"tiles_seen must be in [0, {total_tiles}], got {tiles_seen}")
    state = OnlineSoftmaxState(
        running_max=torch.tensor(-math.inf, dtype=scores.dtype),
        running_sum=torch.tensor(0.0, dtype=scores.dtype),
    )
    for tile in range(tiles_seen):
        state = online_softmax_step(state, scores[tile * tile_size : (tile + 1) * tile_size])
    seen = min(tiles_seen * tile_size, scores.shape[0])
    estimate = torch.zeros_like(scores)
    if seen:
        estimate[:seen] = torch.exp(scores[:seen] - state.running_max) / state.running_sum
    return OnlineSoftmaxProgress(
        scores=scores,
        tile_size=tile_size,
        tiles_seen=tiles_seen,
        running_max=float(state.running_max),
        running_sum=float(state.running_sum),
        estimate=estimate,
        final=softmax(scores),
    )


def show_online_softmax_progress(scores: torch.Tensor, tile_size: int, tiles_seen: int) -> Figure:
    """Scores read so far (with the running maximum) and the estimate against the softmax."""
    progress = online_softmax_progress(scores, tile_size, tiles_seen)
    n = scores.shape[0]
    positions = range(n)
    seen = min(tiles_seen * tile_size, n)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.6), sharex=True)
    colours = ["tab:blue" if i < seen else "lightgrey" for i in positions]
    top.bar(positions, scores.tolist(), color=colours)
    if seen:
        top.axhline(progress.running_max, color="tab:red", linestyle="--", label="running max m")
        top.legend(loc="best")
    for edge in range(tile_size, n, tile_size):
        top.axvline(edge - 0.5, color="grey", linewidth=0.8)
    top.set_title(
        f"{tiles_seen} of {math.ceil(n / tile_size)} tiles read: "
        f"m = {progress.running_max:.2f}, ℓ = {progress.running_sum:.3f}"
    )
    top.set_ylabel("score s")
    top.set_xlabel("key position (grey: not read yet; lines: tile edges)")
    bottom.bar(
        positions, progress.estimate.tolist(), color="tab:blue", label="e^(s − m) / ℓ so far"
    )
    bottom.plot(positions, progress.final.tolist(), "k_", markersize=14, label="true softmax")
    bottom.set_title("running estimate of the weights vs the final softmax")
    bottom.set_xlabel("key position")
    bottom.set_ylabel("weight")
    bottom.legend(loc="best")
    fig.tight_layout()
    return fig
