"""Notebook 10, Exercise 1: the GPT block checker against its table of mistakes.

Each mistake is written here again, as a learner would write it (not the table's class), and
must be caught and named; right blocks written differently from the worked solution must pass;
blocks that hand their work to attnlib's must be refused.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.gpt import GPTBlock

MHA, FFN = attnlib.MultiHeadAttention, attnlib.FeedForward


class Right(nn.Module):
    """The exercise's block, as most learners write it."""

    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        d = config.d_model
        self.attention = MHA(d, config.num_heads, dropout=config.dropout)
        self.feed_forward = FFN(d, 4 * d, config.dropout, activation="gelu")
        self.norm_1, self.norm_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class NormsFirst(nn.Module):
    """Right: registered in another order, functional dropout, a helper per sublayer."""

    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        self.p = config.dropout
        self.norm_2 = nn.LayerNorm(config.d_model)
        self.norm_1 = nn.LayerNorm(config.d_model)
        self.feed_forward = FFN(config.d_model, 4 * config.d_model, self.p, activation="gelu")
        self.attention = MHA(config.d_model, config.num_heads, self.p)

    def attend(self, x, mask):  # type: ignore[no-untyped-def]
        out, w = self.attention(self.norm_1(x), mask=mask)
        return F.dropout(out, self.p, self.training), w

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        out, w = self.attend(x, mask)
        x = x + out
        x = x + F.dropout(self.feed_forward(self.norm_2(x)), self.p, training=self.training)
        return (x, w)


class TwoDropouts(Right):
    """Right: one dropout module per sublayer (no parameters, so the names still fit), and an
    optional cache passed on, as attnlib's block does."""

    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        self.drop_attention, self.drop_ffn = nn.Dropout(config.dropout), nn.Dropout(config.dropout)

    def forward(self, x, mask, cache=None):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask, cache=cache)
        h = torch.add(x, self.drop_attention(a))
        y = torch.add(h, self.drop_ffn(self.feed_forward(self.norm_2(h))))
        return [y, weights]


@pytest.mark.parametrize("block", [Right, NormsFirst, TwoDropouts])
def test_right_blocks_pass(block: type[nn.Module]) -> None:
    report = checks.check_my_gpt_block(block)
    assert report.passed, report


def _wrong(forward):  # type: ignore[no-untyped-def]
    """A block with Right's submodules and this forward."""
    return type("Wrong", (Right,), {"forward": forward})


class OtherNames(nn.Module):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        d = config.d_model
        self.self_attention = MHA(d, config.num_heads, dropout=config.dropout)
        self.mlp = FFN(d, 4 * d, config.dropout, activation="gelu")
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, w = self.self_attention(self.ln1(x), mask=mask)
        return x + a + self.mlp(self.ln2(x + a)), w


class Narrow(Right):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        d = config.d_model
        self.feed_forward = FFN(d, d, config.dropout, activation="gelu")


class Relu(Right):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        self.feed_forward = FFN(config.d_model, 4 * config.d_model, config.dropout)


class AttentionWithoutDropout(Right):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        self.attention = MHA(config.d_model, config.num_heads)


class FeedForwardWithoutDropout(Right):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        self.feed_forward = FFN(config.d_model, 4 * config.d_model, activation="gelu")


# Each wrong forward as a learner writes it: one attention call, temporaries, other names.


def no_weights(self, x, mask):  # type: ignore[no-untyped-def]
    h = x + self.dropout(self.attention(self.norm_1(x), mask=mask)[0])
    return h + self.dropout(self.feed_forward(self.norm_2(h)))


def no_attention_residual(self, x, mask):  # type: ignore[no-untyped-def]
    out = self.attention(self.norm_1(x), mask=mask)
    h = self.dropout(out[0])
    return h + self.dropout(self.feed_forward(self.norm_2(h))), out[1]


def no_ffn_residual(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    x = x + self.dropout(a)
    x = self.dropout(self.feed_forward(self.norm_2(x)))
    return x, w


def post_norm(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(x, mask=mask)
    x = self.norm_1(x + self.dropout(a))
    x = self.norm_2(x + self.dropout(self.feed_forward(x)))
    return x, w


def no_norms(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(x, mask=mask)
    x = x + self.dropout(a)
    return x + self.dropout(self.feed_forward(x)), w


def no_norm_before_attention(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(x, mask=mask)
    x = x + self.dropout(a)
    return x + self.dropout(self.feed_forward(self.norm_2(x))), w


def no_norm_before_ffn(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    x = x + self.dropout(a)
    return x + self.dropout(self.feed_forward(x)), w


def norm_1_twice(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    x = x + self.dropout(a)
    return x + self.dropout(self.feed_forward(self.norm_1(x))), w


def norms_swapped(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_2(x), mask=mask)
    x = x + self.dropout(a)
    return x + self.dropout(self.feed_forward(self.norm_1(x))), w


def normalised_skip(self, x, mask):  # type: ignore[no-untyped-def]
    n = self.norm_1(x)
    a, w = self.attention(n, mask=mask)
    h = n + self.dropout(a)
    n2 = self.norm_2(h)
    return n2 + self.dropout(self.feed_forward(n2)), w


def ffn_reads_x(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    f = self.feed_forward(self.norm_2(x))
    return x + self.dropout(a) + self.dropout(f), w


def ffn_added_to_x(self, x, mask):  # type: ignore[no-untyped-def]
    attended, w = self.attention(self.norm_1(x), mask=mask)
    stream = x + self.dropout(attended)
    out = x + self.dropout(self.feed_forward(self.norm_2(stream)))  # x, not the stream
    return out, w


def mask_flipped(self, x, mask):  # type: ignore[no-untyped-def]
    return Right.forward(self, x, mask == False)  # noqa: E712


def mask_forgotten(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x))
    h = x + self.dropout(a)
    return h + self.dropout(self.feed_forward(self.norm_2(h))), w


def no_dropout(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    h = x + a
    return h + self.feed_forward(self.norm_2(h)), w


def dropout_on_inputs(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.dropout(self.norm_1(x)), mask=mask)
    h = x + a
    return h + self.feed_forward(self.dropout(self.norm_2(h))), w


def dropout_always_on(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    h = x + F.dropout(a, p=0.1, training=True)
    return h + F.dropout(self.feed_forward(self.norm_2(h)), p=0.1, training=True), w


def dropout_on_the_sum(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    h = self.dropout(x + a)
    return self.dropout(h + self.feed_forward(self.norm_2(h))), w


class TorchsAttention(Right):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__(config)
        self.attention = nn.MultiheadAttention(config.d_model, config.num_heads, batch_first=True)

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, w = self.attention(*(self.norm_1(x),) * 3, attn_mask=~mask)
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), w


def swapped(self, x, mask):  # type: ignore[no-untyped-def]
    attended, w = self.attention(self.norm_1(x), mask=mask)
    h = x + self.dropout(attended)
    return w, h + self.dropout(self.feed_forward(self.norm_2(h)))


def dropout_once(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    h = x + self.dropout(a)
    return h + self.feed_forward(self.norm_2(h)), w


def dropout_on_ffn_only(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    return (h := x + a) + self.dropout(self.feed_forward(self.norm_2(h))), w


def own_causal_mask(self, x, mask):  # type: ignore[no-untyped-def]
    T = x.size(1)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))  # no peeking, whatever comes in
    a, w = self.attention(self.norm_1(x), mask=causal)
    h = x + self.dropout(a)
    return h + self.dropout(self.feed_forward(self.norm_2(h))), w


def dropout_on_the_output(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    out = x + a
    out = out + self.feed_forward(self.norm_2(out))
    return self.dropout(out), w


def heads_averaged(self, x, mask):  # type: ignore[no-untyped-def]
    a, w = self.attention(self.norm_1(x), mask=mask)
    h = x + self.dropout(a)
    return h + self.dropout(self.feed_forward(self.norm_2(h))), w.mean(1)  # one map to look at


WRONG = {
    "other names": (OtherNames, "named the submodules differently"),
    "torch's attention": (TorchsAttention, "nn.MultiheadAttention"),
    "(weights, y)": (_wrong(swapped), "the other way round"),
    "dropout on the attention only": (_wrong(dropout_once), "dropout on the feed-forward"),
    "dropout on the FFN only": (_wrong(dropout_on_ffn_only), "dropout on the attention's"),
    "a narrow FFN": (Narrow, "hidden layer d_model wide"),
    "no weights": (_wrong(no_weights), "returned only the block's output"),
    "no residual around attention": (_wrong(no_attention_residual), "around the attention"),
    "no residual around the FFN": (_wrong(no_ffn_residual), "around the feed-forward"),
    "post-norm": (_wrong(post_norm), "post-norm"),
    "no norms": (_wrong(no_norms), "left out both LayerNorms"),
    "no norm before attention": (_wrong(no_norm_before_attention), "front of the attention"),
    "no norm before the FFN": (_wrong(no_norm_before_ffn), "front of the feed-forward"),
    "norm_1 twice": (_wrong(norm_1_twice), "used norm_1 in front of both"),
    "norms swapped": (_wrong(norms_swapped), "swapped the LayerNorms"),
    "normalised skip": (_wrong(normalised_skip), "to the normalised input"),
    "FFN reads x": (_wrong(ffn_reads_x), "fed the feed-forward network the block's input"),
    "FFN added to x": (_wrong(ffn_added_to_x), "output to the block's input x"),
    "mask == False": (_wrong(mask_flipped), "inverted the mask"),
    "mask forgotten": (_wrong(mask_forgotten), "did not pass the mask"),
    "ReLU": (Relu, "default activation (ReLU)"),
    "attention without dropout": (AttentionWithoutDropout, "attention without the config's"),
    "FFN without dropout": (FeedForwardWithoutDropout, "network without the config's dropout"),
    "no dropout": (_wrong(no_dropout), "left out the dropout on the sublayers' outputs"),
    "dropout on the inputs": (_wrong(dropout_on_inputs), "to the sublayers' inputs"),
    "dropout always on": (_wrong(dropout_always_on), "kept dropout on in eval mode"),
    "dropout on the sum": (_wrong(dropout_on_the_sum), "applied dropout to the sum"),
    "its own causal mask": (_wrong(own_causal_mask), "built its own causal mask"),
    "dropout on the output": (_wrong(dropout_on_the_output), "dropout once, to the block's"),
    "weights averaged": (_wrong(heads_averaged), "weights averaged over the heads"),
}


@pytest.mark.parametrize("name", WRONG)
def test_each_block_mistake_is_caught_and_named(name: str) -> None:
    block, words = WRONG[name]
    report = str(checks.check_my_gpt_block(block))
    mistake = report.split("The mistake: ", 1)[-1].split("\n")[0] if "The mistake" in report else ""
    assert words in mistake, report


def test_a_block_that_calls_the_attention_twice_is_still_named() -> None:
    def twice(self, x, mask):  # type: ignore[no-untyped-def]
        h = self.dropout(self.attention(self.norm_1(x), mask=mask)[0])  # no residual
        weights = self.attention(self.norm_1(x), mask=mask)[1]
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights

    report = checks.check_my_gpt_block(_wrong(twice))
    assert "The mistake: left out the residual around the attention" in str(report), report


@pytest.mark.slow
def test_every_mistake_of_the_table_is_named_when_made() -> None:
    for mistake in known_mistakes("ex1_my_gpt_block"):
        report = checks.check_my_gpt_block(mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


class Subclass(GPTBlock):
    pass


class CallsAttnlibsForward(Right):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        return GPTBlock.forward(self, x, mask)  # type: ignore[arg-type]


class Wrapped(nn.Module):
    def __init__(self, config: attnlib.GPTConfig) -> None:
        super().__init__()
        for name, module in GPTBlock(config).named_children():
            self.add_module(name, module)

    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        return GPTBlock.forward(self, x, mask)  # type: ignore[arg-type]


@pytest.mark.parametrize("cheat", [Subclass, CallsAttnlibsForward, Wrapped])
def test_a_block_that_hands_its_work_to_attnlibs_is_refused(cheat: type[nn.Module]) -> None:
    report = checks.check_my_gpt_block(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_a_stub_is_not_done_and_a_crash_is_reported() -> None:
    class Stub(nn.Module):
        def __init__(self, config: attnlib.GPTConfig) -> None:
            super().__init__()
            raise NotImplementedError()

    assert not checks.check_my_gpt_block(Stub).done

    class Crashes(Right):
        def forward(self, x, mask):  # type: ignore[no-untyped-def]
            return self.attention(self.norm_1(x).transpose(1, 2), mask=mask)  # (B, C, T)

    report = str(checks.check_my_gpt_block(Crashes))
    assert "raised" in report and "Traceback" not in report
    assert "expected a class" in str(checks.check_my_gpt_block(42))


class MaskAsKey(Right):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask)  # the mask lands in `key`
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


class FloatMask(Right):
    def forward(self, x, mask):  # type: ignore[no-untyped-def]
        a, weights = self.attention(self.norm_1(x), mask=mask.float())
        h = x + self.dropout(a)
        return h + self.dropout(self.feed_forward(self.norm_2(h))), weights


@pytest.mark.parametrize(
    ("block", "words"),
    [(MaskAsKey, "as the attention's second argument"), (FloatMask, "a float mask")],
)
def test_a_crash_whose_message_shows_its_slip_is_named(block: type, words: str) -> None:
    report = checks.check_my_gpt_block(block)
    assert not report.passed and words in report.mistake, report


def test_an_unknown_mistake_gets_the_property_it_breaks_and_the_idea() -> None:
    class Leaks(Right):
        def forward(self, x, mask):  # type: ignore[no-untyped-def]
            y, w = super().forward(x, mask)
            return y + 0.01 * x[:, -1:], w  # the last position reaches every other

    report = str(checks.check_my_gpt_block(Leaks))
    assert "a later token reaches an earlier one" in report
    assert "The idea:" in report and "not one of the usual mistakes" in report


def test_the_check_leaves_the_notebooks_random_numbers_alone() -> None:
    # (How long a check takes is printed by `python -m benchmarks.checkers`, not tested.)
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    assert checks.check_my_gpt_block(Right).passed
    assert checks.check_my_gpt_block(WRONG["post-norm"][0]).message
    assert torch.equal(torch.rand(3), before)
