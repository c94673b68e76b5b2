"""A bar chart as HTML: what a playground redraws on every click, in about a millisecond.

A matplotlib figure took 45–70 ms to build and render, and the thousands of short-lived
objects each one makes set off Python's full garbage collection every dozen redraws, a
pause of 130 ms more (measured with ``benchmarks.playgrounds``). These bars are one
``<div>`` each: a title, labelled axes, a value in each bar's tooltip, and one bar
highlighted.

Notebooks 09 and 10.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

BAR = "#1f77b4"
HIGHLIGHT = "#ff7f0e"
PLOT_HEIGHT = 160  # pixels for a value of ``top``
BAR_WIDTH = 28


def bar_chart_html(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    highlight: int | None = None,
    top: float = 1.0,
    colour: str = BAR,
) -> str:
    """Vertical bars of ``values`` (each in ``[0, top]``) over ``labels``, bar ``highlight`` in
    orange; ``title`` above, ``xlabel`` below and ``ylabel`` with the scale at the left."""
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    if top <= 0:
        raise ValueError(f"top must be positive, got {top}")
    text = lambda words: html.escape(words, quote=False)  # noqa: E731 (element text)
    columns = []
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = round(PLOT_HEIGHT * min(max(value / top, 0.0), 1.0))
        fill = HIGHLIGHT if index == highlight else colour
        columns.append(
            f'<div style="display:flex;flex-direction:column;align-items:center;'
            f'width:{BAR_WIDTH}px" title="{html.escape(label)}: {value:.3f}">'
            f'<div style="height:{PLOT_HEIGHT}px;display:flex;align-items:flex-end;'
            f'border-bottom:1px solid #444">'
            f'<div style="width:{BAR_WIDTH - 6}px;height:{height}px;background:{fill}"></div>'
            f"</div><code>{text(label)}</code></div>"
        )
    scale = (
        f'<div style="height:{PLOT_HEIGHT}px;display:flex;flex-direction:column;'
        f'justify-content:space-between;text-align:right;padding-right:4px">'
        f"<small>{top:g}</small><small>{top / 2:g}</small><small>0</small></div>"
    )
    axis = (
        f'<div style="writing-mode:vertical-rl;transform:rotate(180deg);'
        f'height:{PLOT_HEIGHT}px;text-align:center"><small>{text(ylabel)}</small></div>'
    )
    plot = (
        f'<div style="display:flex;border-left:1px solid #444;align-items:flex-start">'
        f"{''.join(columns)}</div>"
    )
    return (
        f'<div class="attnlib-bar-chart" style="display:inline-block">'
        f'<div style="text-align:center"><b>{text(title)}</b></div>'
        f'<div style="display:flex">{axis}{scale}{plot}</div>'
        f'<div style="text-align:center"><small>{text(xlabel)}</small></div></div>'
    )
