"""The functions behind the sliders, called directly and through ipywidgets.interact."""

from __future__ import annotations

import math

import ipywidgets
import pytest
import torch
from matplotlib.figure import Figure

import attnlib
from attnlib import softmax, softmax_jacobian
from attnlib.course import sliders
from attnlib.course.sliders import (
    MASK_KINDS,
    dot_product_at_angle,
    encoding_at,
    masked_weights,
    naive_weights_at_scale,
    sampling_distribution,
    scores_at_width,
    show_dot_product_at_angle,
    show_encoding_at,
    show_masked_weights,
    show_naive_weights_at_scale,
    show_sampling_distribution,
    show_scores_at_width,
    show_softmax_at_scale,
    softmax_at_scale,
)


def _assert_every_axes_labelled(fig: Figure) -> None:
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert axes
    for ax in axes:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


@pytest.mark.parametrize("angle", [0, 45, 90, 120, 180])
def test_dot_product_at_angle(angle: float) -> None:
    demo = dot_product_at_angle(angle, length_a=2.0, length_b=1.5)
    assert demo.dot == pytest.approx(3.0 * math.cos(math.radians(angle)), abs=1e-12)
    assert demo.cosine == pytest.approx(math.cos(math.radians(angle)), abs=1e-12)
    # The projection lies on b and reaches ‖a‖cosθ along it.
    assert float(demo.projection[1]) == 0.0
    assert float(demo.projection[0]) == pytest.approx(2.0 * math.cos(math.radians(angle)))


def test_softmax_at_scale_reproduces_the_saturation_example() -> None:
    gentle, saturated = softmax_at_scale(1.0), softmax_at_scale(10.0)
    assert round(gentle.max_prob, 4) == 0.6439 and round(saturated.max_prob, 5) == 0.99995
    expected = float(torch.linalg.matrix_norm(softmax_jacobian(gentle.probs)))
    assert gentle.jacobian_norm == pytest.approx(expected)
    assert saturated.jacobian_norm < gentle.jacobian_norm / 1000


def test_softmax_at_scale_is_softmax_at_temperature() -> None:
    scores = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    demo = softmax_at_scale(4.0, scores)
    torch.testing.assert_close(demo.probs, softmax(scores, temperature=0.25))


def test_softmax_at_scale_bad_input() -> None:
    with pytest.raises(ValueError, match="scale must be positive"):
        softmax_at_scale(0.0)
    with pytest.raises(ValueError, match=r"scores must have shape \(n,\)"):
        softmax_at_scale(1.0, torch.ones(2, 2))


def test_scores_at_width_scaling_keeps_softmax_soft() -> None:
    small, large = scores_at_width(4), scores_at_width(1024)
    assert large.raw_probs.max() > 0.99  # raw scores spread like √d_k ≈ 32: saturated
    assert large.scaled_probs.max() < 0.9
    assert large.raw_jacobian_norm < large.scaled_jacobian_norm
    torch.testing.assert_close(large.scaled_scores, large.raw_scores / 32.0)
    assert torch.equal(small.raw_scores, scores_at_width(4).raw_scores)  # seeded: reproducible


def test_scores_at_width_variance_grows_like_d_k() -> None:
    # Across many seeds the raw score variance tracks d_k; the scaled one stays near 1.
    for d_k in (16, 256):
        raw = torch.cat([scores_at_width(d_k, n_keys=64, seed=s).raw_scores for s in range(40)])
        assert raw.var().item() == pytest.approx(d_k, rel=0.15)
        assert (raw / math.sqrt(d_k)).var().item() == pytest.approx(1.0, rel=0.15)


def test_scores_at_width_bad_input() -> None:
    with pytest.raises(ValueError, match="d_k must be a positive int"):
        scores_at_width(0)
    with pytest.raises(ValueError, match="n_keys must be >= 2"):
        scores_at_width(8, n_keys=1)
    with pytest.raises(TypeError, match="d_k must be an int"):
        scores_at_width(8.0)


def test_naive_weights_collapse_onto_the_diagonal_as_scale_grows(
    generator: torch.Generator,
) -> None:
    x = torch.randn(5, 16, generator=generator)
    self_weight = [float(naive_weights_at_scale(x, s).diagonal().mean()) for s in (0.05, 0.3, 1.0)]
    assert self_weight == sorted(self_weight)
    assert self_weight[0] < 0.3 and self_weight[-1] > 0.99
    torch.testing.assert_close(naive_weights_at_scale(x, 1.0), torch.softmax(x @ x.T, -1))
    with pytest.raises(ValueError, match=r"x must have shape \(T, C\)"):
        naive_weights_at_scale(torch.ones(2, 3, 4), 1.0)


@pytest.mark.parametrize(
    ("show", "args"),
    [
        (show_dot_product_at_angle, (60.0,)),
        (show_softmax_at_scale, (3.0,)),
        (show_scores_at_width, (64,)),
        (show_naive_weights_at_scale, (torch.eye(3), ["a", "b", "c"], 0.5)),
    ],
)
def test_show_functions_draw_labelled_figures(show, args) -> None:
    fig = show(*args)
    assert isinstance(fig, Figure)
    _assert_every_axes_labelled(fig)


def test_interact_slider_drives_the_callback() -> None:
    """What a notebook does: wire the pure function to a slider and move it."""

    def max_weight(scale: float) -> float:
        return softmax_at_scale(scale).max_prob

    wired = ipywidgets.interact(max_weight, scale=ipywidgets.FloatSlider(1.0, min=0.1, max=20.0))
    slider = wired.widget.children[0]
    assert round(wired.widget.result, 4) == 0.6439
    slider.value = 10.0
    assert round(wired.widget.result, 5) == 0.99995


def test_encoding_at_values_and_wavelengths() -> None:
    view = encoding_at(position=10, dimension=6, max_len=64, d_model=64)
    assert view.value == pytest.approx(math.sin(10 / 10000 ** (6 / 64)), abs=1e-6)
    assert view.wavelength == pytest.approx(2 * math.pi * 10000 ** (6 / 64))
    assert encoding_at(0, 0).wavelength == pytest.approx(2 * math.pi)
    assert encoding_at(0, 1).value == 1.0  # cos(0)
    with pytest.raises(ValueError, match="position must be in"):
        encoding_at(64, 0)
    with pytest.raises(ValueError, match="dimension must be in"):
        encoding_at(0, 64)


@pytest.mark.parametrize("kind", MASK_KINDS)
def test_masked_weights_respect_each_kind(kind: str) -> None:
    demo = masked_weights(kind, real_length=4)
    assert demo.mask.shape == demo.weights.shape == (6, 6)
    assert (demo.weights[~demo.mask] == 0).all()
    torch.testing.assert_close(demo.weights.sum(-1), demo.mask.any(-1).double())
    if "causal" in kind:
        assert (demo.weights.triu(1) == 0).all()
    if "padding" in kind:
        assert (demo.weights[:, 4:] == 0).all()
    if kind == "none":
        assert demo.mask.all()
    with pytest.raises(ValueError, match="kind must be one of"):
        masked_weights("sideways")


@pytest.mark.parametrize(
    ("show", "args"), [(show_encoding_at, (3, 5)), (show_masked_weights, ("causal + padding", 3))]
)
def test_new_show_functions_draw_labelled_figures(show, args) -> None:
    _assert_every_axes_labelled(show(*args))


def test_sampling_distribution_temperature_and_top_k() -> None:
    logits = torch.tensor([2.0, 1.0, 0.5, -1.0], dtype=torch.float64)
    torch.testing.assert_close(sampling_distribution(logits, 1.0), torch.softmax(logits, -1))
    torch.testing.assert_close(sampling_distribution(logits, 0.5), torch.softmax(logits / 0.5, -1))
    greedy = sampling_distribution(logits, 0.0)
    assert greedy.tolist() == [1.0, 0.0, 0.0, 0.0]
    top2 = sampling_distribution(logits, 1.0, top_k=2)
    torch.testing.assert_close(top2[:2], torch.softmax(logits[:2], -1))
    assert (top2[2:] == 0).all()
    entropies = []
    for t in (0.25, 0.5, 1.0, 2.0):
        p = sampling_distribution(logits, t)
        entropies.append(float(-(p * p.log()).sum()))
    assert entropies == sorted(entropies)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        sampling_distribution(logits, -1.0)
    with pytest.raises(ValueError, match=r"top_k must be in \[1, 4\]"):
        sampling_distribution(logits, 1.0, top_k=5)
    with pytest.raises(ValueError, match=r"logits must have shape \(V,\)"):
        sampling_distribution(logits[None], 1.0)
    _assert_every_axes_labelled(show_sampling_distribution(logits, list("abcd"), 0.7, top_k=3))


def test_online_softmax_progress_steps_to_the_softmax() -> None:
    scores = torch.tensor([1.0, 3.0, 0.5, 2.0, 6.0, 1.0, -1.0, 4.0, 2.5, 0.0])
    nothing = sliders.online_softmax_progress(scores, 3, 0)
    assert nothing.running_max == -math.inf and nothing.running_sum == 0.0
    assert torch.equal(nothing.estimate, torch.zeros(10))
    first = sliders.online_softmax_progress(scores, 3, 1)
    assert first.running_max == 3.0
    assert first.running_sum == pytest.approx(sum(math.exp(s - 3.0) for s in (1.0, 3.0, 0.5)))
    assert torch.equal(first.estimate[3:], torch.zeros(7))
    done = sliders.online_softmax_progress(scores, 3, 4)
    assert done.running_max == 6.0
    torch.testing.assert_close(done.estimate, attnlib.softmax(scores))
    torch.testing.assert_close(done.final, attnlib.softmax(scores))
    assert (done.tile_size, done.tiles_seen) == (3, 4)
    with pytest.raises(ValueError, match=r"tiles_seen must be in \[0, 4\], got 5"):
        sliders.online_softmax_progress(scores, 3, 5)
    with pytest.raises(ValueError, match="tile_size must be a positive int"):
        sliders.online_softmax_progress(scores, 0, 1)
    with pytest.raises(TypeError, match="tiles_seen must be an int"):
        sliders.online_softmax_progress(scores, 3, 1.0)
    assert isinstance(sliders.show_online_softmax_progress(scores, 3, 2), Figure)
