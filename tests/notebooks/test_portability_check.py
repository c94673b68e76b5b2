"""The portability check: rounding noise behaves as documented, and nbval under it catches
outputs that depend on this machine's rounding while passing portable ones."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "portability"))
import rounding_noise  # noqa: E402

IPYTHONDIR = ROOT / "tests" / "portability" / "ipython"
SANITIZE = ROOT / "instructors" / "notebooks" / "nbval_sanitize.cfg"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("direction", [1, -1])
@pytest.mark.parametrize("steps", [1, 2, 7])
def test_values_move_a_few_ulps_in_one_direction(
    dtype: torch.dtype, direction: int, steps: int
) -> None:
    x = torch.randn(10_000, generator=torch.Generator().manual_seed(0), dtype=dtype) * 100
    moved = rounding_noise.move_by_ulps(x, direction, steps)
    expected = x
    for _ in range(steps):
        expected = torch.nextafter(expected, torch.full_like(x, direction * torch.inf))
    whole = torch.ceil(x) if direction > 0 else torch.floor(x)
    stopped = (expected > whole) if direction > 0 else (expected < whole)
    assert moved.dtype == dtype
    # `steps` ulps in `direction` (one ulp less where the path crosses a power of two) …
    near = (moved - expected).abs() <= (torch.nextafter(x, 2 * x) - x).abs()
    assert (near | stopped).all()
    assert torch.equal(moved[stopped], whole[stopped])  # … or stopped on a whole number
    assert ((moved - x) * direction > 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("direction", [1, -1])
def test_equal_values_stay_equal_and_whole_numbers_stay_exact(
    dtype: torch.dtype, direction: int
) -> None:
    x = torch.tensor([0.1, 0.1, 3.0, 0.0, -0.0, -2.0, 1e30, torch.inf, -torch.inf], dtype=dtype)
    moved = rounding_noise.move_by_ulps(x, direction, 3)
    assert moved[0] == moved[1] and moved[0] != x[0]
    assert torch.equal(moved[2:], x[2:])  # whole numbers (1e30 is one) and infinities
    nan = torch.tensor([torch.nan, 1.5, torch.nan], dtype=dtype)
    assert torch.isnan(rounding_noise.move_by_ulps(nan, direction)[[0, 2]]).all()


@pytest.mark.parametrize(("value", "direction"), [(0.99999994, 1), (1.0000001, -1)])
def test_a_value_that_would_move_past_a_whole_number_stops_on_it(
    value: float, direction: int
) -> None:
    # Another machine may well round a row sum of 0.99999994 to exactly 1.
    moved = rounding_noise.move_by_ulps(torch.tensor([value]), direction, 3)
    assert moved.item() == 1.0


def test_the_mode_moves_inexact_results_and_leaves_exact_ones() -> None:
    a = torch.randn(4, 50, generator=torch.Generator().manual_seed(1))
    exact_product = a @ a.T
    with rounding_noise.RoundingNoise(1) as mode:
        noisy_product = a @ a.T
        ones_sum = torch.ones(7).sum()
        copied = a.clone()
        summed = a.sum(dim=-1)
    assert (noisy_product > exact_product).all()  # a sum of 50 terms moves up to 7 ulps
    assert ((noisy_product - exact_product) / exact_product.abs() < 1e-5).all()
    assert ones_sum.item() == 7.0 and torch.equal(copied, a)  # exact results are kept
    assert not torch.equal(summed, a.sum(dim=-1))
    assert mode.moved_results == 3  # mm, and the two sums


def test_the_mode_moves_results_written_to_out_and_in_autograd() -> None:
    a = torch.randn(3, 3, generator=torch.Generator().manual_seed(2), requires_grad=True)
    out = torch.empty(3, 3)
    reference = a.detach() @ a.detach()
    with rounding_noise.RoundingNoise(-1):
        torch.mm(a.detach(), a.detach(), out=out)
        a.exp().sum().backward()
    assert (out <= reference).all() and not torch.equal(out, reference)
    assert a.grad is not None and not torch.equal(a.grad, a.detach().exp())


def test_bad_directions_are_refused() -> None:
    with pytest.raises(ValueError, match="direction must be"):
        rounding_noise.RoundingNoise(0)
    with pytest.raises(ValueError, match="'up' or 'down'"):
        rounding_noise.direction_from_name("sideways")


def _notebook(cells: list[tuple[str, str]]) -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": i + 1,
                "id": f"c{i}",
                "metadata": {},
                "source": source,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": stored}],
            }
            for i, (source, stored) in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _nbval_with_noise(tmp_path: Path, cells: list[tuple[str, str]], direction: str) -> str:
    """Run strict nbval on a generated notebook as `make portability` does; its report."""
    path = tmp_path / "probe.ipynb"
    path.write_text(json.dumps(_notebook(cells)), encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-v"]
    command += ["--nbval-sanitize-with", str(SANITIZE), "-p", "no:cacheprovider", str(path)]
    env = {**os.environ, "ATTNLIB_ROUNDING_NOISE": direction, "IPYTHONDIR": str(IPYTHONDIR)}
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=180
    )
    return result.stdout


# Printed on this machine: a float32 value that sits just above a rounding edge (0.12345
# is 0.1234500036 in float32), a row sum that is not exactly 1, and two portable outputs.
AT_AN_EDGE = ("import torch\nprint(f'{torch.tensor([0.12345]).sum().item():.4f}')", "0.1235\n")
SUM_NEAR_ONE = ("import torch\nprint(torch.full((10,), 0.1).sum())", "tensor(1.0000)\n")
PORTABLE = [
    ("import torch\nprint(round(torch.full((10,), 0.1).sum().item(), 6))", "1.0\n"),
    ("import torch\nprint(f'{torch.tensor([0.12345]).double().sum().item():.4f}')", "0.1235\n"),
]


@pytest.mark.slow  # a kernel in a subprocess: `make unit` runs it, `make unit-fast` does not
def test_the_noise_is_active_in_the_kernel(tmp_path: Path) -> None:
    probe = ("import torch\nprint(torch._C._len_torch_dispatch_stack())", "1\n")
    for direction in ("up", "down"):
        report = _nbval_with_noise(tmp_path, [probe], direction)
        assert re.search(r"Cell 0 PASSED", report), report[-2000:]


@pytest.mark.parametrize(
    ("fragile", "failing_direction"),
    [(AT_AN_EDGE, "down"), (SUM_NEAR_ONE, "down")],
    ids=["digit at a rounding edge", "format of a sum that may be exactly 1"],
)
def test_the_check_fails_fragile_outputs_and_passes_portable_ones(
    tmp_path: Path, fragile: tuple[str, str], failing_direction: str
) -> None:
    report = _nbval_with_noise(tmp_path, [fragile, *PORTABLE], failing_direction)
    assert re.search(r"Cell 0 FAILED", report), report[-2000:]
    assert re.search(r"Cell 1 PASSED", report) and re.search(r"Cell 2 PASSED", report), report


@pytest.mark.parametrize("direction", [1, -1])
def test_float64_training_does_not_feel_the_noise_and_float32_training_does(
    direction: int,
) -> None:
    # Why the course trains in float64: another CPU's rounding changes a float32 run far
    # more than a float64 one, which stays the same to any digit a notebook prints.
    import attnlib
    from attnlib.course import char_gpt

    config = attnlib.GPTConfig(vocab_size=5, max_len=8, d_model=16, num_heads=2, num_layers=1)
    text = "".join("abcde"[i] for i in torch.randint(5, (400,), generator=torch.Generator()))

    def losses(dtype: torch.dtype, noisy: bool) -> list[float]:
        with rounding_noise.RoundingNoise(direction) if noisy else nullcontext():
            history = char_gpt.train_char_gpt(
                text, config, steps=60, batch_size=4, lr=1e-2, dtype=dtype
            )[2]
        return history.losses

    def largest_change(dtype: torch.dtype) -> float:
        clean, noisy = losses(dtype, False), losses(dtype, True)
        return max(abs(a - b) for a, b in zip(clean, noisy, strict=True))

    change64, change32 = largest_change(torch.float64), largest_change(torch.float32)
    assert change64 < 1e-8, change64
    assert change32 > 1e-7 and change32 > 1e4 * change64, (change32, change64)
