"""TensorLog records what torch operations make and move, and nothing for views."""

from __future__ import annotations

import math

import pytest
import torch

from attnlib import scaled_dot_product_attention, tiled_attention
from attnlib.course.tensor_log import LoggedOp, TensorLog


def test_records_shapes_and_numbers_moved() -> None:
    a, b = torch.ones(2, 3), torch.ones(3, 4)
    with TensorLog() as log:
        c = a @ b  # reads 6 + 12, writes 8
        d = c.exp()  # reads 8, writes 8
        c.transpose(0, 1)  # a view: not logged
        c.new_zeros(5)  # reads nothing of c, writes 5
    assert [op.name for op in log.ops] == ["matmul", "exp", "new_zeros"]
    assert log.ops[0] == LoggedOp("matmul", (2, 4), 26)
    assert log.ops[1].numbers_moved == 16 and log.ops[2].numbers_moved == 5
    assert log.numbers_moved() == 26 + 16 + 5
    assert log.largest().shape == (2, 4)
    torch.testing.assert_close(d, torch.full((2, 4), 3.0).exp())  # the ops still ran


def test_largest_is_the_biggest_result() -> None:
    with TensorLog() as log:
        torch.ones(3).sum()
        torch.zeros(10, 10)
    assert log.largest().shape == (10, 10)
    with pytest.raises(ValueError, match="nothing was logged"):
        TensorLog().largest()


def test_tiled_attention_never_builds_the_score_matrix() -> None:
    q, k, v = (torch.randn(1, 2, 96, 8) for _ in range(3))
    with torch.no_grad(), TensorLog() as naive:
        scaled_dot_product_attention(q, k, v)
    with torch.no_grad(), TensorLog() as tiled:
        tiled_attention(q, k, v, tile_size=32)
    assert naive.largest().shape == (1, 2, 96, 96)
    assert max(op.shape for op in tiled.ops if op.name == "bmm") == (2, 32, 32)
    assert max(math.prod(op.shape) for op in tiled.ops) < 2 * 96 * 96  # not even one matrix
