"""BERT, the encoder-only Transformer, built from attnlib's own layers.

BERT is the course's encoder stack (notebook 08) with three choices fixed:
post-norm residual blocks, GELU in the feed-forward network, and learned absolute
position embeddings added to the token embeddings together with a "segment"
(token-type) embedding. Nothing is causal: every token attends to every real token
on both sides. :meth:`BertModel.load_huggingface_weights` takes the weights of any
BERT-style checkpoint by their published names, so a pretrained model runs in these
modules unchanged.

Notebook 11.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn

from attnlib._validate import (
    inputs_checked,
    require_positive,
    require_positive_int,
    require_probability,
)
from attnlib._validate_attention import require_bool_mask
from attnlib._validate_tensors import require_length, require_token_ids
from attnlib.encoder import Encoder
from attnlib.masks import padding_mask_from_token_mask


@dataclass(frozen=True)
class BertConfig:
    """Sizes of a BERT encoder, in the course's names (defaults: all-MiniLM-L6-v2).

    ``max_len`` is the longest input it accepts: the number of learned positions
    (Hugging Face's ``max_position_embeddings``).
    """

    vocab_size: int = 30522
    d_model: int = 384
    num_heads: int = 12
    num_layers: int = 6
    d_ff: int = 1536
    max_len: int = 512
    type_vocab_size: int = 2
    norm_eps: float = 1e-12
    dropout: float = 0.1

    def __post_init__(self) -> None:
        for name in (
            "vocab_size", "d_model", "num_heads", "num_layers", "d_ff", "max_len", "type_vocab_size"
        ):  # fmt: skip
            require_positive_int(name, getattr(self, name))
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model ({self.d_model}) must be divisible by num_heads ({self.num_heads})"
            )
        require_positive("norm_eps", self.norm_eps)
        require_probability("dropout", self.dropout)

    @property
    def d_head(self) -> int:
        """Width of one head's queries, keys and values, ``d_k = d_model / num_heads``."""
        return self.d_model // self.num_heads

    @classmethod
    def from_huggingface(cls, config: Mapping[str, object]) -> BertConfig:
        """Translate a Hugging Face ``config.json`` of a BERT model into the course's names.

        Refuses configurations these modules would compute differently (another
        activation, relative positions, a non-BERT model type).
        """
        expected = {
            "model_type": "bert",
            "hidden_act": "gelu",
            "position_embedding_type": "absolute",
        }
        for key, value in expected.items():
            if config.get(key, value) != value:
                raise ValueError(
                    f"config {key}={config.get(key)!r} is not supported, need {value!r}"
                )
        return cls(
            vocab_size=int(config["vocab_size"]),  # type: ignore[arg-type]
            d_model=int(config["hidden_size"]),  # type: ignore[arg-type]
            num_heads=int(config["num_attention_heads"]),  # type: ignore[arg-type]
            num_layers=int(config["num_hidden_layers"]),  # type: ignore[arg-type]
            d_ff=int(config["intermediate_size"]),  # type: ignore[arg-type]
            max_len=int(config["max_position_embeddings"]),  # type: ignore[arg-type]
            type_vocab_size=int(config["type_vocab_size"]),  # type: ignore[arg-type]
            norm_eps=float(config["layer_norm_eps"]),  # type: ignore[arg-type]
            dropout=float(config.get("hidden_dropout_prob", 0.1)),  # type: ignore[arg-type]
        )


class BertEmbeddings(nn.Module):
    r"""Token, position and segment embeddings, summed and normalised.

    .. math::

        e_t = \operatorname{LN}(E_{\text{token}}[x_t] + E_{\text{pos}}[t] + E_{\text{segment}}[s_t])

    Shapes:
        input_ids, token_type_ids: ``(B, T)`` long with ``T ≤ max_len``;
        returns ``(B, T, d_model)``.
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.token = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Embedding(config.max_len, config.d_model)
        self.segment = nn.Embedding(config.type_vocab_size, config.d_model)
        self.norm = nn.LayerNorm(config.d_model, eps=config.norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Embed each token at its position."""
        length = input_ids.shape[1]
        positions = torch.arange(length, device=input_ids.device)  # (T,)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        summed = self.token(input_ids) + self.position(positions) + self.segment(token_type_ids)
        return self.dropout(self.norm(summed))  # (B, T, C)


@dataclass
class BertOutput:
    """Everything a forward pass computes.

    Shapes:
        last_hidden_state: ``(B, T, C)``;
        hidden_states: ``(L + 1, B, T, C)``, index 0 the embeddings and ``l`` the output
        of layer ``l``;
        attentions: ``(L, B, H, T, T)``, the weights of layer ``l + 1`` at index ``l``
        (rows are queries, columns keys; zero on padding keys); ``None`` when the
        forward pass was asked for no weights.
    """

    last_hidden_state: torch.Tensor
    hidden_states: torch.Tensor
    attentions: torch.Tensor | None


class BertModel(nn.Module):
    """A BERT encoder: :class:`BertEmbeddings`, then attnlib's post-norm GELU :class:`Encoder`.

    Shapes:
        input_ids: ``(B, T)`` token ids, ``T ≤ max_len``; attention_mask: ``(B, T)`` bool,
        ``True`` = a real token (padding keys get no attention); token_type_ids: ``(B, T)``
        segment ids (default all 0); returns a :class:`BertOutput`. With
        ``need_weights=False`` attention runs in PyTorch's fused kernel and
        ``attentions`` is ``None``.
    """

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = Encoder(
            num_layers=config.num_layers,
            d_model=config.d_model,
            num_heads=config.num_heads,
            d_ff=config.d_ff,
            dropout=config.dropout,
            norm_first=False,
            activation="gelu",
            norm_eps=config.norm_eps,
        )

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> BertOutput:
        """Embed, then run every encoder layer, keeping each layer's output and weights.

        The inputs are checked once, here; the embeddings and the encoder's layers trust them.
        """
        input_ids = require_token_ids("input_ids", input_ids, self.config.vocab_size)
        require_length("input_ids", input_ids, self.config.max_len)
        if token_type_ids is not None:
            require_token_ids("token_type_ids", token_type_ids, self.config.type_vocab_size)
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids, dtype=torch.bool)
        require_bool_mask("attention_mask", attention_mask)
        for name, other in (("attention_mask", attention_mask), ("token_type_ids", token_type_ids)):
            if other is not None and other.shape != input_ids.shape:
                raise ValueError(
                    f"{name} must have the shape of input_ids {tuple(input_ids.shape)}, "
                    f"got {tuple(other.shape)}"
                )
        keys_mask = padding_mask_from_token_mask(attention_mask)  # (B, 1, 1, T), True = real
        with inputs_checked():
            x = self.embeddings(input_ids, token_type_ids)  # (B, T, C)
            run = self.encoder.run(x, keys_mask, need_weights=need_weights)
        (attentions,) = run.weights  # L of (B, H, T, T)
        return BertOutput(
            last_hidden_state=run.output,  # post-norm: the stack adds no final norm
            hidden_states=torch.stack(run.hidden_states),  # (L + 1, B, T, C)
            attentions=torch.stack(attentions) if need_weights else None,  # (L, B, H, T, T)
        )

    def parameter_names_in_huggingface(self) -> dict[str, str]:
        """Map each of this model's parameter names to its name in a Hugging Face checkpoint."""
        names = {
            "embeddings.token.weight": "embeddings.word_embeddings.weight",
            "embeddings.position.weight": "embeddings.position_embeddings.weight",
            "embeddings.segment.weight": "embeddings.token_type_embeddings.weight",
        }
        for kind in ("weight", "bias"):
            names[f"embeddings.norm.{kind}"] = f"embeddings.LayerNorm.{kind}"
            for i in range(self.config.num_layers):
                ours, theirs = f"encoder.layers.{i}", f"encoder.layer.{i}"
                pairs = {
                    "self_attention.w_q": "attention.self.query",
                    "self_attention.w_k": "attention.self.key",
                    "self_attention.w_v": "attention.self.value",
                    "self_attention.w_o": "attention.output.dense",
                    "norm_1": "attention.output.LayerNorm",
                    "feed_forward.linear1": "intermediate.dense",
                    "feed_forward.linear2": "output.dense",
                    "norm_2": "output.LayerNorm",
                }
                for our_part, their_part in pairs.items():
                    names[f"{ours}.{our_part}.{kind}"] = f"{theirs}.{their_part}.{kind}"
        return names

    def load_huggingface_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Copy a Hugging Face BERT checkpoint's tensors into this model.

        Every parameter must be found with the right shape. The checkpoint's
        ``pooler.*`` (a head for next-sentence prediction that sentence embeddings do not
        use) and ``embeddings.position_ids`` (a constant ``arange``) are ignored; any
        other tensor left over is an error, since it would mean a part of the model was
        silently dropped.
        """
        state = {name.removeprefix("bert."): tensor for name, tensor in state.items()}
        names = self.parameter_names_in_huggingface()
        ours = dict(self.named_parameters())
        if set(names) != set(ours):  # guards the table above against module renames
            raise RuntimeError(f"name table out of date: {sorted(set(names) ^ set(ours))}")
        missing = [theirs for theirs in names.values() if theirs not in state]
        if missing:
            raise KeyError(f"the checkpoint lacks {len(missing)} tensors, e.g. {missing[:3]}")
        ignored = {"embeddings.position_ids"}
        leftover = [
            name
            for name in set(state) - set(names.values()) - ignored
            if not name.startswith("pooler.")
        ]
        if leftover:
            raise KeyError(f"the checkpoint has tensors this model has no place for: {leftover}")
        with torch.no_grad():
            for our_name, their_name in names.items():
                source = state[their_name]
                if source.shape != ours[our_name].shape:
                    raise ValueError(
                        f"{their_name} has shape {tuple(source.shape)}, {our_name} needs "
                        f"{tuple(ours[our_name].shape)}"
                    )
                ours[our_name].copy_(source)

    def num_parameters(self) -> int:
        """Number of trainable numbers in the model."""
        return sum(math.prod(p.shape) for p in self.parameters())
