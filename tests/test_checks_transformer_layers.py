"""Notebook 08's build-it checkers: a right layer passes, and each wrong wiring is named."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import attnlib
from attnlib import checks


class Encoder(nn.Module):
    """The paper's post-norm encoder layer, wired as the exercise asks (or with one mistake)."""

    mistake = ""

    def __init__(self, d_model: int, num_heads: int, d_ff: int) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        m = self.mistake
        if m == "pre-norm":
            a, w = self.self_attention(self.norm_1(x), mask=mask)
            h = x + a
            return h + self.feed_forward(self.norm_2(h)), w
        mask = {"mask ignored": None, "mask inverted": None if mask is None else ~mask}.get(m, mask)
        a, w = self.self_attention(x, mask=mask)
        first, second = (
            (self.norm_2, self.norm_1) if m == "norms swapped" else (self.norm_1, self.norm_2)
        )
        if m == "no LayerNorm":
            first = second = nn.Identity()
        h = first(a if m == "no attention residual" else x + a)
        f = self.feed_forward(h)
        y = second(f if m == "no FFN residual" else h + f)
        if m == "weights missing":
            return y
        if m == "eps inside wrong":
            return y * 1.001, w
        return y, w


def _encoder(mistake: str) -> type[nn.Module]:
    return type("MyEncoderLayer", (Encoder,), {"mistake": mistake})


class Decoder(nn.Module):
    """The paper's post-norm decoder layer (or one with one mistake)."""

    mistake = ""

    def __init__(self, d_model: int, num_heads: int, d_ff: int) -> None:
        super().__init__()
        self.self_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.cross_attention = attnlib.MultiHeadAttention(d_model, num_heads)
        self.feed_forward = attnlib.FeedForward(d_model, d_ff)
        self.norm_1 = nn.LayerNorm(d_model)
        self.norm_2 = nn.LayerNorm(d_model)
        self.norm_3 = nn.LayerNorm(d_model)

    def forward(self, y, memory, memory_mask=None):
        m = self.mistake
        t = y.shape[1]
        causal = {"causal inverted": ~attnlib.causal_mask(t), "no causal": None}.get(
            m, attnlib.causal_mask(t)
        )
        if m == "future leak":  # attends to the next position too: no usual wiring
            causal = attnlib.causal_mask(t) | torch.eye(t, dtype=torch.bool).roll(1, dims=1)
        n1, n2, n3 = (self.norm_3, self.norm_2, self.norm_1) if m == "norms reversed" else (
            self.norm_1, self.norm_2, self.norm_3)  # fmt: skip
        if m == "pre-norm":
            a, w_self = self.self_attention(n1(y), mask=causal)
            h1 = y + a
            c, w_cross = self.cross_attention(n2(h1), memory, mask=memory_mask)
            h2 = h1 + c
            return h2 + self.feed_forward(n3(h2)), w_self, w_cross
        a, w_self = self.self_attention(y, mask=causal)
        h1 = n1(a if m == "no self residual" else y + a)
        source = h1 if m == "cross reads decoder" else memory
        cross_mask = {"memory mask ignored": None, "memory mask inverted": ~memory_mask}.get(
            m, memory_mask if m != "cross reads decoder" else None
        )
        if m == "queries from memory":
            c, w_cross = self.cross_attention(memory, h1, mask=None)
        else:
            c, w_cross = self.cross_attention(h1, source, mask=cross_mask)
        h2 = n2(c if m == "no cross residual" else h1 + c)
        f = self.feed_forward(h2)
        z = n3(f if m == "no FFN residual" else h2 + f)
        return z, w_self, w_cross


def _decoder(mistake: str) -> type[nn.Module]:
    return type("MyDecoderLayer", (Decoder,), {"mistake": mistake})


def test_a_right_encoder_layer_passes_and_matches_pytorch() -> None:
    result = checks.check_encoder_layer(_encoder(""))
    assert result.passed, result.message
    assert "torch.nn.TransformerEncoderLayer" in result.message


def test_a_right_decoder_layer_passes_and_matches_pytorch() -> None:
    result = checks.check_decoder_layer(_decoder(""))
    assert result.passed, result.message
    assert "torch.nn.TransformerDecoderLayer" in result.message


@pytest.mark.parametrize(
    ("mistake", "named"),
    [
        ("pre-norm", "pre-norm"),
        ("no attention residual", "self-attention has no residual"),
        ("no FFN residual", "feed-forward network has no residual"),
        ("no LayerNorm", "no LayerNorm"),
        ("norms swapped", "swapped"),
        ("mask ignored", "padding mask is ignored"),
        ("mask inverted", "padding mask is inverted"),
        ("weights missing", "should return a tuple (y, weights)"),
        ("eps inside wrong", "differs at index"),
    ],
)
def test_each_wrong_encoder_layer_is_named(mistake: str, named: str) -> None:
    result = checks.check_encoder_layer(_encoder(mistake))
    assert not result.passed and result.done
    assert named in result.message, result.message
    assert "hint:" in result.message


@pytest.mark.parametrize(
    ("mistake", "named"),
    [
        ("pre-norm", "pre-norm"),
        ("causal inverted", "causal mask is inverted"),
        ("no causal", "there is no causal mask"),
        ("future leak", "not causal: changing the last target token"),
        ("cross reads decoder", "reads the decoder instead of the encoder"),
        ("memory mask ignored", "memory padding mask is ignored"),
        ("memory mask inverted", "memory padding mask is inverted"),
        ("no self residual", "self-attention has no residual"),
        ("no cross residual", "cross-attention has no residual"),
        ("no FFN residual", "feed-forward network has no residual"),
        ("norms reversed", "norms are in the wrong order"),
        ("queries from memory", "queries come from the decoder"),
    ],
)
def test_each_wrong_decoder_layer_is_named(mistake: str, named: str) -> None:
    result = checks.check_decoder_layer(_decoder(mistake))
    assert not result.passed and result.done
    assert named in result.message, result.message


@pytest.mark.parametrize("check", [checks.check_encoder_layer, checks.check_decoder_layer])
def test_a_stub_is_not_done_yet_with_its_task(check) -> None:
    class MyLayer(nn.Module):
        """Build the layer."""

        def __init__(self, d_model, num_heads, d_ff):
            super().__init__()
            raise NotImplementedError()

    result = check(MyLayer)
    assert not result.passed and not result.done
    assert "not done yet (Build the layer.)" in result.message


@pytest.mark.parametrize("check", [checks.check_encoder_layer, checks.check_decoder_layer])
def test_wrong_names_shapes_and_kinds_are_explained(check) -> None:
    class Renamed(nn.Module):
        def __init__(self, d_model, num_heads, d_ff):
            super().__init__()
            self.attn = attnlib.MultiHeadAttention(d_model, num_heads)

    message = check(Renamed).message
    assert "parameter names differ" in message and "missing" in message and "'attn." in message
    assert "self_attention" in message  # the names to use

    assert "expected a class derived from nn.Module" in check(lambda x: x).message

    class Crashes(nn.Module):
        def __init__(self, d_model, num_heads, d_ff):
            raise ZeroDivisionError("oops")

    assert "raised ZeroDivisionError: oops" in check(Crashes).message


def test_a_wrong_width_is_named_with_its_parameter() -> None:
    class Wide(Encoder):
        def __init__(self, d_model, num_heads, d_ff):
            super().__init__(d_model, num_heads, 2 * d_ff)

    message = checks.check_encoder_layer(Wide).message
    assert "feed_forward.linear1.weight has shape (32, 8), expected (16, 8)" in message


def test_a_layer_that_raises_in_forward_is_reported_not_raised() -> None:
    class Broken(Encoder):
        def forward(self, x, mask=None):
            raise RuntimeError("shapes do not match")

    message = checks.check_encoder_layer(Broken).message
    assert "forward raised RuntimeError: shapes do not match" in message
