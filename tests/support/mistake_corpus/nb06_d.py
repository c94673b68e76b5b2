"""Learner answers to notebook 06's exercises (positional encoding), corpus d, written blind:
float32 tables and rotations against float64 inputs, crashes on odd widths."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2 = "ex1_sinusoidal_table", "ex2_rotary_embedding"

# ------------------------------------------ Exercise 1: my_sinusoidal_encoding


def ex1_wrong_even_odd_slices_crash(positions, d_model):
    p = positions.unsqueeze(-1).float()  # (..., 1)
    i = torch.arange(0, d_model, 2).float()
    angles = p * 10000 ** (-i / d_model)  # (..., ceil(d/2))
    pe = torch.zeros(*positions.shape, d_model)
    pe[..., 0::2] = torch.sin(angles)
    pe[..., 1::2] = torch.cos(angles)
    return pe


def ex1_wrong_integer_exponent(positions, d_model):
    j = torch.arange(d_model)
    i = j // 2
    omega = 1.0 / 10000 ** (2 * i // d_model)
    angles = positions.unsqueeze(-1) * omega
    return torch.where(j % 2 == 0, torch.sin(angles), torch.cos(angles))


def ex1_wrong_all_sines_then_cosines(positions, d_model):
    half = (d_model + 1) // 2
    omega = 10000 ** (-2 * torch.arange(half) / d_model)
    angles = positions[..., None] * omega
    return torch.cat([angles.sin(), angles.cos()], dim=-1)[..., :d_model]


def ex1_right_where(positions, d_model):
    j = torch.arange(d_model)
    omega = torch.exp(-math.log(10000.0) * (2 * (j // 2)) / d_model)
    angles = positions.unsqueeze(-1).double() * omega
    return torch.where(j % 2 == 0, angles.sin(), angles.cos())


def ex1_right_slices_trimmed(positions, d_model):
    i = torch.arange(0, d_model, 2, dtype=torch.float32)
    angles = positions.unsqueeze(-1).float() / 10000 ** (i / d_model)
    pe = torch.zeros(*positions.shape, d_model)
    pe[..., 0::2] = angles.sin()
    pe[..., 1::2] = angles.cos()[..., : d_model // 2]
    return pe


# ------------------------------------------ Exercise 2: my_rotary


def ex2_wrong_rotation_matrices_float32(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = 10000 ** (-torch.arange(0, D, 2) / D)  # (D/2,)
    theta = torch.arange(T)[:, None] * omega  # (T, D/2)
    R = torch.zeros(T, D, D)
    for i in range(D // 2):
        c, s = torch.cos(theta[:, i]), torch.sin(theta[:, i])
        R[:, 2 * i, 2 * i], R[:, 2 * i, 2 * i + 1] = c, -s
        R[:, 2 * i + 1, 2 * i], R[:, 2 * i + 1, 2 * i + 1] = s, c
    return torch.einsum("tij,...tj->...ti", R, x)


def ex2_wrong_clockwise(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = 10000 ** (-torch.arange(0, D, 2, dtype=x.dtype) / D)
    theta = torch.arange(T, dtype=x.dtype)[:, None] * omega
    c, s = theta.cos(), theta.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * c + x2 * s, -x1 * s + x2 * c], dim=-1)
    return out.flatten(-2)


def ex2_wrong_halves(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = 10000 ** (-torch.arange(0, D, 2, dtype=x.dtype) / D)
    theta = torch.arange(T, dtype=x.dtype)[:, None] * omega
    c, s = theta.cos(), theta.sin()
    x1, x2 = x[..., : D // 2], x[..., D // 2 :]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


def ex2_right_complex(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = 10000 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    theta = torch.arange(T, dtype=torch.float64)[:, None] * omega
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], D // 2, 2).contiguous())
    turned = z * torch.polar(torch.ones_like(theta), theta)
    return torch.view_as_real(turned).flatten(-2).to(x.dtype)


def ex2_right_interleaved(x):
    T, D = x.shape[-2], x.shape[-1]
    omega = torch.pow(10000.0, -torch.arange(0, D, 2, dtype=x.dtype) / D)
    theta = torch.outer(torch.arange(T, dtype=x.dtype), omega).repeat_interleave(2, dim=-1)
    swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * theta.cos() + swapped * theta.sin()


ENTRIES = [
    Entry(
        E1,
        "sin into 0::2, cos into 1::2: odd widths crash",
        ex1_wrong_even_odd_slices_crash,
        named="assumed d_model is even: with an odd width the cosines do not fit",
    ),
    Entry(
        E1,
        "2 * i // d_model: integer division in the exponent",
        ex1_wrong_integer_exponent,
        named="divided 2i by d with floor division, so every exponent is 0",
    ),
    Entry(
        E1,
        "all sines, then all cosines",
        ex1_wrong_all_sines_then_cosines,
        named="wrote all the sines first and all the cosines after them",
    ),
    Entry(E1, "torch.where on even and odd dims, in float64", ex1_right_where, right=True),
    Entry(E1, "slices, cosines trimmed for an odd width", ex1_right_slices_trimmed, right=True),
    Entry(
        E2,
        "rotation matrices in torch.zeros (float32), einsum",
        ex2_wrong_rotation_matrices_float32,
        named="a float32 constant breaks float64",
    ),
    Entry(
        E2, "turned clockwise", ex2_wrong_clockwise, named="turned each pair clockwise, by −p·ω_i"
    ),
    Entry(
        E2,
        "pairs (i, i + D/2), the rotate_half layout",
        ex2_wrong_halves,
        named=("paired dimension i with i + D/2 (the rotate_half layout), not 2i with 2i + 1"),
    ),
    Entry(E2, "complex numbers, in float64", ex2_right_complex, right=True),
    Entry(E2, "cos and sin repeated, swapped pairs", ex2_right_interleaved, right=True),
]
