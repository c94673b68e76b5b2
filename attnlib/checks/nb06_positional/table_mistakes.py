"""The mistakes learners make on notebook 06's Exercise 1 (the sinusoidal table), written as a
learner would write them, and the reference they are measured against.

Notebook 06.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Mistake

Tensor = torch.Tensor


def _column(positions: Tensor) -> Tensor:
    return positions.to(torch.float64)[..., None]  # (..., 1)


def _two_i(d: int) -> Tensor:
    return torch.arange(0, d, 2, dtype=torch.float64)  # (⌈d/2⌉,): 2i of every pair


def _interleave(sines: Tensor, cosines: Tensor, d: int) -> Tensor:
    table = torch.zeros(*sines.shape[:-1], d, dtype=torch.float64)
    table[..., 0::2] = sines
    table[..., 1::2] = cosines[..., : d // 2]  # an odd width: the last pair has no cosine
    return table


def _omega(d: int) -> Tensor:
    return 10000.0 ** (-_two_i(d) / d)  # (⌈d/2⌉,): ω_i


def _table(angles: Tensor, d: int) -> Tensor:
    return _interleave(torch.sin(angles), torch.cos(angles), d)


def _angles(positions: Tensor, d: int) -> Tensor:
    return _column(positions) / 10000.0 ** (_two_i(d) / d)  # (..., ⌈d/2⌉): p·ω_i


def reference(positions: Tensor, d: int) -> Tensor:
    """PE[..., 2i] = sin(p / 10000^(2i/d)), PE[..., 2i+1] = cos(…), in float64."""
    return _table(_angles(positions, d), d)


def _per_dimension(positions: Tensor, d: int, exponent: Callable[[Tensor], Tensor]) -> Tensor:
    j = torch.arange(d)
    angles = _column(positions) / 10000.0 ** (exponent(j.double()) / d)  # (..., d)
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))


def _assumed_even(positions: Tensor, d: int) -> Tensor:
    angles = _angles(positions, d)
    table = torch.zeros(*positions.shape, d, dtype=torch.float64)
    table[..., 0::2] = torch.sin(angles)
    table[..., 1::2] = torch.cos(angles)  # one cosine too many for an odd width: raises
    return table


def _half_width_pairs(positions: Tensor, d: int) -> Tensor:
    angles = _column(positions) * _omega(d)[: d // 2]  # ⌊d/2⌋ pairs: one sine short if d is odd
    table = torch.zeros(*positions.shape, d, dtype=torch.float64)
    table[..., 0::2] = torch.sin(angles)  # raises for an odd width
    table[..., 1::2] = torch.cos(angles)
    return table


def _one_row_of_positions(positions: Tensor, d: int) -> Tensor:
    angles = positions.double()[:, None] / 10000.0 ** (_two_i(d) / d)  # (B, 1, T) for a batch
    return _table(angles, d)


def _slices_for_one_row(positions: Tensor, d: int) -> Tensor:
    angles = positions.double()[:, None] / 10000.0 ** (_two_i(d) / d)  # (T, ⌈d/2⌉) if 1-D
    table = torch.zeros(len(positions), d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)  # raises for an odd width
    return table


def _last_left_at_zero(positions: Tensor, d: int) -> Tensor:
    two_i = torch.arange(0, d - d % 2, 2, dtype=torch.float64)  # the full pairs only
    angles = _column(positions) / 10000.0 ** (two_i / d)
    table = torch.zeros(*positions.shape, d, dtype=torch.float64)
    table[..., 0 : 2 * len(two_i) : 2] = torch.sin(angles)
    table[..., 1::2] = torch.cos(angles)
    return table


def _one_wider(positions: Tensor, d: int) -> Tensor:
    wide = d + d % 2
    return reference(positions, wide)[..., :d]


def _halves_odd_sine_last(positions: Tensor, d: int) -> Tensor:
    half = d // 2  # the full pairs: their sines, then their cosines
    angles = _column(positions) / 10000.0 ** (_two_i(d)[:half] / d)
    table = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)
    if d % 2:  # the last pair's sine goes at the end
        last = _column(positions) / 10000.0 ** ((d - 1) / d)
        table = torch.cat([table, torch.sin(last)], dim=-1)
    return table


def _even_positions_sine(positions: Tensor, d: int) -> Tensor:
    j = torch.arange(d)
    angles = _column(positions) / 10000.0 ** ((j - j % 2).double() / d)  # (..., d)
    return torch.where(positions[..., None] % 2 == 0, torch.sin(angles), torch.cos(angles))


MULTIPLIED = Mistake(
    "multiplied the position by 10000^(2i/d) instead of dividing by it",
    "ω_i = 1 / 10000^(2i/d) slows down from pair to pair; multiplying makes every pair faster "
    "than the one before, up to thousands of radians per position.",
    lambda p, d: _table(_column(p) * 10000.0 ** (_two_i(d) / d), d),
)


MISTAKES = (
    Mistake(
        "used 1000 as the base instead of 10000",
        "the paper's base is 10000: with 1000 every pair after the first turns faster, and the "
        "slowest comes round about 10 times sooner (section 5).",
        lambda p, d: _table(_column(p) / 1000.0 ** (_two_i(d) / d), d),
    ),
    Mistake(
        "put the cosines in the even dimensions and the sines in the odd ones",
        "dimension 2i holds sin(p·ω_i) and dimension 2i + 1 holds cos(p·ω_i), so the row of "
        "position 0 reads 0, 1, 0, 1, ….",
        lambda p, d: _interleave(torch.cos(_angles(p, d)), torch.sin(_angles(p, d)), d),
    ),
    Mistake(
        "wrote all the sines first and all the cosines after them",
        "the paper interleaves them: pair i sits side by side in dimensions 2i and 2i + 1. "
        "Sines in the first half and cosines in the second is another layout, in which each "
        "dimension means something else.",
        lambda p, d: torch.cat([torch.sin(_angles(p, d)), torch.cos(_angles(p, d))], -1)[..., :d],
        variants=(_halves_odd_sine_last,),
    ),
    Mistake(
        "built the table in the positions' integer dtype, so every value was cut to a whole number",
        "a tensor made like the integer positions (zeros_like, or their dtype) holds integers: "
        "each sine and cosine written into it is truncated to 0, 1 or −1. The table needs a "
        "float dtype.",
        lambda p, d: reference(p, d).to(p.dtype),
    ),
    Mistake(
        "used i / d in the exponent instead of 2i / d",
        "i counts the pairs and 2i the dimensions: with i / d the frequencies fall only half as "
        "fast from pair to pair, and the slowest pair is far from base 10000's wavelength.",
        lambda p, d: _table(_column(p) / 10000.0 ** (_two_i(d) / 2 / d), d),
    ),
    Mistake(
        "used 2j / d in the exponent for dimension j instead of the 2i of its pair",
        "2i is the even dimension that starts pair i, so both dimensions of the pair share one "
        "frequency; 2j doubles every dimension's index, so the frequencies fall twice as fast "
        "and the two halves of a pair turn at different speeds.",
        lambda p, d: _per_dimension(p, d, lambda j: 2 * j),
    ),
    Mistake(
        "gave each dimension its own frequency, 10000^(−j/d) for dimension j",
        "the sine in dimension 2i and the cosine in dimension 2i + 1 share one angle p·ω_i: that "
        "makes each pair a point on the unit circle, and PE_(p+k) a rotation of PE_p.",
        lambda p, d: _per_dimension(p, d, lambda j: j),
    ),
    MULTIPLIED,
    Mistake(
        "used a sine for even positions and a cosine for odd positions",
        "2i and 2i + 1 count dimensions, not positions (section 2): every position, even or odd, "
        "has a sine in each even dimension and a cosine in each odd one.",
        _even_positions_sine,
    ),
    Mistake(
        "divided 2i by d with floor division, so every exponent is 0",
        "2i // d is 0 for every pair, so every ω_i is 1 and every pair turns one radian per "
        "position: the exponent is the fraction 2i / d.",
        lambda p, d: _table(_column(p) / 10000.0 ** (_two_i(d) // d), d),
    ),
    Mistake(
        "built the table for d_model + 1 dimensions and cut off the last one",
        "the exponents then divide by d + 1 instead of d, so with an odd width every pair after "
        "the first turns at the wrong speed: the exponent is 2i / d_model, for the real width.",
        _one_wider,
    ),
    Mistake(
        "returned d_model + 1 dimensions for an odd width",
        "with an odd width the last pair has only its sine: the table has exactly d_model "
        "columns, and the last pair's cosine would be dimension d_model, which does not exist.",
        lambda p, d: torch.stack([torch.sin(_angles(p, d)), torch.cos(_angles(p, d))], -1).flatten(
            -2
        ),
    ),
    Mistake(
        "assumed d_model is even: with an odd width the cosines do not fit",
        "an odd width has ⌈d/2⌉ sines but only ⌊d/2⌋ cosines: the last pair has no dimension for "
        "its cosine.",
        _assumed_even,
    ),
    Mistake(
        "assumed d_model is even: took d_model // 2 pairs, one sine short for an odd width",
        "an odd width has ⌈d/2⌉ pairs: the last one has its sine in dimension d − 1 and no "
        "cosine. With ⌊d/2⌋ pairs the sines do not fill the even dimensions.",
        _half_width_pairs,
    ),
    Mistake(
        "left the last dimension of an odd width at 0",
        "dimension d − 1 = 2i of an odd width is the sine of pair i, sin(p·ω_i) with "
        "ω_i = 10000^(−2i/d), like every other even dimension.",
        _last_left_at_zero,
    ),
    Mistake(
        "ignored the positions given and counted 0, 1, 2, … instead",
        "each row is the encoding of the position it is given: a text continued at position 100 "
        "needs PE_100, PE_101, …, not PE_0, PE_1, ….",
        lambda p, d: reference(torch.arange(p.shape[-1]).expand(p.shape), d),
    ),
    Mistake(
        "added 1 to every position, counting them from 1",
        "the positions are given as they are: position 0 is angle 0, and its row reads "
        "0, 1, 0, 1, … (sin 0 and cos 0).",
        lambda p, d: reference(p + 1, d),
    ),
    Mistake(
        "assumed the positions are one row (T,): a batch of them does not broadcast",
        "positions may have any shape, (T,) or (B, T): the pairs' frequencies must line up with "
        "a new last dimension, whatever dimensions come before it.",
        _one_row_of_positions,
    ),
    Mistake(
        "doubled 2i again in the exponent, 4i/d",
        "the exponent is 2i / d with 2i = 0, 2, 4, … the dimensions of the pairs' sines; "
        "doubling those numbers again makes the frequencies fall twice as fast.",
        lambda p, d: _table(_column(p) / 10000.0 ** (2 * _two_i(d) / d), d),
    ),
    Mistake(
        "assumed one row of positions and an even width, as section 2's encode does",
        "here positions may have any shape, (T,) or (B, T), and d_model may be odd: the "
        "frequencies must line up with a new last dimension, and an odd width has one cosine "
        "fewer than it has sines.",
        lambda p, d: torch.stack(
            [
                torch.sin(p.double()[:, None] * _omega(d)),
                torch.cos(p.double()[:, None] * _omega(d)),
            ],
            dim=-1,
        ).flatten(1),
    ),
    Mistake(
        "assumed one row of positions and an even width: the cosines do not fit an odd one",
        "here positions may have any shape, (T,) or (B, T), and d_model may be odd: the "
        "frequencies must line up with a new last dimension, and an odd width has ⌈d/2⌉ sines "
        "but only ⌊d/2⌋ cosines.",
        _slices_for_one_row,
    ),
    Mistake(
        "flattened a batch of positions into one list of rows",
        "the table keeps the shape of the positions and adds the dimensions at the end: (B, T) "
        "positions give a (B, T, d_model) table.",
        lambda p, d: reference(p.reshape(-1), d),
    ),
)


def multiplied_angles(positions: Tensor, d: int) -> Tensor:
    j = torch.arange(d)
    return _column(positions) * 10000.0 ** ((j - j % 2).double() / d)  # (..., d)
