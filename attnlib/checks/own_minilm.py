"""The capstone's checker: the learner's modules running all-MiniLM-L6-v2, layer by layer.

:func:`check_own_minilm` builds the learner's ``MyBert``, loads MiniLM's weights into it
with :func:`attnlib.course.own_encoder.load_minilm_into`, and feeds each sub-module the
input the real model gave the same sub-module (recorded from transformers in
``attnlib/data/minilm_activations.npz``): the embedding LayerNorm, then in each layer
the self-attention, ``norm_1``, the feed-forward network, ``norm_2`` and the wiring of
the layer as a whole. The first output that departs is named with its likely cause.
Then the whole model runs as it is, and its sentence embeddings must be
sentence-transformers' to within 1e-5. Last, the learner's classes are tested alone at
a small size, which finds what MiniLM's numbers cannot show (its LayerNorm epsilon,
1e-12, is too small for a misplaced one to matter).

Notebook 11.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib.bert import BertConfig
from attnlib.checks import own_encoder_mistakes as mistakes
from attnlib.checks._departures import Probe, first_departure
from attnlib.checks._framework import CheckResult, not_done
from attnlib.checks.own_encoder import (
    check_own_attention,
    check_own_encoder_layer,
    check_own_feed_forward,
    check_own_layer_norm,
    layer_probes,
)
from attnlib.course.own_encoder import OwnModelError, hidden_states, load_minilm_into
from attnlib.formats.minilm import MiniLMActivations, load_minilm_activations
from attnlib.sentence_encoder import mean_pool

# float32 against the recorded float32 activations: a right module stays within about
# 4e-6 here; the smallest named mistake (the tanh GELU) departs by about 1.5e-3.
MINILM_TOLERANCE = {"atol": 5e-5, "rtol": 1e-5}
EMBEDDING_TOLERANCE = 1e-5  # the issue's bar: sentence-transformers' embedding to 1e-5


def _probes(model: nn.Module, recorded: MiniLMActivations, config: BertConfig) -> list[Probe]:
    ids, mask = recorded.input_ids, recorded.token_mask
    positions = torch.arange(ids.shape[1])  # (T,)
    with torch.no_grad():
        summed = model.token(ids) + model.position(positions) + model.segment(torch.zeros_like(ids))
    norm = model.embedding_norm
    probes = [
        Probe(
            f"embedding_norm ({type(norm).__name__})",
            lambda: norm(summed.clone()),
            recorded.embeddings,
            lambda: mistakes.layer_norm_variants(norm.weight, norm.bias, config.norm_eps, summed),
            "(x - mean) / sqrt(var + eps) * weight + bias over the last dimension",
            rows=mask,
        )
    ]
    x = recorded.embeddings
    for i, layer in enumerate(model.layers):
        expected = {
            part: getattr(recorded, part)[i]
            for part in ("attention", "norm_1", "feed_forward", "output")
        }
        probes += layer_probes(
            f"layers.{i}.", layer, x, mask, config.num_heads, config.norm_eps, expected
        )
        x = recorded.output[i]
    return probes


def _whole_model(model: nn.Module, recorded: MiniLMActivations, config: BertConfig) -> str | None:
    """The model run as it is: each layer's output, then the pooled sentence embeddings."""
    ids, mask = recorded.input_ids, recorded.token_mask
    with torch.no_grad():
        states = hidden_states(model, ids, mask, config)  # (L + 1, B, T, C)
    reference = torch.cat([recorded.embeddings[None], recorded.output])  # (L + 1, B, T, C)
    for i in range(len(states)):
        got, expected = states[i][mask], reference[i][mask]
        if not torch.isclose(got, expected, **MINILM_TOLERANCE).all():
            place = "the embedding layer" if i == 0 else f"layer {i}"
            return (
                f"{type(model).__name__}.forward: the output of {place} departs, although each "
                "module gives the right output for the right input.\n  hint: embed with token + "
                "position + segment, normalise with embedding_norm, then feed each layer the "
                "previous layer's output and the token_mask; stack the embeddings and every "
                "layer's output"
            )
    embeddings = nn.functional.normalize(mean_pool(states[-1], mask), dim=-1)  # (B, C)
    largest = (embeddings - recorded.sentence_embeddings).abs().max().item()
    if largest > EMBEDDING_TOLERANCE:
        return f"the sentence embeddings differ from sentence-transformers' by {largest:.2g}"
    return None


def check_own_minilm(bert_cls: type) -> CheckResult:
    """Check that ``bert_cls(BertConfig())``, loaded with MiniLM's weights, is MiniLM.

    Shapes:
        ``bert_cls(config)(input_ids (B, T), token_mask (B, T) bool, True = real token)``
        returns ``(L + 1, B, T, C)``.
    """
    name = getattr(bert_cls, "__name__", repr(bert_cls))
    config = BertConfig()
    try:
        model = load_minilm_into(bert_cls(config))
        recorded = load_minilm_activations()
        problem = first_departure(_probes(model, recorded, config), MINILM_TOLERANCE)
        if problem is not None:
            return CheckResult(
                name, False, f"✗ {name}: the first module to depart from MiniLM is {problem}"
            )
        problem = _whole_model(model, recorded, config)
    except NotImplementedError as error:
        return not_done(name, bert_cls, error)
    except OwnModelError as error:
        problem = str(error)
    except Exception as error:  # the learner's bug, reported instead of a traceback
        problem = f"building, loading or running it raised {type(error).__name__}: {error}"
    if problem is not None:
        return CheckResult(name, False, f"✗ {name}: {problem}")
    layer = model.layers[0]
    modules = {
        check_own_layer_norm: type(model.embedding_norm),
        check_own_attention: type(layer.self_attention),
        check_own_feed_forward: type(layer.feed_forward),
        check_own_encoder_layer: type(layer),
    }
    for check, cls in modules.items():
        alone = check(cls)
        if not alone:
            return CheckResult(
                name,
                False,
                f"✗ {name} reproduces MiniLM's activations, but {cls.__name__} fails when tested "
                f"alone (MiniLM's sizes and its eps of {config.norm_eps:g} hide it):\n"
                + alone.message,
            )
    return CheckResult(
        name,
        True,
        f"✓ {name}, your modules with MiniLM's weights, matches the real model: the embedding "
        f"norm and {config.num_layers} layers × 5 sub-modules within "
        f"{MINILM_TOLERANCE['atol']:g} of its recorded activations, and sentence embeddings "
        f"within {EMBEDDING_TOLERANCE:g} of sentence-transformers'.",
    )
