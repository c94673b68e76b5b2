"""Notebook 11, Exercise 7's last stage: six of the learner's layers run MiniLM's weights.

Each of the six layers is built at MiniLM's size in float32, loaded with that layer's published
weights, and each of its sub-modules is fed the input the real model's same sub-module got
(recorded from transformers in ``attnlib/data/minilm_activations.npz``): the self-attention,
``norm_1``, the feed-forward network, ``norm_2``, then the layer as a whole. The first output
that departs is named. Then the six layers run in a row from the embeddings, and the mean-pooled,
normalised result must be sentence-transformers' embedding to within 1e-5.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch
from torch import nn

from attnlib.bert import BertConfig
from attnlib.course import own_encoder
from attnlib.formats.minilm import MiniLMActivations, load_minilm_activations
from attnlib.sentence_encoder import mean_pool

Tensor = torch.Tensor

# float32 against the recorded float32 activations: a right module stays within about 4e-6;
# the smallest mistake the small cases miss would depart by far more.
ATOL, RTOL = 5e-5, 1e-5
EMBEDDING_TOLERANCE = 1e-5  # sentence-transformers' embeddings, as section 2 asked of attnlib


@cache
def _recorded() -> MiniLMActivations:
    return load_minilm_activations()


@cache
def _layer_names() -> dict[str, str]:
    """The capstone's parameter names (``layers.<i>.…``) and the checkpoint's for each."""
    return own_encoder.huggingface_names(BertConfig())


def layer_state(i: int) -> dict[str, Tensor]:
    """MiniLM's layer ``i`` (from 0) by the names of the learner's ``MyEncoderLayer``."""
    state, prefix = own_encoder.minilm_state(), f"layers.{i}."
    return {
        ours.removeprefix(prefix): state[theirs]
        for ours, theirs in _layer_names().items()
        if ours.startswith(prefix)
    }


def _departure(got: object, expected: Tensor, rows: Tensor) -> str | None:
    if isinstance(got, (tuple, list)) and got:
        got = got[0]
    if not isinstance(got, Tensor):
        return f"it returned a {type(got).__name__}, not a tensor"
    if tuple(got.shape) != tuple(expected.shape):
        return f"it returned shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    mine, theirs = got.detach().float()[rows], expected[rows]
    if not bool(torch.isfinite(mine).all()):
        return "it returned NaN or an infinite value on a real token"
    if bool(torch.isclose(mine, theirs, atol=ATOL, rtol=RTOL).all()):
        return None
    largest = (mine - theirs).abs().max().item()
    return (
        f"its output departs from the real model's by up to {largest:.2g} on real tokens "
        f"(the tolerance is {ATOL:g}). Your classes pass the small float64 cases, so look for "
        "what changes at MiniLM's size: float32 arithmetic, 12 heads of 32, eps = 1e-12"
    )


def _probes(layer: nn.Module, i: int, x: Tensor) -> list[tuple[str, Callable[[], object], Tensor]]:
    r, mask = _recorded(), _recorded().token_mask
    a, h, f, y = r.attention[i], r.norm_1[i], r.feed_forward[i], r.output[i]
    return [
        ("self_attention", lambda: layer.self_attention(x.clone(), mask), a),
        ("norm_1", lambda: layer.norm_1(x + a), h),
        ("feed_forward", lambda: layer.feed_forward(h.clone()), f),
        ("norm_2", lambda: layer.norm_2(h + f), y),
        ("", lambda: layer(x.clone(), mask), y),
    ]


def minilm_problem(cls: Callable[..., nn.Module]) -> tuple[str, str] | None:
    """``(where, problem)`` for the first place the learner's layers depart from MiniLM, else
    None. The learner's class has passed the small cases (its names and signatures are right).
    """
    config, recorded = BertConfig(), _recorded()
    mask, x = recorded.token_mask, recorded.embeddings
    layers = []
    for i in range(config.num_layers):
        place = f"MiniLM's layer {i + 1} with its published weights"
        try:
            layer = cls(config.d_model, config.num_heads, config.d_ff, config.norm_eps).float()
            missing = set(layer_state(i)) ^ {n for n, _ in layer.named_parameters()}
            if missing:
                return place, f"its parameters do not match MiniLM's: {sorted(missing)}"
            with torch.no_grad():
                for name, parameter in layer.named_parameters():
                    parameter.copy_(layer_state(i)[name])
            layer.eval()
        except Exception as error:  # the learner's bug, reported instead of a traceback
            return place, f"building it raised {type(error).__name__}: {error}"
        for part, run, expected in _probes(layer, i, x):
            kind = type(layer.get_submodule(part)).__name__
            where = f"{place}, its {part} ({kind})" if part else f"{place}, as a whole"
            try:
                with torch.no_grad():
                    problem = _departure(run(), expected, mask)
            except Exception as error:
                problem = f"it raised {type(error).__name__}: {error}"
            if problem is not None:
                return f"{where}, on the input the real model gave it", problem
        layers.append(layer)
        x = recorded.output[i]
    states = recorded.embeddings
    with torch.no_grad():
        for layer in layers:
            states = layer(states, mask)[0]  # (B, T, C)
        pooled = nn.functional.normalize(mean_pool(states, mask), dim=-1)  # (B, C)
    gap = (pooled - recorded.sentence_embeddings).abs().max().item()
    if gap > EMBEDDING_TOLERANCE:
        return (
            "the six layers in a row, from MiniLM's embeddings",
            f"the sentence embeddings differ from sentence-transformers' by up to {gap:.2g}",
        )
    return None


PASSED = (
    f"six of them with MiniLM's weights reproduce the real model (every sub-module within "
    f"{ATOL:g} of its recorded activations, the sentence embeddings within "
    f"{EMBEDDING_TOLERANCE:g} of sentence-transformers')"
)
