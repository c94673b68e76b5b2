"""Notebook 06's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(slices, a loop, log-space frequencies, complex numbers, float32) must pass; answers that call
attnlib's encoding or rotation must be refused. The rotary check is optional: it only reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.course import sliders

Tensor = torch.Tensor


def _named(report: object, mistake: str) -> bool:
    return f"The mistake: {mistake}." in str(report)


# -- Exercise 1: the sinusoidal table --------------------------------------------------------


def table_where(positions: Tensor, d_model: int) -> Tensor:
    j = torch.arange(d_model)
    two_i = (j - j % 2).double()
    angles = positions.double().unsqueeze(-1) / torch.pow(10000.0, two_i / d_model)
    return torch.where(j % 2 == 1, angles.cos(), angles.sin())


def table_slices(positions: Tensor, d_model: int) -> Tensor:
    omega = 1.0 / 10000 ** (torch.arange(0, d_model, 2) / d_model)  # float32
    angles = positions[..., None] * omega
    pe = torch.empty(*positions.shape, d_model)
    pe[..., 0::2] = torch.sin(angles)
    pe[..., 1::2] = torch.cos(angles[..., : d_model // 2])
    return pe


def table_log_space(positions: Tensor, d_model: int) -> Tensor:
    div_term = torch.exp(torch.arange(0, d_model, 2).double() * -(math.log(10000.0) / d_model))
    angles = positions.unsqueeze(-1).double() * div_term
    pe = torch.zeros((*positions.shape, d_model), dtype=torch.float64)
    pe[..., 0::2] = torch.sin(angles)
    if d_model > 1:
        pe[..., 1::2] = torch.cos(angles)[..., : d_model // 2]
    return pe


def table_loop(positions: Tensor, d_model: int) -> Tensor:
    rows = []
    for p in positions.reshape(-1).tolist():
        row = []
        for j in range(d_model):
            angle = p / 10000 ** (2 * (j // 2) / d_model)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64).reshape(*positions.shape, d_model)


def table_stacked_then_trimmed(positions: Tensor, d_model: int) -> Tensor:
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions.to(torch.float64)[..., None] * omega
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)[..., :d_model]


def table_complex(positions: Tensor, d_model: int) -> Tensor:
    pairs = (d_model + 1) // 2
    omega = 10000.0 ** (-2 * torch.arange(pairs, dtype=torch.float64) / d_model)
    angles = positions.double()[..., None] * omega
    points = torch.polar(torch.ones_like(angles), angles)  # cos + i·sin
    return torch.view_as_real(points).flip(-1).flatten(-2)[..., :d_model]


TABLE_RIGHT = {
    "torch.where per dimension": table_where,
    "slices, in float32": table_slices,
    "log-space frequencies": table_log_space,
    "a Python loop": table_loop,
    "stacked pairs, trimmed": table_stacked_then_trimmed,
    "complex numbers": table_complex,
}


def _pe(positions: Tensor, d_model: int, base: float = 10000.0, exponent=None, swap=False):
    n = (d_model + 1) // 2
    two_i = 2 * torch.arange(n, dtype=torch.float64)
    power = two_i / d_model if exponent is None else exponent(two_i, d_model)
    angles = positions.double()[..., None] / base**power
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    out = torch.zeros(*positions.shape, d_model, dtype=torch.float64)
    out[..., ::2] = first
    out[..., 1::2] = second[..., : d_model // 2]
    return out


def sines_then_cosines(positions: Tensor, d_model: int) -> Tensor:
    omega = 10000 ** (-torch.arange(0, d_model, 2).double() / d_model)
    angles = positions.double()[..., None] * omega
    return torch.cat([angles.sin(), angles.cos()[..., : d_model // 2]], dim=-1)


def own_frequency(positions: Tensor, d_model: int) -> Tensor:
    dims = torch.arange(d_model, dtype=torch.float64)
    angles = positions.double()[..., None] * 10000 ** (-dims / d_model)
    out = angles.sin()
    out[..., 1::2] = angles[..., 1::2].cos()
    return out


def by_parity_of_position(positions: Tensor, d_model: int) -> Tensor:
    pe = _pe(positions, d_model)
    both = _pe(positions, d_model, swap=True)  # cos where pe has sin, at the same angles
    sines = torch.where(torch.arange(d_model) % 2 == 0, pe, both)
    cosines = torch.where(torch.arange(d_model) % 2 == 0, both, pe)
    odd = (positions % 2 == 1)[..., None]
    return torch.where(odd, cosines, sines)


def even_only(positions: Tensor, d_model: int) -> Tensor:
    omega = 1 / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    angles = positions.unsqueeze(-1) * omega
    pe = torch.zeros((*positions.shape, d_model))
    pe[..., 0::2], pe[..., 1::2] = torch.sin(angles), torch.cos(angles)
    return pe


def last_zero(positions: Tensor, d_model: int) -> Tensor:
    pe = torch.zeros(*positions.shape, d_model, dtype=torch.float64)
    for i in range(d_model // 2):
        angle = positions.double() / 10000 ** (2 * i / d_model)
        pe[..., 2 * i], pe[..., 2 * i + 1] = angle.sin(), angle.cos()
    return pe


def flat_positions(positions: Tensor, d_model: int) -> Tensor:
    return table_where(positions.flatten(), d_model)


def multiplied_in_float32(positions: Tensor, d_model: int) -> Tensor:
    # The log-space formula with its minus sign forgotten, in float32 as torch computes by default.
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (math.log(10000.0) / d_model))
    angles = positions[..., None] * div_term
    pe = torch.zeros(*positions.shape, d_model)
    pe[..., 0::2] = torch.sin(angles)
    pe[..., 1::2] = torch.cos(angles[..., : d_model // 2])
    return pe


def d_plus_one_columns(positions: Tensor, d_model: int) -> Tensor:
    freqs = 10000 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions.double().unsqueeze(-1) * freqs
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(*positions.shape, -1)


def exponent_two_j(positions: Tensor, d_model: int) -> Tensor:
    pe = torch.zeros(*positions.shape, d_model, dtype=torch.float64)
    for j in range(d_model):
        angle = positions.double() / 10000 ** (2 * j / d_model)
        pe[..., j] = angle.sin() if j % 2 == 0 else angle.cos()
    return pe


def one_row_of_positions(positions: Tensor, d_model: int) -> Tensor:
    freqs = 10000 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions.unsqueeze(1) * freqs  # (T, 1) * (P,)
    pe = torch.zeros(len(positions), d_model, dtype=torch.float64)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()[:, : d_model // 2]
    return pe


def table_in_the_positions_dtype(positions: Tensor, d_model: int) -> Tensor:
    pe = torch.zeros(*positions.shape, d_model, dtype=positions.dtype)
    pe[...] = table_where(positions, d_model)  # cut to whole numbers on the way in
    return pe


def sines_then_cosines_odd_sine_last(positions: Tensor, d_model: int) -> Tensor:
    pe = []
    for i in range(d_model // 2):
        pe.append(torch.sin(positions / 10000 ** (2 * i / d_model)))
    for i in range(d_model // 2):
        pe.append(torch.cos(positions / 10000 ** (2 * i / d_model)))
    if d_model % 2 == 1:
        pe.append(torch.sin(positions / 10000 ** ((d_model - 1) / d_model)))
    return torch.stack(pe, dim=-1)


def pairs_of_half_the_width(positions: Tensor, d_model: int) -> Tensor:
    half = d_model // 2
    omega = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) * 2 / d_model)
    angles = positions.double()[..., None] * omega
    pe = torch.zeros(*positions.shape, d_model, dtype=torch.float64)
    pe[..., ::2] = angles.sin()
    pe[..., 1::2] = angles.cos()
    return pe


TABLE_WRONG: dict[str, tuple[Callable[[Tensor, int], Tensor], str]] = {
    "base 1000": (lambda p, d: _pe(p, d, base=1000), "1000 as the base"),
    "sin and cos swapped": (lambda p, d: _pe(p, d, swap=True), "cosines in the even dimensions"),
    "halves": (sines_then_cosines, "all the sines first"),
    "i / d": (lambda p, d: _pe(p, d, exponent=lambda two_i, d: two_i / 2 / d), "i / d"),
    "4i / d": (lambda p, d: _pe(p, d, exponent=lambda two_i, d: 2 * two_i / d), "doubled 2i"),
    "a frequency per dimension": (own_frequency, "each dimension its own frequency"),
    "multiplied": (lambda p, d: _pe(p, d, exponent=lambda t, d: -t / d), "multiplied the position"),
    "even and odd positions": (by_parity_of_position, "even positions"),
    "floor division": (lambda p, d: _pe(p, d, exponent=lambda t, d: t // d), "floor division"),
    "built for d + 1": (lambda p, d: _pe(p, d + d % 2)[..., :d], "for d_model + 1 dimensions"),
    "d + 1 columns": (d_plus_one_columns, "returned d_model + 1 dimensions"),
    "even widths only": (even_only, "assumed d_model is even: with an odd width the cosines"),
    "d // 2 pairs": (pairs_of_half_the_width, "one sine short for an odd width"),
    "last left at zero": (last_zero, "left the last dimension of an odd width at 0"),
    "counted from 0": (
        lambda p, d: table_where(torch.zeros_like(p) + torch.arange(p.shape[-1]), d),
        "ignored the positions given",
    ),
    "one row of positions": (one_row_of_positions, "assumed the positions are one row"),
    "flattened": (flat_positions, "flattened a batch of positions"),
    "2j / d": (exponent_two_j, "2j / d"),
    "from 1": (lambda p, d: table_where(p + 1, d), "counting them from 1"),
    "an integer table": (table_in_the_positions_dtype, "the positions' integer dtype"),
}
TABLE_NAMED_TWICE = {
    "multiplied in float32": (multiplied_in_float32, "multiplied the position"),
    "halves, the odd sine last": (sines_then_cosines_odd_sine_last, "all the sines first"),
}


@pytest.mark.parametrize("name", TABLE_RIGHT)
def test_right_tables_pass(name: str) -> None:
    report = checks.check_my_sinusoidal_encoding(TABLE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", [*TABLE_WRONG, *TABLE_NAMED_TWICE])
def test_each_table_mistake_is_caught_and_named(name: str) -> None:
    fn, words = {**TABLE_WRONG, **TABLE_NAMED_TWICE}[name]
    report = checks.check_my_sinusoidal_encoding(fn)
    assert not report.passed
    assert words in str(report), report


def test_the_table_of_exercise_1_is_the_one_tested_here() -> None:
    table = [m.name for m in known_mistakes("ex1_sinusoidal_table")]
    for _, words in TABLE_WRONG.values():
        assert sum(words in name for name in dict.fromkeys(table)) == 1, words
    # and two copies of one-row code (below), and the sines first written a second way
    assert len(table) == len(TABLE_WRONG) + 3


def test_a_copy_of_section_2s_encode_is_named_twice_over() -> None:
    # The notebook's three lines, for 1-D positions and an even width, copied with d_model.
    def encode(positions, d_model):
        omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
        angles = positions.to(torch.float64)[:, None] * omega
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)

    report = str(checks.check_my_sinusoidal_encoding(encode))
    assert "case 'a batch of positions" in report and "raised RuntimeError" in report
    assert "The mistake: assumed one row of positions and an even width, as section 2" in report

    def annotated(positions, d_model):  # the Annotated Transformer's lines, for a row of positions
        position = positions.unsqueeze(1).float()
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
        pe = torch.zeros(len(positions), d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        return pe

    report = str(checks.check_my_sinusoidal_encoding(annotated))
    assert "The mistake: assumed one row of positions and an even width: the cosines" in report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda p, d: attnlib.sinusoidal_encoding(int(p.max()) + 1, d)[p],
        lambda p, d: attnlib.SinusoidalPositionalEncoding(d, int(p.max()) + 1).pe[p],
        lambda p, d: sliders.encoding_at(0, 0, int(p.max()) + 1, d).encoding[p],
    ],
    ids=["sinusoidal_encoding", "SinusoidalPositionalEncoding", "the slider"],
)
def test_a_table_that_comes_from_attnlib_is_refused(cheat: Callable[[Tensor, int], Tensor]) -> None:
    report = checks.check_my_sinusoidal_encoding(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_the_reference_is_attnlibs_table_for_even_widths() -> None:
    from attnlib.checks.nb06_positional.table_mistakes import reference

    for d in (2, 8, 64):
        torch.testing.assert_close(
            reference(torch.arange(30), d).float(), attnlib.sinusoidal_encoding(30, d)
        )


# -- Exercise 2 (optional): rotary embeddings ------------------------------------------------


def rotary_slices(x: Tensor) -> Tensor:
    T, D = x.shape[-2:]
    theta = torch.arange(T)[:, None] * 10000 ** (-torch.arange(0, D, 2) / D)  # float32
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    out = x.clone()
    out[..., ::2] = x[..., ::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., ::2] * sin + x[..., 1::2] * cos
    return out


def rotary_complex(x: Tensor) -> Tensor:
    T, D = x.shape[-2:]
    theta = torch.outer(
        torch.arange(T, dtype=torch.float64), 10000.0 ** (-torch.arange(0, D, 2).double() / D)
    )
    turned = torch.view_as_complex(x.double().reshape(*x.shape[:-1], D // 2, 2).contiguous())
    turned = turned * torch.polar(torch.ones_like(theta), theta)
    return torch.view_as_real(turned).flatten(-2)


def rotary_stacked(x: Tensor) -> Tensor:
    T, D = x.shape[-2:]
    i = torch.arange(D // 2, dtype=torch.float64)
    angle = torch.arange(T, dtype=torch.float64).unsqueeze(-1) / 10000 ** (2 * i / D)
    a, b = x[..., 0::2], x[..., 1::2]
    pairs = (a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos())
    return torch.stack(pairs, dim=-1).flatten(-2)


def rotary_matrices(x: Tensor) -> Tensor:
    T, D = x.shape[-2:]
    out = torch.empty_like(x, dtype=torch.float64)
    for p in range(T):
        for i in range(D // 2):
            t = p * 10000 ** (-2 * i / D)
            R = torch.tensor([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
            out[..., p, 2 * i : 2 * i + 2] = x[..., p, 2 * i : 2 * i + 2].double() @ R.T.double()
    return out


def rotary_einsum(x: Tensor) -> Tensor:
    T, D = x.shape[-2:]
    theta = torch.arange(T).double()[:, None] * 10000.0 ** (-torch.arange(0, D, 2).double() / D)
    c, s = theta.cos(), theta.sin()
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (T, D/2, 2, 2)
    pairs = x.double().unflatten(-1, (D // 2, 2))
    return torch.einsum("tpij,...tpj->...tpi", R, pairs).flatten(-2)


ROTARY_RIGHT = {
    "slices, angles in float32": rotary_slices,
    "complex numbers": rotary_complex,
    "stacked pairs": rotary_stacked,
    "a 2 × 2 matrix per position and pair": rotary_matrices,
    "einsum with rotation matrices": rotary_einsum,
}


def _turn(x: Tensor, theta: Tensor, sign: float = 1.0) -> Tensor:
    a, b = x.double()[..., 0::2], x.double()[..., 1::2]
    c, s = theta.cos(), sign * theta.sin()
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


def _theta(x: Tensor, start: int = 0, base: float = 10000.0, power=None) -> Tensor:
    T, D = x.shape[-2:]
    two_i = torch.arange(0, D, 2).double()
    exponent = -two_i / D if power is None else power(two_i, D)
    return torch.arange(start, start + T).double()[:, None] * base**exponent


def rotary_in_place(x: Tensor) -> Tensor:
    x = x.clone().double()
    theta = _theta(x)
    x[..., ::2] = x[..., ::2] * theta.cos() - x[..., 1::2] * theta.sin()
    x[..., 1::2] = x[..., ::2] * theta.sin() + x[..., 1::2] * theta.cos()
    return x


def rotate_half(x: Tensor) -> Tensor:
    first, second = x.double().chunk(2, dim=-1)
    theta = _theta(x)
    rotated = torch.cat((-second, first), dim=-1)
    cos, sin = torch.cat([theta.cos()] * 2, -1), torch.cat([theta.sin()] * 2, -1)
    return torch.cat((first, second), -1) * cos + rotated * sin


def rotary_first_dim(x: Tensor) -> Tensor:
    T = x.shape[0]
    D = x.shape[-1]
    theta = torch.arange(T).double()[:, None] * 10000 ** (-torch.arange(0, D, 2).double() / D)
    return _turn(x, theta)


def rotary_along_first_dim(x: Tensor) -> Tensor:
    p = torch.arange(x.shape[0]).double().reshape(-1, *[1] * (x.dim() - 1))  # (T0, 1, …, 1)
    D = x.shape[-1]
    theta = p * 10000 ** (-torch.arange(0, D, 2).double() / D)
    return _turn(x, theta)


def rotary_multiplied_float32(x: Tensor) -> Tensor:
    T, D = x.shape[-2:]
    theta = torch.arange(T)[:, None] * 10000 ** (torch.arange(0, D, 2) / D)  # float32
    a, b = x[..., ::2], x[..., 1::2]
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    return torch.stack((a * c - b * s, a * s + b * c), -1).flatten(-2)


def rotary_without_the_pair(x: Tensor) -> Tensor:
    theta = torch.repeat_interleave(_theta(x), 2, dim=-1)  # (T, D): each pair's angle twice
    return x * torch.cos(theta) + x * torch.sin(theta)


ROTARY_WRONG: dict[str, tuple[Callable[[Tensor], Tensor], str]] = {
    "from 1": (lambda x: _turn(x, _theta(x, start=1)), "counted the positions from 1"),
    "clockwise": (lambda x: _turn(x, _theta(x), sign=-1.0), "clockwise"),
    "in place": (rotary_in_place, "from the new even entries"),
    "i / D": (lambda x: _turn(x, _theta(x, power=lambda t, D: -t / 2 / D)), "i / D"),
    "halves out": (
        lambda x: torch.cat([_turn(x, _theta(x))[..., 0::2], _turn(x, _theta(x))[..., 1::2]], -1),
        "all the new even entries first",
    ),
    "rotate_half": (rotate_half, "rotate_half"),
    "base 1000": (lambda x: _turn(x, _theta(x, base=1000.0)), "1000 as the base"),
    "multiplied": (
        lambda x: _turn(x, _theta(x, power=lambda t, D: t / D)),
        "multiplied by 10000^(2i/D)",
    ),
    "one frequency": (
        lambda x: _turn(x, _theta(x, power=lambda t, D: 0 * t)),
        "every pair at the same frequency",
    ),
    "no position": (
        lambda x: _turn(x, _theta(x)[1:2].expand(x.shape[-2], -1)),
        "left the position out",
    ),
    "T from dim 0": (rotary_first_dim, "from the first dimension"),
    "positions along dim 0": (rotary_along_first_dim, "each batch entry turned as one"),
    "PE added": (
        lambda x: x + torch.stack((_theta(x).sin(), _theta(x).cos()), -1).flatten(-2),
        "added the sinusoidal encoding",
    ),
    "x cos + x sin": (rotary_without_the_pair, "its own cos + sin"),
}
ROTARY_NAMED_TWICE = {"multiplied in float32": (rotary_multiplied_float32, "multiplied by")}


@pytest.mark.parametrize("name", ROTARY_RIGHT)
def test_right_rotations_pass(name: str) -> None:
    report = checks.check_my_rotary(ROTARY_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", [*ROTARY_WRONG, *ROTARY_NAMED_TWICE])
def test_each_rotary_mistake_is_caught_and_named(name: str) -> None:
    fn, words = {**ROTARY_WRONG, **ROTARY_NAMED_TWICE}[name]
    report = checks.check_my_rotary(fn)
    assert not report.passed
    assert words in str(report), report


def test_the_table_of_exercise_2_is_the_one_tested_here() -> None:
    table = [m.name for m in known_mistakes("ex2_rotary_embedding")]
    for _, words in ROTARY_WRONG.values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(ROTARY_WRONG)


@pytest.mark.parametrize(
    "cheat",
    [
        lambda x: attnlib.apply_rotary(x),
        lambda x: attnlib.RotaryEmbedding(x.shape[-1])(x, x)[0],
    ],
    ids=["apply_rotary", "RotaryEmbedding"],
)
def test_a_rotation_that_calls_attnlib_is_refused(cheat: Callable[[Tensor], Tensor]) -> None:
    report = checks.check_my_rotary(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_the_rotary_exercise_is_optional_and_its_reference_is_attnlibs() -> None:
    from attnlib.checks.nb06_positional.rotary import reference

    assert checks.check_my_rotary.exercise.optional
    assert not checks.check_my_sinusoidal_encoding.exercise.optional
    x = torch.randn(2, 7, 8, dtype=torch.float64)
    torch.testing.assert_close(reference(x), attnlib.apply_rotary(x))
    stub = checks.check_my_rotary(lambda x: (_ for _ in ()).throw(NotImplementedError()))
    assert not stub.done and "optional exercise" in str(stub) and "no points" in str(stub)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exercise_id", "checker"),
    [
        ("ex1_sinusoidal_table", checks.check_my_sinusoidal_encoding),
        ("ex2_rotary_embedding", checks.check_my_rotary),
    ],
)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str, checker) -> None:
    for mistake in known_mistakes(exercise_id):
        assert _named(checker(mistake.fn), mistake.name), mistake.name


# -- slips the engine names (issue 40) ------------------------------------------------------------


def rotary_by_float32_matrices(x: Tensor) -> Tensor:
    t, d = x.shape[-2], x.shape[-1]
    theta = torch.arange(t)[:, None] * 10000 ** (-torch.arange(0, d, 2) / d)  # (T, D/2)
    turn = torch.zeros(t, d, d)  # float32, whatever x is
    for i in range(d // 2):
        c, s = theta[:, i].cos(), theta[:, i].sin()
        turn[:, 2 * i, 2 * i], turn[:, 2 * i, 2 * i + 1] = c, -s
        turn[:, 2 * i + 1, 2 * i], turn[:, 2 * i + 1, 2 * i + 1] = s, c
    return torch.einsum("tij,...tj->...ti", turn, x)


def test_a_float32_constant_that_breaks_float64_is_named() -> None:
    report = checks.check_my_rotary(rotary_by_float32_matrices)
    assert report.mistake == "a float32 constant breaks float64", report
    assert "turn is (" in str(report) and "float32" in str(report), report
