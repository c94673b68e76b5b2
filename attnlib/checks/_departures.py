"""Which module of a learner's departs first, and which usual mistake its output matches.

A :class:`Probe` runs one of the learner's modules on a reference input and knows the
output it should give and how to recompute the usual wrong outputs; :func:`first_departure`
walks a list of probes in the order the model computes. Used by the capstone checkers of
notebook 11 (:mod:`attnlib.checks.own_encoder`, :mod:`attnlib.checks.own_minilm`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

Tensor = torch.Tensor


@dataclass(frozen=True)
class Probe:
    """One module of the learner's, run on a reference input, and what it should return."""

    where: str  # how the report names it: "layers.2.feed_forward (MyFeedForward)"
    run: Callable[[], object]
    expected: Tensor  # (B, T, C)
    variants: Callable[[], dict[str, Tensor]]
    fix: str  # the hint when the output matches none of the usual mistakes
    rows: Tensor  # (B, T) bool: the real tokens, the only rows compared


def _matches(got: Tensor, variant: Tensor, rows: Tensor, tolerance: dict[str, float]) -> bool:
    """Whether ``got`` is ``variant`` on the real tokens; NaN in ``variant`` matches anything."""
    got, variant = got[rows], variant.to(got.dtype)[rows]
    defined = ~torch.isnan(variant)
    mine = got[defined]
    return bool(torch.isfinite(mine).all()) and bool(
        torch.isclose(mine, variant[defined], **tolerance).all()
    )


def first_departure(probes: list[Probe], tolerance: dict[str, float]) -> str | None:
    """The report of the first probe whose output departs, with its likely cause, or ``None``.

    Raises:
        NotImplementedError: a learner's module is still a stub (the caller reports it).
    """
    for probe in probes:
        try:
            with torch.no_grad():
                got = probe.run()
        except NotImplementedError:
            raise
        except Exception as error:  # the learner's bug, reported instead of a traceback
            return f"{probe.where} raised {type(error).__name__}: {error}"
        if isinstance(got, (tuple, list)) and got:
            got = got[0]
        shape = tuple(probe.expected.shape)
        if not isinstance(got, Tensor):
            return f"{probe.where} returned {type(got).__name__}, not a tensor of shape {shape}"
        if tuple(got.shape) != shape:
            return f"{probe.where} returned shape {tuple(got.shape)}, expected {shape}"
        got = got.detach().to(probe.expected.dtype)
        if _matches(got, probe.expected, probe.rows, tolerance):
            continue
        mine = got[probe.rows]
        if not bool(torch.isfinite(mine).all()):
            how = "returns NaN or an infinite value on real tokens"
        else:
            largest = (mine - probe.expected[probe.rows]).abs().max().item()
            how = f"its output departs by up to {largest:.2g} on real tokens"
        with torch.no_grad():
            variants = probe.variants()
        for cause, variant in variants.items():
            if _matches(got, variant, probe.rows, tolerance):
                return f"{probe.where}: {how}.\n  likely cause: {cause}."
        return f"{probe.where}: {how}, and matches none of the usual mistakes.\n  hint: {probe.fix}"
    return None
