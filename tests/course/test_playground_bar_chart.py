"""The playgrounds' HTML bar chart: heights, the highlighted bar, labels and bad input."""

from __future__ import annotations

import re

import pytest

from attnlib.course.playgrounds import bar_chart

BAR = re.compile(r"height:(\d+)px;background:(#[0-9a-f]{6})")


def _bars(chart: str) -> list[tuple[int, str]]:
    return [(int(height), colour) for height, colour in BAR.findall(chart)]


@pytest.mark.parametrize("highlight", [None, 0, 2])
def test_heights_follow_the_values_and_one_bar_is_highlighted(highlight: int | None) -> None:
    values = [0.5, 0.25, 0.125, 0.0]
    chart = bar_chart.bar_chart_html(
        ["a", "b", "c", "d"], values, title="t", xlabel="x", ylabel="y", highlight=highlight
    )
    bars = _bars(chart)
    assert [h for h, _ in bars] == [round(bar_chart.PLOT_HEIGHT * v) for v in values]
    expected = [bar_chart.HIGHLIGHT if i == highlight else bar_chart.BAR for i in range(4)]
    assert [c for _, c in bars] == expected


def test_title_axes_and_labels_are_shown_escaped() -> None:
    chart = bar_chart.bar_chart_html(
        ["<eos>", "&"], [0.3, 0.7], title="T 1.00 <b>", xlabel="next", ylabel="probability"
    )
    assert "&lt;eos&gt;" in chart and "<eos>" not in chart and "&amp;" in chart
    assert "T 1.00 &lt;b&gt;" in chart and ">next<" in chart and ">probability<" in chart
    assert 'title="&lt;eos&gt;: 0.300"' in chart  # each bar's value in its tooltip


def test_values_beyond_the_scale_are_clipped_and_top_rescales() -> None:
    chart = bar_chart.bar_chart_html(["a", "b"], [1.5, -0.2], title="t", xlabel="x", ylabel="y")
    assert [h for h, _ in _bars(chart)] == [bar_chart.PLOT_HEIGHT, 0]
    chart = bar_chart.bar_chart_html(["a"], [0.2], title="t", xlabel="x", ylabel="y", top=0.4)
    assert _bars(chart)[0][0] == round(bar_chart.PLOT_HEIGHT / 2)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="2 labels for 1 values"):
        bar_chart.bar_chart_html(["a", "b"], [0.1], title="t", xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match="top must be positive"):
        bar_chart.bar_chart_html(["a"], [0.1], title="t", xlabel="x", ylabel="y", top=0)
