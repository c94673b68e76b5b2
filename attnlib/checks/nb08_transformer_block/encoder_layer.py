"""Notebook 08, Exercise 4: the paper's post-norm encoder layer, with residual dropout.

The reference is ``attnlib.EncoderLayer(norm_first=False)`` on the same weights (which equals
``torch.nn.TransformerEncoderLayer``, as the tests confirm); the mistakes of wiring are in
:mod:`.encoder_mistakes`, those of structure here. The cases: a padded batch in training mode
(the mask and the dropout show), the same batch in eval mode, one sentence without a mask.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

import attnlib
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import CheckResult, fixed_generator
from attnlib.checks.nb08_transformer_block._layer_check import check_layer
from attnlib.checks.nb08_transformer_block._layers import (
    D_FF,
    D_MODEL,
    NUM_HEADS,
    LayerCase,
    LayerExercise,
    StructureMistakes,
    seeded,
)
from attnlib.checks.nb08_transformer_block.encoder_mistakes import (
    MISTAKES,
    Parts,
    learner_layer,
    wired,
)
from attnlib.masks import padding_mask

Tensor = torch.Tensor

ENCODER_LAYER = register(
    Exercise(
        id="ex4_my_encoder_layer",
        notebook="08",
        number=4,
        name="MyEncoderLayer",
        hints=(
            "An encoder layer is two residual blocks in a row, wired as in the paper (the "
            "post-norm column of the diagram): the first block's sublayer lets the positions "
            "read each other, the second transforms each position; what the first block "
            "returns is what the second reads.",
            "Each block is Exercise 3's post-norm block: the sublayer reads the block's input, "
            "dropout acts on what it returns, the block's input is added back, and that sum is "
            "normalised by the block's own LayerNorm (norm_1 for the first, norm_2 for the "
            "second). Self-attention returns a pair; the layer returns its weights too.",
            "Self-attention reads the layer's input with the padding mask passed on as it is "
            "(True = may attend); its output goes through self.dropout, is added to the input, "
            "and norm_1 normalises the sum: that is h. The feed-forward network reads h, its "
            "output goes through self.dropout, is added to h, and norm_2 normalises the sum. "
            "Return that and the attention weights.",
        ),
    )
)


# -- mistakes of structure, found by looking at the layer ---------------------------------------


class _SharedNorm(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.norm_2 = self.norm_1


class _Renamed(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.ffn = attnlib.FeedForward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


class _SwappedSizes(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.feed_forward = attnlib.FeedForward(d_ff, d_model)


class _InnerDropout(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, dropout=dropout)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)


def _random_dropout(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    def block(inp: Tensor, out: Tensor, norm: nn.Module) -> Tensor:
        return norm(inp + nn.functional.dropout(out, 0.1, training=self.training))

    return wired(self, x, mask, post=block)


class _LateSuper(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        super().__init__()


class _NoDropoutArgument(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int) -> None:
        super().__init__(d_model, num_heads, d_ff)


def _dropout_on_inputs(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    a, w = self.self_attention(self.dropout(x), mask=mask)  # dropout on what each sublayer reads
    h = self.norm_1(x + a)
    return self.norm_2(h + self.feed_forward(self.dropout(h))), w


def _keys_unmasked(self: Any, x: Tensor, mask: Tensor | None = None) -> Any:
    return wired(self, x, mask, attend_mask=None if mask is None else mask.transpose(-1, -2))


STRUCTURE = StructureMistakes(
    names=Mistake(
        "named the submodules otherwise than the task says",
        "the check copies a reference layer's weights into yours by name, so the names "
        "self_attention, feed_forward, norm_1, norm_2 (and dropout) are part of the task.",
        learner_layer(lambda self, x, mask=None: None, _Renamed),
    ),
    shapes=Mistake(
        "built a sublayer with its sizes in the wrong order",
        "attnlib.FeedForward takes the model's width first and d_ff second: its first map widens "
        "d_model to d_ff, its second brings d_ff back to d_model.",
        learner_layer(wired, _SwappedSizes),
    ),
    shared=Mistake(
        "shared one module between two sublayers",
        "each Add & Norm has its own LayerNorm, with its own γ and β: one module in two places "
        "is one set of weights where the paper learns two.",
        learner_layer(wired, _SharedNorm),
    ),
    random_dropout=Mistake(
        "drew dropout outside an nn.Dropout submodule (F.dropout, or a new nn.Dropout in forward)",
        "the layer's dropout must be a submodule, so that eval() switches it off and the "
        "check can see where it acts: dropout drawn in forward stays random.",
        learner_layer(_random_dropout),
    ),
    instance=Mistake(
        "passed a layer built from your class instead of the class itself",
        "the check builds the layer itself, with its own sizes, and loads a reference's weights "
        "into it: it needs MyEncoderLayer, not MyEncoderLayer(...).",
        learner_layer(wired)(8, 2, 16),
    ),
    no_super=Mistake(
        "built a submodule before calling super().__init__()",
        "nn.Module registers submodules in the bookkeeping its __init__ sets up: until "
        "super().__init__() has run, assigning one fails.",
        learner_layer(wired, _LateSuper),
    ),
    signature=Mistake(
        "wrote __init__ or forward with other arguments than the task's",
        "the check builds MyEncoderLayer(d_model, num_heads, d_ff, dropout) and calls "
        "forward(x, mask), as the task says (and as the stack after Exercise 5 does).",
        learner_layer(wired, _NoDropoutArgument),
    ),
    dropout_elsewhere=Mistake(
        "applied dropout somewhere else than on each sublayer's output",
        "the layer is right in eval mode, where dropout does nothing, and wrong in training: "
        "the paper drops entries of each sublayer's output, in both blocks, before the addition.",
        learner_layer(_dropout_on_inputs),
    ),
    inner_dropout=Mistake(
        "gave the attention or the feed-forward network a dropout of its own",
        "the task's layer has one dropout, the paper's residual dropout on each sublayer's "
        "output: the attention and the FFN keep their default of none. A dropout inside them "
        "(on the attention weights, in the FFN's hidden layer) drops other entries in training.",
        learner_layer(wired, _InnerDropout),
    ),
)

# Named when no mistake of the tables matches and a padded position moves the real tokens.
PADDING_REACHES = Mistake(
    "let the padding reach the real tokens' outputs",
    "the padding mask (True = may attend) hides the padded keys from every query: whatever the "
    "pad vectors hold, the real tokens' outputs must not change.",
    learner_layer(_keys_unmasked),
)

ALL_MISTAKES = (*MISTAKES, *vars(STRUCTURE).values(), PADDING_REACHES)


def _expected(reference: nn.Module) -> Any:
    def expected(case: LayerCase) -> tuple[Tensor, ...]:
        reference.train(case.training)
        with torch.no_grad():
            return tuple(reference(*case.args))

    return expected


def _cases() -> list[LayerCase]:
    g = fixed_generator()
    x = torch.randn(2, 5, D_MODEL, generator=g, dtype=torch.float64)
    mask = padding_mask([5, 3], 5)  # (B, 1, 1, S), True = a real token
    one = torch.randn(1, 4, D_MODEL, generator=g, dtype=torch.float64)
    return [
        LayerCase("two sentences of 5 and 3 tokens (padded), training mode", (x, mask), True),
        LayerCase("the same two sentences in eval mode", (x, mask), False),
        LayerCase("one sentence of 4 tokens, no mask, training mode", (one, None), True),
    ]


def _padding_problem(layer: nn.Module) -> tuple[str, Mistake] | None:
    """Whether the pad vectors of a padded sentence move the real tokens' outputs."""
    g = fixed_generator()
    x = torch.randn(1, 5, D_MODEL, generator=g, dtype=torch.float64)
    changed = x.clone()
    changed[:, 3:] = torch.randn(1, 2, D_MODEL, generator=g, dtype=torch.float64)  # new padding
    mask = padding_mask([3], 5)
    try:
        with torch.no_grad():
            before, after = layer(x, mask)[0], layer(changed, mask)[0]
        moved = not torch.allclose(before[:, :3], after[:, :3], atol=1e-9)
    except Exception:  # reported by the comparison instead
        return None
    if moved:
        return "changing the padding vectors moved the outputs of the real tokens", PADDING_REACHES
    return None


def _spec() -> LayerExercise:
    reference = seeded(lambda: attnlib.EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False))
    return LayerExercise(
        exercise=ENCODER_LAYER,
        reference=reference,
        expected=_expected(reference),
        cases=_cases(),
        mistakes=MISTAKES,
        structure=STRUCTURE,
        output_names=("y", "weights"),
        property_problem=_padding_problem,
        what_passed="all 3 cases, in training and in eval mode: it is the paper's post-norm "
        "layer, the same as attnlib.EncoderLayer(norm_first=False) and "
        "torch.nn.TransformerEncoderLayer with the same weights",
    )


@checker_of(ENCODER_LAYER, ALL_MISTAKES)
def check_paper_encoder_layer(layer_class: type[nn.Module]) -> CheckResult:
    """Check ``MyEncoderLayer(d_model, num_heads, d_ff, dropout)``, the paper's encoder layer."""
    return check_layer(_spec(), layer_class)
