"""Notebook 08, Exercise 5: a learner's decoder layer, for the mistakes to be written with.

:class:`Parts` builds the parts the task names; :func:`wired` is the paper's layer with the
steps its keywords name done otherwise; :func:`with_steps` makes a learner's layer class of it,
and :func:`dropout_left_out_of` one that forgets the dropout in one block.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

import attnlib

Tensor = torch.Tensor


class Parts(nn.Module):
    """The parts the task names, built as it asks; the mistakes differ in ``forward``."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


def learner_layer(forward: Any, parts: type[nn.Module] = Parts) -> type[nn.Module]:
    return type("MyDecoderLayer", (parts,), {"forward": forward})


def _mask(kind: str, t: int, s: int, memory_mask: Any) -> Any:
    causal = attnlib.causal_mask(t)
    return {
        "causal": causal,
        "inverted": ~causal,
        "none": None,
        "strict": causal & ~torch.eye(t, dtype=torch.bool),
        "source length": attnlib.causal_mask(s),
        "causal and memory": (
            attnlib.causal_mask(t, s)
            if memory_mask is None
            else attnlib.causal_mask(t, s) & memory_mask
        ),
        "memory": memory_mask,
        "inverted memory": None if memory_mask is None else ~memory_mask,
    }[kind]


def wired(
    self: Any,
    y: Tensor,
    memory: Tensor,
    memory_mask: Any = None,
    *,
    self_mask: str = "causal",
    cross: tuple[str, str] = ("h1", "memory"),  # where the queries and the keys/values come from
    cross_mask: str = "memory",
    block: Any = None,
    norms: tuple[str, str, str] = ("norm_1", "norm_2", "norm_3"),
    cross_module: str = "cross_attention",
    ffn_reads: str = "h2",
    skip_ffn: bool = False,
    need_weights: bool = True,
) -> Any:
    """The paper's decoder layer, with the steps the keywords name done otherwise."""
    t, s = y.shape[1], memory.shape[1]
    n1, n2, n3 = (getattr(self, name) for name in norms)
    add_norm = block or (lambda inp, out, norm: norm(inp + self.dropout(out)))
    mask = _mask(self_mask, t, s, memory_mask)
    a, w_self = self.self_attention(y, mask=mask, need_weights=need_weights)
    h1 = add_norm(y, a, n1)
    source = {"h1": h1, "memory": memory, "y": y}
    mask = _mask(cross_mask, t, s, memory_mask)
    attend = getattr(self, cross_module)
    c, w_cross = attend(source[cross[0]], source[cross[1]], mask=mask, need_weights=need_weights)
    h2 = add_norm(h1, c, n2)
    if skip_ffn:
        return h2, w_self, w_cross
    inner = {"h2": h2, "h1": h1}[ffn_reads]
    return add_norm(h2, self.feed_forward(inner), n3), w_self, w_cross


def with_steps(**how: Any) -> type[nn.Module]:
    """A learner's layer that does the steps ``how`` names otherwise."""
    return learner_layer(
        lambda self, y, memory, memory_mask=None: wired(self, y, memory, memory_mask, **how)
    )


def dropout_left_out_of(which: int) -> type[nn.Module]:
    """A learner's layer that forgets the dropout in block ``which`` (0, 1 or 2) only."""

    def block(self: Any) -> Any:
        count = iter(range(3))
        return lambda i, o, n: n(i + (o if next(count) == which else self.dropout(o)))

    return learner_layer(
        lambda self, y, memory, memory_mask=None: wired(
            self, y, memory, memory_mask, block=block(self)
        )
    )
