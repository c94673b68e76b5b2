"""Notebook 10, Exercise 1: wrong GPT blocks, each written as a learner would write it.

Each is a block class like the answer, ``Block(config)``: :class:`Parts` builds attnlib's
submodules under attnlib's names (its keywords build one of them wrongly) and computes the right
block; each subclass rewires its ``forward`` the way one usual mistake does.
:mod:`.block_mistakes` names them.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn

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
