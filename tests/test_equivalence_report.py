"""The equivalence report (`python -m benchmarks.equivalence`) stays within its tolerances."""

from __future__ import annotations

import torch

from benchmarks import equivalence


def test_attention_matches_torch_within_dtype_tolerances() -> None:
    worst = equivalence.attention_differences()
    assert worst[torch.float64] < 1e-12
    assert worst[torch.float32] < 5e-6
    assert worst[torch.float16] < 1e-2 and worst[torch.bfloat16] < 5e-2


def test_multi_head_from_torch_matches() -> None:
    assert max(equivalence.multi_head_differences().values()) < 5e-6
