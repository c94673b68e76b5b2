"""Learner answers to notebook 06's exercises (positional encoding), written blind."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

# --- Exercise 1: my_sinusoidal_encoding(positions, d_model) -----------------------------------


def _pairs(d_model):
    """The 2i of every dimension j, as float64."""
    j = torch.arange(d_model)
    return (j - j % 2).double()


def ex1_wrong_even_odd_positions(positions, d_model):
    angles = positions.double()[..., None] / 10000.0 ** (_pairs(d_model) / d_model)
    even_position = (positions % 2 == 0)[..., None]
    return torch.where(even_position, angles.sin(), angles.cos())


def ex1_wrong_base_1000(positions, d_model):
    angles = positions.double()[..., None] / 1000.0 ** (_pairs(d_model) / d_model)
    j = torch.arange(d_model)
    return torch.where(j % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_exponent_j(positions, d_model):
    j = torch.arange(d_model, dtype=torch.float64)
    angles = positions.double()[..., None] / 10000.0 ** (j / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_exponent_2j(positions, d_model):
    j = torch.arange(d_model, dtype=torch.float64)
    angles = positions.double()[..., None] / 10000.0 ** (2 * j / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_halves(positions, d_model):
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions.double()[..., None] * omega
    pe = torch.cat([angles.sin(), angles.cos()], dim=-1)
    return pe[..., :d_model]


def ex1_wrong_odd_width_breaks(positions, d_model):
    omega = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    angles = positions.float().unsqueeze(-1) * omega
    pe = torch.zeros(*positions.shape, d_model)
    pe[..., 0::2] = torch.sin(angles)
    pe[..., 1::2] = torch.cos(angles)
    return pe


def ex1_wrong_odd_width_rounded_up(positions, d_model):
    d = d_model + d_model % 2  # make it even, cut the extra column at the end
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.double()[..., None] * omega
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)[..., :d_model]


def ex1_wrong_1d_only(positions, d_model):
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.zeros(len(positions), d_model, dtype=torch.float64)
    angles = positions[:, None].double() * omega
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()[:, : d_model // 2]
    return pe


def ex1_wrong_integer_division(positions, d_model):
    two_i = torch.arange(d_model) // 2 * 2
    angles = positions[..., None] / 10000.0 ** (two_i // d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_sin_cos_swapped(positions, d_model):
    angles = positions.double()[..., None] / 10000.0 ** (_pairs(d_model) / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.cos(), angles.sin())


def ex1_wrong_arange_positions(positions, d_model):
    T = positions.shape[-1]
    p = torch.arange(T, dtype=torch.float64).expand(positions.shape)
    angles = p[..., None] / 10000.0 ** (_pairs(d_model) / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_one_based(positions, d_model):
    angles = (positions.double() + 1)[..., None] / 10000.0 ** (_pairs(d_model) / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_forgot_two(positions, d_model):
    i = torch.arange(d_model) // 2
    angles = positions.double()[..., None] / 10000.0 ** (i.double() / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_float64_halves(positions, d_model):
    n = (d_model + 1) // 2
    omega = torch.pow(10000.0, -2 * torch.arange(n, dtype=torch.float64) / d_model)
    angles = positions.to(torch.float64).unsqueeze(-1) * omega
    return torch.cat([angles.sin(), angles.cos()], dim=-1)[..., :d_model].float()


def ex1_right_stack_trim(positions, d_model):
    n_pairs = (d_model + 1) // 2
    omega = 10000.0 ** (-2 * torch.arange(n_pairs, dtype=torch.float64) / d_model)
    angles = positions.to(torch.float64).unsqueeze(-1) * omega  # (..., n_pairs)
    pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)
    return pe[..., :d_model]


def ex1_right_loop(positions, d_model):
    flat = positions.reshape(-1).tolist()
    rows = []
    for p in flat:
        row = []
        for j in range(d_model):
            angle = p / 10000 ** ((j // 2 * 2) / d_model)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64).reshape(*positions.shape, d_model)


def ex1_right_exp_log(positions, d_model):
    pe = torch.empty(*positions.shape, d_model, dtype=torch.float64)
    div = torch.exp(torch.arange(0, d_model, 2).double() * (-math.log(10000.0) / d_model))
    angles = positions.double()[..., None] * div
    pe[..., 0::2] = torch.sin(angles)
    pe[..., 1::2] = torch.cos(angles[..., : d_model // 2])
    return pe


# --- Exercise 2 (optional): my_rotary(x) -------------------------------------------------------


def _angles(T, D, base=10000.0, two=2, start=0):
    freq = base ** (-two * torch.arange(D // 2, dtype=torch.float64) / D)
    return torch.arange(start, start + T, dtype=torch.float64)[:, None] * freq  # (T, D/2)


def ex2_wrong_clockwise(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos + b * sin, -a * sin + b * cos), dim=-1).flatten(-2)


def ex2_wrong_rotate_half(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    cos = torch.cat([theta.cos(), theta.cos()], dim=-1).to(x.dtype)
    sin = torch.cat([theta.sin(), theta.sin()], dim=-1).to(x.dtype)
    first, second = x[..., : D // 2], x[..., D // 2 :]
    rotated = torch.cat([-second, first], dim=-1)
    return x * cos + rotated * sin


def ex2_wrong_forgot_two(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D, two=1)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def ex2_wrong_one_based(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D, start=1)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def ex2_wrong_t_from_first_dim(x):
    T, D = x.shape[0], x.shape[-1]
    theta = _angles(T, D)
    if x.dim() > 2:
        theta = theta.view(T, *([1] * (x.dim() - 3)), 1, D // 2)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def ex2_wrong_cat_not_interleaved(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)


def ex2_wrong_in_place(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    out = x.clone()
    out[..., 0::2] = out[..., 0::2] * cos - out[..., 1::2] * sin
    out[..., 1::2] = out[..., 0::2] * sin + out[..., 1::2] * cos  # uses the new even entries
    return out


def ex2_wrong_base_1000(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D, base=1000.0)
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def ex2_wrong_float64_clockwise(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    x64 = x.double()
    a, b = x64[..., 0::2], x64[..., 1::2]
    out = torch.stack((a * theta.cos() + b * theta.sin(), b * theta.cos() - a * theta.sin()), -1)
    return out.flatten(-2).to(x.dtype)


def ex2_right_complex(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], D // 2, 2).contiguous())
    turned = pairs * torch.polar(torch.ones_like(theta), theta)
    return torch.view_as_real(turned).reshape(x.shape).to(x.dtype)


def ex2_right_rotation_matrices(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D)
    c, s = theta.cos(), theta.sin()
    R = torch.stack((torch.stack((c, -s), -1), torch.stack((s, c), -1)), -2)  # (T, D/2, 2, 2)
    pairs = x.double().unflatten(-1, (D // 2, 2))  # (..., T, D/2, 2)
    return torch.einsum("tpij,...tpj->...tpi", R, pairs).flatten(-2).to(x.dtype)


def ex2_right_rotate_pairs(x):
    T, D = x.shape[-2:]
    theta = _angles(T, D).repeat_interleave(2, dim=-1)  # (T, D): each angle twice
    swapped = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * theta.cos().to(x.dtype) + swapped * theta.sin().to(x.dtype)


E1, E2 = "ex1_sinusoidal_table", "ex2_rotary_embedding"

ENTRIES = [
    Entry(
        E1,
        "sine for even positions, cosine for odd positions",
        ex1_wrong_even_odd_positions,
        named="used a sine for even positions and a cosine for odd positions",
    ),
    Entry(E1, "base 1000", ex1_wrong_base_1000, named="used 1000 as the base instead of 10000"),
    Entry(
        E1,
        "exponent j / d instead of 2i / d",
        ex1_wrong_exponent_j,
        named="gave each dimension its own frequency, 10000^(−j/d) for dimension j",
    ),
    Entry(
        E1,
        "exponent 2j / d",
        ex1_wrong_exponent_2j,
        named=("used 2j / d in the exponent for dimension j instead of the 2i of its pair"),
    ),
    Entry(
        E1,
        "all sines first, then all cosines",
        ex1_wrong_halves,
        named="wrote all the sines first and all the cosines after them",
    ),
    Entry(
        E1,
        "filled 0::2 and 1::2, which breaks for an odd width",
        ex1_wrong_odd_width_breaks,
        named="assumed d_model is even: with an odd width the cosines do not fit",
    ),
    Entry(
        E1,
        "rounded an odd width up and used it in the exponent",
        ex1_wrong_odd_width_rounded_up,
        named="built the table for d_model + 1 dimensions and cut off the last one",
    ),
    Entry(
        E1,
        "written for a 1-D positions tensor only",
        ex1_wrong_1d_only,
        named=("assumed the positions are one row (T,): a batch of them does not broadcast"),
    ),
    Entry(
        E1,
        "integer division in the exponent",
        ex1_wrong_integer_division,
        named="divided 2i by d with floor division, so every exponent is 0",
    ),
    Entry(
        E1,
        "cosine in the even dimensions, sine in the odd",
        ex1_wrong_sin_cos_swapped,
        named="put the cosines in the even dimensions and the sines in the odd ones",
    ),
    Entry(
        E1,
        "ignored the positions, used 0 … T-1",
        ex1_wrong_arange_positions,
        named="ignored the positions given and counted 0, 1, 2, … instead",
    ),
    Entry(
        E1,
        "positions counted from 1",
        ex1_wrong_one_based,
        named="added 1 to every position, counting them from 1",
    ),
    Entry(
        E1,
        "exponent i / d (forgot the 2)",
        ex1_wrong_forgot_two,
        named="used i / d in the exponent instead of 2i / d",
    ),
    Entry(
        E1,
        "float64, sines then cosines",
        ex1_wrong_float64_halves,
        named="wrote all the sines first and all the cosines after them",
    ),
    Entry(E1, "pairs stacked and flattened, trimmed", ex1_right_stack_trim, right=True),
    Entry(E1, "a Python loop with math.sin", ex1_right_loop, right=True),
    Entry(E1, "exp/log frequencies, slices", ex1_right_exp_log, right=True),
    Entry(
        E2, "turned clockwise", ex2_wrong_clockwise, named="turned each pair clockwise, by −p·ω_i"
    ),
    Entry(
        E2,
        "rotate_half layout (i with i + D/2)",
        ex2_wrong_rotate_half,
        named=("paired dimension i with i + D/2 (the rotate_half layout), not 2i with 2i + 1"),
    ),
    Entry(
        E2,
        "frequencies 10000^(-i/D), forgot the 2",
        ex2_wrong_forgot_two,
        named="used i / D in the exponent instead of 2i / D",
    ),
    Entry(
        E2,
        "positions counted from 1",
        ex2_wrong_one_based,
        named="counted the positions from 1, so row 0 is turned too",
    ),
    Entry(
        E2,
        "took T from x.shape[0]",
        ex2_wrong_t_from_first_dim,
        named=(
            "took the first dimension of x for the positions, so each batch entry turned as one"
        ),
    ),
    Entry(
        E2,
        "put the turned evens first, then the odds (cat)",
        ex2_wrong_cat_not_interleaved,
        named=("wrote all the new even entries first and all the new odd entries after them"),
    ),
    Entry(
        E2,
        "updated the even entries, then used them for the odd ones",
        ex2_wrong_in_place,
        named="computed the new odd entries from the new even entries",
    ),
    Entry(E2, "base 1000", ex2_wrong_base_1000, named="used 1000 as the base instead of 10000"),
    Entry(
        E2,
        "float64, clockwise",
        ex2_wrong_float64_clockwise,
        named="turned each pair clockwise, by −p·ω_i",
    ),
    Entry(E2, "complex numbers", ex2_right_complex, right=True),
    Entry(E2, "2 × 2 rotation matrices with einsum", ex2_right_rotation_matrices, right=True),
    Entry(E2, "x cos + swapped pairs sin", ex2_right_rotate_pairs, right=True),
]
