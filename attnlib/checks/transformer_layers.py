"""Checkers for notebook 08's build-it exercises: the learner's encoder and decoder layers.

The learner writes the paper's post-norm layers as ``nn.Module``s from attnlib's
attention, feed-forward network and ``nn.LayerNorm``. A checker builds the
learner's layer, loads the weights of a seeded ``attnlib.EncoderLayer`` /
``DecoderLayer`` (``norm_first=False``) into it by name, and compares outputs in
float64 with attnlib's layer and with PyTorch's ``nn.TransformerEncoderLayer`` /
``nn.TransformerDecoderLayer``. When an output differs it recomputes the usual
wrong wirings from the same weights (a missing residual, pre-norm for post-norm,
swapped norms, a causal mask inverted or missing, a padding mask ignored or
inverted, cross-attention reading the wrong tensor) and names the one that matches.

Notebook 08.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from attnlib.checks._framework import CheckResult, compare_outputs, fixed_generator, task_of
from attnlib.checks.layer_wirings import (
    D_FF,
    D_MODEL,
    NUM_HEADS,
    Variants,
    decoder_variants,
    encoder_variants,
    sees_the_future,
    torch_decoder_layer,
    torch_encoder_layer,
)
from attnlib.decoder import DecoderLayer
from attnlib.encoder import EncoderLayer
from attnlib.masks import causal_mask, padding_mask, to_torch_key_padding_mask

Tensor = torch.Tensor


def check_encoder_layer(layer_class: type[nn.Module]) -> CheckResult:
    """Check ``layer_class(d_model, num_heads, d_ff)``: the paper's post-norm encoder layer.

    ``forward(x, mask=None)`` must return ``(y, weights)`` with
    ``h = norm_1(x + self_attention(x, mask))`` and ``y = norm_2(h + feed_forward(h))``.
    """
    name = "encoder_layer"
    reference = _seeded(EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False))
    learner = _build(name, layer_class, reference)
    if isinstance(learner, CheckResult):
        return learner
    torch_layer = torch_encoder_layer(reference)
    g = fixed_generator()
    for description, lengths in [("two sentences, the second padded", [5, 3]), ("one", [4])]:
        x = torch.randn(len(lengths), max(lengths), D_MODEL, generator=g, dtype=torch.float64)
        mask = padding_mask(lengths, max(lengths))  # (B, 1, 1, S), True = real token
        with torch.no_grad():
            expected, expected_weights = reference(x, mask)
            theirs = torch_layer(x, src_key_padding_mask=to_torch_key_padding_mask(mask))
            got = _call(learner, (x.clone(), mask.clone()))
        torch.testing.assert_close(expected, theirs)  # attnlib's layer is PyTorch's
        problem = _compare_result(got, (expected, expected_weights), ("y", "weights"))
        if problem is None:
            continue
        variants = encoder_variants(reference, x, mask) if isinstance(got, tuple) else {}
        return _failure(name, description, problem, got, variants, _ENCODER_HINT)
    return CheckResult(
        name,
        True,
        f"✓ {name} is correct on all 2 cases: it equals attnlib.EncoderLayer(norm_first=False) "
        "and torch.nn.TransformerEncoderLayer (post-norm) with the same weights.",
    )


def check_decoder_layer(layer_class: type[nn.Module]) -> CheckResult:
    """Check ``layer_class(d_model, num_heads, d_ff)``: the paper's post-norm decoder layer.

    ``forward(y, memory, memory_mask=None)`` builds the causal mask itself and returns
    ``(z, self_weights, cross_weights)`` with ``h1 = norm_1(y + self_attention(y, causal))``,
    ``h2 = norm_2(h1 + cross_attention(h1, memory, memory_mask))`` and
    ``z = norm_3(h2 + feed_forward(h2))``.
    """
    name = "decoder_layer"
    reference = _seeded(DecoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False))
    learner = _build(name, layer_class, reference)
    if isinstance(learner, CheckResult):
        return learner
    torch_layer = torch_decoder_layer(reference)
    g = fixed_generator()
    cases = [("target of 4, sources of 5 and 3 (padded)", 4, [5, 3]), ("target of 3", 3, [6])]
    for description, t, lengths in cases:
        y = torch.randn(len(lengths), t, D_MODEL, generator=g, dtype=torch.float64)
        memory = torch.randn(len(lengths), max(lengths), D_MODEL, generator=g, dtype=torch.float64)
        memory_mask = padding_mask(lengths, max(lengths))  # (B, 1, 1, S)
        with torch.no_grad():
            expected = reference(y, memory, causal_mask(t), memory_mask)
            theirs = torch_layer(
                y,
                memory,
                tgt_mask=~causal_mask(t),  # PyTorch: True = may NOT attend
                memory_key_padding_mask=to_torch_key_padding_mask(memory_mask),
            )
            got = _call(learner, (y.clone(), memory.clone(), memory_mask.clone()))
        torch.testing.assert_close(expected[0], theirs)
        problem = _compare_result(got, expected, ("z", "self_weights", "cross_weights"))
        if problem is None:
            continue
        variants = {}
        if isinstance(got, tuple):
            variants = decoder_variants(reference, y, memory, memory_mask)
            if sees_the_future(learner, y, memory, memory_mask):
                # Not one of the usual wirings, but a later token moved an earlier output.
                variants["the self-attention is not causal: changing the last target token "
                         "moved the outputs before it"] = got[0]  # fmt: skip
        return _failure(name, description, problem, got, variants, _DECODER_HINT)
    return CheckResult(
        name,
        True,
        f"✓ {name} is correct on all 2 cases: it equals attnlib.DecoderLayer(norm_first=False) "
        "and torch.nn.TransformerDecoderLayer (post-norm) with the same weights.",
    )


_ENCODER_HINT = (
    "post-norm, as in the paper: h = self.norm_1(x + self.self_attention(x, mask=mask)[0]), "
    "then y = self.norm_2(h + self.feed_forward(h)); return y and the attention weights."
)
_DECODER_HINT = (
    "post-norm: h1 = norm_1(y + self_attention(y, mask=causal_mask(T))), h2 = norm_2(h1 + "
    "cross_attention(h1, memory, mask=memory_mask)), z = norm_3(h2 + feed_forward(h2)). "
    "Cross-attention's queries come from the decoder (h1), its keys and values from memory."
)


def _seeded(layer: nn.Module) -> nn.Module:
    """The reference layer in float64, its LayerNorms given distinct random γ and β.

    With PyTorch's γ = 1, β = 0 two norms are the same function, and swapping them
    would go unnoticed.
    """
    torch.manual_seed(8)
    layer = layer.to(torch.float64).eval()
    g = fixed_generator()
    with torch.no_grad():
        for module in layer.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.copy_(1 + 0.5 * torch.randn(module.weight.shape, generator=g))
                module.bias.copy_(0.5 * torch.randn(module.bias.shape, generator=g))
    return layer


def _build(name: str, layer_class: Any, reference: nn.Module) -> nn.Module | CheckResult:
    """The learner's layer with the reference's weights, or the report of why not."""
    if not isinstance(layer_class, type) or not issubclass(layer_class, nn.Module):
        return CheckResult(
            name, False, f"✗ {name}: expected a class derived from nn.Module, got {layer_class!r}"
        )
    try:
        learner = layer_class(D_MODEL, NUM_HEADS, D_FF)
    except NotImplementedError as error:
        task = str(error) or task_of(layer_class)
        return CheckResult(
            name,
            False,
            f"… {name}: not done yet" + (f" ({task})" if task else "") + ". Fill in the class "
            "above, run its cell, then run this check again.",
            done=False,
        )
    except Exception as error:  # the learner's bug, reported instead of a traceback
        return CheckResult(
            name,
            False,
            f"✗ {name}: building {layer_class.__name__}({D_MODEL}, {NUM_HEADS}, {D_FF}) raised "
            f"{type(error).__name__}: {error}",
        )
    expected = dict(reference.state_dict())
    got = dict(learner.state_dict())
    missing = sorted(set(expected) - set(got))
    unexpected = sorted(set(got) - set(expected))
    if missing or unexpected:
        differences = "; ".join(
            f"{what} {keys}"
            for what, keys in (("missing", missing), ("unexpected", unexpected))
            if keys
        )
        return CheckResult(
            name,
            False,
            f"✗ {name}: the parameter names differ from attnlib's ({differences}). "
            f"Name the submodules {_submodule_names(reference)}.",
        )
    for key, tensor in expected.items():
        if tuple(got[key].shape) != tuple(tensor.shape):
            return CheckResult(
                name,
                False,
                f"✗ {name}: {key} has shape {tuple(got[key].shape)}, "
                f"expected {tuple(tensor.shape)}",
            )
    learner = learner.to(torch.float64).eval()
    learner.load_state_dict(expected)
    return learner


def _submodule_names(reference: nn.Module) -> str:
    return ", ".join(
        name
        for name, child in reference.named_children()
        if next(child.parameters(), None) is not None
    )


def _call(learner: nn.Module, args: tuple[Tensor, ...]) -> object:
    try:
        return learner(*args)
    except Exception as error:  # reported with the case below
        return error


def _compare_result(
    got: object, expected: tuple[Tensor, ...], names: tuple[str, ...]
) -> str | None:
    if isinstance(got, Exception):
        return f"forward raised {type(got).__name__}: {got}"
    if not isinstance(got, tuple) or len(got) != len(expected):
        return f"forward should return a tuple ({', '.join(names)}), got {type(got).__name__}"
    for label, got_part, expected_part in zip(names, got, expected, strict=True):
        problem = compare_outputs(got_part, expected_part, label, atol=1e-7, rtol=1e-6)
        if problem is not None:
            return problem
    return None


def _failure(
    name: str, description: str, problem: str, got: object, variants: Variants, hint: str
) -> CheckResult:
    if isinstance(got, tuple) and isinstance(got[0], Tensor):
        for mistake, output in variants.items():
            if output.shape == got[0].shape and torch.allclose(got[0].double(), output, atol=1e-7):
                return CheckResult(
                    name, False, f"✗ {name}, case '{description}': {mistake}.\n  hint: {hint}"
                )
    return CheckResult(name, False, f"✗ {name}, case '{description}': {problem}\n  hint: {hint}")
