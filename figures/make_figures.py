"""Regenerate every PNG in figures/ from attnlib's plot helpers: `make figures`.

The diagrams of `attnlib.course.diagrams` (the Transformer block, the head split, the KV
cache, …) go to figures/diagrams/, named as in its FIGURES; `make figures diagrams/kv_cache.png`
draws one.

Deterministic: fixed sizes, DPI, seeds and no PNG metadata, so an unchanged
figure rewrites the same bytes.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

import attnlib
from attnlib.course import attention_cost as cost
from attnlib.course import date_tokenizer, date_translator, diagrams, plots, sliders, word_vectors

FIGURE_DIR = Path(__file__).resolve().parent
DPI = 110


def softmax_saturation() -> Figure:
    """Scores [1, 2, 3, 4] and the same ×10: the softmax saturates and its gradient vanishes."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, scale in zip(axes, (1.0, 10.0), strict=True):
        demo = sliders.softmax_at_scale(scale)
        plots.plot_distribution(
            demo.probs,
            [f"{s:g}" for s in demo.scores.tolist()],
            title=f"softmax({scale:g} × [1, 2, 3, 4]): ‖J‖ = {demo.jacobian_norm:.2g}",
            xlabel="score",
            ax=ax,
        )
    fig.tight_layout()
    return fig


def naive_attention_heatmap() -> Figure:
    """softmax(XXᵀ/√C) on GloVe vectors of three sentences that use "bears"."""
    glove = word_vectors.load_glove()
    sentences = ["i love bears", "she bears the pain", "bears won the game"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, sentence in zip(axes, sentences, strict=True):
        tokens = sentence.split()
        x = glove.stack(tokens)  # (T, 50)
        weights = attnlib.softmax(x @ x.T / math.sqrt(x.shape[-1]))  # (T, T)
        plots.plot_attention(weights, tokens, title=f"“{sentence}”: softmax(XXᵀ/√C)", ax=ax)
    fig.tight_layout()
    return fig


def positional_encoding() -> Figure:
    """The sinusoidal table (base 10000) and one of its dimensions as a wave (notebook 06)."""
    return sliders.show_encoding_at(position=20, dimension=6, max_len=64, d_model=64)


@functools.lru_cache(maxsize=1)
def _date_translator() -> date_translator.DateTranslator:
    # 300 steps already translate every format and align as the notebook's 600 do.
    return date_translator.train_date_translator(seed=0, steps=300)


def date_cross_attention() -> Figure:
    """Where the date translator's decoder looks while it writes each ISO character (09)."""
    translator = _date_translator()
    text = "Saturday, November 21, 2026"
    src, tgt_in, _ = date_tokenizer.make_batch([(text, "2026-11-21")], translator.tokenizer)
    with torch.no_grad():
        cross = translator.model.attention_maps(src, tgt_in).cross[0].mean(dim=1)[0]  # (T, S)
    rows = [f"→{c}" for c in "2026-11-21"] + ["→<eos>"]
    fig, ax = plt.subplots(figsize=(11, 4.8))
    plots.plot_attention(
        cross[:, : len(text)],
        rows,
        list(text),
        annotate=False,
        title=f"Date translator, cross-attention (first layer, mean of heads): {text!r}",
        ax=ax,
    )
    ax.set_xlabel("input character (key)")
    ax.set_ylabel("output character written (query)")
    fig.tight_layout()
    return fig


def minilm_head_view() -> Figure:
    """all-MiniLM-L6-v2 in attnlib: the previous-token head (layer 1, head 2) of notebook 11."""
    encoder = attnlib.load_minilm()
    return sliders.show_head_view(encoder, "The quick brown fox jumps over the lazy dog.", 1, 2)


def attention_cost() -> Figure:
    """Time, GFLOP/s and peak memory of naive, tiled and fused attention (stored benchmark)."""
    return cost.plot_benchmark_results(cost.load_benchmark_results())


FIGURES: dict[str, Callable[[], Figure]] = {
    "softmax_saturation.png": softmax_saturation,
    "naive_attention_heatmap.png": naive_attention_heatmap,
    "positional_encoding.png": positional_encoding,
    "date_cross_attention.png": date_cross_attention,
    "minilm_head_view.png": minilm_head_view,
    "attention_cost.png": attention_cost,
}


# The diagrams drawn with code, by their path under figures/.
DIAGRAMS: dict[str, Callable[[], Figure]] = {
    f"diagrams/{name}": draw for name, draw in diagrams.FIGURES.items()
}
EVERY_FIGURE = {**FIGURES, **DIAGRAMS}


def main(names: list[str]) -> None:
    unknown = sorted(set(names) - EVERY_FIGURE.keys())
    if unknown:
        raise SystemExit(f"unknown figure(s) {unknown}; choose from {sorted(EVERY_FIGURE)}")
    (FIGURE_DIR / "diagrams").mkdir(exist_ok=True)
    for name in names or list(EVERY_FIGURE):
        fig = EVERY_FIGURE[name]()
        path = FIGURE_DIR / name
        fig.savefig(path, dpi=DPI, metadata={"Software": None})
        plt.close(fig)
        print(f"wrote {path.relative_to(FIGURE_DIR.parent)}")


if __name__ == "__main__":
    main(sys.argv[1:])
