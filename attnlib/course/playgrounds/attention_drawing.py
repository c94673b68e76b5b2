"""How the attention views are drawn: HTML tables, built in milliseconds.

The model view (every layer and head as a small map, each titled with its shares) is a
table of small PNGs of one pixel per weight, drawn once per text; the head view and the
neuron view, redrawn on every selection, are tables of coloured cells. Matplotlib is
too slow for either: 72 titled maps took about 0.5 s to render (mostly the titles' text),
and a figure with a label per token longer than the 150 ms a selection may take.

Colours: blue with opacity = weight for weights in [0, 1]; red (positive) or blue
(negative) with opacity = |value| / the panel's largest |value| for vectors. Every cell
carries its value in a tooltip.

Notebooks 04, 05, 10 and 11.
"""

from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt
import torch

from attnlib.course.playgrounds.attention_views import HeadRow, ModelView, share_title
from attnlib.course.playgrounds.neuron_view import NeuronView

THUMBNAIL = 64  # the model view's maps are averaged down to at most this many pixels a side
MAX_GRID = 64  # longer texts get the query's row only in the head view, not the T × T grid
MAX_KEYS = 48  # the neuron view of a longer text shows the keys with the largest weights
STYLE = (
    "<style>.attnlib-v table{border-collapse:collapse;font:11px/1.1 monospace}"
    ".attnlib-v td{padding:0 3px}.attnlib-v td.c{padding:0;width:5px;height:14px}"
    ".attnlib-v td.w{width:14px}</style>"
)


def map_png(weights: torch.Tensor) -> bytes:
    """One head's ``(T, T)`` weights as a PNG of ``T × T`` pixels, white 0 to dark blue 1."""
    buffer = io.BytesIO()
    plt.imsave(buffer, weights.float().numpy(), cmap="Blues", vmin=0.0, vmax=1.0, format="png")
    return buffer.getvalue()


def model_view_html(view: ModelView) -> str:
    """Every head as a small map (rows layers, columns heads), each titled with its shares.

    Each map is a PNG of one pixel per weight (averaged down to 64 × 64 for a longer
    text), scaled up by the browser without smoothing.
    """
    maps = view.weights.float()  # (L, H, T, T)
    if maps.shape[-1] > THUMBNAIL:  # a long text's maps are averaged down
        maps = torch.nn.functional.adaptive_avg_pool2d(maps, THUMBNAIL)  # (L, H, 64, 64)
    num_layers, num_heads = maps.shape[:2]
    rows = []
    for layer in range(num_layers):
        cells = []
        for head in range(num_heads):
            shares = [(n, float(s[layer, head])) for n, s in view.shares.items()]
            data = base64.b64encode(map_png(maps[layer, head])).decode("ascii")
            # One share a line: three on one line would not fit above a 72-pixel map.
            title = "".join(f"<br>{html.escape(share_title({n: s}))}" for n, s in shares)
            cells.append(
                f"<td style='white-space:nowrap'><b>L{layer + 1} H{head}</b>{title}<br>"
                f"<img width=72 height=72 style='image-rendering:pixelated;border:1px solid #ddd' "
                f"src='data:image/png;base64,{data}'></td>"
            )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f"{STYLE}<div class='attnlib-v attnlib-model-view'>rows: layers 1–{num_layers}, "
        f"columns: heads 0–{num_heads - 1}; in each map rows are queries, columns keys, dark = "
        f"high weight. {html.escape(view.legend)}<table style='font-size:9px'>{''.join(rows)}"
        "</table></div>"
    )


def _alpha(colour: str, alpha: float) -> str:
    return f"{colour}{round(255 * min(max(alpha, 0.0), 1.0)):02x}"


def _signed(value: float, bound: float) -> str:
    return _alpha("#d62728" if value > 0 else "#1f77b4", abs(value) / bound if bound > 0 else 0)


def _label(token: str) -> str:
    return html.escape(token if len(token) <= 14 else token[:13] + "…")


def _strip(values: torch.Tensor, bound: float) -> str:
    """A one-row table, a cell per entry of ``values (D,)`` coloured by sign and size."""
    cells = "".join(
        f"<td class=c style='background:{_signed(v, bound)}' title='{v:.3f}'></td>"
        for v in values.tolist()
    )
    return f"<table><tr>{cells}</tr></table>"


def _bar(weight: float, colour: str = "#1f77b4") -> str:
    return (
        f"<div style='display:inline-block;width:{160 * weight:.0f}px;height:10px;"
        f"background:{colour}'></div> {weight:.2f}"
    )


def head_view_html(row: HeadRow, mask: torch.Tensor | None = None) -> str:
    """The head's weights (the query's row framed in red, if ``T ≤ 64``) and that row as bars.

    Shapes:
        mask: ``(T, T)`` bool, ``True`` = may attend; a blocked key is marked in the bars.
    """
    tokens, length = row.tokens, len(row.tokens)
    allowed = [True] * length if mask is None else mask[row.query].tolist()
    parts = [
        f"{STYLE}<div class='attnlib-v attnlib-head-view'><b>layer {row.layer}, head "
        f"{row.head}</b>: {html.escape(share_title(row.shares))} &nbsp; ({html.escape(row.legend)})"
        "<div style='display:flex;gap:24px;align-items:flex-start'>"
    ]
    if length <= MAX_GRID:
        lines = []
        for i, weights in enumerate(row.weights.tolist()):
            frame = " style='outline:2px solid #d62728'" if i == row.query else ""
            cells = "".join(
                f"<td class='c w' style='background:{_alpha('#1f77b4', w)}' "
                f"title='{_label(tokens[i])} → {_label(tokens[j])}: {w:.3f}'></td>"
                for j, w in enumerate(weights)
            )
            lines.append(f"<tr{frame}><td>{_label(tokens[i])}</td>{cells}</tr>")
        parts.append(f"<div>rows: queries, columns: keys<table>{''.join(lines)}</table></div>")
    bars = "".join(
        f"<tr><td>{j}</td><td>{_label(token)}</td><td>"
        + (_bar(w, "#d62728" if j == row.query else "#1f77b4") if allowed[j] else "masked")
        + "</td></tr>"
        for j, (token, w) in enumerate(zip(tokens, row.row.tolist(), strict=True))
    )
    parts.append(
        f"<div>where <b>{_label(tokens[row.query])}</b> (token {row.query}, red) looks"
        f"<table>{bars}</table></div></div></div>"
    )
    return "".join(parts)


def _shown_keys(view: NeuronView) -> list[int]:
    """Every key, or for a long text the :data:`MAX_KEYS` with the largest weights, in order."""
    length = view.weights.shape[0]
    if length <= MAX_KEYS:
        return list(range(length))
    order = sorted(range(length), key=lambda j: (-float(view.weights[j]), j))
    return sorted(order[:MAX_KEYS])


def neuron_view_html(
    view: NeuronView, tokens: tuple[str, ...] | list[str], layer: int | None = None
) -> str:
    """One row per key: k, q∘k, the scaled score, the mask, the softmax weight, weight × v."""
    if len(tokens) != view.scores.shape[0]:
        raise ValueError(f"tokens has {len(tokens)} entries, the view {view.scores.shape[0]} keys")
    qk_bound = float(view.k.abs().max().clamp_min(view.q.abs().max()))
    product_bound = float(view.q_times_k.abs().max())
    value_bound = float(view.weighted_values.abs().max().clamp_min(view.output.abs().max()))
    scale = f"{view.scale:.3g}"
    head = (
        f"<tr><th>key</th><th>k</th><th>q∘k</th><th>q·k × {scale}</th><th>mask</th>"
        "<th>softmax</th><th>weight × v</th></tr>"
        f"<tr><td><b>q</b> of {_label(tokens[view.query])}</td><td>{_strip(view.q, qk_bound)}"
        "</td><td colspan=4>← the query's vector; the head's output, the sum of the column "
        f"below →</td><td>{_strip(view.output, value_bound)}</td></tr>"
    )
    keys = _shown_keys(view)
    rows = [
        f"<tr><td>{j} {_label(tokens[j])}</td><td>{_strip(view.k[j], qk_bound)}</td>"
        f"<td>{_strip(view.q_times_k[j], product_bound)}</td><td>{float(view.scores[j]):.2f}</td>"
        f"<td>{'yes' if bool(view.mask[j]) else 'no'}</td><td>{_bar(float(view.weights[j]))}</td>"
        f"<td>{_strip(view.weighted_values[j], value_bound)}</td></tr>"
        for j in keys
    ]
    hidden = len(tokens) - len(keys)
    more = (
        f"<br>{hidden} keys with the smallest weights (together "
        f"{float(view.weights.sum()) - float(view.weights[keys].sum()):.3f}) are not shown."
        if hidden
        else ""
    )
    return (
        f"{STYLE}<div class='attnlib-v attnlib-neuron-view'><b>"
        f"{'' if layer is None else f'layer {layer}, '}head {view.head}, query token "
        f"{view.query}</b> ({view.q.shape[0]} dims per query and key, {view.values.shape[1]} per "
        "value; red positive, blue negative; hover a cell for its value; mask yes = may attend)"
        f"<table>{head}{''.join(rows)}</table>{more}</div>"
    )
