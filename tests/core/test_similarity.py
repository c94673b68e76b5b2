from __future__ import annotations

import math

import pytest
import torch

from attnlib import cosine_similarity, dot, projection


def test_dot_hand_worked() -> None:
    assert float(dot(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0]))) == 32.0


@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7)])
def test_dot_matches_float64_einsum(shape: tuple[int, ...], generator: torch.Generator) -> None:
    a, b = torch.randn(shape, generator=generator), torch.randn(shape, generator=generator)
    expected = torch.einsum("...i,...i->...", a.double(), b.double())
    torch.testing.assert_close(dot(a, b).double(), expected, atol=1e-5, rtol=1e-5)


def test_dot_broadcasts_one_vector_against_many(generator: torch.Generator) -> None:
    many, one = torch.randn(5, 3, generator=generator), torch.randn(3, generator=generator)
    torch.testing.assert_close(dot(many, one), many @ one)


@pytest.mark.parametrize("angle", [0.0, 30.0, 90.0, 135.0, 180.0])
def test_geometric_form_of_dot(angle: float) -> None:
    theta = math.radians(angle)
    a = torch.tensor([2.0 * math.cos(theta), 2.0 * math.sin(theta)], dtype=torch.float64)
    b = torch.tensor([3.0, 0.0], dtype=torch.float64)
    assert float(dot(a, b)) == pytest.approx(2.0 * 3.0 * math.cos(theta), abs=1e-12)
    assert float(cosine_similarity(a, b)) == pytest.approx(math.cos(theta), abs=1e-12)


def test_cosine_matches_torch(generator: torch.Generator) -> None:
    a, b = torch.randn(4, 6, generator=generator), torch.randn(4, 6, generator=generator)
    torch.testing.assert_close(
        cosine_similarity(a, b), torch.nn.functional.cosine_similarity(a, b, dim=-1)
    )


def test_cosine_ignores_length_and_handles_zero_vector() -> None:
    a = torch.tensor([1.0, 2.0, 2.0])
    assert float(cosine_similarity(a, 5 * a)) == pytest.approx(1.0)
    assert float(cosine_similarity(a, torch.zeros(3))) == 0.0


def test_projection_hand_worked_and_orthogonal_remainder(generator: torch.Generator) -> None:
    got = projection(torch.tensor([2.0, 3.0]), torch.tensor([4.0, 0.0]))
    torch.testing.assert_close(got, torch.tensor([2.0, 0.0]))
    a, b = torch.randn(5, 4, generator=generator), torch.randn(5, 4, generator=generator)
    remainder = a - projection(a, b)
    torch.testing.assert_close(dot(remainder, b), torch.zeros(5), atol=1e-5, rtol=0)


@pytest.mark.parametrize("fn", [dot, cosine_similarity, projection])
def test_mismatched_widths_name_both_shapes(fn) -> None:
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(4,\)"):
        fn(torch.ones(3), torch.ones(4))


@pytest.mark.parametrize("fn", [dot, cosine_similarity, projection])
def test_non_tensor_input_is_a_type_error(fn) -> None:
    with pytest.raises(TypeError, match=r"a must be a torch\.Tensor"):
        fn([1.0, 2.0], torch.ones(2))


def test_projection_onto_zero_vector() -> None:
    with pytest.raises(ValueError, match="onto must not be the zero vector"):
        projection(torch.ones(2), torch.zeros(2))


@pytest.mark.parametrize("fn", [dot, cosine_similarity, projection])
def test_leading_dims_that_do_not_broadcast(fn) -> None:
    with pytest.raises(ValueError, match=r"do not broadcast.*\(3, 4\).*\(5, 4\)"):
        fn(torch.ones(3, 4), torch.ones(5, 4))


@pytest.mark.parametrize("fn", [dot, cosine_similarity, projection])
def test_integer_tensors_are_a_type_error(fn) -> None:
    with pytest.raises(TypeError, match="floating-point"):
        fn(torch.ones(2, dtype=torch.long), torch.ones(2))


def test_negative_eps() -> None:
    with pytest.raises(ValueError, match="eps must be >= 0"):
        cosine_similarity(torch.ones(2), torch.ones(2), eps=-1.0)
