"""Checkers for notebook 11's capstone modules, each alone: LayerNorm, attention, FFN, layer.

Each checker builds the learner's class at a small size in float64, copies the weights
of attnlib's matching module into it by name, and compares outputs on inputs chosen to
expose the usual mistakes (a nearly constant row for the LayerNorm's epsilon, a padded
sequence for the mask, values large enough to tell the two GELUs apart). A departure is
explained by recomputing each mistake of :mod:`attnlib.checks.own_encoder_mistakes` and
naming the one the learner's output matches. :mod:`attnlib.checks.own_minilm` runs the
same comparison on the real model's recorded activations.

Notebook 11.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from attnlib.checks import own_encoder_mistakes as mistakes
from attnlib.checks._departures import Probe, first_departure
from attnlib.checks._framework import CheckResult, fixed_generator, not_done, randn64
from attnlib.encoder import EncoderLayer
from attnlib.feed_forward import FeedForward
from attnlib.multi_head import MultiHeadAttention

Tensor = torch.Tensor
D_MODEL, NUM_HEADS, D_FF, EPS = 8, 2, 16, 1e-5  # small, with 2 heads so that a mix-up shows
UNIT_TOLERANCE = {"atol": 1e-9, "rtol": 1e-7}  # float64 against float64
TOKEN_MASK = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)  # (B, T)


def copy_weights(learner: nn.Module, reference: nn.Module) -> str | None:
    """Copy ``reference``'s parameters into ``learner``'s of the same names; else say why not."""
    ours = dict(learner.named_parameters())
    theirs = dict(reference.named_parameters())
    cls = type(learner).__name__
    if set(ours) != set(theirs):
        extra, lacking = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
        return (
            f"{cls}'s parameters are named {sorted(ours)}; the loader needs exactly "
            f"{sorted(theirs)}"
            + (f" (unknown: {extra})" if extra else "")
            + (f" (missing: {lacking})" if lacking else "")
        )
    for name, tensor in theirs.items():
        if ours[name].shape != tensor.shape:
            return (
                f"{cls}.{name} has shape {tuple(ours[name].shape)}, expected "
                f"{tuple(tensor.shape)} (nn.Linear(a, b) stores a weight of shape (b, a))"
            )
    with torch.no_grad():
        for name, tensor in theirs.items():
            ours[name].copy_(tensor)
    return None


def _check(
    name: str, cls: type, args: tuple, reference: nn.Module, probes: Callable[[nn.Module], list]
) -> CheckResult:
    """Build ``cls(*args)``, give it ``reference``'s weights, and run its probes."""
    call = f"{getattr(cls, '__name__', repr(cls))}{args}"
    try:
        learner = cls(*args)
        if not isinstance(learner, nn.Module):
            return CheckResult(name, False, f"✗ {name}: {call} is not an nn.Module")
        problem = copy_weights(learner, reference)
        if problem is None:
            problem = first_departure(probes(learner.double().eval()), UNIT_TOLERANCE)
    except NotImplementedError as error:
        return not_done(name, cls, error)
    except Exception as error:  # the learner's bug, reported instead of a traceback
        problem = f"{call} raised {type(error).__name__}: {error}"
    if problem is not None:
        return CheckResult(name, False, f"✗ {name}: {problem}")
    return CheckResult(name, True, f"✓ {name} matches attnlib's module on every real token.")


def _reference(module: nn.Module) -> nn.Module:
    """``module`` in float64 with every parameter redrawn from the checkers' fixed generator."""
    g = fixed_generator()
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(0.5 * torch.randn(parameter.shape, generator=g) + 0.1)
    return module.double().eval()


def _inputs(scale: float = 1.0) -> Tensor:
    return scale * randn64(2, 5, D_MODEL, generator=fixed_generator())  # (B, T, C)


def check_own_layer_norm(cls: type) -> CheckResult:
    """Check ``cls(d_model, eps)``: ``(x - mean) / sqrt(var + eps) * weight + bias``."""
    eps = 0.1  # large, and one row nearly constant: where epsilon goes then matters
    reference = _reference(nn.LayerNorm(D_MODEL, eps=eps))
    x = _inputs(2.0) + 1.0
    x[1, 2] = 3.0 + 0.05 * x[1, 2]  # variance about 0.01, well below eps
    expected = reference(x).detach()

    def probes(norm: nn.Module) -> list[Probe]:
        return [
            Probe(
                f"{cls.__name__}(d_model={D_MODEL}, eps={eps})",
                lambda: norm(x.clone()),
                expected,
                lambda: mistakes.layer_norm_variants(reference.weight, reference.bias, eps, x),
                "normalise over the last dimension: mean and population variance of each row, "
                "then scale by self.weight and shift by self.bias",
                rows=torch.ones(2, 5, dtype=torch.bool),
            )
        ]

    return _check(cls.__name__, cls, (D_MODEL, eps), reference, probes)


def attention_probe(where: str, attention: nn.Module, x: Tensor, mask: Tensor, num_heads: int,
                    expected: Tensor) -> Probe:  # fmt: skip
    """The probe of a learner's multi-head attention (also used on MiniLM's layers)."""
    return Probe(
        where,
        lambda: attention(x.clone(), mask.clone()),
        expected,
        lambda: mistakes.attention_variants(attention, x, mask, num_heads),
        "q, k, v = w_q(x), w_k(x), w_v(x) cut into heads (B, h, T, d_k); softmax(q kᵀ / sqrt(d_k)) "
        "over the keys, with the padding keys masked; merge the heads; then w_o",
        rows=mask,
    )


def _weights_of(attention: nn.Module, x: Tensor, mask: Tensor) -> Tensor:
    result = attention(x.clone(), mask.clone())
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError("forward must return a pair (out, weights), as attnlib's attention does")
    return result[1]


def check_own_attention(cls: type) -> CheckResult:
    """Check ``cls(d_model, num_heads)(x, token_mask) -> (out, weights)`` with padding."""
    reference = _reference(MultiHeadAttention(D_MODEL, NUM_HEADS))
    x, mask = _inputs(), TOKEN_MASK
    expected, weights = reference(x, mask=mask[:, None, None, :])

    def probes(attention: nn.Module) -> list[Probe]:
        where = f"{cls.__name__}(d_model={D_MODEL}, num_heads={NUM_HEADS})"
        return [
            attention_probe(where, attention, x, mask, NUM_HEADS, expected.detach()),
            Probe(
                f"{where}, the weights it returns (B, h, T, T),",
                lambda: _weights_of(attention, x, mask).transpose(1, 2),  # (B, T, h, T)
                weights.detach().transpose(1, 2),
                dict,
                "return the softmax weights themselves, one row per query, 0 on padding keys",
                rows=mask,
            ),
        ]

    return _check(cls.__name__, cls, (D_MODEL, NUM_HEADS), reference, probes)


def check_own_feed_forward(cls: type) -> CheckResult:
    """Check ``cls(d_model, d_ff)``: ``linear2(GELU(linear1(x)))`` with the exact, erf GELU."""
    reference = _reference(FeedForward(D_MODEL, D_FF, activation="gelu"))
    x = _inputs(3.0)  # wide enough that the tanh GELU's error shows
    expected = reference(x).detach()

    def probes(ffn: nn.Module) -> list[Probe]:
        return [
            Probe(
                f"{cls.__name__}(d_model={D_MODEL}, d_ff={D_FF})",
                lambda: ffn(x.clone()),
                expected,
                lambda: mistakes.feed_forward_variants(ffn, x),
                "linear2(gelu(linear1(x))) with gelu(a) = 0.5 * a * (1 + erf(a / sqrt(2)))",
                rows=torch.ones(2, 5, dtype=torch.bool),
            )
        ]

    return _check(cls.__name__, cls, (D_MODEL, D_FF), reference, probes)


def layer_probes(
    prefix: str, layer: nn.Module, x: Tensor, mask: Tensor, num_heads: int, eps: float,
    expected: dict[str, Tensor],
) -> list[Probe]:  # fmt: skip
    """Each sub-module of a learner's encoder layer on its reference input, then the layer.

    ``expected`` holds the reference's ``attention``, ``norm_1``, ``feed_forward`` and
    ``output`` for input ``x``, each ``(B, T, C)``.
    """
    a, h, f, y = (expected[k] for k in ("attention", "norm_1", "feed_forward", "output"))

    def named(part: str) -> str:
        return f"{prefix}{part} ({type(layer.get_submodule(part)).__name__})"

    def norm_probe(part: str, inp: Tensor, out: Tensor) -> Probe:
        norm = layer.get_submodule(part)
        return Probe(
            named(part),
            lambda: norm(inp.clone()),
            out,
            lambda: mistakes.layer_norm_variants(norm.weight, norm.bias, eps, inp),
            "(x - mean) / sqrt(var + eps) * weight + bias over the last dimension",
            rows=mask,
        )

    def whole_layer() -> dict[str, Tensor]:
        attend = lambda t: layer.self_attention(t, mask)[0]  # noqa: E731
        return mistakes.layer_variants(attend, layer.feed_forward, layer.norm_1, layer.norm_2, x)

    return [
        attention_probe(named("self_attention"), layer.self_attention, x, mask, num_heads, a),
        norm_probe("norm_1", x + a, h),
        Probe(
            named("feed_forward"),
            lambda: layer.feed_forward(h.clone()),
            f,
            lambda: mistakes.feed_forward_variants(layer.feed_forward, h),
            "linear2(gelu(linear1(x))) with the exact, erf GELU",
            rows=mask,
        ),
        norm_probe("norm_2", h + f, y),
        Probe(
            f"{prefix.rstrip('.') or 'the layer'} ({type(layer).__name__}) as a whole",
            lambda: layer(x.clone(), mask.clone()),
            y,
            whole_layer,
            "h = norm_1(x + self_attention(x, token_mask)); y = norm_2(h + feed_forward(h))",
            rows=mask,
        ),
    ]


def check_own_encoder_layer(cls: type) -> CheckResult:
    """Check ``cls(d_model, num_heads, d_ff, eps)(x, token_mask) -> (y, weights)``, post-norm."""
    reference = _reference(
        EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False, activation="gelu", norm_eps=EPS)
    )
    x, mask = _inputs(), TOKEN_MASK
    with torch.no_grad():
        a = reference.self_attention(x, mask=mask[:, None, None, :])[0]
        h = reference.norm_1(x + a)
        f = reference.feed_forward(h)
        expected = {
            "attention": a,
            "norm_1": h,
            "feed_forward": f,
            "output": reference.norm_2(h + f),
        }

    def probes(layer: nn.Module) -> list[Probe]:
        return layer_probes("", layer, x, mask, NUM_HEADS, EPS, expected)

    return _check(cls.__name__, cls, (D_MODEL, NUM_HEADS, D_FF, EPS), reference, probes)
