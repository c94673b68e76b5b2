r"""Attention views for the learner's own text: the pure half, the same for every model.

A *source* (:class:`AttentionSource`: MiniLM in ``minilm_views``, the char GPT in
``gpt_views``, the toy models in ``toy_views``) reads typed text into a
:class:`TextReading` that says what it had to change, and runs its model once into a
:class:`ModelView`: every layer's and head's weights, what each attention layer read
(for the neuron view) and a few measured *shares* per head. :func:`head_row` picks one
head and one query token's row out of it and :func:`neuron_at` one head's computation
for one query, both without running the model again. Drawing is in ``attention_drawing``,
the widget in ``attention_widget``.

The shares are means over the queries of one text, for weights :math:`A` (rows queries):

.. math::

    \operatorname{prev} = \frac{1}{T-1}\sum_{i=2}^{T} A_{i,i-1}, \qquad
    \operatorname{key}_j = \frac{1}{T - s}\sum_{i=s+1}^{T} A_{i,j}, \qquad
    \operatorname{word} = \frac{1}{|W|}\sum_{i \in W}\ \sum_{j \in w(i) \setminus \{i\},\,
    M_{ij}} A_{ij}

where ``w(i)`` is the word token ``i`` belongs to, ``M`` the mask (``True`` = may
attend) and ``W`` the queries that may attend to at least one other token of their word.
A share that no query of the text defines (a text of one token, no word of two tokens)
is NaN, shown as ``–``.

Notebooks 04, 05, 10 and 11.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import nn

from attnlib.course.playgrounds.neuron_view import NeuronView, neuron_view


@dataclass(frozen=True)
class TextReading:
    """Typed text as a model reads it.

    ``tokens`` are what the views label (a space as ``␣``), ``ids`` what the model reads,
    ``notes`` say in words for the learner what was changed and why (empty when nothing
    was). A reading with no ids is not run.
    """

    text: str
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    notes: tuple[str, ...]

    @property
    def readable(self) -> bool:
        """Whether there is anything for the model to read."""
        return bool(self.ids)


@dataclass(frozen=True, eq=False)
class ModelView:
    """Every head of a model on one text, with measured shares per head.

    Layers count from 1 (index ``l - 1`` here), heads and tokens from 0. ``legend`` says
    what each share measures; ``summary`` is a line about the model's output (may be "").

    Shapes:
        weights: ``(L, H, T, T)``, rows are queries; inputs: ``(L, T, C)``, what each
        layer's attention read; mask: ``(T, T)`` bool, ``True`` = may attend; each share:
        ``(L, H)``.
    """

    reading: TextReading
    weights: torch.Tensor
    inputs: torch.Tensor
    mask: torch.Tensor
    shares: dict[str, torch.Tensor]
    legend: str
    summary: str = field(default="")

    @property
    def tokens(self) -> tuple[str, ...]:
        """The ``T`` tokens, as the views label them."""
        return self.reading.tokens


class AttentionSource(Protocol):
    """A model the views can show: reads text, runs once, hands out its attention layers."""

    name: str
    example: str  # a text to try, the text box's placeholder
    num_layers: int
    num_heads: int

    def read(self, typed: str) -> TextReading:
        """The tokens of ``typed`` the model reads, with notes; never raises on a str."""

    def run(self, reading: TextReading) -> ModelView:
        """Run the model once on a readable ``reading``."""

    def attention(self, layer: int) -> nn.Module:
        """The attention module of ``layer`` (1-based), for :func:`neuron_view`."""


@torch.no_grad()
def record_attention(
    model: nn.Module, attentions: Sequence[nn.Module], run: Callable[[], object]
) -> tuple[torch.Tensor, torch.Tensor]:
    """Call ``run()`` once in eval mode and keep what each of ``attentions`` read and weighed.

    Each module must return ``(out, weights)``; a single head's ``(B, T, T)`` weights get
    a head dimension of 1. Only batch item 0 is kept.

    Shapes:
        returns inputs ``(L, T, C)`` (each module's query input) and weights ``(L, H, T, T)``.
    """
    inputs: list[torch.Tensor] = []
    weights: list[torch.Tensor] = []

    def keep(module: nn.Module, args: tuple, kwargs: dict, output: tuple) -> None:
        query = args[0] if args else kwargs["query"]
        inputs.append(query[0].detach())  # (T, C)
        w = output[1][0].detach()  # (H, T, T) or (T, T)
        weights.append(w if w.dim() == 3 else w[None])

    handles = [a.register_forward_hook(keep, with_kwargs=True) for a in attentions]
    was_training = model.training
    model.eval()
    try:
        run()
    finally:
        model.train(was_training)
        for handle in handles:
            handle.remove()
    return torch.stack(inputs), torch.stack(weights)


def previous_share(weights: torch.Tensor) -> torch.Tensor:
    """Mean weight a query puts on the token just before it (queries 2…T); NaN if ``T < 2``.

    Shapes:
        weights: ``(..., T, T)``; returns ``(...)``.
    """
    if weights.shape[-1] < 2:
        return torch.full(weights.shape[:-2], float("nan"), dtype=weights.dtype)
    return weights.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=-1)


def next_share(weights: torch.Tensor) -> torch.Tensor:
    """Mean weight a query puts on the token just after it (queries 1…T−1); NaN if ``T < 2``.

    Shapes:
        weights: ``(..., T, T)``; returns ``(...)``.
    """
    return previous_share(weights.transpose(-2, -1))


def key_share(weights: torch.Tensor, key: int, first_query: int = 0) -> torch.Tensor:
    """Mean weight the queries from ``first_query`` on put on key ``key``; NaN if none.

    Shapes:
        weights: ``(..., T, T)``; returns ``(...)``.
    """
    column = weights[..., first_query:, key]  # (..., T - first_query)
    if column.shape[-1] == 0:
        return torch.full(weights.shape[:-2], float("nan"), dtype=weights.dtype)
    return column.mean(dim=-1)


def same_word_share(
    weights: torch.Tensor, words: Sequence[int], mask: torch.Tensor | None = None
) -> torch.Tensor:
    """Mean weight a query puts on the *other* tokens of its word that it may attend to.

    ``words[i]`` is the word token ``i`` belongs to. Queries with no such token (a word
    of one token, or in a causal model the first token of a word) are left out; NaN when
    no query is left.

    Shapes:
        weights: ``(..., T, T)``; ``words`` has ``T`` entries; mask ``(T, T)`` bool, ``True`` =
        may attend (default: all); returns ``(...)``.
    """
    word = torch.tensor(list(words))  # (T,)
    same = (word[:, None] == word[None, :]) & ~torch.eye(len(word), dtype=torch.bool)  # (T, T)
    if mask is not None:
        same &= mask
    counted = same.any(dim=-1)  # (T,): queries with another token of their word in reach
    if not counted.any():
        return torch.full(weights.shape[:-2], float("nan"), dtype=weights.dtype)
    on_own_word = (weights * same).sum(dim=-1)  # (..., T)
    return on_own_word[..., counted].mean(dim=-1)


@dataclass(frozen=True, eq=False)
class HeadRow:
    """One head of a :class:`ModelView` and one query token's row of it.

    Shapes:
        weights: ``(T, T)``; row: ``(T,)``, the weights of query ``query`` over all keys.
    """

    layer: int
    head: int
    query: int
    tokens: tuple[str, ...]
    weights: torch.Tensor
    row: torch.Tensor
    shares: dict[str, float]
    legend: str


def check_head(view: ModelView, layer: int, head: int, query: int) -> None:
    """Raise a ``ValueError`` naming ``layer`` (1-based), ``head`` or ``query`` if out of range."""
    num_layers, num_heads, length = view.weights.shape[:3]
    for name, value, low, high in (
        ("layer", layer, 1, num_layers), ("head", head, 0, num_heads - 1),
        ("query", query, 0, length - 1),
    ):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{name} must be an int in [{low}, {high}], got {value!r}")


def head_row(view: ModelView, layer: int, head: int, query: int) -> HeadRow:
    """Head ``head`` of layer ``layer`` (1-based) and the row of query token ``query``."""
    check_head(view, layer, head, query)
    weights = view.weights[layer - 1, head]  # (T, T)
    shares = {name: float(value[layer - 1, head]) for name, value in view.shares.items()}
    return HeadRow(
        layer=layer, head=head, query=query, tokens=view.tokens, weights=weights,
        row=weights[query], shares=shares, legend=view.legend,
    )  # fmt: skip


def neuron_at(
    source: AttentionSource, view: ModelView, layer: int, head: int, query: int
) -> NeuronView:
    """:func:`neuron_view` of head ``head`` of layer ``layer`` for query ``query`` of ``view``.

    Computed from what the layer's attention read (``view.inputs``) with ``view.mask``:
    the model does not run again.
    """
    check_head(view, layer, head, query)
    return neuron_view(source.attention(layer), view.inputs[layer - 1], head, query, view.mask)


def _two_digits(value: float) -> str:
    if value != value:  # NaN: undefined for this text
        return "–"
    text = f"{value:.2f}"
    return "1" if text == "1.00" else text.removeprefix("0")


def share_title(shares: Mapping[str, float]) -> str:
    """The shares as a short title, e.g. ``prev .97 CLS .01 word –`` (``–``: undefined)."""
    return " ".join(f"{name} {_two_digits(value)}" for name, value in shares.items())
