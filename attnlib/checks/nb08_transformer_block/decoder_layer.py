"""Notebook 08, Exercise 5: the paper's post-norm decoder layer, with residual dropout.

The reference is ``attnlib.DecoderLayer(norm_first=False)`` given ``causal_mask(T)``, on the
same weights (it equals ``torch.nn.TransformerDecoderLayer``, as the tests confirm); the
mistakes are in :mod:`.decoder_mistakes`. The cases: a target of 4 reading padded sources of 5
and 3 (the masks and the dropout show), in training and in eval mode; a target as long as its
source (so that a swapped cross-attention gives numbers, not an error); a target of one token.
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
from attnlib.checks.nb08_transformer_block.decoder_mistakes import (
    MISTAKES,
    Parts,
    learner_layer,
    wired,
)
from attnlib.masks import causal_mask, padding_mask

Tensor = torch.Tensor

DECODER_LAYER = register(
    Exercise(
        id="ex5_my_decoder_layer",
        notebook="08",
        number=5,
        name="MyDecoderLayer",
        hints=(
            "A decoder layer is three residual blocks in a row, wired as in the paper (the "
            "post-norm column of the diagram): the target reads its own past, then reads the "
            "source, then each position is transformed. Each block reads what the one before "
            "returned, and no output may depend on a later target position.",
            "Each block is Exercise 3's post-norm block, with its own LayerNorm (norm_1, norm_2, "
            "norm_3 in order). The first block's attention needs a mask that lets position i "
            "read positions 0 … i of the target (notebook 07). In the second, ask which "
            "sequence asks the questions and which one answers them, and which mask belongs to "
            "the source.",
            "Self-attention reads y with attnlib's causal mask for the target's length T (as it "
            "is: True = may attend); dropout, add y, norm_1: that is h1. Cross-attention takes "
            "its queries from h1 and its keys and values from memory, with memory_mask; "
            "dropout, add h1, norm_2: h2. The FFN reads h2; dropout, add h2, norm_3. Return the "
            "result and the two attentions' weights, self first.",
        ),
    )
)


# -- mistakes of structure, found by looking at the layer ---------------------------------------


def _random_dropout(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    def block(inp: Tensor, out: Tensor, norm: nn.Module) -> Tensor:
        return norm(inp + nn.functional.dropout(out, 0.1, training=self.training))

    return wired(self, y, memory, memory_mask, block=block)


class _Shared(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.cross_attention = self.self_attention


class _Renamed(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.masked_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)


class _LateSuper(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        super().__init__()


class _NoDropoutArgument(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int) -> None:
        super().__init__(d_model, num_heads, d_ff)


def _dropout_on_inputs(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    a, w_self = self.self_attention(self.dropout(y), mask=causal_mask(y.shape[1]))
    h1 = self.norm_1(y + a)  # dropout on what each sublayer reads, not on what it returns
    c, w_cross = self.cross_attention(self.dropout(h1), memory, mask=memory_mask)
    h2 = self.norm_2(h1 + c)
    return self.norm_3(h2 + self.feed_forward(self.dropout(h2))), w_self, w_cross


def _reads_next(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    t = y.shape[1]
    mask = torch.ones(t, t, dtype=torch.bool).tril(diagonal=1)  # one step too far
    a, w_self = self.self_attention(y, mask=mask)
    h1 = self.norm_1(y + self.dropout(a))
    c, w_cross = self.cross_attention(h1, memory, mask=memory_mask)
    h2 = self.norm_2(h1 + self.dropout(c))
    return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), w_self, w_cross


class _InnerDropout(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads, dropout=dropout)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads, dropout=dropout)


def _float_mask(self: Any, y: Tensor, memory: Tensor, memory_mask: Any = None) -> Any:
    t = y.shape[1]
    a, w_self = self.self_attention(y, mask=torch.tril(torch.ones(t, t)))  # 1 = may attend
    h1 = self.norm_1(y + self.dropout(a))
    c, w_cross = self.cross_attention(h1, memory, mask=memory_mask)
    h2 = self.norm_2(h1 + self.dropout(c))
    return self.norm_3(h2 + self.dropout(self.feed_forward(h2))), w_self, w_cross


class _SwappedSizes(Parts):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.feed_forward = attnlib.FeedForward(d_ff, d_model)


STRUCTURE = StructureMistakes(
    names=Mistake(
        "named the submodules otherwise than the task says",
        "the check copies a reference layer's weights into yours by name, so the names "
        "self_attention, cross_attention, feed_forward, norm_1, norm_2, norm_3 (and dropout) "
        "are part of the task.",
        learner_layer(lambda self, y, memory, memory_mask=None: None, _Renamed),
    ),
    shapes=Mistake(
        "built a sublayer with its sizes in the wrong order",
        "attnlib.FeedForward takes the model's width first and d_ff second: its first map widens "
        "d_model to d_ff, its second brings d_ff back to d_model.",
        learner_layer(wired, _SwappedSizes),
    ),
    shared=Mistake(
        "shared one module between two sublayers",
        "the self-attention and the cross-attention ask different questions of different "
        "sequences, and each learns its own W^Q, W^K, W^V, W^O; each Add & Norm has its own "
        "γ and β too.",
        learner_layer(wired, _Shared),
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
        "into it: it needs MyDecoderLayer, not MyDecoderLayer(...).",
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
        "the check builds MyDecoderLayer(d_model, num_heads, d_ff, dropout) and calls "
        "forward(y, memory, memory_mask), as the task says; the causal mask is the layer's own "
        "business, not an argument.",
        learner_layer(wired, _NoDropoutArgument),
    ),
    dropout_elsewhere=Mistake(
        "applied dropout somewhere else than on each sublayer's output",
        "the layer is right in eval mode, where dropout does nothing, and wrong in training: "
        "the paper drops entries of each sublayer's output, in all three blocks, before the "
        "addition.",
        learner_layer(_dropout_on_inputs),
    ),
    inner_dropout=Mistake(
        "gave the attention or the feed-forward network a dropout of its own",
        "the task's layer has one dropout, the paper's residual dropout on each sublayer's "
        "output: the attentions and the FFN keep their default of none. A dropout inside them "
        "(on the attention weights, in the FFN's hidden layer) drops other entries in training.",
        learner_layer(wired, _InnerDropout),
    ),
)

# Named when no mistake of the tables matches and a later target token moves an earlier output.
SEES_THE_FUTURE = Mistake(
    "let a position read later target positions",
    "a decoder generates one token at a time: when it computes position i, the positions after "
    "i do not exist yet, so the self-attention's mask must hide every later position (and "
    "nothing else).",
    learner_layer(_reads_next),
)

# Named when forward fails because an attention got a mask that is not bool (attnlib says so).
FLOAT_MASK = Mistake(
    "passed an attention a float mask of 1s and 0s, not a bool one",
    "attnlib's masks are bool, True = may attend (notebook 07); PyTorch adds a float mask to "
    "the scores instead, where 0 hides nothing, so attnlib refuses one rather than guess.",
    learner_layer(_float_mask),
)

ALL_MISTAKES = (*MISTAKES, *vars(STRUCTURE).values(), SEES_THE_FUTURE, FLOAT_MASK)


def _expected(reference: nn.Module) -> Any:
    def expected(case: LayerCase) -> tuple[Tensor, ...]:
        y, memory, memory_mask = case.args
        reference.train(case.training)
        with torch.no_grad():
            return tuple(reference(y, memory, causal_mask(y.shape[1]), memory_mask))

    return expected


def _cases() -> list[LayerCase]:
    g = fixed_generator()

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, D_MODEL, generator=g, dtype=torch.float64)

    y, memory, memory_mask = randn(2, 4), randn(2, 5), padding_mask([5, 3], 5)
    padded = (y, memory, memory_mask)
    square, single = (randn(2, 3), randn(2, 3), None), (randn(1, 1), randn(1, 2), None)
    return [
        LayerCase("a target of 4 reading sources of 5 and 3 (padded), training mode", padded, True),
        LayerCase("the same target and sources in eval mode", padded, False),
        LayerCase("a target as long as its source (3), no mask, eval mode", square, False),
        LayerCase("a target of 1 token reading a source of 2, training mode", single, True),
    ]


def _decoder_problem(layer: nn.Module) -> tuple[str, Mistake | None] | None:
    """Whether a later target token moves an earlier output, or memory moves nothing."""
    g = fixed_generator()
    y = torch.randn(2, 4, D_MODEL, generator=g, dtype=torch.float64)
    memory = torch.randn(2, 5, D_MODEL, generator=g, dtype=torch.float64)
    later, other_memory = y.clone(), torch.randn(2, 5, D_MODEL, generator=g, dtype=torch.float64)
    later[:, -1] = torch.randn(2, D_MODEL, generator=g, dtype=torch.float64)  # a new last token
    try:
        with torch.no_grad():
            z = layer(y, memory, None)[0]
            z_later, z_memory = layer(later, memory, None)[0], layer(y, other_memory, None)[0]
        if not torch.allclose(z[:, :-1], z_later[:, :-1], atol=1e-9):
            problem = "changing the last target token moved the outputs before it"
            return problem, SEES_THE_FUTURE
        if torch.allclose(z, z_memory, atol=1e-9):
            return "changing memory moved no output: the layer does not read the source", None
    except TypeError as error:
        if "must be a bool" in str(error):  # attnlib's words for a mask that is not bool
            return f"forward raised TypeError: {error}", FLOAT_MASK
        return None
    except Exception:  # reported by the comparison instead
        return None
    return None


def _spec() -> LayerExercise:
    reference = seeded(lambda: attnlib.DecoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False))
    return LayerExercise(
        exercise=DECODER_LAYER,
        reference=reference,
        expected=_expected(reference),
        cases=_cases(),
        mistakes=MISTAKES,
        structure=STRUCTURE,
        output_names=("z", "self_weights", "cross_weights"),
        property_problem=_decoder_problem,
        what_passed="all 4 cases, in training and in eval mode: it is the paper's post-norm "
        "layer, the same as attnlib.DecoderLayer(norm_first=False) with the causal mask and "
        "torch.nn.TransformerDecoderLayer with the same weights",
    )


@checker_of(DECODER_LAYER, ALL_MISTAKES)
def check_paper_decoder_layer(layer_class: type[nn.Module]) -> CheckResult:
    """Check ``MyDecoderLayer(d_model, num_heads, d_ff, dropout)``, the paper's decoder layer."""
    return check_layer(_spec(), layer_class)
