"""Notebook 06, Exercise 1: the sinusoidal table for any positions and any width, odd included.

The mistakes are in :mod:`.table_mistakes`. The cases show each of them: position 0 (sines and
cosines swapped), positions that do not start at 0 (positions ignored), odd positions (sine for
even *positions*), several pairs (base, 2i versus i, shared angles, interleaving), odd widths
(the unpaired last sine) and a batch of positions of shape (B, T).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks.nb06_positional.large_angles import LargeAngles, check_allowing_large_angles
from attnlib.checks.nb06_positional.properties import position_zero_row, within_unit_range
from attnlib.checks.nb06_positional.table_mistakes import (
    MISTAKES,
    MULTIPLIED,
    multiplied_angles,
    reference,
)

Tensor = torch.Tensor

SINUSOIDAL_TABLE = register(
    Exercise(
        id="ex1_sinusoidal_table",
        notebook="06",
        number=1,
        name="my_sinusoidal_encoding",
        hints=(
            "Dimension j belongs to pair i = j // 2. The two dimensions of a pair share one angle, "
            "p·ω_i with ω_i = 10000^(−2i/d): the even one holds its sine, the odd one its cosine, "
            "at every position. Nothing in that rule needs d to be even.",
            "Work out one angle for every position and every pair. An odd width has ⌈d/2⌉ pairs, "
            "and the last of them has only its sine. The positions can have any shape: give them "
            "a new last dimension of size 1 so that they broadcast against the pairs' frequencies.",
            "Take the frequencies for 2i = 0, 2, 4, … below d, always dividing 2i by the real "
            "d_model; multiply the positions (with their new last dimension) by them; then put "
            "the sines in the even dimensions and the cosines in the odd dimensions of a "
            "(..., d_model) table, leaving out the last pair's cosine when d_model is odd. Test "
            "it on position 0: its row reads 0, 1, 0, 1, ….",
        ),
    )
)

# An answer may not let attnlib build the table (or its angles).
POSITIONAL_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.sinusoidal_encoding: "attnlib.sinusoidal_encoding",
        attnlib.SinusoidalPositionalEncoding: "attnlib.SinusoidalPositionalEncoding",
        attnlib.apply_rotary: "attnlib.apply_rotary",
        attnlib.RotaryEmbedding: "attnlib.RotaryEmbedding",
    },
    paths={"attnlib.positional:_angles": "attnlib's sinusoid angles (attnlib.positional._angles)"},
)


def _long(*values: int) -> Tensor:
    return torch.tensor(values, dtype=torch.long)


def _cases() -> list[Case]:
    specs = [
        ("positions 0…5, d_model = 4", torch.arange(6), 4),
        ("positions 0…49, d_model = 16", torch.arange(50), 16),
        ("positions 100…107 (a text continued), d_model = 8", torch.arange(100, 108), 8),
        ("positions in any order [7, 3, 0, 12], d_model = 6", _long(7, 3, 0, 12), 6),
        (
            "a batch of positions, shape (2, 5), the rows starting at 0 and 30, d_model = 6",
            torch.stack([torch.arange(5), torch.arange(30, 35)]),
            6,
        ),
        ("an odd width: positions 0…6, d_model = 5", torch.arange(7), 5),
        (
            "an odd width and a batch: positions of shape (2, 3), d_model = 7",
            torch.stack([torch.arange(3), torch.arange(9, 12)]),
            7,
        ),
        ("a width of 1: positions 0…4, d_model = 1", torch.arange(5), 1),
    ]
    return [Case(name, (p, d), reference(p, d)) for name, p, d in specs]


@checker_of(SINUSOIDAL_TABLE, MISTAKES)
def check_my_sinusoidal_encoding(fn: Callable[[Tensor, int], Tensor]) -> CheckResult:
    """Check ``my_sinusoidal_encoding(positions, d_model)``: ``(...,)`` → ``(..., d_model)``."""
    return check_allowing_large_angles(
        SINUSOIDAL_TABLE,
        fn,
        _cases(),
        MISTAKES,
        [LargeAngles(MULTIPLIED, multiplied_angles)],
        forbidden=POSITIONAL_IMPLEMENTATIONS,
        properties=(position_zero_row(), within_unit_range()),
        atol=1e-4,
        rtol=1e-4,
    )
