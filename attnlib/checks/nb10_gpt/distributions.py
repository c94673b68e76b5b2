"""A property of every right answer of notebook 10's temperature and top-p exercises: each row
is a distribution, so that a report can say "the probabilities of row (1,) add up to 0.85"
instead of "differs at index (1, 0)".

Notebook 10.
"""

from __future__ import annotations

import torch

from attnlib.checks._framework import Case
from attnlib.checks.engine import Property


def _problem(got: object, case: Case) -> str | None:
    if not isinstance(got, torch.Tensor) or not got.is_floating_point():
        return None
    got = got.detach().double()
    if not bool(torch.isfinite(got).all()):
        return None  # the comparison itself reports NaN and inf
    if bool((got < 0).any()):
        return f"it has a negative probability ({got.min().item():.3g}); none is ever negative"
    sums = got.sum(dim=-1)
    off = (sums - 1).abs() > 1e-3
    if not bool(off.any()):
        return None
    if sums.dim() == 0:
        return f"the probabilities add up to {sums.item():.4g}, not 1"
    row = tuple(int(i) for i in torch.nonzero(off)[0])
    return f"the probabilities of the row at index {row} add up to {sums[row].item():.4g}, not 1"


def rows_are_distributions() -> Property:
    """Non-negative probabilities that add up to 1 along the last dimension."""
    return Property(_problem)
