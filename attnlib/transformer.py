"""The encoder–decoder Transformer: embeddings, positions, encoder, decoder, output projection.

Notebook 09.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from attnlib._validate import (
    at_the_door,
    inputs_checked,
    require_int,
    require_positive_int,
    require_probability,
)
from attnlib._validate_tensors import require_length, require_token_ids
from attnlib.decoder import Decoder
from attnlib.encoder import Encoder
from attnlib.masks import causal_mask, padding_mask_from_ids
from attnlib.positional import SinusoidalPositionalEncoding


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and switches of a :class:`Transformer`.

    The defaults are a small model that trains on a CPU in a minute; the paper's
    base model is ``d_model=512, num_heads=8, d_ff=2048``, 6 + 6 layers, dropout 0.1,
    post-norm (``norm_first=False``) and one embedding matrix shared three ways
    (``share_embeddings=True, tie_embeddings=True``). ``max_len`` is the longest
    source or target the model accepts.

    ``tie_embeddings`` makes the output projection the target embedding matrix;
    ``share_embeddings`` makes the source embedding the target one, which needs one
    vocabulary for both (``src_vocab_size == tgt_vocab_size``).
    """

    src_vocab_size: int = 64
    tgt_vocab_size: int = 64
    d_model: int = 128
    num_heads: int = 4
    num_encoder_layers: int = 2
    num_decoder_layers: int = 2
    d_ff: int = 512
    dropout: float = 0.1
    max_len: int = 256
    pad_id: int = 0
    norm_first: bool = True
    tie_embeddings: bool = False
    share_embeddings: bool = False

    def __post_init__(self) -> None:
        for name in (
            "src_vocab_size",
            "tgt_vocab_size",
            "d_model",
            "num_heads",
            "num_encoder_layers",
            "num_decoder_layers",
            "d_ff",
            "max_len",
        ):
            require_positive_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})"
            )
        require_probability("dropout", self.dropout)
        require_int("pad_id", self.pad_id)
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id must be a token id of both vocabularies, got {self.pad_id}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs one vocabulary for source and target, got "
                f"src_vocab_size={self.src_vocab_size} and tgt_vocab_size={self.tgt_vocab_size}"
            )


@dataclass(frozen=True)
class AttentionMaps:
    """Every attention weight of one forward pass, one tensor per layer.

    Shapes:
        encoder: ``(B, H, S, S)``; decoder_self: ``(B, H, T, T)``; cross: ``(B, H, T, S)``.
    """

    encoder: list[torch.Tensor]
    decoder_self: list[torch.Tensor]
    cross: list[torch.Tensor]


class Transformer(nn.Module):
    r"""Encoder–decoder Transformer ("Attention Is All You Need"), batch-first.

    .. math::

        \text{memory} = \operatorname{Encoder}(\sqrt{d}\,E_{src}[x] + PE), \qquad
        \text{logits} = \operatorname{Decoder}(\sqrt{d}\,E_{tgt}[y] + PE,\ \text{memory})\,W_{out}

    Padding masks come from ``config.pad_id``; the decoder's causal mask is applied
    inside, so the logits at position t never depend on target tokens after t.
    With ``tie_embeddings`` the output projection shares the target embedding matrix;
    with ``share_embeddings`` as well, so does the source embedding (the paper's section
    3.4: one matrix, used three times).

    Inputs are checked once per call, never in every layer: ``forward`` and
    :meth:`attention_maps` check ``src`` and ``tgt`` (reading each id once) and run the rest
    under :func:`attnlib._validate.inputs_checked`, where :meth:`encode`, :meth:`decode`,
    the encoder, the decoder and their layers trust them. Called on their own, :meth:`encode`
    and :meth:`decode` check their ids, and the encoder and decoder what reaches them.

    Shapes:
        src: ``(B, S)`` token ids; tgt: ``(B, T)`` token ids (the decoder input,
        starting with BOS), ``S, T ≤ max_len``; returns logits ``(B, T, tgt_vocab_size)``.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = config
        c = config
        self.src_embedding = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embedding = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.positions = SinusoidalPositionalEncoding(c.d_model, max_len=c.max_len)
        self.dropout = nn.Dropout(c.dropout)
        layer_args = (c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
        self.encoder = Encoder(c.num_encoder_layers, *layer_args)
        self.decoder = Decoder(c.num_decoder_layers, *layer_args)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        # Embeddings start at std 1/√d, so that after the √d scaling in _embed they have
        # unit scale, like the positional encodings they are added to. (torch's default,
        # std 1, would drown the positions by a factor √d.)
        for embedding in (self.src_embedding, self.tgt_embedding):
            nn.init.normal_(embedding.weight, std=c.d_model**-0.5)
            with torch.no_grad():
                embedding.weight[c.pad_id].zero_()
        if c.share_embeddings:
            self.src_embedding.weight = self.tgt_embedding.weight
        if c.tie_embeddings:
            self.output.weight = self.tgt_embedding.weight

    def _require_ids(self, name: str, ids: object, vocab_size: int) -> torch.Tensor:
        # Runs before the masks are built, so that their errors cannot surface first.
        ids = require_token_ids(name, ids, vocab_size)
        require_length(name, ids, self.config.max_len)
        return ids

    def _embed(self, ids: torch.Tensor, embedding: nn.Embedding) -> torch.Tensor:
        x = embedding(ids) * math.sqrt(self.config.d_model)  # (B, L, C)
        return self.dropout(self.positions(x))

    def encode(
        self, src: torch.Tensor, need_weights: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor | None]]:
        """Encode the source once.

        Returns:
            ``memory (B, S, C)``, the source padding mask ``(B, 1, 1, S)`` and the
            encoder's attention weights per layer (``None`` each with
            ``need_weights=False``, which lets attention use a fused kernel).
        """
        if at_the_door():
            self._require_ids("src", src, self.config.src_vocab_size)
        src_mask = padding_mask_from_ids(src, self.config.pad_id)  # (B, 1, 1, S)
        memory, weights = self.encoder(self._embed(src, self.src_embedding), src_mask, need_weights)
        return memory, src_mask, weights

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None], list[torch.Tensor | None]]:
        """Logits for every target position given the encoded source.

        Returns:
            ``logits (B, T, V)`` and the decoder's self- and cross-attention weights per
            layer (``None`` each with ``need_weights=False``).
        """
        if at_the_door():  # the decoder checks memory and src_mask at its own door
            self._require_decode_inputs(tgt, memory)
        self_mask = causal_mask(tgt.shape[1]).to(tgt.device) & padding_mask_from_ids(
            tgt, self.config.pad_id
        )  # (B, 1, T, T)
        y, self_weights, cross_weights = self.decoder(
            self._embed(tgt, self.tgt_embedding), memory, self_mask, src_mask, need_weights
        )
        return self.output(y), self_weights, cross_weights  # (B, T, V)

    def _require_decode_inputs(self, tgt: object, memory: object) -> None:
        self._require_ids("tgt", tgt, self.config.tgt_vocab_size)
        if isinstance(memory, torch.Tensor) and memory.dim() == 3 and memory.shape[0] != len(tgt):
            raise ValueError(
                f"memory (B, S, C) must come from a source batch of tgt's size B, got memory "
                f"{tuple(memory.shape)} and tgt {tuple(tgt.shape)}"
            )

    def _require_pair(self, src: object, tgt: object) -> None:
        self._require_ids("src", src, self.config.src_vocab_size)
        self._require_ids("tgt", tgt, self.config.tgt_vocab_size)
        if src.shape[0] != tgt.shape[0]:
            raise ValueError(
                f"src (B, S) and tgt (B, T) must hold the same number of sequences B, got "
                f"src {tuple(src.shape)} and tgt {tuple(tgt.shape)}"
            )

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, tgt_vocab_size)`` for teacher-forced decoder input ``tgt``."""
        self._require_pair(src, tgt)
        with inputs_checked():
            memory, src_mask, _ = self.encode(src, need_weights=False)
            logits, _, _ = self.decode(tgt, memory, src_mask, need_weights=False)
        return logits

    @torch.no_grad()
    def attention_maps(self, src: torch.Tensor, tgt: torch.Tensor) -> AttentionMaps:
        """All attention weights for one (src, tgt) pair of batches, for plotting."""
        self._require_pair(src, tgt)
        with inputs_checked():
            memory, src_mask, encoder_weights = self.encode(src)
            _, self_weights, cross_weights = self.decode(tgt, memory, src_mask)
        return AttentionMaps(encoder_weights, self_weights, cross_weights)
