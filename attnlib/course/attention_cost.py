"""What attention costs: FLOPs and bytes by formula, and the measured benchmark results.

``python -m benchmarks.attention`` measures time and peak memory of the three ways
attnlib can attend and stores them in ``attnlib/data/attention_benchmark.json``;
:func:`load_benchmark_results` reads them back for notebook 12,
the measurements page and the figure.

Notebook 12.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate import require_positive_int

METHODS: tuple[str, ...] = ("naive", "tiled", "fused")
METHOD_LABELS = {
    "naive": "naive: scores → softmax → weights @ V (returns the weights)",
    "tiled": "tiled: online softmax over 256 × 256 tiles (pure PyTorch)",
    "fused": "fused: torch.nn.functional.scaled_dot_product_attention",
}


def attention_flops(batch_heads: int, t_q: int, t_k: int, d_k: int, d_v: int | None = None) -> int:
    r"""Floating-point operations of the two matrix products of attention.

    .. math::

        \underbrace{2\,T_q T_k d_k}_{QK^\top} + \underbrace{2\,T_q T_k d_v}_{PV}
        \quad\text{per (batch, head)}

    (a multiply and an add per term of each dot product). The softmax adds about
    :math:`5\,T_q T_k`, negligible next to these for ``d ≥ 32``.

    Shapes:
        for ``batch_heads = B·H`` independent heads of ``(T_q, d_k)`` queries,
        ``(T_k, d_k)`` keys and ``(T_k, d_v)`` values.
    """
    for name, value in (("batch_heads", batch_heads), ("t_q", t_q), ("t_k", t_k), ("d_k", d_k)):
        require_positive_int(name, value)
    d_v = d_k if d_v is None else require_positive_int("d_v", d_v)
    return 2 * batch_heads * t_q * t_k * (d_k + d_v)


def score_matrix_bytes(
    batch_heads: int, t_q: int, t_k: int, dtype: torch.dtype = torch.float32
) -> int:
    """Bytes of one ``(B·H, T_q, T_k)`` tensor of scores (the naive path holds two: S and P).

    Shapes:
        ``batch_heads · t_q · t_k`` elements of ``dtype``.
    """
    for name, value in (("batch_heads", batch_heads), ("t_q", t_q), ("t_k", t_k)):
        require_positive_int(name, value)
    return batch_heads * t_q * t_k * torch.empty((), dtype=dtype).element_size()


@dataclass(frozen=True)
class BenchmarkResults:
    """Times and peak memory of naive, tiled and fused attention on one machine.

    ``seconds[method][i]`` is the median time at ``lengths[i]``;
    ``extra_peak_bytes[method][i]`` the peak memory a call added at ``memory_lengths[i]``
    (maximum resident set size, measured in a fresh process per point).
    """

    machine: str
    batch: int
    heads: int
    head_size: int
    tile_size: int
    repetitions: int
    lengths: list[int]
    seconds: dict[str, list[float]]
    matmul_gflops: float
    memory_lengths: list[int]
    extra_peak_bytes: dict[str, list[int]]

    def gflops(self, method: str) -> list[float]:
        """Attention GFLOP/s (:func:`attention_flops` over the measured time) at each length."""
        bh = self.batch * self.heads
        return [
            attention_flops(bh, t, t, self.head_size) / s / 1e9
            for t, s in zip(self.lengths, self.seconds[method], strict=True)
        ]

    def ratio_to_fused(self, method: str) -> list[float]:
        """Time of ``method`` divided by the fused kernel's, at each length."""
        return [s / f for s, f in zip(self.seconds[method], self.seconds["fused"], strict=True)]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the results as JSON."""
        Path(path).write_text(json.dumps(asdict(self), indent=1) + "\n", encoding="utf-8")


def load_benchmark_results(path: str | os.PathLike[str] | None = None) -> BenchmarkResults:
    """Results stored by ``python -m benchmarks.attention`` (default: the package's copy)."""
    if path is None:
        text = (
            resources.files("attnlib")
            .joinpath("data/attention_benchmark.json")
            .read_text(encoding="utf-8")
        )
    else:
        text = Path(path).read_text(encoding="utf-8")
    return BenchmarkResults(**json.loads(text))


def plot_benchmark_results(results: BenchmarkResults) -> Figure:
    """Time, throughput and extra peak memory against sequence length, log-log."""
    fig, (time_ax, rate_ax, memory_ax) = plt.subplots(1, 3, figsize=(16, 4.6))
    styles = {"naive": "o-", "tiled": "s-", "fused": "^-"}
    for method in METHODS:
        label = METHOD_LABELS[method].split(":")[0]
        milliseconds = [1e3 * s for s in results.seconds[method]]
        time_ax.plot(results.lengths, milliseconds, styles[method], label=label)
        rate_ax.plot(results.lengths, results.gflops(method), styles[method], label=label)
        mebibytes = [max(b, 1) / 2**20 for b in results.extra_peak_bytes[method]]
        memory_ax.plot(results.memory_lengths, mebibytes, styles[method], label=label)
    rate_ax.axhline(results.matmul_gflops, color="grey", linestyle="--", label="2048³ matmul")
    bh = results.batch * results.heads
    one_matrix = [score_matrix_bytes(bh, t, t) / 2**20 for t in results.memory_lengths]
    memory_ax.plot(results.memory_lengths, one_matrix, "k:", label="one (B·H, T, T) float32 matrix")
    for ax, lengths in (
        (time_ax, results.lengths),
        (rate_ax, results.lengths),
        (memory_ax, results.memory_lengths),
    ):
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, labels=[str(t) for t in lengths])
        ax.minorticks_off()
    time_ax.set_yscale("log")
    memory_ax.set_yscale("log")
    shape = f"B={results.batch}, H={results.heads}, d={results.head_size}, float32"
    time_ax.set_title(f"time per call ({shape})")
    time_ax.set_xlabel("sequence length T")
    time_ax.set_ylabel("milliseconds (median)")
    rate_ax.set_title("attention work per second")
    rate_ax.set_xlabel("sequence length T")
    rate_ax.set_ylabel("GFLOP/s (4·B·H·T²·d / time)")
    memory_ax.set_title("extra peak memory of one call")
    memory_ax.set_xlabel("sequence length T")
    memory_ax.set_ylabel("MiB (max RSS, fresh process)")
    for ax, corner in (
        (time_ax, "upper left"),
        (rate_ax, "lower right"),
        (memory_ax, "upper left"),
    ):
        ax.grid(True, alpha=0.3)
        ax.legend(loc=corner)
    fig.suptitle(results.machine, fontsize=9)
    fig.tight_layout()
    return fig
