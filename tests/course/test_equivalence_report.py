"""The equivalence report (`python -m benchmarks.equivalence`) stays within its tolerances."""

from __future__ import annotations

import pytest
import torch

from benchmarks import equivalence


@pytest.mark.parametrize("implementation", list(equivalence.IMPLEMENTATIONS))
def test_attention_matches_torch_within_dtype_tolerances(implementation: str) -> None:
    worst = equivalence.attention_differences(implementation)
    assert worst[torch.float64] < 1e-12
    # 5e-6 for the single-softmax paths; the bound for the tiled one is 2e-5.
    assert worst[torch.float32] < (2e-5 if implementation == "tiled_attention" else 5e-6)
    assert worst[torch.float16] < 1e-2 and worst[torch.bfloat16] < 5e-2


def test_multi_head_from_torch_matches() -> None:
    assert max(equivalence.multi_head_differences().values()) < 5e-6
