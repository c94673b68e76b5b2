"""A diagram drawn with code: the Transformer block of the paper's Figure 1, post-norm and pre-norm.

Each wiring shows an encoder layer (self-attention, then the feed-forward network) and a decoder
layer (masked self-attention, cross-attention reading the encoder's output, the feed-forward
network), each sublayer inside a residual connection. Post-norm, the paper's, puts an Add & Norm
after each sublayer; pre-norm (GPT-2 and most models since) puts a LayerNorm before each
sublayer, leaves the residual sums alone, and ends the stack with one final LayerNorm. The
label "dropout" marks where the paper's residual dropout acts: on each sublayer's output,
before the addition.

Notebook 08.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyBboxPatch

WIRINGS = ("post", "pre", "both")
ATTENTION, FFN, NORM, FRAME = "#f8d2a4", "#c3e4f3", "#f2ee9c", "#f4f4f4"
BOX_W, BOX_H, STEP = 3.1, 0.56, 0.95  # a box's width and height; the rise from item to item
ENCODER_X, DECODER_X, BOTTOM = 2.6, 8.1, 1.3


@dataclass(frozen=True)
class _Item:
    """One stage of a column: a box (label, colour) or the ⊕ of a residual (label None)."""

    label: str | None
    colour: str = "white"
    note: str = ""  # a small label on the arrow that leaves the item upwards


def _blocks(sublayers: list[tuple[str, str]], pre: bool) -> list[list[_Item]]:
    """Each sublayer's residual block, bottom to top."""
    if pre:
        return [
            [_Item("LayerNorm", NORM), _Item(s, c, "dropout"), _Item(None)] for s, c in sublayers
        ]
    return [[_Item(s, c, "dropout"), _Item("Add & Norm", NORM)] for s, c in sublayers]


def _box(ax: Axes, x: float, y: float, item: _Item) -> None:
    if item.label is None:
        ax.add_patch(Circle((x, y), 0.2, facecolor="white", edgecolor="black", lw=1.2, zorder=3))
        ax.text(x, y, "+", ha="center", va="center", fontsize=13, zorder=4)
        return
    patch = FancyBboxPatch(
        (x - BOX_W / 2, y - BOX_H / 2), BOX_W, BOX_H,
        boxstyle="round,pad=0.02,rounding_size=0.12",
        facecolor=item.colour, edgecolor="black", lw=1.1, zorder=3,
    )  # fmt: skip
    ax.add_patch(patch)
    ax.text(x, y, item.label, ha="center", va="center", fontsize=8.6, zorder=4)


def _arrow(ax: Axes, points: list[tuple[float, float]], colour: str = "black") -> None:
    """A polyline through ``points`` with an arrow head at the last one."""
    xs, ys = zip(*points, strict=True)
    ax.plot(xs[:-1], ys[:-1], color=colour, lw=1.2, zorder=2)
    ax.annotate(
        "", xy=points[-1], xytext=points[-2],
        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 1.2, "shrinkA": 0, "shrinkB": 0},
        zorder=2,
    )  # fmt: skip


def _edge(y: float, item: _Item, top: bool) -> float:
    half = 0.2 if item.label is None else BOX_H / 2
    return y + half if top else y - half


def _column(
    ax: Axes, x: float, blocks: list[list[_Item]], side: float, final: _Item | None
) -> dict[str, float]:
    """Draw a layer's blocks upwards from BOTTOM at ``x``, the residual paths on ``side``
    (−1 left, +1 right). Returns where things are: the input, each box, the layer's top."""
    y = BOTTOM
    where: dict[str, float] = {"input": y - 0.55}
    below = (where["input"], None)  # the y and item the next arrow leaves from
    frame_bottom = y - 0.4
    for block in blocks:
        split = y - 0.28  # where the skip path leaves the main line
        for item in block:
            start = below[0] if below[1] is None else _edge(below[0], below[1], top=True)
            _arrow(ax, [(x, start), (x, _edge(y, item, top=False))])
            if below[1] is not None and below[1].note:
                ax.text(x + 0.1, (start + _edge(y, item, False)) / 2, below[1].note,
                        fontsize=7, color="#555555", style="italic", va="center")  # fmt: skip
            _box(ax, x, y, item)
            if item.label:
                where[item.label] = y
            below = (y, item)
            y += STEP
        merge_y = below[0]
        skip_x = x + side * (BOX_W / 2 + 0.35)
        target = x + side * (0.2 if below[1].label is None else BOX_W / 2)
        ax.plot([x, skip_x, skip_x], [split, split, merge_y], color="black", lw=1.2, zorder=2)
        _arrow(ax, [(skip_x, merge_y), (target, merge_y)])
    frame_top = below[0] + 0.5
    frame = FancyBboxPatch(
        (x - BOX_W / 2 - 0.6, frame_bottom), BOX_W + 1.2, frame_top - frame_bottom,
        boxstyle="round,pad=0.02,rounding_size=0.25", facecolor=FRAME, edgecolor="#888888",
        lw=1.0, zorder=1,
    )  # fmt: skip
    ax.add_patch(frame)
    label_x = x + side * (BOX_W / 2 + 1.0)
    ax.text(label_x, (frame_bottom + frame_top) / 2, "N×", fontsize=11, ha="center", va="center")
    top = _edge(below[0], below[1], top=True)
    if final is not None:
        y = frame_top + 0.55
        _arrow(ax, [(x, top), (x, _edge(y, final, top=False))])
        _box(ax, x, y, final)
        top = _edge(y, final, top=True)
    where["top"] = top
    return where


def _panel(ax: Axes, pre: bool, top: float) -> None:
    encoder = _blocks([("Multi-Head Attention\n(self)", ATTENTION), ("Feed Forward", FFN)], pre)
    decoder = _blocks(
        [
            ("Masked Multi-Head\nAttention (self, causal)", ATTENTION),
            ("Multi-Head Attention\n(cross: Q from below)", ATTENTION),
            ("Feed Forward", FFN),
        ],
        pre,
    )
    final = _Item("final LayerNorm", NORM) if pre else None
    enc = _column(ax, ENCODER_X, encoder, -1, final)
    dec = _column(ax, DECODER_X, decoder, +1, final)
    for x, text in ((ENCODER_X, "source x (B, S, C)"), (DECODER_X, "target so far y (B, T, C)")):
        ax.text(x, BOTTOM - 0.75, text, ha="center", va="top", fontsize=8.6)
    memory_y = enc["top"] + 0.45
    _arrow(ax, [(ENCODER_X, enc["top"]), (ENCODER_X, memory_y)])
    ax.text(ENCODER_X, memory_y + 0.08, "memory (B, S, C)", ha="center", va="bottom", fontsize=8.6)
    _arrow(ax, [(DECODER_X, dec["top"]), (DECODER_X, dec["top"] + 0.45)])
    ax.text(DECODER_X, dec["top"] + 0.53, "z (B, T, C) → linear → logits", ha="center",
            va="bottom", fontsize=8.6)  # fmt: skip
    # Memory feeds every decoder layer's cross-attention: its keys and values.
    cross_y = dec["Multi-Head Attention\n(cross: Q from below)"]
    route_y = memory_y + 0.55
    mid_x = (ENCODER_X + BOX_W / 2 + DECODER_X - BOX_W / 2) / 2
    ax.plot([ENCODER_X, ENCODER_X, mid_x, mid_x], [memory_y + 0.4, route_y, route_y, cross_y],
            color="#b35c00", lw=1.4, zorder=2)  # fmt: skip
    _arrow(ax, [(mid_x, cross_y), (DECODER_X - BOX_W / 2, cross_y)], colour="#b35c00")
    ax.text(ENCODER_X + 0.12, route_y + 0.06, "K, V of each cross-attention", ha="left",
            va="bottom", fontsize=7.8, color="#b35c00")  # fmt: skip
    ax.text(ENCODER_X, -0.15, "encoder layer", ha="center", fontsize=10, weight="bold")
    ax.text(DECODER_X, -0.15, "decoder layer", ha="center", fontsize=10, weight="bold")
    ax.set_title(
        "pre-norm (GPT-2 and most models since):\nLayerNorm before each sublayer, a final LayerNorm"
        if pre
        else "post-norm (the paper):\nAdd & Norm, LN(x + sublayer(x)), after each sublayer",
        fontsize=10.5,
    )
    ax.set_xlim(0.0, 10.9)
    ax.set_ylim(-0.5, top)
    ax.set_aspect("equal")
    ax.axis("off")


def draw(wiring: str = "both") -> Figure:
    """The encoder and decoder layers as the paper's Figure 1 draws them, wired post-norm
    (``wiring="post"``, the paper), pre-norm (``"pre"``) or both side by side (``"both"``)."""
    if wiring not in WIRINGS:
        raise ValueError(f"wiring must be one of {WIRINGS}, got {wiring!r}")
    kinds = [False, True] if wiring == "both" else [wiring == "pre"]
    fig, axes = plt.subplots(
        1, len(kinds), figsize=(5.6 * len(kinds), 6.9 if True in kinds else 6.0), squeeze=False
    )
    top = 11.7 if True in kinds else 8.9  # the pre-norm layers are taller; one scale for both
    for ax, pre in zip(axes[0], kinds, strict=True):
        _panel(ax, pre, top)
    title = "The Transformer block (the paper's Figure 1)"
    if wiring == "both":
        title += ": each sublayer in a residual, two wirings"
    fig.suptitle(title, fontsize=12.5)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig
