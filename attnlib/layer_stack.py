"""A stack of Transformer layers: the encoder's and the decoder's, and BERT's hidden states.

Notebook 08.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import nn

from attnlib._validate_attention import require_attention_mask
from attnlib._validate_tensors import require_dtype_of, require_width


@dataclass
class StackRun:
    """What one pass through a :class:`LayerStack` computed.

    Shapes:
        output: ``(B, T, C)``, after the final LayerNorm (pre-norm stacks);
        hidden_states: ``L + 1`` tensors ``(B, T, C)``, the input then each layer's output;
        weights: one list per attention of a layer (the encoder has one, self-attention;
        the decoder two, self- and cross-attention), each holding ``L`` tensors
        ``(B, H, T, T_k)``, or ``None`` each when no weights were asked for.
    """

    output: torch.Tensor
    hidden_states: list[torch.Tensor]
    weights: list[list[torch.Tensor | None]]


class LayerStack(nn.Module):
    r"""Layers applied in turn, then, in a pre-norm stack, one final LayerNorm.

    .. math::

        x_0 = x, \qquad x_\ell = \operatorname{Layer}_\ell(x_{\ell - 1}, \text{context}),
        \qquad y = \operatorname{LN}(x_L) \text{ (pre-norm) or } x_L \text{ (post-norm)}

    A pre-norm layer adds its sublayers' outputs to a skip path that nothing normalises,
    so the stack normalises its output once; a post-norm layer already ends in a
    LayerNorm. Each layer takes ``(x, *context, need_weights=...)`` and returns
    ``(x, *weights)``: :class:`~attnlib.encoder.Encoder` and
    :class:`~attnlib.decoder.Decoder` are this stack with their own layers. Their
    ``forward`` checks its inputs once (:meth:`require_input`, :meth:`require_mask`) and
    runs the layers under :func:`attnlib._validate.inputs_checked`; :meth:`run` checks
    nothing, for callers that checked (BERT).

    Shapes:
        x: ``(B, T, d_model)``; see :class:`StackRun` for what :meth:`run` returns.
    """

    def __init__(
        self,
        layers: Iterable[nn.Module],
        d_model: int,
        num_heads: int,
        norm_first: bool,
        norm_eps: float,
    ) -> None:
        super().__init__()
        self.d_model, self.num_heads = d_model, num_heads
        self.layers = nn.ModuleList(layers)
        self.final_norm = nn.LayerNorm(d_model, eps=norm_eps) if norm_first else nn.Identity()

    def require_input(self, name: str, x: object) -> torch.Tensor:
        """``x`` as ``(B, T, d_model)`` in the weights' dtype, before a LayerNorm fails on it."""
        require_width(name, x, self.d_model, ndim=3)
        require_dtype_of(name, x, next(self.parameters()))
        return x

    def require_mask(
        self, name: str, mask: object, queries: torch.Tensor, keys: torch.Tensor
    ) -> None:
        """``None`` or a bool mask that broadcasts to the scores ``(B, H, T_q, T_k)``."""
        if mask is not None:
            scores = (queries.shape[0], self.num_heads, queries.shape[1], keys.shape[1])
            require_attention_mask(mask, torch.Size(scores), name)

    def run(self, x: torch.Tensor, *context: object, need_weights: bool = True) -> StackRun:
        """Every layer in turn, keeping each one's output and attention weights."""
        hidden_states, weights = [x], []
        for layer in self.layers:
            x, *layer_weights = layer(x, *context, need_weights=need_weights)  # (B, T, C)
            hidden_states.append(x)
            weights.append(layer_weights)
        per_attention = [list(kind) for kind in zip(*weights, strict=True)]
        return StackRun(self.final_norm(x), hidden_states, per_attention)
