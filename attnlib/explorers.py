"""The functions behind the notebooks' sliders.

Each explorer has two halves: a pure function that computes what the slider
shows (returning a frozen dataclass, unit-tested by calling it), and a
``show_*`` function that draws it. A notebook only wires ``show_*`` to
``ipywidgets.interact``. The result dataclasses hold tensors, so they compare by
identity (``eq=False``): compare their fields instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib._validate import require_float_tensor, require_min_ndim, require_positive
from attnlib.attention import scaled_dot_product_attention
from attnlib.gpt import next_token_probs
from attnlib.inspection import previous_token_share
from attnlib.masks import causal_mask, padding_mask
from attnlib.positional import sinusoidal_encoding
from attnlib.sentence_encoder import SentenceEncoder
from attnlib.similarity import cosine_similarity, dot, projection
from attnlib.softmax import softmax, softmax_jacobian
from attnlib.tiled_attention import OnlineSoftmaxState, online_softmax_step
from attnlib.viz import (
    plot_attention,
    plot_attention_lines,
    plot_distribution,
    plot_heatmap,
    plot_vectors_2d,
)

SATURATION_SCORES: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0)


# --- notebook 01: the dot product as an angle -------------------------------------------


@dataclass(frozen=True, eq=False)
class DotProductAtAngle:
    """Two 2-D vectors ``angle_degrees`` apart and what the dot product says about them."""

    a: torch.Tensor
    b: torch.Tensor
    dot: float
    cosine: float
    projection: torch.Tensor


def dot_product_at_angle(
    angle_degrees: float, length_a: float = 2.0, length_b: float = 1.5
) -> DotProductAtAngle:
    r"""``b`` lies along the x-axis, ``a`` is rotated ``angle_degrees`` from it.

    Then :math:`a \cdot b = \lVert a \rVert \lVert b \rVert \cos\theta`, and the
    projection of ``a`` onto ``b`` has signed length :math:`\lVert a \rVert\cos\theta`.
    """
    length_a = require_positive("length_a", length_a)
    length_b = require_positive("length_b", length_b)
    theta = math.radians(angle_degrees)
    a = torch.tensor([length_a * math.cos(theta), length_a * math.sin(theta)], dtype=torch.float64)
    b = torch.tensor([length_b, 0.0], dtype=torch.float64)
    return DotProductAtAngle(
        a=a,
        b=b,
        dot=float(dot(a, b)),
        cosine=float(cosine_similarity(a, b)),
        projection=projection(a, b),
    )


def show_dot_product_at_angle(
    angle_degrees: float, length_a: float = 2.0, length_b: float = 1.5
) -> Figure:
    """Draw ``a``, ``b`` and the projection of ``a`` onto ``b`` for a given angle."""
    demo = dot_product_at_angle(angle_degrees, length_a, length_b)
    fig, ax = plt.subplots(figsize=(5, 5))
    plot_vectors_2d(
        {"a": demo.a, "b": demo.b},
        title=f"θ = {angle_degrees:.0f}°:  a·b = {demo.dot:.2f},  cos θ = {demo.cosine:.2f}",
        ax=ax,
    )
    px, py = demo.projection.tolist()
    ax.plot([demo.a[0].item(), px], [demo.a[1].item(), py], "k:", lw=1)
    ax.plot([0, px], [0, py], color="tab:green", lw=5, alpha=0.5, label="projection of a on b")
    ax.legend(loc="lower left")
    return fig


# --- notebook 02: softmax saturation and temperature ------------------------------------


@dataclass(frozen=True, eq=False)
class SoftmaxAtScale:
    """Softmax of ``scale * scores`` and how large its gradient still is."""

    scores: torch.Tensor
    probs: torch.Tensor
    max_prob: float
    jacobian_norm: float


def softmax_at_scale(
    scale: float, scores: Sequence[float] | torch.Tensor = SATURATION_SCORES
) -> SoftmaxAtScale:
    r"""Softmax of ``scale · scores`` and the Frobenius norm of its Jacobian.

    Multiplying scores by ``scale`` is the same as a temperature of ``1/scale``.
    As ``scale`` grows the largest weight goes to 1 and :math:`\lVert J \rVert_F`
    to 0: the saturated softmax passes almost no gradient back.

    Shapes:
        scores: ``(n,)``; ``probs``: ``(n,)``.
    """
    scale = require_positive("scale", scale)
    scores_t = torch.as_tensor(scores, dtype=torch.float64)
    require_min_ndim("scores", scores_t, 1, "(n,)")
    if scores_t.dim() != 1:
        raise ValueError(f"scores must have shape (n,), got shape {tuple(scores_t.shape)}")
    probs = softmax(scale * scores_t)
    jacobian = softmax_jacobian(probs)
    return SoftmaxAtScale(
        scores=scale * scores_t,
        probs=probs,
        max_prob=float(probs.max()),
        jacobian_norm=float(torch.linalg.matrix_norm(jacobian)),
    )


def show_softmax_at_scale(
    scale: float, scores: Sequence[float] | torch.Tensor = SATURATION_SCORES
) -> Figure:
    """Bar chart of ``softmax(scale · scores)`` with the gradient size in the title."""
    demo = softmax_at_scale(scale, scores)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    labels = [f"{s:.1f}" for s in demo.scores.tolist()]
    plot_distribution(
        demo.probs,
        labels,
        title=(
            f"softmax({scale:g} × scores): max weight {demo.max_prob:.4f}, "
            f"‖Jacobian‖ = {demo.jacobian_norm:.4f}"
        ),
        xlabel="scaled score",
        ax=ax,
    )
    return fig


# --- notebook 02: why divide by √d_k -------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ScoresAtWidth:
    """One query against ``n_keys`` random keys of width ``d_k``, with and without 1/√d_k."""

    d_k: int
    raw_scores: torch.Tensor
    scaled_scores: torch.Tensor
    raw_probs: torch.Tensor
    scaled_probs: torch.Tensor
    raw_jacobian_norm: float
    scaled_jacobian_norm: float


def scores_at_width(d_k: int, n_keys: int = 8, seed: int = 0) -> ScoresAtWidth:
    r"""Random ``q`` and keys with independent N(0, 1) entries, scored at width ``d_k``.

    :math:`\operatorname{Var}(q \cdot k) = d_k`, so raw scores spread like
    :math:`\sqrt{d_k}` and softmax saturates as ``d_k`` grows; dividing by
    :math:`\sqrt{d_k}` brings the spread back to 1 whatever ``d_k`` is.

    Shapes:
        raw_scores, scaled_scores, raw_probs, scaled_probs: ``(n_keys,)``.
    """
    if isinstance(d_k, bool) or not isinstance(d_k, int) or d_k < 1:
        raise ValueError(f"d_k must be a positive int, got {d_k!r}")
    if isinstance(n_keys, bool) or not isinstance(n_keys, int) or n_keys < 2:
        raise ValueError(f"n_keys must be an int ≥ 2, got {n_keys!r}")
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(d_k, generator=generator, dtype=torch.float64)
    keys = torch.randn(n_keys, d_k, generator=generator, dtype=torch.float64)
    raw = keys @ q  # (n_keys,)
    scaled = raw / math.sqrt(d_k)
    raw_probs, scaled_probs = softmax(raw), softmax(scaled)
    return ScoresAtWidth(
        d_k=d_k,
        raw_scores=raw,
        scaled_scores=scaled,
        raw_probs=raw_probs,
        scaled_probs=scaled_probs,
        raw_jacobian_norm=float(torch.linalg.matrix_norm(softmax_jacobian(raw_probs))),
        scaled_jacobian_norm=float(torch.linalg.matrix_norm(softmax_jacobian(scaled_probs))),
    )


def show_scores_at_width(d_k: int, n_keys: int = 8, seed: int = 0) -> Figure:
    """Two bar charts side by side: softmax of raw q·k and of q·k/√d_k."""
    demo = scores_at_width(d_k, n_keys, seed)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.5), sharey=True)
    labels = [f"k{i}" for i in range(n_keys)]
    plot_distribution(
        demo.raw_probs,
        labels,
        title=f"softmax(q·k), d_k = {d_k}: ‖J‖ = {demo.raw_jacobian_norm:.3f}",
        xlabel="key",
        ax=left,
        color="tab:red",
    )
    plot_distribution(
        demo.scaled_probs,
        labels,
        title=f"softmax(q·k / √{d_k}): ‖J‖ = {demo.scaled_jacobian_norm:.3f}",
        xlabel="key",
        ax=right,
        color="tab:green",
    )
    fig.tight_layout()
    return fig


# --- notebook 03: why naive attention looks at itself ------------------------------------


def naive_weights_at_scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    r"""Naive self-attention weights :math:`\operatorname{softmax}((sX)(sX)^\top)`.

    Scaling every vector by ``s`` multiplies every score by :math:`s^2`; since a
    vector's score with itself, :math:`\lVert x_t \rVert^2`, is usually the
    largest in its row, the weights collapse onto the diagonal as ``s`` grows.

    Shapes:
        x: ``(T, C)``; returns ``(T, T)``.
    """
    require_float_tensor("x", x)
    if x.dim() != 2:
        raise ValueError(f"x must have shape (T, C), got shape {tuple(x.shape)}")
    scale = require_positive("scale", scale)
    scaled = scale * x
    return softmax(scaled @ scaled.T)  # (T, T)


def show_naive_weights_at_scale(x: torch.Tensor, tokens: Sequence[str], scale: float) -> Figure:
    """Heatmap of :func:`naive_weights_at_scale`, with the mean diagonal weight in the title."""
    weights = naive_weights_at_scale(x, scale)
    if len(tokens) != x.shape[0]:
        raise ValueError(f"tokens has {len(tokens)} entries, x has {x.shape[0]} rows")
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 + 0.8 * len(tokens)), 0.9 + 0.7 * len(tokens)))
    self_weight = float(weights.diagonal().mean())
    plot_attention(
        weights,
        list(tokens),
        title=f"softmax((sX)(sX)ᵀ), s = {scale:.2f}: mean self-weight {self_weight:.2f}",
        ax=ax,
    )
    fig.tight_layout()
    return fig


# --- notebook 06: the sinusoidal encodings -------------------------------------------------


@dataclass(frozen=True, eq=False)
class EncodingAt:
    """One entry of the sinusoidal encoding table and the wave it lies on."""

    encoding: torch.Tensor
    position: int
    dimension: int
    value: float
    wavelength: float


def encoding_at(
    position: int, dimension: int, max_len: int = 64, d_model: int = 64, base: float = 10000.0
) -> EncodingAt:
    r"""``PE[position, dimension]`` of a ``(max_len, d_model)`` table, with its wavelength.

    Dims ``2i`` and ``2i+1`` oscillate with wavelength :math:`2\pi \cdot \text{base}^{2i/d}`:
    from 2π ≈ 6.3 positions for the first pair up to nearly ``base``·2π for the last.

    Shapes:
        encoding: ``(max_len, d_model)``.
    """
    if not 0 <= position < max_len:
        raise ValueError(f"position must be in [0, max_len={max_len}), got {position}")
    if not 0 <= dimension < d_model:
        raise ValueError(f"dimension must be in [0, d_model={d_model}), got {dimension}")
    encoding = sinusoidal_encoding(max_len, d_model, base)
    pair = dimension // 2
    return EncodingAt(
        encoding=encoding,
        position=position,
        dimension=dimension,
        value=float(encoding[position, dimension]),
        wavelength=2 * math.pi * base ** (2 * pair / d_model),
    )


def show_encoding_at(
    position: int, dimension: int, max_len: int = 64, d_model: int = 64, base: float = 10000.0
) -> Figure:
    """Heatmap of the whole table with the chosen entry marked, and that dimension as a wave."""
    view = encoding_at(position, dimension, max_len, d_model, base)
    fig, (table, wave) = plt.subplots(1, 2, figsize=(12, 4.2))
    plot_heatmap(
        view.encoding,
        title=f"PE table (base {base:g}): PE[{position}, {dimension}] = {view.value:+.3f}",
        xlabel="dimension",
        ylabel="position",
        ax=table,
        annotate=False,
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
        colorbar_label="PE value",
    )
    table.plot(
        [dimension],
        [position],
        marker="s",
        markersize=9,
        markerfacecolor="none",
        markeredgecolor="black",
        markeredgewidth=2,
    )
    positions = torch.arange(max_len)
    wave.plot(positions, view.encoding[:, dimension], color="tab:purple")
    wave.plot([position], [view.value], "o", color="black")
    kind = "sin" if dimension % 2 == 0 else "cos"
    wave.set_title(f"dimension {dimension} ({kind}): wavelength {view.wavelength:.1f} positions")
    wave.set_xlabel("position")
    wave.set_ylabel("PE value")
    wave.set_ylim(-1.1, 1.1)
    fig.tight_layout()
    return fig


# --- notebook 07: mask kinds --------------------------------------------------------------

MASK_KINDS: tuple[str, ...] = ("none", "causal", "padding", "causal + padding")
MASK_DEMO_WORDS: tuple[str, ...] = ("the", "cat", "sat", "down", "on", "it")


@dataclass(frozen=True, eq=False)
class MaskedWeights:
    """Attention weights of one short padded sentence under one kind of mask."""

    kind: str
    mask: torch.Tensor
    weights: torch.Tensor


def masked_weights(kind: str, real_length: int = 4, seed: int = 0) -> MaskedWeights:
    r"""Self-attention weights of the 6-token demo sentence under mask ``kind``.

    ``kind`` is one of :data:`MASK_KINDS`. Queries and keys are seeded random
    vectors; the last ``6 - real_length`` tokens are padding. Polarity: ``True`` =
    may attend; blocked weights are exactly 0.

    Shapes:
        mask: ``(6, 6)`` bool; weights: ``(6, 6)``.
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}, got {kind!r}")
    length = len(MASK_DEMO_WORDS)
    if not 1 <= real_length <= length:
        raise ValueError(f"real_length must be in [1, {length}], got {real_length}")
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(length, 8, generator=generator, dtype=torch.float64)
    k = torch.randn(length, 8, generator=generator, dtype=torch.float64)
    v = torch.randn(length, 8, generator=generator, dtype=torch.float64)
    mask = torch.ones(length, length, dtype=torch.bool)
    if "causal" in kind:
        mask &= causal_mask(length)
    if "padding" in kind:
        mask &= padding_mask([real_length], length)[0, 0]  # (1, T) broadcasts over queries
    _, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    return MaskedWeights(kind=kind, mask=mask, weights=weights)


def show_masked_weights(kind: str, real_length: int = 4, seed: int = 0) -> Figure:
    """Heatmap of :func:`masked_weights`; blocked cells are hatched."""
    demo = masked_weights(kind, real_length, seed)
    tokens = [w if i < real_length else "<pad>" for i, w in enumerate(MASK_DEMO_WORDS)]
    fig, ax = plt.subplots(figsize=(6.5, 5))
    plot_attention(demo.weights, tokens, title=f"mask: {kind} (True = may attend)", ax=ax)
    for query, key in torch.nonzero(~demo.mask).tolist():
        ax.add_patch(
            plt.Rectangle(
                (key - 0.5, query - 0.5),
                1,
                1,
                fill=False,
                hatch="//",
                edgecolor="grey",
                linewidth=0,
            )
        )
    fig.tight_layout()
    return fig


# --- notebook 10: temperature and top-k on a next-token distribution -----------------------


def sampling_distribution(
    logits: torch.Tensor, temperature: float, top_k: int | None = None
) -> torch.Tensor:
    """:func:`attnlib.gpt.next_token_probs` for one logit vector, with checked arguments.

    Shapes:
        logits: ``(V,)``; returns ``(V,)`` summing to 1.
    """
    require_float_tensor("logits", logits)
    if logits.dim() != 1:
        raise ValueError(f"logits must have shape (V,), got {tuple(logits.shape)}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and not 1 <= top_k <= logits.shape[0]:
        raise ValueError(f"top_k must be in [1, {logits.shape[0]}] or None, got {top_k}")
    return next_token_probs(logits, temperature, top_k)


def show_sampling_distribution(
    logits: torch.Tensor, labels: Sequence[str], temperature: float, top_k: int | None = None
) -> Figure:
    """Bar chart of :func:`sampling_distribution`, with its entropy in the title."""
    probs = sampling_distribution(logits, temperature, top_k)
    if len(labels) != probs.shape[0]:
        raise ValueError(f"labels has {len(labels)} entries, logits has {probs.shape[0]}")
    nonzero = probs[probs > 0]
    entropy = max(0.0, float(-(nonzero * nonzero.log()).sum()))  # no "-0.00" for one token
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(labels) + 2), 3.6))
    plot_distribution(
        probs,
        list(labels),
        title=f"next token at T = {temperature:g}, top-k = {top_k}: entropy {entropy:.2f} nats",
        xlabel="next token",
        ax=ax,
    )
    return fig


# --- notebook 11: a pretrained encoder's heads -----------------------------------------------


@dataclass(frozen=True, eq=False)
class HeadView:
    """One head's attention over one sentence.

    ``layer`` counts from 1 (as in "the output of layer 1"); ``head`` from 0 (a tensor
    index).

    Shapes:
        weights: ``(T, T)``, rows are queries; ``tokens`` has ``T`` entries.
    """

    tokens: list[str]
    weights: torch.Tensor
    layer: int
    head: int
    previous_token_share: float
    first_token_share: float
    last_token_share: float


@torch.no_grad()
def head_view(encoder: SentenceEncoder, sentence: str, layer: int, head: int) -> HeadView:
    """The weights of head ``head`` of layer ``layer`` (1-based) on ``sentence``.

    The shares are means over queries: of the weight on the previous token, on the
    first token (``[CLS]``) and on the last (``[SEP]``).
    """
    config = encoder.config
    if not 1 <= layer <= config.num_layers:
        raise ValueError(f"layer must be in [1, {config.num_layers}], got {layer}")
    if not 0 <= head < config.num_heads:
        raise ValueError(f"head must be in [0, {config.num_heads - 1}], got {head}")
    input_ids, token_mask = encoder.tokenize([sentence])
    weights = encoder(input_ids, token_mask).attentions[layer - 1, 0, head]  # (T, T)
    return HeadView(
        tokens=encoder.tokens(sentence),
        weights=weights,
        layer=layer,
        head=head,
        previous_token_share=float(previous_token_share(weights)),
        first_token_share=float(weights[:, 0].mean()),
        last_token_share=float(weights[:, -1].mean()),
    )


def show_head_view(encoder: SentenceEncoder, sentence: str, layer: int, head: int) -> Figure:
    """:func:`head_view` drawn twice: as a heatmap and as token-to-token lines."""
    view = head_view(encoder, sentence, layer, head)
    length = len(view.tokens)
    fig, (grid, lines) = plt.subplots(
        1, 2, figsize=(6.0 + 0.45 * length, 1.6 + 0.4 * length), width_ratios=(3, 2)
    )
    plot_attention(view.weights, view.tokens, title="weights", ax=grid, annotate=length <= 12)
    plot_attention_lines(view.weights, view.tokens, title="the same, as lines", ax=lines)
    fig.suptitle(
        f"layer {layer}, head {head}: previous token {view.previous_token_share:.2f}, "
        f"[CLS] {view.first_token_share:.2f}, [SEP] {view.last_token_share:.2f}"
    )
    fig.tight_layout()
    return fig


# --- notebook 12: the online softmax, one block at a time ------------------------------------


@dataclass(frozen=True, eq=False)
class OnlineSoftmaxProgress:
    """The online softmax of a score vector after its first ``blocks_seen`` blocks.

    Shapes:
        scores, estimate, final: ``(n,)``; ``estimate`` is :math:`e^{s - m}/\\ell` with the
        running values (0 for scores not yet read); ``final`` the true softmax.
    """

    scores: torch.Tensor
    block_size: int
    blocks_seen: int
    running_max: float
    running_sum: float
    estimate: torch.Tensor
    final: torch.Tensor


def online_softmax_progress(
    scores: torch.Tensor, block_size: int, blocks_seen: int
) -> OnlineSoftmaxProgress:
    """Run :func:`attnlib.tiled_attention.online_softmax_step` over the first blocks.

    After the last block the estimate equals the softmax; before it, the scores read so
    far are already in the right proportions, only the normaliser is not final.
    """
    require_float_tensor("scores", scores)
    if scores.dim() != 1:
        raise ValueError(f"scores must have shape (n,), got {tuple(scores.shape)}")
    total_blocks = math.ceil(scores.shape[0] / block_size)
    if not 0 <= blocks_seen <= total_blocks:
        raise ValueError(f"blocks_seen must be in [0, {total_blocks}], got {blocks_seen}")
    state = OnlineSoftmaxState(
        running_max=torch.tensor(-math.inf, dtype=scores.dtype),
        running_sum=torch.tensor(0.0, dtype=scores.dtype),
    )
    for block in range(blocks_seen):
        state = online_softmax_step(state, scores[block * block_size : (block + 1) * block_size])
    seen = min(blocks_seen * block_size, scores.shape[0])
    estimate = torch.zeros_like(scores)
    if seen:
        estimate[:seen] = torch.exp(scores[:seen] - state.running_max) / state.running_sum
    return OnlineSoftmaxProgress(
        scores=scores,
        block_size=block_size,
        blocks_seen=blocks_seen,
        running_max=float(state.running_max),
        running_sum=float(state.running_sum),
        estimate=estimate,
        final=softmax(scores),
    )


def show_online_softmax_progress(scores: torch.Tensor, block_size: int, blocks_seen: int) -> Figure:
    """Scores read so far (with the running maximum) and the estimate against the softmax."""
    progress = online_softmax_progress(scores, block_size, blocks_seen)
    n = scores.shape[0]
    positions = range(n)
    seen = min(blocks_seen * block_size, n)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.6), sharex=True)
    colours = ["tab:blue" if i < seen else "lightgrey" for i in positions]
    top.bar(positions, scores.tolist(), color=colours)
    if seen:
        top.axhline(progress.running_max, color="tab:red", linestyle="--", label="running max m")
        top.legend(loc="best")
    for edge in range(block_size, n, block_size):
        top.axvline(edge - 0.5, color="grey", linewidth=0.8)
    top.set_title(
        f"{blocks_seen} of {math.ceil(n / block_size)} blocks read: "
        f"m = {progress.running_max:.2f}, ℓ = {progress.running_sum:.3f}"
    )
    top.set_ylabel("score s")
    top.set_xlabel("key position (grey: not read yet; lines: block edges)")
    bottom.bar(
        positions, progress.estimate.tolist(), color="tab:blue", label="e^(s − m) / ℓ so far"
    )
    bottom.plot(positions, progress.final.tolist(), "k_", markersize=14, label="true softmax")
    bottom.set_title("running estimate of the weights vs the final softmax")
    bottom.set_xlabel("key position")
    bottom.set_ylabel("weight")
    bottom.legend(loc="best")
    fig.tight_layout()
    return fig
