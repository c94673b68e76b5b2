from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from attnlib import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    sinusoidal_encoding,
)


def _loop_reference(max_len: int, d_model: int, base: float) -> torch.Tensor:
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    for p in range(max_len):
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            table[p, 2 * i] = math.sin(angle)
            table[p, 2 * i + 1] = math.cos(angle)
    return table


@pytest.mark.parametrize(("max_len", "d_model"), [(1, 2), (10, 4), (50, 16), (128, 64)])
@pytest.mark.parametrize("base", [10000.0, 1000.0])
def test_sinusoidal_matches_the_formula(max_len: int, d_model: int, base: float) -> None:
    got = sinusoidal_encoding(max_len, d_model, base)
    assert got.shape == (max_len, d_model) and got.dtype == torch.float32
    torch.testing.assert_close(
        got.double(), _loop_reference(max_len, d_model, base), atol=1e-6, rtol=0
    )


def test_base_10000_is_the_default_and_differs_from_1000() -> None:
    assert torch.equal(sinusoidal_encoding(64, 16), sinusoidal_encoding(64, 16, base=10000.0))
    assert not torch.allclose(sinusoidal_encoding(64, 16), sinusoidal_encoding(64, 16, base=1000.0))


@pytest.mark.parametrize("offset", [1, 3, 17])
def test_shift_by_k_is_a_fixed_linear_map(offset: int) -> None:
    d_model, base = 16, 10000.0
    table = _loop_reference(80, d_model, base)
    blocks = []
    for i in range(d_model // 2):
        angle = offset / base ** (2 * i / d_model)
        c, s = math.cos(angle), math.sin(angle)
        # (sin(a + b), cos(a + b)) from (sin a, cos a): a rotation by b.
        blocks.append(torch.tensor([[c, s], [-s, c]], dtype=torch.float64))
    shift = torch.block_diag(*blocks)  # (d, d), the same for every position
    torch.testing.assert_close(table[:-offset] @ shift.T, table[offset:])


def test_dot_product_depends_only_on_the_offset() -> None:
    table = sinusoidal_encoding(100, 32).double()
    gram = table @ table.T  # (T, T)
    for offset in (0, 1, 5, 20):
        diagonal = gram.diagonal(offset)
        torch.testing.assert_close(
            diagonal, torch.full_like(diagonal, diagonal[0].item()), atol=1e-5, rtol=0
        )
    torch.testing.assert_close(gram, gram.T)  # symmetric: +k and −k look alike


def test_sinusoidal_module_adds_the_buffer() -> None:
    module = SinusoidalPositionalEncoding(d_model=8, max_len=20)
    x = torch.randn(2, 5, 8)
    torch.testing.assert_close(module(x), x + sinusoidal_encoding(20, 8)[:5])
    assert list(module.parameters()) == [] and "pe" not in module.state_dict()
    with pytest.raises(ValueError, match="more than max_len=20"):
        module(torch.randn(1, 21, 8))


def test_learned_embedding_adds_one_vector_per_position() -> None:
    module = LearnedPositionalEmbedding(max_len=10, d_model=4)
    x = torch.zeros(3, 6, 4)
    out = module(x)
    torch.testing.assert_close(out[1], module.embedding.weight[:6])
    assert sum(p.numel() for p in module.parameters()) == 40
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., T, 4\), got \(1, 2, 5\)"):
        module(torch.zeros(1, 2, 5))


def _rotation_reference(x: torch.Tensor, position: int, base: float = 10000.0) -> torch.Tensor:
    dim = x.shape[-1]
    out = x.clone()
    for i in range(dim // 2):
        angle = position / base ** (2 * i / dim)
        c, s = math.cos(angle), math.sin(angle)
        out[..., 2 * i] = c * x[..., 2 * i] - s * x[..., 2 * i + 1]
        out[..., 2 * i + 1] = s * x[..., 2 * i] + c * x[..., 2 * i + 1]
    return out


def test_rotary_matches_explicit_rotations() -> None:
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    got = apply_rotary(x)
    for p in range(5):
        torch.testing.assert_close(got[..., p, :], _rotation_reference(x[..., p, :], p))
    positions = torch.tensor([7, 0, 3, 3, 100])
    got = apply_rotary(x, positions)
    for row, p in enumerate(positions.tolist()):
        torch.testing.assert_close(got[..., row, :], _rotation_reference(x[..., row, :], p))


@given(
    st.integers(0, 200),
    st.integers(0, 200),
    st.integers(-50, 50),
    st.integers(1, 8).map(lambda n: 2 * n),
    st.integers(0, 1000),
)
def test_rotary_scores_depend_only_on_the_offset(
    m: int, n: int, shift: int, dim: int, seed: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k = (
        torch.randn(dim, generator=g, dtype=torch.float64),
        torch.randn(dim, generator=g, dtype=torch.float64),
    )

    def score(q_pos: int, k_pos: int) -> torch.Tensor:
        q_rot = apply_rotary(q[None], torch.tensor([q_pos]))[0]
        k_rot = apply_rotary(k[None], torch.tensor([k_pos]))[0]
        return q_rot @ k_rot

    m2, n2 = m + shift, n + shift
    if min(m2, n2) >= 0:
        torch.testing.assert_close(score(m, n), score(m2, n2))
    torch.testing.assert_close(score(m, n), q @ apply_rotary(k[None], torch.tensor([n - m]))[0])


@given(st.integers(1, 6).map(lambda n: 2 * n), st.integers(0, 1000))
def test_rotary_preserves_length(dim: int, seed: int) -> None:
    x = torch.randn(7, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    torch.testing.assert_close(apply_rotary(x).norm(dim=-1), x.norm(dim=-1))


def test_rotary_module_with_query_offset() -> None:
    rope = RotaryEmbedding(head_size=8)
    q, k = torch.randn(1, 2, 3, 8), torch.randn(1, 2, 6, 8)
    q_rot, k_rot = rope(q, k, q_offset=3)  # the 3 queries sit at positions 3, 4, 5
    torch.testing.assert_close(q_rot, apply_rotary(q, torch.arange(3, 6)))
    torch.testing.assert_close(k_rot, apply_rotary(k))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sinusoidal_encoding(10, 5), "d_model must be even"),
        (lambda: sinusoidal_encoding(0, 4), "max_len must be a positive int"),
        (lambda: sinusoidal_encoding(10, 4, base=1.0), "base must be > 1"),
        (lambda: apply_rotary(torch.randn(3, 5)), "must be even"),
        (
            lambda: apply_rotary(torch.randn(3, 4), torch.arange(4)),
            r"positions must have shape \(T,\) = \(3,\)",
        ),
        (lambda: RotaryEmbedding(7), "head_size must be even"),
        (
            lambda: RotaryEmbedding(8)(torch.randn(2, 4), torch.randn(2, 6)),
            r"q must have shape \(\.\.\., T, 8\)",
        ),
        (lambda: RotaryEmbedding(4)(torch.randn(2, 4), torch.randn(2, 4), -1), "q_offset"),
        (lambda: LearnedPositionalEmbedding(0, 4), "max_len must be a positive int"),
    ],
)
def test_bad_input(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sinusoidal_encoding(10, 4.0), "d_model must be an int"),
        (lambda: sinusoidal_encoding(10, 4, base="big"), "base must be a number"),
        (lambda: apply_rotary(torch.randn(3, 4), [0, 1, 2]), "positions must be a torch.Tensor"),
        (lambda: apply_rotary(torch.ones(3, 4, dtype=torch.long)), "floating-point"),
        (lambda: RotaryEmbedding(4)(torch.randn(2, 4), torch.randn(2, 4), 1.0), "q_offset"),
    ],
)
def test_wrong_types(call, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        call()
