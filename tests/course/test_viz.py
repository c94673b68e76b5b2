from __future__ import annotations

import numpy as np
import pytest
import torch
from matplotlib.axes import Axes

from attnlib.course import plots
from attnlib.course.plots import plot_attention, plot_distribution, plot_heatmap, plot_vectors_2d


def _assert_labelled(ax: Axes) -> None:
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_attention_heatmap_labels_and_values() -> None:
    weights = torch.softmax(torch.tensor([[2.0, 1.0, 0.0], [0.0, 1.0, 2.0]]), -1)
    ax = plot_attention(weights, ["a", "b"], ["x", "y", "z"], title="demo")
    _assert_labelled(ax)
    assert ax.get_title() == "demo"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    np.testing.assert_allclose(ax.images[0].get_array(), weights.numpy())
    assert ax.images[0].get_clim() == (0.0, 1.0)
    cell_texts = [t.get_text() for t in ax.texts]
    assert f"{float(weights[0, 0]):.2f}" in cell_texts and len(cell_texts) == 6


def test_self_attention_heatmap_reuses_query_labels() -> None:
    ax = plot_attention(torch.eye(2), ["p", "q"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p", "q"]
    _assert_labelled(ax)


def test_heatmap_rejects_mismatched_labels() -> None:
    with pytest.raises(ValueError, match="row_labels has 3 entries, matrix has 2 rows"):
        plot_heatmap(np.eye(2), ["a", "b", "c"], title="t", xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match=r"matrix must have shape \(rows, cols\)"):
        plot_heatmap(np.ones(3), title="t", xlabel="x", ylabel="y")


def test_distribution_bars() -> None:
    probs = torch.tensor([0.1, 0.2, 0.7])
    ax = plot_distribution(probs, ["a", "b", "c"], title="probs")
    _assert_labelled(ax)
    heights = [patch.get_height() for patch in ax.patches]
    np.testing.assert_allclose(heights, probs.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="labels has 2 entries, probs has 3"):
        plot_distribution(probs, ["a", "b"], title="t")


def test_vectors_2d() -> None:
    ax = plot_vectors_2d({"a": torch.tensor([1.0, 2.0]), "b": [2.0, -1.0]}, title="vectors")
    _assert_labelled(ax)
    assert {t.get_text() for t in ax.texts} >= {"a", "b"}
    with pytest.raises(ValueError, match=r"vector 'c' must have shape \(2,\)"):
        plot_vectors_2d({"c": [1.0, 2.0, 3.0]}, title="t")


def test_format_table_labels_rows_and_columns_and_rounds() -> None:
    table = plots.format_table(
        torch.tensor([[28.885051, -1e-9], [3.14159, 2.0]]), ["king", "queen"], digits=1
    )
    assert table.splitlines() == [
        "        king  queen",
        "king    28.9    0.0",
        "queen    3.1    2.0",
    ]
    wide = plots.format_table(np.array([[1.0, 2.5]]), ["a"], ["first", "second"], digits=2)
    assert wide.splitlines() == ["    first  second", "a    1.00    2.50"]


def test_format_table_is_the_same_for_values_a_rounding_apart() -> None:
    # What makes it portable: a float32 result one ulp either way prints the same.
    x = torch.tensor([[0.12345678]])
    up, down = torch.nextafter(x, x + 1), torch.nextafter(x, x - 1)
    assert plots.format_table(up, ["r"]) == plots.format_table(down, ["r"])


@pytest.mark.parametrize(
    ("matrix", "rows", "cols", "digits", "match"),
    [
        (torch.zeros(3), ["a", "b", "c"], None, 2, "shape \\(rows, cols\\)"),
        (torch.zeros(2, 2), ["a"], None, 2, "needs 2 row labels"),
        (torch.zeros(2, 3), ["a", "b"], ["x"], 2, "3 column labels"),
        (torch.zeros(1, 1), ["a"], None, -1, "digits must be >= 0"),
    ],
)
def test_format_table_refuses_bad_input(
    matrix: torch.Tensor, rows: list[str], cols: list[str] | None, digits: int, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        plots.format_table(matrix, rows, cols, digits=digits)
