"""Notebook 11, Exercise 7: ``MyEncoderLayer``, BERT's post-norm layer from the learner's parts.

The check runs in three stages. First, the class of each part the layer builds (its
``self_attention``, ``norm_1``, ``feed_forward`` and ``norm_2``) goes through its own exercise's
cases, so that a mistake in Exercises 4–6 is named there and not blamed on the wiring. Then the
layer runs on small float64 cases (post-norm against attnlib's :class:`attnlib.EncoderLayer`,
with an eps of 0.5 and of 1e-12, padding, three and four heads), and a wiring mistake is named.
Last, six of the learner's layers run MiniLM's weights (:mod:`.minilm_layers`). The usual
wiring mistakes are in :mod:`.encoder_layer_mistakes`.
"""

from __future__ import annotations

from types import ModuleType

import torch
from torch import nn

import attnlib
from attnlib.checks._calls import CallWatch, Forbidden
from attnlib.checks._exercise import Exercise, checker_of, register
from attnlib.checks._framework import CheckResult, fixed_generator
from attnlib.checks.engine.classes import (
    ModuleCase,
    Verdict,
    check_module,
    random_state,
    real_rows,
    report,
    task_of_class,
)
from attnlib.checks.nb11_pretrained import attention, feed_forward, layer_norm, minilm_layers
from attnlib.checks.nb11_pretrained.encoder_layer_mistakes import MISTAKES
from attnlib.course import own_encoder

Tensor = torch.Tensor

ENCODER_LAYER = register(
    Exercise(
        id="ex7_my_encoder_layer",
        notebook="11",
        number=7,
        name="MyEncoderLayer",
        hints=(
            "BERT's layer is post-norm, as the paper's (notebook 08): each sublayer's output is "
            "added to that sublayer's own input, and the sum is normalised. The attention "
            "block comes first; the feed-forward block works on the attention block's result.",
            "Each of the four parts is built once in __init__ from your classes, with the "
            "layer's sizes and its eps, under the names the loader reads. In forward the "
            "attention gives a pair: its output joins the residual, its weights are returned "
            "with the layer's output.",
            "forward: run the self-attention on x with the token mask; normalise (norm_1) x "
            "plus its output to get h; normalise (norm_2) h plus the feed-forward network of h "
            "to get y; return y and the attention weights.",
        ),
    )
)

FORBIDDEN = (
    layer_norm.FORBIDDEN
    | attention.FORBIDDEN
    | feed_forward.FORBIDDEN
    | Forbidden(
        python={
            attnlib.EncoderLayer: "attnlib.EncoderLayer",
            attnlib.Encoder: "attnlib.Encoder",
            attnlib.Residual: "attnlib.Residual",
            attnlib.residual_connection: "attnlib.residual_connection",
            nn.TransformerEncoderLayer: "torch.nn.TransformerEncoderLayer",
            nn.TransformerEncoder: "torch.nn.TransformerEncoder",
        },
        torch={"_transformer_encoder_layer_fwd": "torch.nn.TransformerEncoderLayer"},
        paths={
            f"transformers.models.bert.modeling_bert:{name}": f"transformers' {name}"
            for name in ("BertLayer", "BertEncoder")
        },
    )
)

# The parts the layer builds, and the exercise each part's class must pass first.
PARTS: tuple[tuple[str, ModuleType, int], ...] = (
    ("self_attention", attention, 5),
    ("norm_1", layer_norm, 4),
    ("feed_forward", feed_forward, 6),
    ("norm_2", layer_norm, 4),
)


def reference_case(
    description: str, x: Tensor, token_mask: Tensor, sizes: tuple[int, int, int, float],
    g: torch.Generator,
) -> ModuleCase:  # fmt: skip
    """A case whose expected (y, weights) are attnlib's post-norm GELU layer's, in float64."""
    reference = own_encoder.EncoderLayer(*sizes)
    state = random_state(reference, g)
    with torch.no_grad():
        expected = reference(x, token_mask)
    keep = real_rows(token_mask)
    return ModuleCase(description, sizes, state, (x, token_mask), keep(expected), keep)


def cases() -> list[ModuleCase]:
    g = fixed_generator()
    padded = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    short = torch.tensor([[1, 1, 1], [1, 0, 0]], dtype=torch.bool)
    randn = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    return [
        reference_case("d_model 8, 2 heads, d_ff 16, eps 1e-5, the second sentence padded",
                       randn(2, 5, 8), padded, (8, 2, 16, 1e-5), g),
        reference_case("d_model 12, 3 heads, d_ff 20, eps 0.5, no padding",
                       randn(1, 4, 12), torch.ones(1, 4, dtype=torch.bool), (12, 3, 20, 0.5), g),
        reference_case("d_model 8, 4 heads, d_ff 8, eps 1e-12, a sentence of one real token",
                       randn(2, 3, 8), short, (8, 4, 8, 1e-12), g),
    ]  # fmt: skip


def _parts_verdict(cls: object) -> tuple[Verdict, Exercise | None] | None:
    """The first part whose class fails its own exercise, as a verdict, and that exercise."""
    if not isinstance(cls, type):
        return None
    watch = CallWatch(FORBIDDEN)
    try:
        with watch:
            layer = cls(8, 2, 16, 1e-5)
    except NotImplementedError as error:
        return Verdict("not_done", task=str(error) or task_of_class(cls)), None
    except Exception:  # the cases report it, with the call that raised
        return None
    if watch.seen:
        return Verdict("refused", called=tuple(watch.seen)), None
    done: set[type] = set()
    for attr, exercise, number in PARTS:
        part = getattr(layer, attr, None)
        if not isinstance(part, nn.Module) or type(part) in done:
            continue
        done.add(type(part))
        found, name = exercise.verdict(type(part)), type(part).__name__
        if found.kind == "not_done":
            task = f"its {attr} is a {name}, which is not written yet: Exercise {number} first"
            return Verdict("not_done", task=task), None
        if found.kind == "failed":
            where = f"its {attr} (a {name}), tested as in Exercise {number}, {found.where}"
            owner = {5: attention.ATTENTION, 4: layer_norm.LAYER_NORM}.get(number)
            owner = owner or feed_forward.FEED_FORWARD
            return Verdict(
                "failed", where=where, problem=found.problem, mistake=found.mistake
            ), owner
        if found.kind == "refused":
            return found, None
    return None


def verdict(cls: object) -> tuple[Verdict, Exercise | None]:
    """What the check finds, and the exercise whose hints fit the mistake (None: this one)."""
    parts = _parts_verdict(cls)
    if parts is not None:
        return parts
    found = check_module(cls, cases(), MISTAKES, forbidden=FORBIDDEN, output_names=("y", "weights"))
    if found.kind != "passed":
        return found, None
    problem = minilm_layers.minilm_problem(cls)  # type: ignore[arg-type]
    if problem is not None:
        return Verdict("failed", where=problem[0], problem=problem[1]), None
    return Verdict("passed", what=f"{found.what}, and {minilm_layers.PASSED}"), None


@checker_of(ENCODER_LAYER, MISTAKES)
def check_bert_encoder_layer(cls: type) -> CheckResult:
    """Check ``MyEncoderLayer(d_model, num_heads, d_ff, eps)``: forward ``(x (B, T, C),
    token_mask (B, T) bool) -> (y (B, T, C), weights (B, h, T, T))``, post-norm."""
    found, owner = verdict(cls)
    result = report(ENCODER_LAYER, cls, found)
    if owner is None:
        return result
    message = result.message
    for level in (2, 1):  # a part's mistake: that exercise's hints, not this one's
        message = message.replace(ENCODER_LAYER.hint_call(level), owner.hint_call(level))
    message = message.replace(ENCODER_LAYER.hints[0], owner.hints[0])
    return CheckResult(result.name, False, message, mistake=result.mistake)
