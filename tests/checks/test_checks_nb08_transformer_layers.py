"""Notebook 08's layer checkers (Exercises 4 and 5) against their tables of mistakes.

The learner's layers are written here again, from one configurable class each, so that every
mistake is made differently from the checker's own table (other mask spellings, other ways of
calling attention, dropout per block); right layers written differently must pass (one dropout
per block, keyword calls, a residual helper); layers that hand the work to attnlib's or
PyTorch's must be refused. attnlib's post-norm layers are
also checked against PyTorch's, which the checkers' reports claim.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks.nb08_transformer_block._layers import D_FF, D_MODEL, NUM_HEADS

Tensor = torch.Tensor


def _named(report: object, mistake: str) -> bool:
    return f"The mistake: {mistake}." in str(report)


# -- Exercise 4: the encoder layer -------------------------------------------------------------


class Encoder(nn.Module):
    """The paper's encoder layer, or one with the mistake ``mistake`` (a class attribute)."""

    mistake = ""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        inner = dropout if self.mistake == "dropout inside too" else 0.0
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads, dropout=inner)
        activation = "gelu" if self.mistake == "GELU" else "relu"
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, dropout=inner, activation=activation)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = self.norm_1 if self.mistake == "one norm module" else nn.LayerNorm(d_model)
        if self.mistake == "one dropout per block":
            self.dropout_1, self.dropout_2 = nn.Dropout(dropout), nn.Dropout(dropout)
        else:
            self.dropout = nn.Dropout(dropout)

    def _drop(self, t: Tensor, which: int) -> Tensor:
        m = self.mistake
        if m == "one dropout per block":
            return (self.dropout_1 if which == 1 else self.dropout_2)(t)
        if m == "F.dropout":
            return nn.functional.dropout(t, p=0.1, training=self.training)
        if m == "no dropout" or m == f"no dropout in block {which}":
            return t
        if m == "dropout twice":
            return self.dropout(self.dropout(t))
        return self.dropout(t)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Any:
        m = self.mistake
        if m == "pre-norm":
            a, w = self.self_attention(self.norm_1(x), mask=mask)
            h = x + self._drop(a, 1)
            return h + self._drop(self.feed_forward(self.norm_2(h)), 2), w
        if m == "FFN block first":
            h = self.norm_1(x + self._drop(self.feed_forward(x), 1))
            a, w = self.self_attention(h, h, h, mask)
            return self.norm_2(h + self._drop(a, 2)), w
        if m == "norm in and out":
            a, w = self.self_attention(self.norm_1(x), mask=mask)
            h = self.norm_1(self._drop(a, 1) + x)
            return self.norm_2(self._drop(self.feed_forward(self.norm_2(h)), 2) + h), w
        if m == "mask ignored":
            mask = None
        elif m == "mask inverted" and mask is not None:
            mask = mask.logical_not()
        elif m == "mask on the queries" and mask is not None:
            mask = mask.mT
        if m == "mask as the key" and mask is not None:
            a, w = self.self_attention(x, mask)
            h = self.norm_1(x + self._drop(a, 1))
            return self.norm_2(h + self._drop(self.feed_forward(h), 2)), w
        no_weights = m == "no weights"
        a, w = self.self_attention(query=x, key=x, value=x, mask=mask, need_weights=not no_weights)
        n1, n2 = {
            "norms swapped": (self.norm_2, self.norm_1),
            "norm_1 twice": (self.norm_1,) * 2,
        }.get(m, (self.norm_1, self.norm_2))
        if m == "no norms":
            n1 = n2 = nn.Identity()
        if m == "dropout on the sum":
            h = n1(self._drop(x + a, 1))
        elif m == "dropout after the norm":
            h = self._drop(n1(x + a), 1)
        elif m == "x + LN(a)":
            h = x + n1(self._drop(a, 1))
        elif m == "LN(x) + a":
            h = n1(x) + self._drop(a, 1)
        else:
            h = n1(self._drop(a, 1) if m == "no attention residual" else x + self._drop(a, 1))
        if m == "one block":
            return h, w
        f = self.feed_forward(x if m == "FFN reads x" else h)
        if m == "dropout on the sum":
            y = n2(self._drop(h + f, 2))
        elif m == "dropout after the norm":
            y = self._drop(n2(h + f), 2)
        elif m == "x + LN(a)":
            y = h + n2(self._drop(f, 2))
        elif m == "LN(x) + a":
            y = n2(h) + self._drop(f, 2)
        elif m == "FFN skip from x":
            y = n2(self._drop(f, 2) + x)
        else:
            y = n2(self._drop(f, 2) if m == "no FFN residual" else h + self._drop(f, 2))
        if m == "scaled":  # no usual mistake
            y = 1.01 * y
        return y if m == "y only" else (y, w)


def encoder(mistake: str = "") -> type[nn.Module]:
    return type("MyEncoderLayer", (Encoder,), {"mistake": mistake})


class EncoderRenamed(Encoder):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.attention = self.self_attention
        del self.self_attention


class EncoderLateSuper(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        self.dropout = nn.Dropout(dropout)
        super().__init__()


class EncoderWithoutMask(Encoder):
    def forward(self, x: Tensor) -> Any:  # type: ignore[override]
        return super().forward(x)


class EncoderSwappedSizes(Encoder):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.feed_forward = attnlib.FeedForward(d_ff, d_model)


ENCODER_RIGHT = ["", "one dropout per block"]

ENCODER_WRONG = {
    encoder("pre-norm"): "wired it pre-norm",
    encoder("no attention residual"): "residual around the self-attention",
    encoder("no FFN residual"): "residual around the feed-forward network",
    encoder("no norms"): "left out the LayerNorms",
    encoder("norms swapped"): "in each other's place",
    encoder("norm_1 twice"): "used norm_1 for both blocks",
    encoder("mask ignored"): "did not pass the padding mask",
    encoder("mask inverted"): "inverted the padding mask",
    encoder("mask as the key"): "second argument, which is its key",
    encoder("FFN reads x"): "the layer's input x instead of h",
    encoder("FFN skip from x"): "not h, on the feed-forward block's skip path",
    encoder("GELU"): "GELU instead of the paper's ReLU",
    encoder("dropout inside too"): "a dropout of its own",
    encoder("x + LN(a)"): "and then added the residual",
    encoder("LN(x) + a"): "normalised each block's input and added",
    encoder("norm in and out"): "normalised input and normalised the sum as well",
    encoder("FFN block first"): "feed-forward block before the self-attention block",
    encoder("dropout on the sum"): "to the residual sum",
    encoder("dropout after the norm"): "after the LayerNorm",
    encoder("no dropout"): "left dropout out",
    encoder("y only"): "returned only y",
    encoder("one block"): "left out the feed-forward block",
    encoder("no weights"): "need_weights=False",
    EncoderRenamed: "named the submodules otherwise",
    EncoderSwappedSizes: "sizes in the wrong order",
    encoder("one norm module"): "shared one module between two sublayers",
    encoder("F.dropout"): "drew dropout outside an nn.Dropout submodule",
    encoder()(D_MODEL, NUM_HEADS, D_FF): "instead of the class itself",
    EncoderLateSuper: "before calling super().__init__()",
    EncoderWithoutMask: "with other arguments than the task's",
    encoder("no dropout in block 1"): "left the self-attention block without dropout",
    encoder("no dropout in block 2"): "left the feed-forward block without dropout",
    encoder("dropout twice"): "somewhere else than on each sublayer's output",
    encoder("mask on the queries"): "let the padding reach the real tokens",
}


@pytest.mark.parametrize("mistake", ENCODER_RIGHT)
def test_right_encoder_layers_pass(mistake: str) -> None:
    report = checks.check_paper_encoder_layer(encoder(mistake))
    assert report.passed, report


@pytest.mark.parametrize("layer", ENCODER_WRONG, ids=list(ENCODER_WRONG.values()))
def test_each_encoder_mistake_is_caught_and_named(layer: Any) -> None:
    report = checks.check_paper_encoder_layer(layer)
    assert not report.passed
    assert ENCODER_WRONG[layer] in str(report), report


def test_a_wiring_mistake_made_with_a_dropout_mistake_is_named_by_the_eval_cases() -> None:
    class PreNormWithoutDropout(Encoder):
        def forward(self, x: Tensor, mask: Tensor | None = None) -> Any:
            a, w = self.self_attention(self.norm_1(x), mask=mask)
            h = x + a
            return h + self.feed_forward(self.norm_2(h)), w

    report = checks.check_paper_encoder_layer(PreNormWithoutDropout)
    assert "wired it pre-norm" in str(report) and "eval mode" in str(report), report


def test_the_padding_that_reaches_the_real_tokens_is_said_so() -> None:
    report = str(checks.check_paper_encoder_layer(encoder("mask on the queries")))
    assert "changing the padding vectors moved the outputs of the real tokens" in report


def test_an_unknown_encoder_mistake_gets_its_case_and_the_idea() -> None:
    report = str(checks.check_paper_encoder_layer(encoder("scaled")))
    assert "y differs at index" in report and "not one of the usual mistakes" in report
    assert 'checks.hint("ex4_my_encoder_layer", 2)' in report


class EncoderWrapper(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.layer = attnlib.EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first=False)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Any:
        return self.layer(x, mask)


class EncoderSubclass(attnlib.EncoderLayer):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first=False)


class TorchWrapper(Encoder):
    """attnlib's parts for the names, torch's layer for the work."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.torch_layer = [nn.TransformerEncoderLayer(d_model, num_heads, d_ff, batch_first=True)]

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Any:
        return self.torch_layer[0].to(x.dtype)(x), None


class ResidualUser(Encoder):
    def forward(self, x: Tensor, mask: Tensor | None = None) -> Any:
        block = attnlib.Residual(x.shape[-1], norm_first=False).to(x.dtype)
        a, w = self.self_attention(x, mask=mask)
        return block(x, lambda _: a), w


@pytest.mark.parametrize(
    ("cheat", "called"),
    [
        (EncoderWrapper, "attnlib.EncoderLayer"),
        (EncoderSubclass, "attnlib.EncoderLayer"),
        (TorchWrapper, "torch.nn.TransformerEncoderLayer"),
        (ResidualUser, "attnlib.Residual"),
    ],
)
def test_an_encoder_layer_that_hands_its_work_on_is_refused(cheat: type, called: str) -> None:
    report = checks.check_paper_encoder_layer(cheat)
    assert not report.passed and "does not accept it" in str(report) and called in str(report)


# -- Exercise 5: the decoder layer -------------------------------------------------------------


class Decoder(nn.Module):
    """The paper's decoder layer, or one with the mistake ``mistake`` (a class attribute)."""

    mistake = ""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = (
            self.self_attention
            if self.mistake == "one attention module"
            else attnlib.MultiHeadAttention(d_model, num_heads)
        )
        inner = dropout if self.mistake == "dropout inside too" else 0.0
        self.feed_forward = attnlib.FeedForward(d_model, d_ff, dropout=inner)
        self.norm_1, self.norm_2, self.norm_3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.dropouts = nn.ModuleList(nn.Dropout(dropout) for _ in range(3))

    def _add_norm(self, i: int, inp: Tensor, out: Tensor) -> Tensor:
        m = self.mistake
        norm = {
            "norms reversed": (self.norm_3, self.norm_2, self.norm_1),
            "norm_1 everywhere": (self.norm_1,) * 3,
        }.get(m, (self.norm_1, self.norm_2, self.norm_3))[i]
        if m == "no norms":
            norm = nn.Identity()
        drop = self.dropouts[i]
        if m == "dropout on the sum":
            return norm(drop(inp + out))
        if m == "dropout after the norm":
            return drop(norm(inp + out))
        if m == "no dropout" or m == f"no dropout in block {i}":
            return norm(inp + out)
        if m == "dropout twice":
            return norm(inp + drop(drop(out)))
        if m == "LN(input) + out":
            return norm(inp) + drop(out)
        residual = m != f"no residual {i}"
        return norm(inp + drop(out) if residual else drop(out))

    def forward(self, y: Tensor, memory: Tensor, memory_mask: Tensor | None = None) -> Any:
        m, t = self.mistake, y.shape[1]
        ones = torch.ones(t, t, dtype=torch.bool)
        causal = {
            "causal inverted": ones.triu(1),
            "no causal": None,
            "strict causal": ones.tril(-1),
            "causal from S": torch.ones(memory.shape[1], memory.shape[1]).tril().bool(),
            "masks swapped": memory_mask,
            "future leak": ones.tril(1),
            "float causal": torch.ones(t, t).tril(),
        }.get(m, ones.tril())
        if m == "pre-norm":
            a, w_self = self.self_attention(self.norm_1(y), mask=causal)
            h1 = y + self.dropouts[0](a)
            c, w_cross = self.cross_attention(self.norm_2(h1), memory, memory, mask=memory_mask)
            h2 = h1 + self.dropouts[1](c)
            return h2 + self.dropouts[2](self.feed_forward(self.norm_3(h2))), w_self, w_cross
        if m == "cross first":
            c, w_cross = self.cross_attention(y, memory, memory, mask=memory_mask)
            h1 = self._add_norm(0, y, c)
            a, w_self = self.self_attention(h1, h1, h1, causal)
            h2 = self._add_norm(1, h1, a)
            return self._add_norm(2, h2, self.feed_forward(h2)), w_self, w_cross
        a, w_self = self.self_attention(y, y, y, causal, need_weights=m != "no weights")
        h1 = self._add_norm(0, y, a)
        cross_mask = {
            "memory mask ignored": None,
            "memory mask inverted": None if memory_mask is None else memory_mask == 0,
            "masks swapped": ones.tril(),
            "K, V from h1, no mask": None,
            "causal for the cross-attention": torch.tril(torch.ones(t, t, dtype=torch.bool)),
        }.get(m, memory_mask)
        if m == "causal for the cross-attention too":
            s = memory.shape[1]
            later = torch.arange(s)[None, :] > torch.arange(t)[:, None] + (s - t)  # (T, S)
            cross_mask = ~later if memory_mask is None else memory_mask & ~later
        query, keys = {
            "K, V from h1": (h1, h1),
            "K, V from h1, no mask": (h1, h1),
            "roles swapped": (memory, h1),
            "queries from y": (y, memory),
        }.get(m, (h1, memory))
        attend = self.self_attention if m == "self module twice" else self.cross_attention
        c, w_cross = attend(query, keys, keys, mask=cross_mask, need_weights=m != "no weights")
        h2 = self._add_norm(1, y if m == "skip from y" else h1, c)
        if m == "two blocks":
            return h2, w_self, w_cross
        z = self._add_norm(2, h2, self.feed_forward(h1 if m == "FFN reads h1" else h2))
        if m == "z only":
            return z
        if m == "scaled":  # no usual mistake
            z = 1.01 * z
        return (z, w_cross, w_self) if m == "weights swapped" else (z, w_self, w_cross)


def decoder(mistake: str = "") -> type[nn.Module]:
    return type("MyDecoderLayer", (Decoder,), {"mistake": mistake})


class DecoderRenamed(Decoder):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.ffn = self.feed_forward
        del self.feed_forward


class DecoderLateSuper(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        self.norm_1 = nn.LayerNorm(d_model)
        super().__init__()


class DecoderWithoutMask(Decoder):
    def forward(self, y: Tensor, memory: Tensor) -> Any:  # type: ignore[override]
        return super().forward(y, memory)


class DecoderSwappedSizes(Decoder):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.feed_forward = attnlib.FeedForward(d_ff, d_model)


class DecoderFunctionalDropout(Decoder):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout)
        self.p = dropout
        del self.dropouts
        self.dropouts = [lambda t: nn.functional.dropout(t, self.p, self.training)] * 3


DECODER_WRONG = {
    decoder("pre-norm"): "wired it pre-norm",
    decoder("causal inverted"): "inverted the causal mask",
    decoder("no causal"): "gave the self-attention no causal mask",
    decoder("strict causal"): "hid each position from itself",
    decoder("causal from S"): "for the source's length",
    decoder("K, V from h1"): "keys and values from the decoder (h1), not from memory",
    decoder("K, V from h1, no mask"): "dropped the memory mask",
    decoder("roles swapped"): "swapped the cross-attention's roles",
    decoder("queries from y"): "the layer's input y as its queries",
    decoder("memory mask ignored"): "did not pass the memory mask",
    decoder("memory mask inverted"): "inverted the memory mask",
    decoder("masks swapped"): "the causal mask to the cross-attention",
    decoder("no residual 0"): "residual around the self-attention",
    decoder("no residual 1"): "residual around the cross-attention",
    decoder("no residual 2"): "residual around the feed-forward network",
    decoder("LN(input) + out"): "normalised each block's input and added",
    decoder("cross first"): "cross-attention block before the self-attention block",
    decoder("skip from y"): "added y, not h1",
    decoder("no norms"): "left out the LayerNorms",
    decoder("norms reversed"): "norms in the wrong order",
    decoder("norm_1 everywhere"): "used norm_1 for every block",
    decoder("self module twice"): "the self-attention module for the cross-attention too",
    decoder("FFN reads h1"): "h1 instead of h2",
    decoder("dropout on the sum"): "to the residual sum",
    decoder("dropout after the norm"): "after the LayerNorm",
    decoder("no dropout"): "left dropout out",
    decoder("z only"): "returned only z",
    decoder("two blocks"): "left out the feed-forward block",
    decoder("no weights"): "need_weights=False",
    decoder("causal for the cross-attention"): "the causal mask instead of the memory mask",
    decoder("weights swapped"): "weights in the other order",
    decoder("causal for the cross-attention too"): "on top of the memory mask",
    decoder("float causal"): "a float mask of 1s and 0s",
    decoder("dropout inside too"): "a dropout of its own",
    DecoderRenamed: "named the submodules otherwise",
    DecoderSwappedSizes: "sizes in the wrong order",
    decoder("one attention module"): "shared one module between two sublayers",
    DecoderFunctionalDropout: "drew dropout outside an nn.Dropout submodule",
    decoder()(D_MODEL, NUM_HEADS, D_FF): "instead of the class itself",
    DecoderLateSuper: "before calling super().__init__()",
    DecoderWithoutMask: "with other arguments than the task's",
    decoder("no dropout in block 0"): "left the self-attention block without dropout",
    decoder("no dropout in block 1"): "left the cross-attention block without dropout",
    decoder("no dropout in block 2"): "left the feed-forward block without dropout",
    decoder("dropout twice"): "somewhere else than on each sublayer's output",
    decoder("future leak"): "let a position read later target positions",
}


def test_a_right_decoder_layer_passes() -> None:
    report = checks.check_paper_decoder_layer(decoder())
    assert report.passed, report


@pytest.mark.parametrize("layer", DECODER_WRONG, ids=list(DECODER_WRONG.values()))
def test_each_decoder_mistake_is_caught_and_named(layer: Any) -> None:
    report = checks.check_paper_decoder_layer(layer)
    assert not report.passed
    assert DECODER_WRONG[layer] in str(report), report


def test_a_decoder_that_reads_the_next_position_is_told_so() -> None:
    report = str(checks.check_paper_decoder_layer(decoder("future leak")))
    assert "changing the last target token moved the outputs before it" in report


def test_an_unknown_decoder_mistake_gets_its_case_and_the_idea() -> None:
    report = str(checks.check_paper_decoder_layer(decoder("scaled")))
    assert "z differs at index" in report and "not one of the usual mistakes" in report


class DecoderWrapper(attnlib.DecoderLayer):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, num_heads, d_ff, dropout, norm_first=False)

    def forward(self, y: Tensor, memory: Tensor, memory_mask: Tensor | None = None) -> Any:
        return super().forward(y, memory, attnlib.causal_mask(y.shape[1]), memory_mask)


def test_a_decoder_layer_that_hands_its_work_on_is_refused() -> None:
    report = checks.check_paper_decoder_layer(DecoderWrapper)
    assert not report.passed and "attnlib.DecoderLayer" in str(report), report


# -- both --------------------------------------------------------------------------------------

CHECKERS = {
    "ex4_my_encoder_layer": (checks.check_paper_encoder_layer, ENCODER_WRONG),
    "ex5_my_decoder_layer": (checks.check_paper_decoder_layer, DECODER_WRONG),
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    checker, wrong = CHECKERS[exercise_id]
    table = known_mistakes(exercise_id)
    for mistake in table:
        assert _named(checker(mistake.fn), mistake.name), mistake.name
    for words in wrong.values():  # and each is made again, differently, above
        assert sum(words in m.name for m in table) == 1, words
    assert len(table) == len(wrong)


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_an_unfinished_layer_is_not_done(exercise_id: str) -> None:
    class Stub(nn.Module):
        """The task."""

        def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
            super().__init__()
            raise NotImplementedError()

    report = CHECKERS[exercise_id][0](Stub)
    assert not report.done and "not done yet. Your task: The task." in str(report)
    assert "expected a class" in str(CHECKERS[exercise_id][0](len))


def _seeded_pair(ours: nn.Module, theirs: nn.Module) -> None:
    """Random LayerNorm γ, β in ours, and ours' weights copied into PyTorch's layer."""
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for module in ours.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.copy_(1 + 0.5 * torch.randn(module.weight.shape, generator=g))
                module.bias.copy_(0.5 * torch.randn(module.bias.shape, generator=g))
        pairs = [(ours.self_attention, theirs.self_attn)]
        if hasattr(ours, "cross_attention"):
            pairs.append((ours.cross_attention, theirs.multihead_attn))
        for mine, torch_mha in pairs:
            torch_mha.in_proj_weight.copy_(
                torch.cat([mine.w_q.weight, mine.w_k.weight, mine.w_v.weight])
            )
            torch_mha.in_proj_bias.copy_(torch.cat([mine.w_q.bias, mine.w_k.bias, mine.w_v.bias]))
            torch_mha.out_proj.load_state_dict(mine.w_o.state_dict())
        theirs.linear1.load_state_dict(ours.feed_forward.linear1.state_dict())
        theirs.linear2.load_state_dict(ours.feed_forward.linear2.state_dict())
        for i in (1, 2, 3):
            if hasattr(ours, f"norm_{i}"):
                getattr(theirs, f"norm{i}").load_state_dict(getattr(ours, f"norm_{i}").state_dict())


def test_attnlibs_post_norm_layers_are_pytorchs_as_the_reports_say() -> None:
    torch.manual_seed(0)
    kwargs = {"dropout": 0.0, "batch_first": True, "norm_first": False, "dtype": torch.float64}
    ours = attnlib.EncoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False).double().eval()
    theirs = nn.TransformerEncoderLayer(D_MODEL, NUM_HEADS, D_FF, **kwargs).eval()
    _seeded_pair(ours, theirs)
    x = torch.randn(2, 5, D_MODEL, dtype=torch.float64)
    mask = attnlib.padding_mask([5, 3], 5)
    with torch.no_grad():
        got = ours(x, mask)[0]
        torch_mask = attnlib.to_torch_key_padding_mask(mask)
        torch.testing.assert_close(got, theirs(x, src_key_padding_mask=torch_mask))
    ours = attnlib.DecoderLayer(D_MODEL, NUM_HEADS, D_FF, norm_first=False).double().eval()
    theirs = nn.TransformerDecoderLayer(D_MODEL, NUM_HEADS, D_FF, **kwargs).eval()
    _seeded_pair(ours, theirs)
    y = torch.randn(2, 4, D_MODEL, dtype=torch.float64)
    with torch.no_grad():
        got = ours(y, x, attnlib.causal_mask(4), mask)[0]
        expected = theirs(
            y, x, tgt_mask=~attnlib.causal_mask(4), memory_key_padding_mask=torch_mask
        )
    torch.testing.assert_close(got, expected)


# -- slips the engine names (issue 40) ------------------------------------------------------------


class FloatMaskEncoder(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):  # type: ignore[no-untyped-def]
        mask = None if mask is None else mask.float()  # 1 = may attend
        a, weights = self.self_attention(x, x, x, mask=mask)
        x = self.norm_1(x + self.dropout(a))
        return self.norm_2(x + self.dropout(self.feed_forward(x))), weights


def test_a_float_mask_is_named_at_the_layers_line() -> None:
    report = checks.check_paper_encoder_layer(FloatMaskEncoder)
    assert report.mistake == "passed an attention a float mask of 1s and 0s, not a bool one", report
    assert "of your forward, `self.self_attention(x, x, x, mask=mask)`" in str(report), report
