"""One head of MiniLM on one sentence: the head view of notebook 11.

Notebook 11.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from attnlib.course.inspection import previous_token_share
from attnlib.course.plots import (
    plot_attention,
    plot_attention_lines,
)
from attnlib.sentence_encoder import SentenceEncoder


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
