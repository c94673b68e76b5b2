"""Time and memory of naive, tiled and fused attention, and the machine's matmul ceiling.

`python -m benchmarks.attention` (or `make bench`) measures, for one batch of
B = 1, H = 8 heads of d = 64 in float32:

- the time of attnlib's `scaled_dot_product_attention` (naive: it returns the weights),
  `tiled_attention` and PyTorch's fused kernel at T = 128 … 4096, in one run with the
  three methods alternating in each repetition; medians, GFLOP/s and the ratio to fused;
- the peak memory one call adds, in a fresh process per (method, T) up to T = 8192
  (the process's resident-set high-water mark, reset just before the call);
- the GFLOP/s of a 2048³ matmul on the same machine: the ceiling.

It prints a table, stores the numbers in `attnlib/data/attention_benchmark.json`
(notebook 12 plots them) and draws `figures/attention_cost.png`.

`python -m benchmarks.attention --by-operation` instead splits one tiled call at T = 2048
by PyTorch operation (torch.profiler): where the time goes that the fused kernel saves.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

import attnlib
from attnlib.course import attention_cost
from attnlib.course.attention_cost import METHODS, BenchmarkResults, attention_flops
from benchmarks import command_line
from benchmarks import results as stored_runs

ROOT = Path(__file__).resolve().parents[1]
RESULTS_FILE = ROOT / "attnlib" / "data" / "attention_benchmark.json"
FIGURE_FILE = ROOT / "figures" / "attention_cost.png"
BATCH, HEADS, HEAD_SIZE, TILE_SIZE = 1, 8, 64, 256
LENGTHS = [128, 256, 512, 1024, 2048, 4096]
MEMORY_LENGTHS = [1024, 2048, 4096, 8192]


def attention_call(method: str, tile_size: int = TILE_SIZE) -> Callable[..., torch.Tensor]:
    """The function behind each method name, taking (q, k, v) and returning the output."""
    calls: dict[str, Callable[..., torch.Tensor]] = {
        "naive": lambda q, k, v: attnlib.scaled_dot_product_attention(q, k, v)[0],
        "tiled": lambda q, k, v: attnlib.tiled_attention(q, k, v, tile_size=tile_size),
        "fused": lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
    }
    return calls[method]


def random_qkv(length: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    shape = (BATCH, HEADS, length, HEAD_SIZE)
    return tuple(torch.randn(shape, generator=generator) for _ in range(3))  # type: ignore[return-value]


def repetitions_for(length: int) -> int:
    """More repetitions where a call is short and the machine's noise is relatively large."""
    return 15 if length <= 2048 else 7


@torch.no_grad()
def measure_times(lengths: list[int], repetitions: int | None = None) -> dict[str, list[float]]:
    """Median seconds per call of each method at each length, methods alternating."""
    medians: dict[str, list[float]] = {method: [] for method in METHODS}
    for length in lengths:
        q, k, v = random_qkv(length)
        reference = attention_call("fused")(q, k, v)
        samples: dict[str, list[float]] = {method: [] for method in METHODS}
        for method in METHODS:  # warm-up, and a check that all three agree
            assert (attention_call(method)(q, k, v) - reference).abs().max() < 2e-5, method
        calls = {method: attention_call(method) for method in METHODS}
        for _ in range(repetitions or repetitions_for(length)):
            for method, call in calls.items():
                start = time.perf_counter()
                call(q, k, v)
                samples[method].append(time.perf_counter() - start)
        for method in METHODS:
            medians[method].append(statistics.median(samples[method]))
    return medians


@torch.no_grad()
def matmul_gflops(size: int = 2048, repetitions: int = 7) -> float:
    """GFLOP/s of one float32 ``size³`` matrix product (2·size³ FLOPs), median."""
    generator = torch.Generator().manual_seed(0)
    a, b = (torch.randn(size, size, generator=generator) for _ in range(2))
    a @ b
    seconds = []
    for _ in range(repetitions):
        start = time.perf_counter()
        a @ b
        seconds.append(time.perf_counter() - start)
    return 2 * size**3 / statistics.median(seconds) / 1e9


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


@torch.no_grad()
def _peak_memory_point(method: str, length: int) -> int:
    """In this process: bytes by which one call raises the resident-set high-water mark."""
    q, k, v = random_qkv(length)
    small = random_qkv(128)
    attention_call(method)(*small)  # load kernels and allocator pools first
    resident = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text(
        "5", encoding="utf-8"
    )  # reset VmHWM to the current RSS (Linux)
    attention_call(method)(q, k, v)
    return max(0, _status_kib("VmHWM") - resident) * 1024


def measure_peak_memory(method: str, length: int) -> int:
    """Extra peak bytes of one call, measured in a fresh Python process."""
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.attention", "--memory-point", method, str(length)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(result.stdout.strip().splitlines()[-1])


def run(lengths: list[int], memory_lengths: list[int]) -> BenchmarkResults:
    """Measure everything and return it (nothing written)."""
    seconds = measure_times(lengths)
    ceiling = matmul_gflops()
    memory = {m: [measure_peak_memory(m, t) for t in memory_lengths] for m in METHODS}
    return BenchmarkResults(
        machine=stored_runs.machine(),
        batch=BATCH,
        heads=HEADS,
        head_size=HEAD_SIZE,
        tile_size=TILE_SIZE,
        repetitions=repetitions_for(min(lengths)),
        lengths=lengths,
        seconds=seconds,
        matmul_gflops=ceiling,
        memory_lengths=memory_lengths,
        extra_peak_bytes=memory,
    )


@torch.no_grad()
def time_by_operation(length: int = 2048, repetitions: int = 5) -> str:
    """One tiled call split by operation, beside the fused kernel's whole call (median ms).

    The tiled loop's two batched matrix products do the same FLOPs as the fused kernel;
    what it adds is one pass of each element-wise operation over every score tile in
    memory, which the fused kernel does while the tile is still in registers and cache.
    """
    q, k, v = random_qkv(length)
    tiled, fused = attention_call("tiled"), attention_call("fused")
    tiled(q, k, v), fused(q, k, v)  # warm-up
    seconds = []
    for _ in range(repetitions):
        start = time.perf_counter()
        fused(q, k, v)
        seconds.append(time.perf_counter() - start)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        for _ in range(repetitions):
            tiled(q, k, v)
    totals = sorted(
        (
            (event.key, event.self_cpu_time_total / 1e3 / repetitions)
            for event in profile.key_averages()
        ),
        key=lambda pair: -pair[1],
    )
    whole = sum(ms for _, ms in totals)
    fused_ms = 1e3 * statistics.median(seconds)
    products = sum(ms for name, ms in totals if name in ("aten::bmm", "aten::baddbmm_"))
    lines = [
        f"T = {length}, B={BATCH}, H={HEADS}, d={HEAD_SIZE}, tile {TILE_SIZE}, "
        f"{torch.get_num_threads()} threads",
        f"fused kernel, whole call: {fused_ms:.1f} ms",
        f"tiled, whole call (profiled): {whole:.1f} ms = {whole / fused_ms:.2f}x fused",
        f"tiled, its two matrix products: {products:.1f} ms = {products / fused_ms:.2f}x fused",
        "",
        "| operation | ms per tiled call | share |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {ms:.1f} | {ms / whole:.0%} |" for name, ms in totals[:8]]
    return "\n".join(lines)


def tables(results: BenchmarkResults) -> str:
    """The time table and the memory table, in Markdown (docs/measurements.md shows them)."""
    lines = [
        "| T | naive ms | tiled ms | fused ms | naive GFLOP/s | tiled GFLOP/s | fused GFLOP/s "
        "| naive / fused | tiled / fused |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rates = {m: results.gflops(m) for m in METHODS}
    ratios = {m: results.ratio_to_fused(m) for m in ("naive", "tiled")}
    for i, length in enumerate(results.lengths):
        ms = " | ".join(f"{1e3 * results.seconds[m][i]:.2f}" for m in METHODS)
        rate = " | ".join(f"{rates[m][i]:.0f}" for m in METHODS)
        lines.append(
            f"| {length} | {ms} | {rate} | {ratios['naive'][i]:.2f}× | {ratios['tiled'][i]:.2f}× |"
        )
    lines += [
        "",
        "| T | naive extra peak MiB | tiled | fused | tiled / naive |",
        "|---|---|---|---|---|",
    ]
    for i, length in enumerate(results.memory_lengths):
        mib = {m: results.extra_peak_bytes[m][i] / 2**20 for m in METHODS}
        lines.append(
            f"| {length} | {mib['naive']:.1f} | {mib['tiled']:.1f} | {mib['fused']:.1f} | "
            f"{mib['tiled'] / mib['naive']:.4f} |"
        )
    return "\n".join(lines)


def report(results: BenchmarkResults) -> str:
    """What the benchmark prints: the set-up, the ceiling, both tables and the FLOPs."""
    flops = attention_flops(results.batch * results.heads, 2048, 2048, results.head_size)
    return "\n".join(
        [
            f"B={results.batch}, H={results.heads}, d={results.head_size}, float32; "
            f"{results.machine}",
            f"matmul 2048³: {results.matmul_gflops:.0f} GFLOP/s (the ceiling)",
            "",
            tables(results),
            f"\n(attention FLOPs at T = 2048: {flops / 1e9:.1f} GFLOP per call)",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = command_line.benchmark_parser(
        "attention",
        __doc__,
        writes=f"{RESULTS_FILE.relative_to(ROOT)} and {FIGURE_FILE.relative_to(ROOT)}",
    )
    parser.add_argument("--memory-point", nargs=2, metavar=("METHOD", "T"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--by-operation",
        action="store_true",
        help="only split one tiled call at T = 2048 by operation; write no files",
    )
    args = parser.parse_args(argv)
    if args.by_operation:
        print(time_by_operation())
        return
    if args.memory_point:
        method, length = args.memory_point
        print(_peak_memory_point(method, int(length)))
        return
    results = run(LENGTHS, MEMORY_LENGTHS)
    print(report(results))
    if not args.no_save:
        results.save(RESULTS_FILE)
        figure = attention_cost.plot_benchmark_results(results)
        figure.savefig(FIGURE_FILE, dpi=110, metadata={"Software": None})
        print(f"\nwrote {RESULTS_FILE.relative_to(ROOT)} and {FIGURE_FILE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
