from __future__ import annotations

import math

import pytest
import torch

from attnlib import naive_softmax, softmax, softmax_jacobian
from attnlib.softmax import softmax_unchecked

SHAPES = [(5,), (3, 4), (2, 3, 7), (2, 1, 3, 6)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dim", [-1, 0])
@pytest.mark.parametrize("temperature", [1.0, 0.5, 3.0])
def test_softmax_matches_torch(
    shape: tuple[int, ...], dim: int, temperature: float, generator: torch.Generator
) -> None:
    x = torch.randn(shape, generator=generator) * 4
    expected = torch.softmax(x.double() / temperature, dim=dim)
    got = softmax(x, dim=dim, temperature=temperature)
    assert got.dtype == x.dtype
    torch.testing.assert_close(got.double(), expected, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(got.sum(dim=dim), torch.ones_like(got.sum(dim=dim)))


def test_softmax_hand_worked_values() -> None:
    # e^0 / (e^0 + e^{ln 3}) = 1/4
    got = softmax(torch.tensor([0.0, math.log(3.0)]))
    torch.testing.assert_close(got, torch.tensor([0.25, 0.75]))


def test_saturation_example_from_the_course() -> None:
    scores = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert round(float(softmax(scores)[-1]), 4) == 0.6439
    assert round(float(softmax(10 * scores)[-1]), 5) == 0.99995


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_softmax_is_finite_for_scores_in_the_thousands(dtype: torch.dtype) -> None:
    x = torch.tensor([[1000.0, 1001.0, 1002.0], [-3000.0, -3001.0, -2999.0]], dtype=dtype)
    got = softmax(x)
    assert torch.isfinite(got).all()
    expected = torch.softmax(x.double() - x.double().amax(-1, keepdim=True), -1)
    torch.testing.assert_close(got.double(), expected, atol=1e-2, rtol=1e-2)


def test_naive_softmax_overflows_where_softmax_does_not() -> None:
    x = torch.tensor([1000.0, 1001.0, 1002.0])
    assert torch.isnan(naive_softmax(x)).all()
    torch.testing.assert_close(softmax(x), softmax(torch.tensor([0.0, 1.0, 2.0])))


def test_temperature_limits() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    torch.testing.assert_close(
        softmax(x, temperature=1e6), torch.full((4,), 0.25), atol=1e-5, rtol=0
    )
    assert float(softmax(x, temperature=0.01)[-1]) > 1 - 1e-6


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("temperature", [1e-3, 0.5, 2.0])
@pytest.mark.parametrize(
    "row", [[70.0, 0.0], [0.0, -70.0, 3.0], [60000.0, -60000.0], [-1e4, -1e4 + 1.0]]
)
def test_temperature_is_finite_for_any_finite_scores(
    dtype: torch.dtype, temperature: float, row: list[float]
) -> None:
    # x / τ first would overflow float16 here (70 / 0.001 = 70,000 > 65,504): NaN weights.
    x = torch.tensor(row, dtype=dtype)
    got = softmax(x, temperature=temperature)
    assert got.dtype == dtype and torch.isfinite(got).all()
    shifted = (x.double() - x.double().max()) / temperature
    expected = torch.softmax(shifted, dim=-1)  # float64, from the scores as stored in dtype
    tolerance = {torch.float16: 2e-3, torch.bfloat16: 1e-2}.get(dtype, 1e-6)
    torch.testing.assert_close(got.double(), expected, atol=tolerance, rtol=0)


NAN, INF = math.nan, math.inf


@pytest.mark.parametrize("fn", [softmax, naive_softmax])
@pytest.mark.parametrize(
    ("x", "dim", "match"),
    [
        ([1.0, NAN, 2.0], -1, r"x holds NaN \(1 of 3 values, the first at index \(1,\)\)"),
        ([[0.0, 1.0], [INF, NAN]], -1, r"x holds NaN \(1 of 4 values, the first at index \(1, 1\)"),
        ([[0.0, 1.0], [INF, 0.0]], -1, r"x holds \+inf \(1 of 4 values, the first at index \(1, 0"),
        (
            [-INF, -INF, -INF],
            -1,
            r"x has 1 row\(s\) along dim=0 with no finite score, the first x\[:\]",
        ),
        ([[0.0, -INF], [-INF, -INF]], -1, r"the first x\[1, :\] \(all -inf\).*attnlib\.masks"),
        ([[0.0, -INF], [1.0, -INF]], 0, r"along dim=0 with no finite score, the first x\[:, 1\]"),
        ([[-INF, -INF], [-INF, -INF]], 1, r"x has 2 row\(s\) .*finfo\(x\.dtype\)\.min, not -inf"),
    ],
)
def test_scores_whose_softmax_would_be_nan_are_refused(fn, x: list, dim: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fn(torch.tensor(x), dim=dim)


def test_minus_inf_beside_a_finite_score_is_a_weight_of_zero() -> None:
    x = torch.tensor([[0.0, -INF, math.log(3.0)], [-INF, 2.0, -INF]])
    expected = torch.tensor([[0.25, 0.0, 0.75], [0.0, 1.0, 0.0]])
    torch.testing.assert_close(softmax(x), expected)
    torch.testing.assert_close(softmax(x, temperature=0.5), torch.softmax(x / 0.5, -1))
    torch.testing.assert_close(naive_softmax(x), expected)


def test_the_unchecked_softmax_is_the_same_maths(generator: torch.Generator) -> None:
    x = torch.randn(3, 4, 5, generator=generator) * 10
    for dim, temperature in [(-1, 1.0), (1, 0.3), (0, 2.0)]:
        assert torch.equal(softmax_unchecked(x, dim, temperature), softmax(x, dim, temperature))
    # It takes scores as they come: attention hands it only finite ones.
    assert torch.isnan(softmax_unchecked(torch.full((3,), -INF))).all()


def test_softmax_gradient_matches_torch(generator: torch.Generator) -> None:
    x = torch.randn(3, 5, generator=generator, dtype=torch.float64, requires_grad=True)
    upstream = torch.randn(3, 5, generator=generator, dtype=torch.float64)
    (ours,) = torch.autograd.grad((softmax(x) * upstream).sum(), x)
    (theirs,) = torch.autograd.grad((torch.softmax(x, -1) * upstream).sum(), x)
    torch.testing.assert_close(ours, theirs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"x": [1.0, 2.0]}, TypeError, "x must be a torch.Tensor"),
        ({"x": torch.tensor([1, 2])}, TypeError, "x must have a floating-point dtype"),
        ({"x": torch.ones(3), "temperature": 0.0}, ValueError, "temperature must be positive"),
        ({"x": torch.ones(3), "temperature": -1.0}, ValueError, "temperature must be positive"),
        ({"x": torch.ones(3), "dim": 1}, ValueError, "dim=1 is out of range"),
    ],
)
def test_softmax_bad_input(kwargs: dict, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        softmax(**kwargs)


@pytest.mark.parametrize("shape", [(4,), (2, 5), (2, 3, 6)])
def test_jacobian_matches_autograd(shape: tuple[int, ...], generator: torch.Generator) -> None:
    z = torch.randn(shape, generator=generator, dtype=torch.float64)
    p = torch.softmax(z, -1)
    got = softmax_jacobian(p)
    assert got.shape == (*shape, shape[-1])
    flat_z = z.reshape(-1, shape[-1])  # (N, n)
    expected = torch.stack(
        [torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), row) for row in flat_z]
    ).reshape(got.shape)  # (..., n, n)
    torch.testing.assert_close(got, expected)


def test_jacobian_hand_worked_and_properties() -> None:
    p = torch.tensor([0.5, 0.5], dtype=torch.float64)
    torch.testing.assert_close(
        softmax_jacobian(p), torch.tensor([[0.25, -0.25], [-0.25, 0.25]], dtype=torch.float64)
    )
    q = torch.softmax(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), -1)
    jacobian = softmax_jacobian(q)
    torch.testing.assert_close(jacobian, jacobian.T)  # symmetric
    # Adding a constant to every score changes nothing, so each row sums to 0.
    torch.testing.assert_close(jacobian.sum(-1), torch.zeros(3, dtype=torch.float64))


def test_jacobian_vanishes_when_softmax_saturates() -> None:
    scores = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    norms = [float(softmax_jacobian(softmax(s * scores)).norm()) for s in (1, 3, 10, 30)]
    assert norms == sorted(norms, reverse=True)
    assert norms[-1] < 1e-10 < norms[0]


def test_jacobian_bad_input() -> None:
    with pytest.raises(TypeError, match=r"p must be a torch\.Tensor"):
        softmax_jacobian([0.5, 0.5])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="p must have shape"):
        softmax_jacobian(torch.tensor(1.0))


@pytest.mark.parametrize(
    ("shape", "dim"), [((0,), -1), ((3, 0), -1), ((0, 3), 0), ((0, 3), -1), ((2, 0, 4), 1)]
)
@pytest.mark.parametrize("fn", [softmax, naive_softmax])
def test_empty_input_gives_an_empty_result(shape: tuple[int, ...], dim: int, fn) -> None:
    x = torch.empty(shape)
    out = fn(x, dim=dim)
    assert out.shape == shape and out.dtype == x.dtype
    assert not out.isnan().any()
