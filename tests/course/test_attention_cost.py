"""FLOP and byte counts by hand, the stored benchmark results, and the benchmark's plumbing."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from matplotlib.figure import Figure

import attnlib
from attnlib.course import attention_cost
from attnlib.course.attention_cost import attention_flops, score_matrix_bytes
from benchmarks import attention as benchmark


def test_attention_flops_by_hand() -> None:
    # One head, T_q = 2, T_k = 3, d = 4: QKᵀ is 6 dot products of length 4 (4 multiplies
    # and 4 adds each, counting a multiply-add as 2), PV is 2·4 dot products of length 3.
    assert attention_flops(1, 2, 3, 4) == 6 * 8 + 8 * 6
    assert attention_flops(8, 2048, 2048, 64) == 4 * 8 * 2048**2 * 64
    assert attention_flops(2, 5, 7, 16, d_v=8) == 2 * 2 * 5 * 7 * (16 + 8)
    with pytest.raises(ValueError, match="t_q"):
        attention_flops(1, 0, 3, 4)


def test_attention_flops_match_a_loop_that_counts_every_multiply_add() -> None:
    bh, t_q, t_k, d_k, d_v = 2, 3, 5, 4, 6
    multiply_adds = 0
    for _ in range(bh):
        for _ in range(t_q):
            for _ in range(t_k):
                multiply_adds += d_k  # one score: a dot product of length d_k
            for _ in range(d_v):
                multiply_adds += t_k  # one output component: weights · a column of V
    assert attention_flops(bh, t_q, t_k, d_k, d_v) == 2 * multiply_adds


def test_score_matrix_bytes() -> None:
    assert score_matrix_bytes(8, 8192, 8192) == 8 * 8192**2 * 4 == 2**31
    assert score_matrix_bytes(40, 4096, 4096, torch.float16) == 40 * 4096**2 * 2
    with pytest.raises(ValueError, match="batch_heads"):
        score_matrix_bytes(0, 4, 4)


def test_stored_results_are_complete_and_consistent() -> None:
    results = attention_cost.load_benchmark_results()
    for method in attnlib.course.attention_cost.METHODS:
        assert len(results.seconds[method]) == len(results.lengths)
        assert all(s > 0 for s in results.seconds[method])
        assert len(results.extra_peak_bytes[method]) == len(results.memory_lengths)
    assert results.ratio_to_fused("fused") == [1.0] * len(results.lengths)
    i = results.lengths.index(2048)
    expected = attention_flops(results.batch * results.heads, 2048, 2048, results.head_size)
    assert results.gflops("fused")[i] == pytest.approx(expected / results.seconds["fused"][i] / 1e9)
    # The memory claims of docs/measurements.md and notebook 12, which the measurements
    # must support:
    # the naive path holds T × T scores, the tiled one never does.
    j = results.memory_lengths.index(8192)
    naive, tiled = results.extra_peak_bytes["naive"][j], results.extra_peak_bytes["tiled"][j]
    assert naive > score_matrix_bytes(results.batch * results.heads, 8192, 8192)
    assert tiled < naive / 4


def test_results_round_trip_and_plot(tmp_path: Path) -> None:
    results = attention_cost.load_benchmark_results()
    path = tmp_path / "results.json"
    results.save(path)
    assert attention_cost.load_benchmark_results(path) == results
    figure = attention_cost.plot_benchmark_results(results)
    assert isinstance(figure, Figure) and len(figure.axes) == 3
    for ax in figure.axes:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_benchmark_measures_every_method_on_small_inputs() -> None:
    seconds = benchmark.measure_times([64, 100], repetitions=2)
    assert set(seconds) == set(attnlib.course.attention_cost.METHODS)
    assert all(len(times) == 2 and min(times) > 0 for times in seconds.values())
    assert benchmark.matmul_gflops(size=128, repetitions=2) > 0


@pytest.mark.slow  # a fresh Python per point: `make unit` runs it, `make unit-fast` does not
def test_benchmark_memory_point_runs_in_a_fresh_process() -> None:
    naive = benchmark.measure_peak_memory("naive", 1024)
    tiled = benchmark.measure_peak_memory("tiled", 1024)
    scores = score_matrix_bytes(benchmark.BATCH * benchmark.HEADS, 1024, 1024)
    assert naive >= scores  # the (B·H, T, T) scores were resident at the peak
    assert 0 <= tiled < naive


def test_benchmark_splits_a_tiled_call_by_operation() -> None:
    text = benchmark.time_by_operation(length=512, repetitions=1)
    assert "T = 512" in text and "fused kernel, whole call" in text
    # both matrix products of the loop are profiled, each on a row of the table
    assert "| aten::bmm |" in text and "| aten::baddbmm_ |" in text
    assert "its two matrix products" in text


def test_benchmark_report_lists_every_length() -> None:
    results = attention_cost.load_benchmark_results()
    text = benchmark.report(results)
    for length in results.lengths + results.memory_lengths:
        assert f"| {length} |" in text
    assert "tiled / fused" in text and "GFLOP/s" in text


def test_every_method_of_the_benchmark_computes_attention() -> None:
    q, k, v = benchmark.random_qkv(300)
    expected = q.new_zeros(0)
    for method in attnlib.course.attention_cost.METHODS:
        out = benchmark.attention_call(method, tile_size=64)(q, k, v)
        if expected.numel():
            torch.testing.assert_close(out, expected, atol=2e-5, rtol=0)
        expected = out
    assert math.isfinite(float(expected.sum()))
