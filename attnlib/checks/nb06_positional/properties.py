"""What every right answer of notebook 06's exercises does, for reports that say what broke.

Notebook 06.
"""

from __future__ import annotations

import torch

from attnlib.checks._framework import Case
from attnlib.checks.engine import Property

Tensor = torch.Tensor


def within_unit_range() -> Property:
    def problem(got: object, case: Case) -> str | None:
        if not isinstance(got, Tensor) or not got.is_floating_point():
            return None
        got = got.detach().double()
        outside = got.abs() > 1 + 1e-6
        if not bool(outside.any()):
            return None
        where = tuple(int(i) for i in torch.nonzero(outside)[0])
        return (
            f"the entry at index {where} is {got[where].item():.4g}, outside [−1, 1]: every "
            "entry is the sine or the cosine of an angle"
        )

    return Property(problem)


def position_zero_row() -> Property:
    def problem(got: object, case: Case) -> str | None:
        positions, d = case.args
        flat = positions.reshape(-1)
        if not isinstance(got, Tensor) or not bool((flat == 0).any()):
            return None
        row = got.detach().double().reshape(-1, d)[int(torch.nonzero(flat == 0)[0])]
        expected = (torch.arange(d) % 2).double()  # sin 0 = 0, cos 0 = 1
        if torch.allclose(row, expected, atol=1e-4):
            return None
        shown = ", ".join(f"{v:.3g}" for v in row[:6].tolist())
        return (
            f"the row of position 0 should read 0, 1, 0, 1, … (sin 0 in the even dimensions, "
            f"cos 0 in the odd ones), yours reads {shown}{', …' if d > 6 else ''}"
        )

    return Property(problem)


def pair_lengths_kept() -> Property:
    def problem(got: object, case: Case) -> str | None:
        (x,) = case.args
        if not isinstance(got, Tensor) or got.shape != x.shape:
            return None
        pairs_got = got.detach().double().unflatten(-1, (-1, 2)).norm(dim=-1)
        pairs_x = x.double().unflatten(-1, (-1, 2)).norm(dim=-1)
        changed = (pairs_got - pairs_x).abs() > 1e-4
        if not bool(changed.any()):
            return None
        where = tuple(int(i) for i in torch.nonzero(changed)[0])
        before, after = pairs_x[where].item(), pairs_got[where].item()
        return (
            f"the pair at index {where} (dimensions {2 * where[-1]} and {2 * where[-1] + 1}) "
            f"changed its length from {before:.4g} to {after:.4g}: a rotation keeps the length "
            "of every pair"
        )

    return Property(problem)
