"""Corpus c for notebook 06 (positional encoding), written blind from the learner's edition."""

import math

import torch

import attnlib
from mistake_corpus.corpus import REFUSED, Entry

# ------------------------------------------------------ Exercise 1: my_sinusoidal_encoding


def ex1_wrong_halves(positions, d_model):
    # all the sines first, then all the cosines (as some libraries lay it out)
    half = (d_model + 1) // 2
    i = torch.arange(half, dtype=torch.float64)
    angles = positions.double()[..., None] * 10000.0 ** (-2 * i / d_model)
    return torch.cat([angles.sin(), angles.cos()], dim=-1)[..., :d_model]


def ex1_wrong_per_dim_frequency(positions, d_model):
    # each dimension its own frequency 10000^(-j/d)
    j = torch.arange(d_model, dtype=torch.float64)
    angles = positions.double().unsqueeze(-1) * 10000.0 ** (-j / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_missing_two(positions, d_model):
    i = torch.arange(d_model) // 2
    angles = positions.double().unsqueeze(-1) / 10000.0 ** (i.double() / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_cos_first(positions, d_model):
    j = torch.arange(d_model)
    angles = positions.double()[..., None] / 10000.0 ** ((j - j % 2).double() / d_model)
    return torch.where(j % 2 == 0, angles.cos(), angles.sin())


def ex1_wrong_even_positions(positions, d_model):
    # "sine for even positions, cosine for odd positions"
    j = torch.arange(d_model)
    angles = positions.double()[..., None] / 10000.0 ** ((j - j % 2).double() / d_model)
    even_position = (positions % 2 == 0)[..., None]
    return torch.where(even_position, angles.sin(), angles.cos())


def ex1_wrong_odd_width(positions, d_model):
    # fills the even and odd columns, with d/2 frequencies
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions.double()[..., None] * omega[: d_model // 2]
    pe = torch.zeros(*positions.shape, d_model, dtype=torch.float64)
    pe[..., 0::2] = angles.sin()
    pe[..., 1::2] = angles.cos()
    return pe


def ex1_wrong_ignores_positions(positions, d_model):
    # counted 0 … T-1 along the last axis instead of reading the positions given
    T = positions.shape[-1]
    p = torch.arange(T, dtype=torch.float64).expand(positions.shape)
    j = torch.arange(d_model)
    angles = p[..., None] / 10000.0 ** ((j - j % 2).double() / d_model)
    return torch.where(j % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_base_1000(positions, d_model):
    j = torch.arange(d_model)
    angles = positions.double()[..., None] * 1000.0 ** (-(j - j % 2).double() / d_model)
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))


def ex1_wrong_exp_sign(positions, d_model):
    # copied exp(2i·ln(10000)/d) without its minus sign
    j = torch.arange(d_model)
    two_i = (j - j % 2).double()
    angles = positions.double()[..., None] * torch.exp(two_i * math.log(10000.0) / d_model)
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))


def ex1_refused_attnlib(positions, d_model):
    table = attnlib.sinusoidal_encoding(int(positions.max()) + 1, d_model)
    return table[positions]


def ex1_right_round_up_and_trim(positions, d_model):
    pairs = (d_model + 1) // 2
    two_i = torch.arange(pairs, dtype=torch.float64) * 2
    div = torch.exp(-math.log(10000.0) * two_i / d_model)
    angles = positions.to(torch.float64).unsqueeze(-1) * div  # (..., pairs)
    pe = torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)  # (..., 2·pairs)
    return pe[..., :d_model]


def ex1_right_loop(positions, d_model):
    flat = positions.reshape(-1).tolist()
    rows = []
    for p in flat:
        row = []
        for j in range(d_model):
            angle = p / 10000 ** (2 * (j // 2) / d_model)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64).reshape(*positions.shape, d_model)


# ------------------------------------------------------------------- Exercise 2: my_rotary


def _angles(T, D, start=0, two=2):
    i = torch.arange(D // 2, dtype=torch.float64)
    omega = 10000.0 ** (-two * i / D)
    return torch.arange(start, start + T, dtype=torch.float64)[:, None] * omega  # (T, D/2)


def ex2_wrong_clockwise(x):
    theta = _angles(x.shape[-2], x.shape[-1])
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * c + b * s, -a * s + b * c), dim=-1).flatten(-2)


def ex2_wrong_rotate_half(x):
    # the Llama layout: i with i + D/2
    theta = _angles(x.shape[-2], x.shape[-1])
    c = torch.cat([theta.cos(), theta.cos()], -1).to(x.dtype)
    s = torch.cat([theta.sin(), theta.sin()], -1).to(x.dtype)
    a, b = x.chunk(2, dim=-1)
    return x * c + torch.cat([-b, a], dim=-1) * s


def ex2_wrong_positions_from_one(x):
    theta = _angles(x.shape[-2], x.shape[-1], start=1)
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


def ex2_wrong_missing_two(x):
    theta = _angles(x.shape[-2], x.shape[-1], two=1)
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


def ex2_wrong_halves_out(x):
    # reads the pairs as neighbours but writes them back as two halves
    theta = _angles(x.shape[-2], x.shape[-1])
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.cat((a * c - b * s, a * s + b * c), dim=-1)


def ex2_wrong_first_dim_is_t(x):
    # T read from the first dimension, as for a 2-D input
    T, D = x.shape[0], x.shape[-1]
    theta = _angles(T, D)
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


def ex2_wrong_in_place(x):
    theta = _angles(x.shape[-2], x.shape[-1])
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2].clone(), x[..., 1::2].clone()
    x[..., ::2] = a * c - b * s
    x[..., 1::2] = a * s + b * c
    return x


def ex2_wrong_sequential_update(x):
    # updated the even half first, then used the new even values for the odd half
    theta = _angles(x.shape[-2], x.shape[-1])
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    out = x.clone()
    out[..., ::2] = out[..., ::2] * c - out[..., 1::2] * s
    out[..., 1::2] = out[..., ::2] * s + out[..., 1::2] * c
    return out


def ex2_refused_apply_rotary(x):
    return attnlib.apply_rotary(x, torch.arange(x.shape[-2]))


def ex2_right_complex(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = 10000.0 ** (-torch.arange(D // 2, dtype=torch.float64) / (D / 2))
    theta = torch.outer(torch.arange(T, dtype=torch.float64), omega)
    turn = torch.polar(torch.ones_like(theta), theta)  # e^{i p ω}
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], D // 2, 2).contiguous())
    return torch.view_as_real(z * turn).flatten(-2).to(x.dtype)


def ex2_right_matrix(x):
    # a block-diagonal rotation matrix per position
    T, D = x.shape[-2], x.shape[-1]
    theta = _angles(T, D)
    R = torch.zeros(T, D, D, dtype=torch.float64)
    for i in range(D // 2):
        c, s = theta[:, i].cos(), theta[:, i].sin()
        R[:, 2 * i, 2 * i], R[:, 2 * i, 2 * i + 1] = c, -s
        R[:, 2 * i + 1, 2 * i], R[:, 2 * i + 1, 2 * i + 1] = s, c
    return (R @ x.double().unsqueeze(-1)).squeeze(-1).to(x.dtype)


E1, E2 = "ex1_sinusoidal_table", "ex2_rotary_embedding"
ENTRIES = [
    Entry(
        E1,
        "all sines first, then all cosines",
        ex1_wrong_halves,
        named="wrote all the sines first and all the cosines after them",
    ),
    Entry(
        E1,
        "each dimension its own frequency 10000^(-j/d)",
        ex1_wrong_per_dim_frequency,
        named="gave each dimension its own frequency, 10000^(−j/d) for dimension j",
    ),
    Entry(
        E1,
        "used 10000^(-i/d), forgetting the 2",
        ex1_wrong_missing_two,
        named="used i / d in the exponent instead of 2i / d",
    ),
    Entry(
        E1,
        "cosine in even dimensions, sine in odd",
        ex1_wrong_cos_first,
        named="put the cosines in the even dimensions and the sines in the odd ones",
    ),
    Entry(
        E1,
        "sine for even positions, cosine for odd positions",
        ex1_wrong_even_positions,
        named="used a sine for even positions and a cosine for odd positions",
    ),
    Entry(
        E1,
        "breaks on an odd width",
        ex1_wrong_odd_width,
        named="assumed d_model is even: took d_model // 2 pairs, one sine short for an odd width",
    ),
    Entry(
        E1,
        "counted positions from 0 instead of using the ones given",
        ex1_wrong_ignores_positions,
        named="ignored the positions given and counted 0, 1, 2, … instead",
    ),
    Entry(
        E1,
        "base 1000 instead of 10000",
        ex1_wrong_base_1000,
        named="used 1000 as the base instead of 10000",
    ),
    Entry(
        E1,
        "dropped the minus sign of the exponent",
        ex1_wrong_exp_sign,
        named="multiplied the position by 10000^(2i/d) instead of dividing by it",
    ),
    Entry(E1, "indexed attnlib's table", ex1_refused_attnlib, named=REFUSED),
    Entry(E1, "rounded the width up and trimmed", ex1_right_round_up_and_trim, right=True),
    Entry(E1, "Python loops with math.sin", ex1_right_loop, right=True),
    Entry(
        E2, "turned clockwise", ex2_wrong_clockwise, named="turned each pair clockwise, by −p·ω_i"
    ),
    Entry(
        E2,
        "rotate_half layout (i with i + D/2)",
        ex2_wrong_rotate_half,
        named="paired dimension i with i + D/2 (the rotate_half layout), not 2i with 2i + 1",
    ),
    Entry(
        E2,
        "positions counted from 1",
        ex2_wrong_positions_from_one,
        named="counted the positions from 1, so row 0 is turned too",
    ),
    Entry(
        E2,
        "10000^(-i/D), forgetting the 2",
        ex2_wrong_missing_two,
        named="used i / D in the exponent instead of 2i / D",
    ),
    Entry(
        E2,
        "wrote the rotated pairs back as two halves",
        ex2_wrong_halves_out,
        named="wrote all the new even entries first and all the new odd entries after them",
    ),
    Entry(
        E2,
        "took T from the first dimension",
        ex2_wrong_first_dim_is_t,
        named="took the number of positions T from the first dimension of x",
    ),
    Entry(
        E2,
        "rotated x in place",
        ex2_wrong_in_place,
        named=(
            "changed a tensor it was given in place (an operation ending in _, `-=`, `/=`, "
            "or an assignment into it)"
        ),
    ),
    Entry(
        E2,
        "used the already rotated even values for the odd ones",
        ex2_wrong_sequential_update,
        named="computed the new odd entries from the new even entries",
    ),
    Entry(E2, "called attnlib.apply_rotary", ex2_refused_apply_rotary, named=REFUSED),
    Entry(E2, "complex numbers", ex2_right_complex, right=True),
    Entry(E2, "a block-diagonal matrix per position", ex2_right_matrix, right=True),
]
