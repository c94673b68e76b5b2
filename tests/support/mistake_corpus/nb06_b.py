"""Corpus b for notebook 06 (positional encoding), written blind from the learner's edition."""

import math

import torch

from mistake_corpus.corpus import Entry

# -------------------------------------------------------- Exercise 1: my_sinusoidal_encoding


def _angles(positions, d_model, base=10000.0):
    """(..., d) angles p·ω_i, dimension j in pair j // 2, float64."""
    j = torch.arange(d_model)
    omega = base ** (-(2 * (j // 2)).double() / d_model)
    return positions.double()[..., None] * omega


def ex1_wrong_even_odd_positions(positions, d_model):
    # "sine for even positions, cosine for odd positions"
    angles = _angles(positions, d_model)
    even = (positions % 2 == 0)[..., None]
    return torch.where(even, angles.sin(), angles.cos())


def ex1_wrong_exponent_j(positions, d_model):
    j = torch.arange(d_model, dtype=torch.float64)
    angles = positions.double().unsqueeze(-1) / 10000 ** (j / d_model)  # j instead of 2i
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_halves(positions, d_model):
    half = d_model // 2
    i = torch.arange(half, dtype=torch.float64)
    angles = positions.double()[..., None] * 10000 ** (-2 * i / d_model)
    pe = torch.cat([angles.sin(), angles.cos()], dim=-1)  # all sines, then all cosines
    if d_model % 2:
        extra = positions.double()[..., None] * 10000 ** (-2 * half / d_model)
        pe = torch.cat([pe, extra.sin()], dim=-1)
    return pe


def ex1_wrong_cos_first(positions, d_model):
    angles = _angles(positions, d_model)
    is_even = torch.arange(d_model) % 2 == 0
    return torch.where(is_even, angles.cos(), angles.sin())


def ex1_wrong_odd_width_crash(positions, d_model):
    pe = torch.zeros(*positions.shape, d_model)
    div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    p = positions.float().unsqueeze(-1)
    pe[..., 0::2] = torch.sin(p * div)
    pe[..., 1::2] = torch.cos(p * div)  # one column too many when d_model is odd
    return pe


def ex1_wrong_base_1000(positions, d_model):
    angles = _angles(positions, d_model, base=1000.0)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_one_dim_only(positions, d_model):
    j = torch.arange(d_model)
    omega = 10000.0 ** (-(j - j % 2).double() / d_model)
    angles = positions[:, None].double() * omega  # (T, d)
    return torch.where(j % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_ignores_values(positions, d_model):
    # the positions are 0, 1, 2, … anyway
    p = torch.arange(positions.shape[-1]).expand(positions.shape)
    angles = _angles(p, d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, angles.sin(), angles.cos())


def ex1_wrong_integer_buffer(positions, d_model):
    pe = torch.zeros_like(positions).unsqueeze(-1).repeat_interleave(d_model, dim=-1)
    angles = _angles(positions, d_model)
    pe[..., 0::2] = angles[..., 0::2].sin().to(pe.dtype)
    pe[..., 1::2] = angles[..., 1::2].cos().to(pe.dtype)
    return pe


def ex1_wrong_pairs_denominator(positions, d_model):
    n_pairs = (d_model + 1) // 2
    i = torch.arange(n_pairs, dtype=torch.float64)
    omega = 10000.0 ** (-i / n_pairs)  # = 2i/d … when d is even
    angles = positions.double()[..., None] * omega
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)[..., :d_model]


def ex1_right_stack_trim(positions, d_model):
    n_pairs = (d_model + 1) // 2
    two_i = torch.arange(0, 2 * n_pairs, 2, dtype=torch.float64)
    angles = positions.to(torch.float64).unsqueeze(-1) * torch.pow(10000.0, -two_i / d_model)
    return torch.stack((torch.sin(angles), torch.cos(angles)), dim=-1).flatten(-2)[..., :d_model]


def ex1_right_python_loop(positions, d_model):
    flat = positions.reshape(-1).tolist()
    rows = []
    for p in flat:
        row = []
        for j in range(d_model):
            angle = p / 10000 ** (2 * (j // 2) / d_model)
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64).reshape(*positions.shape, d_model)


def ex1_right_float32_exp_log(positions, d_model):
    pe = torch.empty(*positions.shape, d_model)
    n_sin, n_cos = (d_model + 1) // 2, d_model // 2
    div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    p = positions.float().unsqueeze(-1)
    pe[..., 0::2] = torch.sin(p * div[:n_sin])
    pe[..., 1::2] = torch.cos(p * div[:n_cos])
    return pe


# --------------------------------------------------------------------- Exercise 2: my_rotary


def _theta(T, D):
    omega = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    return torch.arange(T, dtype=torch.float64)[:, None] * omega  # (T, D/2)


def ex2_wrong_rotate_half(x):
    T, D = x.shape[-2:]
    theta = _theta(T, D).to(x.dtype)
    cos, sin = torch.cat([theta.cos()] * 2, -1), torch.cat([theta.sin()] * 2, -1)
    x1, x2 = x[..., : D // 2], x[..., D // 2 :]
    rotated = torch.cat([-x2, x1], dim=-1)
    return x * cos + rotated * sin


def ex2_wrong_clockwise(x):
    T, D = x.shape[-2:]
    theta = _theta(T, D).to(x.dtype)
    a, b = x[..., ::2], x[..., 1::2]
    new_a = a * theta.cos() + b * theta.sin()
    new_b = -a * theta.sin() + b * theta.cos()
    return torch.stack([new_a, new_b], -1).flatten(-2)


def ex2_wrong_positions_from_one(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    theta = (torch.arange(1, T + 1, dtype=torch.float64)[:, None] * omega).to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack(
        (a * theta.cos() - b * theta.sin(), a * theta.sin() + b * theta.cos()), -1
    ).flatten(-2)


def ex2_wrong_exponent_i(x):
    T, D = x.shape[-2], x.shape[-1]
    i = torch.arange(D // 2, dtype=torch.float64)
    theta = (torch.arange(T, dtype=torch.float64)[:, None] * 10000.0 ** (-i / D)).to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * theta.cos() - b * theta.sin()
    out[..., 1::2] = a * theta.sin() + b * theta.cos()
    return out


def ex2_wrong_t_from_shape0(x):
    T, D = x.shape[0], x.shape[-1]
    theta = _theta(T, D).to(x.dtype)
    if x.dim() > 2:
        theta = theta.view(T, *([1] * (x.dim() - 2)), D // 2)
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * theta.cos() - b * theta.sin()
    out[..., 1::2] = a * theta.sin() + b * theta.cos()
    return out


def ex2_wrong_updated_a(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D).to(x.dtype)
    out = x.clone()
    a, b = out[..., 0::2], out[..., 1::2]  # views into out
    a.copy_(a * theta.cos() - b * theta.sin())
    b.copy_(a * theta.sin() + b * theta.cos())  # a is already the new a here
    return out


def ex2_wrong_in_place(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D).to(x.dtype)
    a, b = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = a * theta.cos() - b * theta.sin()
    x[..., 1::2] = a * theta.sin() + b * theta.cos()
    return x


def ex2_wrong_concat_halves(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D).to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.cat([a * theta.cos() - b * theta.sin(), a * theta.sin() + b * theta.cos()], -1)


def ex2_wrong_adds_encoding(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D)
    pe = torch.stack([theta.sin(), theta.cos()], -1).flatten(-2)  # (T, D), the sinusoids
    return x + pe.to(x.dtype)


def ex2_wrong_no_cross_terms(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D).repeat_interleave(2, dim=-1).to(x.dtype)  # (T, D)
    return x * theta.cos() + x * theta.sin()


def ex2_right_complex(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D)
    rot = torch.polar(torch.ones_like(theta), theta)  # (T, D/2) complex128
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], D // 2, 2).contiguous())
    return torch.view_as_real(pairs * rot).reshape(x.shape).to(x.dtype)


def ex2_right_rotation_matrices(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = _theta(T, D)
    c, s = theta.cos(), theta.sin()
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (T, D/2, 2, 2)
    pairs = x.double().unflatten(-1, (D // 2, 2))  # (..., T, D/2, 2)
    return torch.einsum("tiab,...tib->...tia", R, pairs).flatten(-2).to(x.dtype)


def ex2_right_loop(x):
    T, D = x.shape[-2], x.shape[-1]
    out = x.clone()
    for p in range(T):
        for i in range(D // 2):
            angle = p * 10000 ** (-2 * i / D)
            c, s = math.cos(angle), math.sin(angle)
            a, b = x[..., p, 2 * i], x[..., p, 2 * i + 1]
            out[..., p, 2 * i] = a * c - b * s
            out[..., p, 2 * i + 1] = a * s + b * c
    return out


E1, E2 = "ex1_sinusoidal_table", "ex2_rotary_embedding"
ENTRIES = [
    Entry(
        E1,
        "sine for even positions, cosine for odd positions",
        ex1_wrong_even_odd_positions,
        named="used a sine for even positions and a cosine for odd positions",
    ),
    Entry(
        E1,
        "exponent j/d with the dimension j, not 2i/d",
        ex1_wrong_exponent_j,
        named="gave each dimension its own frequency, 10000^(−j/d) for dimension j",
    ),
    Entry(
        E1,
        "all sines first, then all cosines",
        ex1_wrong_halves,
        named="wrote all the sines first and all the cosines after them",
    ),
    Entry(
        E1,
        "cosine in the even dimensions, sine in the odd",
        ex1_wrong_cos_first,
        named="put the cosines in the even dimensions and the sines in the odd ones",
    ),
    Entry(
        E1,
        "slice assignment that breaks on an odd width",
        ex1_wrong_odd_width_crash,
        named="assumed d_model is even: with an odd width the cosines do not fit",
    ),
    Entry(
        E1,
        "base 1000 instead of 10000",
        ex1_wrong_base_1000,
        named="used 1000 as the base instead of 10000",
    ),
    Entry(
        E1,
        "positions[:, None]: only a 1-D row of positions",
        ex1_wrong_one_dim_only,
        named=("assumed the positions are one row (T,): a batch of them does not broadcast"),
    ),
    Entry(
        E1,
        "used 0 … T-1 instead of the given positions",
        ex1_wrong_ignores_values,
        named="ignored the positions given and counted 0, 1, 2, … instead",
    ),
    Entry(
        E1,
        "filled a zeros_like(positions) buffer: integers",
        ex1_wrong_integer_buffer,
        named=(
            "built the table in the positions' integer dtype, so every "
            "value was cut to a whole number"
        ),
    ),
    Entry(
        E1,
        "divided by the number of pairs, wrong for odd widths",
        ex1_wrong_pairs_denominator,
        named="built the table for d_model + 1 dimensions and cut off the last one",
    ),
    Entry(E1, "sin/cos stacked and trimmed, float64", ex1_right_stack_trim, right=True),
    Entry(E1, "a Python loop with math.sin", ex1_right_python_loop, right=True),
    Entry(E1, "exp/log frequencies in float32", ex1_right_float32_exp_log, right=True),
    Entry(
        E2,
        "the rotate_half layout (i with i + D/2)",
        ex2_wrong_rotate_half,
        named=("paired dimension i with i + D/2 (the rotate_half layout), not 2i with 2i + 1"),
    ),
    Entry(
        E2, "turned clockwise", ex2_wrong_clockwise, named="turned each pair clockwise, by −p·ω_i"
    ),
    Entry(
        E2,
        "positions 1 … T",
        ex2_wrong_positions_from_one,
        named="counted the positions from 1, so row 0 is turned too",
    ),
    Entry(
        E2,
        "frequencies 10000^(-i/D) with the pair index i",
        ex2_wrong_exponent_i,
        named="used i / D in the exponent instead of 2i / D",
    ),
    Entry(
        E2,
        "took T from x.shape[0]",
        ex2_wrong_t_from_shape0,
        named=(
            "took the first dimension of x for the positions, so each batch entry turned as one"
        ),
    ),
    Entry(
        E2,
        "computed the new b from the new a",
        ex2_wrong_updated_a,
        named="computed the new odd entries from the new even entries",
    ),
    Entry(
        E2,
        "wrote the rotation into x itself",
        ex2_wrong_in_place,
        named=(
            "changed a tensor it was given in place (an operation ending "
            "in _, `-=`, `/=`, or an assignment into it)"
        ),
    ),
    Entry(
        E2,
        "rotated pairs concatenated as two halves",
        ex2_wrong_concat_halves,
        named=("wrote all the new even entries first and all the new odd entries after them"),
    ),
    Entry(
        E2,
        "added the sinusoids instead of rotating",
        ex2_wrong_adds_encoding,
        named="added the sinusoidal encoding to x instead of turning its pairs",
    ),
    Entry(
        E2,
        "x·cos + x·sin, without swapping the pair",
        ex2_wrong_no_cross_terms,
        named=(
            "multiplied each entry by its own cos + sin instead of mixing "
            "it with its pair's other entry"
        ),
    ),
    Entry(E2, "complex numbers with torch.polar", ex2_right_complex, right=True),
    Entry(E2, "2 × 2 rotation matrices and einsum", ex2_right_rotation_matrices, right=True),
    Entry(E2, "a loop over positions and pairs", ex2_right_loop, right=True),
]
