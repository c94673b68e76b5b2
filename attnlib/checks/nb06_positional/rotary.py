"""Notebook 06, Exercise 2 (optional): rotary embeddings, pair (2i, 2i+1) of row p turned by p·ω_i.

The cases show each mistake: a single pair (the direction and the start of the positions), heads
of several pairs (the exponent, the base, where each pair goes, Llama's other pairing), leading
dimensions (where T is read from) and float32 input.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks.nb06_positional.large_angles import LargeAngles, check_allowing_large_angles
from attnlib.checks.nb06_positional.properties import pair_lengths_kept
from attnlib.checks.nb06_positional.sinusoidal import POSITIONAL_IMPLEMENTATIONS

Tensor = torch.Tensor

ROTARY = register(
    Exercise(
        id="ex2_rotary_embedding",
        notebook="06",
        number=2,
        name="my_rotary",
        optional=True,
        hints=(
            "Each pair of dimensions (2i, 2i+1) of a row is a point in its own plane. Row p turns "
            "that point anticlockwise by the angle p·ω_i, with the frequencies ω_i of the "
            "sinusoids (D in place of d): a rotation of section 10 for every position and pair.",
            "Compute all the angles at once, one per position and per pair, shape (T, D/2): it "
            "broadcasts against the even (or the odd) entries of x, whatever x's leading "
            "dimensions are. Both new entries of a pair are computed from the old ones.",
            "Take the even entries and the odd entries of the last dimension as two tensors of "
            "shape (..., T, D/2). The new even entries are old even·cos − old odd·sin, the new odd "
            "ones old even·sin + old odd·cos; write them back into the even and the odd "
            "dimensions of a new tensor, each pair where it was. Row 0 must come back unchanged.",
        ),
    )
)


def _angles(t: int, d: int, base: float = 10000.0, first: int = 0) -> Tensor:
    omega = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (D/2,)
    return torch.arange(first, first + t, dtype=torch.float64)[:, None] * omega  # (T, D/2)


def _rotate(x: Tensor, angles: Tensor, *, clockwise: bool = False) -> Tensor:
    sign = -1.0 if clockwise else 1.0
    cos, sin = torch.cos(angles), sign * torch.sin(angles)
    even, odd = x.double()[..., 0::2], x.double()[..., 1::2]
    out = torch.empty(x.shape, dtype=torch.float64)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def reference(x: Tensor) -> Tensor:
    """Row p's pair (2i, 2i+1) turned anticlockwise by p·10000^(−2i/D), in float64."""
    return _rotate(x, _angles(x.shape[-2], x.shape[-1]))


def _in_place(x: Tensor) -> Tensor:
    x = x.double().clone()
    angles = _angles(x.shape[-2], x.shape[-1])
    cos, sin = torch.cos(angles), torch.sin(angles)
    x[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    x[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos  # reads the new even entries
    return x


def _halves_out(x: Tensor) -> Tensor:
    turned = reference(x)
    return torch.cat([turned[..., 0::2], turned[..., 1::2]], dim=-1)


def _rotate_half(x: Tensor) -> Tensor:
    d = x.shape[-1]
    angles = _angles(x.shape[-2], d)
    first, second = x.double()[..., : d // 2], x.double()[..., d // 2 :]
    cos, sin = torch.cos(angles), torch.sin(angles)
    return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)


def _t_from_first_dimension(x: Tensor) -> Tensor:
    return _rotate(x, _angles(x.shape[0], x.shape[-1]))


def _positions_along_first_dimension(x: Tensor) -> Tensor:
    angles = _angles(x.shape[0], x.shape[-1])  # (first dimension, D/2)
    if x.dim() > 2:  # lined up with the first dimension: each batch entry is one position
        angles = angles.reshape(x.shape[0], *[1] * (x.dim() - 2), x.shape[-1] // 2)
    return _rotate(x, angles)


def _added(x: Tensor) -> Tensor:
    angles = _angles(x.shape[-2], x.shape[-1])  # (T, D/2)
    table = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(-2)  # (T, D)
    return x.double() + table


def _no_partner(x: Tensor) -> Tensor:
    angles = _angles(x.shape[-2], x.shape[-1]).repeat_interleave(2, dim=-1)  # (T, D)
    return x.double() * torch.cos(angles) + x.double() * torch.sin(angles)


def _every_pair_at_one_frequency(x: Tensor) -> Tensor:
    t, d = x.shape[-2], x.shape[-1]
    return _rotate(x, torch.arange(t, dtype=torch.float64)[:, None].expand(t, d // 2))


def _no_position(x: Tensor) -> Tensor:
    t, d = x.shape[-2], x.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return _rotate(x, omega.expand(t, d // 2))


def _half_speed(x: Tensor) -> Tensor:
    t, d = x.shape[-2], x.shape[-1]
    omega = 10000.0 ** (-torch.arange(d // 2, dtype=torch.float64) / d)
    return torch.arange(t, dtype=torch.float64)[:, None] * omega


def _fast(x: Tensor) -> Tensor:
    t, d = x.shape[-2], x.shape[-1]
    omega = 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.arange(t, dtype=torch.float64)[:, None] * omega


MULTIPLIED = Mistake(
    "multiplied by 10000^(2i/D) instead of dividing by it",
    "ω_i = 1 / 10000^(2i/D) slows down from pair to pair; multiplying makes every pair faster "
    "than the one before.",
    lambda x: _rotate(x, _fast(x)),
)


MISTAKES = (
    Mistake(
        "counted the positions from 1, so row 0 is turned too",
        "the first row is position 0: it turns by the angle 0 and comes back unchanged, like "
        "PE_0's sines are all 0.",
        lambda x: _rotate(x, _angles(x.shape[-2], x.shape[-1], first=1)),
    ),
    Mistake(
        "turned each pair clockwise, by −p·ω_i",
        "a rotation by +θ maps (a, b) to (a·cos θ − b·sin θ, a·sin θ + b·cos θ); with the minus "
        "on the other line the pair turns the other way. Scores still depend only on the "
        "offset, but the result is not the rotation asked for.",
        lambda x: _rotate(x, _angles(x.shape[-2], x.shape[-1]), clockwise=True),
    ),
    Mistake(
        "computed the new odd entries from the new even entries",
        "both new entries of a pair come from the old pair: once the even entries are "
        "overwritten, the odd ones are turned from a point that has already moved.",
        _in_place,
    ),
    Mistake(
        "used i / D in the exponent instead of 2i / D",
        "i counts the pairs and 2i the dimensions: with i / D the frequencies fall only half as "
        "fast from pair to pair.",
        lambda x: _rotate(x, _half_speed(x)),
    ),
    Mistake(
        "wrote all the new even entries first and all the new odd entries after them",
        "each pair stays in its own dimensions 2i and 2i + 1: putting the even entries in the "
        "first half moves every dimension but the first and the last (right only for D = 2).",
        _halves_out,
    ),
    Mistake(
        "paired dimension i with i + D/2 (the rotate_half layout), not 2i with 2i + 1",
        "that is another valid rotary layout (Hugging Face's Llama), but not this one: the two "
        "pair up different dimensions, so one's weights do not work with the other.",
        _rotate_half,
    ),
    Mistake(
        "added the sinusoidal encoding to x instead of turning its pairs",
        "rotary embeddings rotate: each pair keeps its length and only its direction changes. "
        "Adding PE_p moves every point by the same vector whatever its content, which is the "
        "encoding of section 2, not RoPE.",
        _added,
    ),
    Mistake(
        "multiplied each entry by its own cos + sin instead of mixing it with its pair's other "
        "entry",
        "a rotation mixes the two entries of a pair: the new even entry takes −sin times the "
        "odd one, the new odd entry sin times the even one. x·cos + x·sin scales each entry on "
        "its own and changes the pair's length.",
        _no_partner,
    ),
    Mistake(
        "used 1000 as the base instead of 10000",
        "rotary embeddings use the sinusoids' frequencies, ω_i = 10000^(−2i/D).",
        lambda x: _rotate(x, _angles(x.shape[-2], x.shape[-1], base=1000.0)),
    ),
    MULTIPLIED,
    Mistake(
        "turned every pair at the same frequency, one radian per position",
        "pair i turns at ω_i = 10000^(−2i/D): fast pairs for near offsets, slow ones for far "
        "ones, as the sinusoids' clock hands.",
        _every_pair_at_one_frequency,
    ),
    Mistake(
        "left the position out of the angle: every row is turned by ω_i",
        "row p turns by p·ω_i: the angle must grow with the position, or the scores cannot "
        "depend on the offset between a query and a key.",
        _no_position,
    ),
    Mistake(
        "took the number of positions T from the first dimension of x",
        "x is (..., T, D): T is the second-to-last dimension, whatever the leading dimensions "
        "(a batch, heads) are.",
        _t_from_first_dimension,
    ),
    Mistake(
        "took the first dimension of x for the positions, so each batch entry turned as one",
        "x is (..., T, D): the positions are its rows, the second-to-last dimension; all the "
        "rows of a batch entry or a head turn by different angles.",
        _positions_along_first_dimension,
    ),
)


def _cases() -> list[Case]:
    g = fixed_generator()
    specs = [
        ("4 positions, one pair (D = 2)", torch.randn(4, 2, generator=g, dtype=torch.float64)),
        ("6 positions, D = 8", torch.randn(6, 8, generator=g, dtype=torch.float64)),
        ("a batch (2, 5, 8)", torch.randn(2, 5, 8, generator=g, dtype=torch.float64)),
        ("heads (2, 3, 4, 6): D/2 = 3 pairs", torch.randn(2, 3, 4, 6, generator=g).double()),
        ("float32 input (3, 4)", torch.randn(3, 4, generator=g)),
    ]
    return [Case(name, (x,), reference(x)) for name, x in specs]


@checker_of(ROTARY, MISTAKES)
def check_my_rotary(fn: Callable[[Tensor], Tensor]) -> CheckResult:
    """Check ``my_rotary(x)``: ``(..., T, D)`` → the same shape, each pair turned by p·ω_i."""
    return check_allowing_large_angles(
        ROTARY,
        fn,
        _cases(),
        MISTAKES,
        [LargeAngles(MULTIPLIED, lambda x: _fast(x).repeat_interleave(2, dim=-1))],
        forbidden=POSITIONAL_IMPLEMENTATIONS,
        properties=(pair_lengths_kept(),),
        atol=1e-5,
        rtol=1e-4,
    )
