"""check_gpt_block passes attnlib's own block and names each usual mistake in a GPT block."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib import checks
from attnlib.gpt import GPTBlock


class _Right(nn.Module):
    """A learner's correct block: attnlib's submodules, the pre-norm forward."""

    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        c = config
        self.attention = attnlib.MultiHeadAttention(c.d_model, c.num_heads, dropout=c.dropout)
        self.feed_forward = attnlib.FeedForward(
            c.d_model, 4 * c.d_model, c.dropout, activation="gelu"
        )
        self.norm_1 = nn.LayerNorm(c.d_model)
        self.norm_2 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)

    def attend(self, h, mask):
        return self.attention(h, mask=mask)

    def forward(self, x, mask):
        a, weights = self.attend(self.norm_1(x), mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class _Wrapped(nn.Module):
    """attnlib's own block behind the exercise's interface."""

    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        block = GPTBlock(config)
        for name, module in block.named_children():
            self.add_module(name, module)
        self._forward = GPTBlock.forward.__get__(self)

    def forward(self, x, mask):
        return self._forward(x, mask)


class _NoAttentionResidual(_Right):
    def forward(self, x, mask):
        h, weights = self.attend(self.norm_1(x), mask)
        return h + self.feed_forward(self.norm_2(h)), weights


class _NoFeedForwardResidual(_Right):
    def forward(self, x, mask):
        a, weights = self.attend(self.norm_1(x), mask)
        return self.feed_forward(self.norm_2(x + a)), weights


class _PostNorm(_Right):
    def forward(self, x, mask):
        a, weights = self.attend(x, mask)
        h = self.norm_1(x + a)
        return self.norm_2(h + self.feed_forward(h)), weights


class _NoLayerNorm(_Right):
    def forward(self, x, mask):
        a, weights = self.attend(x, mask)
        h = x + a
        return h + self.feed_forward(h), weights


class _Norm1Twice(_Right):
    def forward(self, x, mask):
        a, weights = self.attend(self.norm_1(x), mask)
        h = x + a
        return h + self.feed_forward(self.norm_1(h)), weights


class _NormalisedSkip(_Right):
    def forward(self, x, mask):
        n = self.norm_1(x)
        a, weights = self.attend(n, mask)
        h = n + a
        return h + self.feed_forward(self.norm_2(h)), weights


class _InvertedMask(_Right):
    def attend(self, h, mask):
        return self.attention(h, mask=~mask)


class _NoMask(_Right):
    def attend(self, h, mask):
        return self.attention(h)


class _OwnWrongMask(_Right):
    """Builds its own mask that also lets each position see the next one."""

    def attend(self, h, mask):
        t = h.shape[1]
        return self.attention(h, mask=torch.ones(t, t, dtype=torch.bool).tril(1))


class _NoWeights(_Right):
    def forward(self, x, mask):
        return super().forward(x, mask)[0]


class _NoneWeights(_Right):
    def forward(self, x, mask):
        return super().forward(x, mask)[0], None


class _HeadsAveraged(_Right):
    def forward(self, x, mask):
        y, weights = super().forward(x, mask)
        return y, weights.mean(dim=1)  # (B, T, T): not the (B, H, T, T) it should return


class _WrongShape(_Right):
    def forward(self, x, mask):
        y, weights = super().forward(x, mask)
        return y[:, -1], weights


class _Nan(_Right):
    def forward(self, x, mask):
        y, weights = super().forward(x, mask)
        return y * float("nan"), weights


class _ReluFeedForward(_Right):
    """An unnamed mistake: the FFN's activation is ReLU instead of GELU."""

    def forward(self, x, mask):
        a, weights = self.attend(self.norm_1(x), mask)
        h = x + a
        ffn = self.feed_forward
        return h + ffn.linear2(F.relu(ffn.linear1(self.norm_2(h)))), weights


class _DropoutInEval(_Right):
    def forward(self, x, mask):
        a, weights = self.attend(self.norm_1(x), mask)
        h = x + F.dropout(a, 0.5, training=True)
        return h + self.feed_forward(self.norm_2(h)), weights


class _OtherNames(nn.Module):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        self.attn = attnlib.MultiHeadAttention(config.d_model, config.num_heads)
        self.ln1 = nn.LayerNorm(config.d_model)


class _NarrowFeedForward(_Right):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        self.feed_forward = attnlib.FeedForward(config.d_model, 2 * config.d_model)


class _Stub(nn.Module):
    """Write the pre-norm GPT block."""

    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        raise NotImplementedError()


class _StubForward(_Right):
    """Write the pre-norm GPT block."""

    def forward(self, x, mask):
        raise NotImplementedError()


class _CrashingInit(nn.Module):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        self.width = config.hidden_size  # no such field


@pytest.mark.parametrize("block", [_Right, _Wrapped, GPTBlock], ids=["right", "wrapped", "own"])
def test_a_right_block_passes(block: type[nn.Module]) -> None:
    result = checks.check_gpt_block(block)
    assert result.passed, result.message
    assert result.message.startswith("✓ gpt_block is correct on all 2 cases")


@pytest.mark.parametrize(
    ("block", "named"),
    [
        (_NoAttentionResidual, "missing residual around attention"),
        (_NoFeedForwardResidual, "missing residual around the FFN"),
        (_PostNorm, "post-norm instead of pre-norm"),
        (_NoLayerNorm, "LayerNorm missing"),
        (_Norm1Twice, "norm_1 used before the FFN too"),
        (_NormalisedSkip, "residual adds the normalised input"),
        (_InvertedMask, "causal mask inverted"),
        (_NoMask, "no causal mask"),
        (_OwnWrongMask, "a future token leaks into the past"),
        (_NoWeights, "weights not returned"),
        (_NoneWeights, "weights not returned"),
        (_HeadsAveraged, "the output is right but the weights, (1, 5, 5), are not"),
        (_WrongShape, "the output has shape (1, 16), expected (1, 5, 16)"),
        (_Nan, "the output contains NaN"),
        (_ReluFeedForward, "the output differs first at batch 0, position 0, channel"),
        (_DropoutInEval, "two calls in eval mode gave different outputs"),
        (_OtherNames, "your block has no parameter attention.w_q.weight"),
        (_NarrowFeedForward, "parameters of the wrong shape: feed_forward.linear1.weight"),
        (_CrashingInit, "building your block with a GPTConfig raised AttributeError"),
    ],
)
def test_each_wrong_block_fails_with_its_name(block: type[nn.Module], named: str) -> None:
    result = checks.check_gpt_block(block)
    assert not result.passed and result.done
    assert named in result.message, result.message
    assert result.message.startswith("✗ gpt_block") and "\n  hint: " in result.message
    assert "Traceback" not in result.message


def test_the_named_variant_is_the_right_one() -> None:
    # "LayerNorm missing" must not swallow the more specific "... before attention".
    class _NoNorm1(_Right):
        def forward(self, x, mask):
            a, weights = self.attend(x, mask)
            h = x + a
            return h + self.feed_forward(self.norm_2(h)), weights

    message = checks.check_gpt_block(_NoNorm1).message
    assert "LayerNorm missing before attention" in message, message


@pytest.mark.parametrize("stub", [_Stub, _StubForward])
def test_a_stub_is_not_done_yet_with_its_task(stub: type[nn.Module]) -> None:
    result = checks.check_gpt_block(stub)
    assert not result.passed and not result.done
    assert result.message.startswith("… gpt_block: not done yet (Write the pre-norm GPT block.)")


def test_not_a_class_and_the_global_random_state_is_left_alone() -> None:
    assert "expected a class" in checks.check_gpt_block(3).message
    torch.manual_seed(5)
    before = torch.random.get_rng_state()
    checks.check_gpt_block(_Right)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_it_raises_on_assert_passed_only_when_wrong() -> None:
    checks.check_gpt_block(_Right).assert_passed()
    with pytest.raises(checks.CheckFailedError, match="post-norm"):
        checks.check_gpt_block(_PostNorm).assert_passed()
