"""Notebook 10, Exercise 1: the usual mistakes in a GPT block, each a block class that makes it.

Each is a block class like the answer, ``Block(config)``: :class:`Parts` builds attnlib's
submodules under attnlib's names (its keywords build one of them wrongly) and computes the right
block; each subclass rewires its ``forward`` the way one usual mistake does, and ``MISTAKES``
names them. Those that keep attnlib's parameter names and shapes get the same weights as the
reference, so the checker compares what they compute with what the learner's block computes,
case by case, under the same random numbers.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn

from attnlib.checks._exercise import Mistake
from attnlib.feed_forward import FeedForward
from attnlib.gpt import GPTConfig
from attnlib.masks import causal_mask
from attnlib.multi_head import MultiHeadAttention


class Parts(nn.Module):
    """A block's submodules under attnlib's names; the keywords build one of them wrongly."""

    def __init__(
        self,
        config: GPTConfig,
        activation: str = "gelu",
        hidden: int = 4,
        attention_dropout: bool = True,
        ffn_dropout: bool = True,
    ) -> None:
        super().__init__()
        c = config
        p_attention, p_ffn = (c.dropout if on else 0.0 for on in (attention_dropout, ffn_dropout))
        self.attention = MultiHeadAttention(c.d_model, c.num_heads, dropout=p_attention)
        self.feed_forward = FeedForward(c.d_model, hidden * c.d_model, p_ffn, activation=activation)
        self.norm_1 = nn.LayerNorm(c.d_model)
        self.norm_2 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class NoAttentionResidual(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class NoFeedForwardResidual(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return self.dropout(self.feed_forward(self.norm_2(h))), weights


class PostNorm(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(x, mask=mask)
        h = self.norm_1(x + self.dropout(a))
        return self.norm_2(h + self.dropout(self.feed_forward(h))), weights


class NoNorms(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(x, mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(h)), weights


class NoNormBeforeAttention(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(x, mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class NoNormBeforeFeedForward(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(h)), weights


class Norm1Twice(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_1(h))), weights


class NormsSwapped(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_2(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_1(h))), weights


class NormalisedSkip(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        x = self.norm_1(x)
        a, weights = self.attention(x, mask=mask)
        h = self.norm_2(x + self.dropout(a))
        return h + self.dropout(self.feed_forward(h)), weights


class FeedForwardReadsInput(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(x))), weights


class FeedForwardAddedToInput(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return x + self.dropout(self.feed_forward(self.norm_2(h))), weights


class MaskInverted(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        return super().forward(x, ~mask)


class MaskIgnored(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        return super().forward(x, None)


class OwnCausalMask(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        return super().forward(x, causal_mask(x.shape[1]))  # not the caller's


class DropoutOnTheOutput(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + a
        return self.dropout(h + self.feed_forward(self.norm_2(h))), weights


class NoWeights(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        return super().forward(x, mask)[0]


class WeightsAveraged(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        y, weights = super().forward(x, mask)
        return y, weights.mean(dim=1)  # one map for all the heads


class PairSwapped(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        y, weights = super().forward(x, mask)
        return weights, y


class DropoutOnAttentionOnly(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.feed_forward(self.norm_2(h)), weights


class DropoutOnFeedForwardOnly(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + a
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class TorchAttention(Parts):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__(config)
        c = config
        self.attention = nn.MultiheadAttention(c.d_model, c.num_heads, c.dropout, batch_first=True)


class DropoutOnTheSum(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = self.dropout(x + a)
        return self.dropout(h + self.feed_forward(self.norm_2(h))), weights


class DropoutOnTheInput(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.dropout(self.norm_1(x)), mask=mask)
        h = x + a
        return h + self.feed_forward(self.dropout(self.norm_2(h))), weights


class NoDropout(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + a
        return h + self.feed_forward(self.norm_2(h)), weights


class DropoutAlwaysOn(Parts):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        p = self.dropout.p
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + F.dropout(a, p, training=True)
        return h + F.dropout(self.feed_forward(self.norm_2(h)), p, training=True), weights


class OtherNames(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        c = config
        self.attn = MultiHeadAttention(c.d_model, c.num_heads, dropout=c.dropout)
        self.ffn = FeedForward(c.d_model, 4 * c.d_model, c.dropout, activation="gelu")
        self.ln_1, self.ln_2 = nn.LayerNorm(c.d_model), nn.LayerNorm(c.d_model)
        self.drop = nn.Dropout(c.dropout)

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attn(self.ln_1(x), mask=mask)
        h = x + self.drop(a)
        return h + self.drop(self.ffn(self.ln_2(h))), weights


def built(**wrong: object) -> type[Parts]:
    """The right wiring around one submodule built wrongly (``Parts``' keywords)."""

    class Built(Parts):
        def __init__(self, config: GPTConfig) -> None:
            super().__init__(config, **wrong)  # type: ignore[arg-type]

    return Built


def _m(name: str, why: str, block: type[nn.Module]) -> Mistake:
    return Mistake(name, why, block)


MISTAKES = (
    _m(
        "named the submodules differently from attnlib's block",
        "the names are the state_dict's keys: attnlib's weights load into your block (and your "
        "trained weights into attnlib's GPT, section 5) only under the names printed above.",
        OtherNames,
    ),
    _m(
        "built the attention with torch's nn.MultiheadAttention instead of attnlib's",
        "torch's layer packs W_q, W_k and W_v into one in_proj_weight and takes its mask the "
        "other way round (True = blocked): attnlib's weights do not load into it.",
        TorchAttention,
    ),
    _m(
        "made the feed-forward network's hidden layer d_model wide instead of 4·d_model",
        "a GPT block's FFN widens each position to 4·d_model and back; attnlib's weights have "
        "that shape, and a narrower layer cannot hold them.",
        built(hidden=1),
    ),
    _m(
        "returned only the block's output, not the pair (output, weights)",
        "the callers unpack two results: the output and the attention weights, which the "
        "views of section 8 show.",
        NoWeights,
    ),
    _m(
        "returned the pair the other way round, (weights, output)",
        "callers unpack the block's output first and the attention weights second, as "
        "attnlib's block returns them.",
        PairSwapped,
    ),
    _m(
        "left out the residual around the attention: h is the attention's output alone",
        "the block's input must flow past the sublayer unchanged; without it the token's own "
        "vector is lost and the gradient has no short path back through the stack.",
        NoAttentionResidual,
    ),
    _m(
        "left out the residual around the feed-forward network: y is its output alone",
        "the FFN's output is added to what flows past it, as the attention's is; alone it "
        "replaces the stream instead of adding to it.",
        NoFeedForwardResidual,
    ),
    _m(
        "normalised after adding (post-norm, LN(x + f(x)), as in notebook 08) instead of before",
        "a GPT block is pre-norm: each sublayer reads a normalised copy and its output is "
        "added to the stream, which itself is never normalised inside the block.",
        PostNorm,
    ),
    _m(
        "left out both LayerNorms: the sublayers read the stream as it is",
        "each sublayer reads a normalised copy of its input, whose scale then does not grow "
        "with the depth of the stack.",
        NoNorms,
    ),
    _m(
        "left out the LayerNorm in front of the attention",
        "the attention reads the normalised input (norm_1), not the stream itself.",
        NoNormBeforeAttention,
    ),
    _m(
        "left out the LayerNorm in front of the feed-forward network",
        "the FFN reads a normalised copy of the stream (norm_2), as the attention does.",
        NoNormBeforeFeedForward,
    ),
    _m(
        "used norm_1 in front of both sublayers (norm_2 is never used)",
        "each sublayer has its own LayerNorm with its own trained scale and shift.",
        Norm1Twice,
    ),
    _m(
        "swapped the LayerNorms: norm_2 in front of the attention, norm_1 in front of the FFN",
        "the trained weights belong to their places: norm_1 before the attention, norm_2 before "
        "the feed-forward network.",
        NormsSwapped,
    ),
    _m(
        "added each sublayer's output to the normalised input instead of the input itself",
        "the path around a sublayer carries the stream unchanged; normalising it inside the "
        "block is post-norm in disguise.",
        NormalisedSkip,
    ),
    _m(
        "fed the feed-forward network the block's input instead of the stream after attention",
        "the two sublayers run one after the other: the FFN reads what the attention has "
        "already added to the stream.",
        FeedForwardReadsInput,
    ),
    _m(
        "added the feed-forward network's output to the block's input x instead of to the "
        "stream after attention, which drops the attention's output",
        "the second residual continues the stream the attention has already added to: what the "
        "attention computed reaches the output only through the stream, and from x it is lost.",
        FeedForwardAddedToInput,
    ),
    _m(
        "inverted the mask before passing it on",
        "in this course True means 'may attend': the caller's mask is already the one the "
        "attention needs, so inverting it lets each position see only the future.",
        MaskInverted,
    ),
    _m(
        "did not pass the mask to the attention",
        "without it every position attends to the tokens after it: the model would learn to "
        "copy the answer it is asked to predict.",
        MaskIgnored,
    ),
    _m(
        "built its own causal mask instead of using the mask it was given",
        "the caller builds the mask once and passes it to every block: with a KV cache it is "
        "(T, T_cached + T), and a caller may block more than the future. A block uses it as it is.",
        OwnCausalMask,
    ),
    _m(
        "built the feed-forward network with FeedForward's default activation (ReLU), not GELU",
        "attnlib's GPT block uses GELU, as GPT-2 does; the weights it trained expect it.",
        built(activation="relu"),
    ),
    _m(
        "built the attention without the config's dropout",
        "in training mode attnlib's attention drops some attention weights at random, at the "
        "config's rate: every dropout of the block uses it.",
        built(attention_dropout=False),
    ),
    _m(
        "built the feed-forward network without the config's dropout",
        "in training mode attnlib's FFN drops some of its hidden units at the config's rate: "
        "every dropout of the block uses it.",
        built(ffn_dropout=False),
    ),
    _m(
        "left out the dropout on the sublayers' outputs",
        "in training mode each sublayer's output passes through dropout before it is added: "
        "that is where a GPT block regularises.",
        NoDropout,
    ),
    _m(
        "left out the dropout on the feed-forward network's output",
        "in training mode both sublayers' outputs pass through dropout before they are added, "
        "the FFN's as well as the attention's.",
        DropoutOnAttentionOnly,
    ),
    _m(
        "left out the dropout on the attention's output",
        "in training mode both sublayers' outputs pass through dropout before they are added, "
        "the attention's as well as the FFN's.",
        DropoutOnFeedForwardOnly,
    ),
    _m(
        "applied dropout to the sum, after the residual add, instead of to the sublayer's output",
        "dropout on the sum also drops parts of the stream that flows past the sublayer, so "
        "the residual path no longer carries the input intact.",
        DropoutOnTheSum,
    ),
    _m(
        "applied dropout once, to the block's output, instead of to each sublayer's output",
        "dropout on the output also drops parts of the stream that flows past both sublayers; "
        "each sublayer's own output passes through dropout before it is added.",
        DropoutOnTheOutput,
    ),
    _m(
        "applied dropout to the sublayers' inputs instead of their outputs",
        "a GPT block drops parts of what each sublayer adds, after it has computed it.",
        DropoutOnTheInput,
    ),
    _m(
        "returned the attention weights averaged over the heads, (B, T, T)",
        "each head has its own map, and the caller reads them one by one (section 8 looks "
        "inside each head): the weights keep their head dimension, (B, H, T, T).",
        WeightsAveraged,
    ),
    _m(
        "kept dropout on in eval mode (F.dropout with training=True)",
        "the nn.Dropout module follows the block's mode: on for training, off for evaluation "
        "and generation, which must not be random.",
        DropoutAlwaysOn,
    ),
)
