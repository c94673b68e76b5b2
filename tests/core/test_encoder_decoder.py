"""EncoderLayer, DecoderLayer and their stacks against torch.nn.TransformerEncoder/Decoder."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attnlib.decoder import Decoder, DecoderLayer
from attnlib.encoder import Encoder, EncoderLayer
from attnlib.masks import causal_mask, padding_mask, to_torch_key_padding_mask, to_torch_mha_mask
from attnlib.multi_head import MultiHeadAttention

D_MODEL, HEADS, D_FF = 16, 4, 24


def _copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """torch packs W_q, W_k, W_v into one in_proj_weight (3C, C); attnlib keeps three (C, C)."""
    weights = theirs.in_proj_weight.chunk(3, dim=0)
    biases = theirs.in_proj_bias.chunk(3, dim=0)
    for linear, weight, bias in zip((ours.w_q, ours.w_k, ours.w_v), weights, biases, strict=True):
        linear.weight.copy_(weight)
        linear.bias.copy_(bias)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    ours.w_o.bias.copy_(theirs.out_proj.bias)


def _copy_norm(ours: nn.LayerNorm, theirs: nn.LayerNorm) -> None:
    ours.weight.copy_(theirs.weight)
    ours.bias.copy_(theirs.bias)


def _copy_feed_forward(ours, theirs) -> None:
    ours.feed_forward.linear1.weight.copy_(theirs.linear1.weight)
    ours.feed_forward.linear1.bias.copy_(theirs.linear1.bias)
    ours.feed_forward.linear2.weight.copy_(theirs.linear2.weight)
    ours.feed_forward.linear2.bias.copy_(theirs.linear2.bias)


@torch.no_grad()
def _randomise(module: nn.Module, seed: int) -> None:
    """Random values everywhere (torch starts biases at 0 and LayerNorms at 1, 0: too easy)."""
    g = torch.Generator().manual_seed(seed)
    for parameter in module.parameters():
        parameter.copy_(torch.randn(parameter.shape, generator=g, dtype=parameter.dtype) * 0.3)


@torch.no_grad()
def _encoder_layer_from_torch(theirs: nn.TransformerEncoderLayer, norm_first: bool) -> EncoderLayer:
    ours = EncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first).double()
    _copy_attention(ours.self_attention, theirs.self_attn)
    _copy_feed_forward(ours, theirs)
    _copy_norm(ours.norm_1, theirs.norm1)
    _copy_norm(ours.norm_2, theirs.norm2)
    return ours


@torch.no_grad()
def _decoder_layer_from_torch(theirs: nn.TransformerDecoderLayer, norm_first: bool) -> DecoderLayer:
    ours = DecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, norm_first=norm_first).double()
    _copy_attention(ours.self_attention, theirs.self_attn)
    _copy_attention(ours.cross_attention, theirs.multihead_attn)
    _copy_feed_forward(ours, theirs)
    _copy_norm(ours.norm_1, theirs.norm1)
    _copy_norm(ours.norm_2, theirs.norm2)
    _copy_norm(ours.norm_3, theirs.norm3)
    return ours


def _torch_encoder_layer(norm_first: bool, seed: int = 0) -> nn.TransformerEncoderLayer:
    layer = nn.TransformerEncoderLayer(
        D_MODEL, HEADS, D_FF, dropout=0.0, activation="relu", batch_first=True,
        norm_first=norm_first, dtype=torch.float64,
    )  # fmt: skip
    _randomise(layer, seed)
    return layer.train()  # training mode (dropout is 0) keeps torch off its fused fast path


def _torch_decoder_layer(norm_first: bool, seed: int = 0) -> nn.TransformerDecoderLayer:
    layer = nn.TransformerDecoderLayer(
        D_MODEL, HEADS, D_FF, dropout=0.0, activation="relu", batch_first=True,
        norm_first=norm_first, dtype=torch.float64,
    )  # fmt: skip
    _randomise(layer, seed)
    return layer.train()


def _inputs(batch: int, length: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, length, D_MODEL, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize(("batch", "length"), [(1, 1), (2, 5), (3, 7)])
def test_encoder_layer_equals_torch_without_mask(norm_first: bool, batch: int, length: int) -> None:
    theirs = _torch_encoder_layer(norm_first)
    ours = _encoder_layer_from_torch(theirs, norm_first)
    x = _inputs(batch, length, seed=1)
    out, weights = ours(x)
    torch.testing.assert_close(out, theirs(x))
    assert out.shape == x.shape and weights.shape == (batch, HEADS, length, length)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("lengths", [[5, 3, 1], [6, 6, 2]])
def test_encoder_layer_equals_torch_with_padding(norm_first: bool, lengths: list[int]) -> None:
    theirs = _torch_encoder_layer(norm_first, seed=2)
    ours = _encoder_layer_from_torch(theirs, norm_first)
    x = _inputs(len(lengths), max(lengths), seed=3)
    mask = padding_mask(lengths, max(lengths))  # (B, 1, 1, S), True = real token
    out, weights = ours(x, mask)
    expected = theirs(x, src_key_padding_mask=to_torch_key_padding_mask(mask))
    for b, n in enumerate(lengths):  # padded positions are never read; compare real ones
        torch.testing.assert_close(out[b, :n], expected[b, :n])
        assert (weights[b, :, :, n:] == 0).all()


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_layer_equals_torch_with_an_attention_mask(norm_first: bool) -> None:
    theirs = _torch_encoder_layer(norm_first, seed=4)
    ours = _encoder_layer_from_torch(theirs, norm_first)
    x = _inputs(2, 6, seed=5)
    mask = causal_mask(6)
    torch.testing.assert_close(ours(x, mask)[0], theirs(x, src_mask=to_torch_mha_mask(mask)))


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize(("batch", "t", "s"), [(1, 1, 1), (2, 4, 6), (3, 6, 3)])
def test_decoder_layer_equals_torch_without_masks(
    norm_first: bool, batch: int, t: int, s: int
) -> None:
    theirs = _torch_decoder_layer(norm_first)
    ours = _decoder_layer_from_torch(theirs, norm_first)
    y, memory = _inputs(batch, t, seed=6), _inputs(batch, s, seed=7)
    out, self_weights, cross_weights = ours(y, memory)
    torch.testing.assert_close(out, theirs(y, memory))
    assert out.shape == y.shape
    assert self_weights.shape == (batch, HEADS, t, t)
    assert cross_weights.shape == (batch, HEADS, t, s)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_layer_equals_torch_with_causal_and_padding_masks(norm_first: bool) -> None:
    theirs = _torch_decoder_layer(norm_first, seed=8)
    ours = _decoder_layer_from_torch(theirs, norm_first)
    tgt_lengths, src_lengths = [5, 3, 4], [2, 7, 5]
    y, memory = _inputs(3, 5, seed=9), _inputs(3, 7, seed=10)
    tgt_padding, src_padding = padding_mask(tgt_lengths, 5), padding_mask(src_lengths, 7)
    self_mask = causal_mask(5) & tgt_padding  # (B, 1, T, T)
    out, self_weights, cross_weights = ours(y, memory, self_mask, src_padding)
    expected = theirs(
        y,
        memory,
        tgt_mask=to_torch_mha_mask(causal_mask(5)),
        tgt_key_padding_mask=to_torch_key_padding_mask(tgt_padding),
        memory_key_padding_mask=to_torch_key_padding_mask(src_padding),
    )
    for b, n in enumerate(tgt_lengths):
        torch.testing.assert_close(out[b, :n], expected[b, :n])
    assert (self_weights[~self_mask.expand_as(self_weights)] == 0).all()
    assert (cross_weights[~src_padding.expand_as(cross_weights)] == 0).all()


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_layer_with_the_combined_mask_as_one_torch_mask(norm_first: bool) -> None:
    """attnlib's single (B, 1, T, T) mask equals torch's per-head (B·H, T, T) attn_mask."""
    theirs = _torch_decoder_layer(norm_first, seed=11)
    ours = _decoder_layer_from_torch(theirs, norm_first)
    y, memory = _inputs(2, 4, seed=12), _inputs(2, 3, seed=13)
    self_mask = causal_mask(4) & padding_mask([4, 4], 4)
    memory_mask = padding_mask([3, 2], 3).expand(2, 1, 4, 3)  # (B, 1, T, S)
    expected = theirs(
        y,
        memory,
        tgt_mask=to_torch_mha_mask(self_mask, HEADS),
        memory_mask=to_torch_mha_mask(memory_mask, HEADS),
    )
    torch.testing.assert_close(ours(y, memory, self_mask, memory_mask)[0], expected)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("num_layers", [1, 3])
def test_encoder_stack_equals_torch(norm_first: bool, num_layers: int) -> None:
    layers = [_torch_encoder_layer(norm_first, seed=20 + i) for i in range(num_layers)]
    final = nn.LayerNorm(D_MODEL, dtype=torch.float64) if norm_first else None
    theirs = nn.TransformerEncoder(layers[0], num_layers, norm=final, enable_nested_tensor=False)
    with torch.no_grad():
        for i, layer in enumerate(layers):  # TransformerEncoder deep-copies: copy back in
            theirs.layers[i].load_state_dict(layer.state_dict())
        if final is not None:
            _randomise(theirs.norm, seed=30)
    ours = Encoder(num_layers, D_MODEL, HEADS, D_FF, norm_first=norm_first).double()
    with torch.no_grad():
        for mine, layer in zip(ours.layers, theirs.layers, strict=True):
            mine.load_state_dict(_encoder_layer_from_torch(layer, norm_first).state_dict())
        if norm_first:
            ours.final_norm.load_state_dict(theirs.norm.state_dict())
    assert isinstance(ours.final_norm, nn.LayerNorm if norm_first else nn.Identity)
    x = _inputs(2, 5, seed=31)
    mask = padding_mask([5, 3], 5)
    out, weights = ours(x, mask)
    expected = theirs(x, src_key_padding_mask=to_torch_key_padding_mask(mask))
    torch.testing.assert_close(out[0], expected[0])
    torch.testing.assert_close(out[1, :3], expected[1, :3])
    assert len(weights) == num_layers and all(w.shape == (2, HEADS, 5, 5) for w in weights)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_decoder_stack_equals_torch(norm_first: bool, num_layers: int) -> None:
    layers = [_torch_decoder_layer(norm_first, seed=40 + i) for i in range(num_layers)]
    final = nn.LayerNorm(D_MODEL, dtype=torch.float64) if norm_first else None
    theirs = nn.TransformerDecoder(layers[0], num_layers, norm=final)
    with torch.no_grad():
        for i, layer in enumerate(layers):
            theirs.layers[i].load_state_dict(layer.state_dict())
        if final is not None:
            _randomise(theirs.norm, seed=50)
    ours = Decoder(num_layers, D_MODEL, HEADS, D_FF, norm_first=norm_first).double()
    with torch.no_grad():
        for mine, layer in zip(ours.layers, theirs.layers, strict=True):
            mine.load_state_dict(_decoder_layer_from_torch(layer, norm_first).state_dict())
        if norm_first:
            ours.final_norm.load_state_dict(theirs.norm.state_dict())
    y, memory = _inputs(2, 4, seed=51), _inputs(2, 6, seed=52)
    src_padding = padding_mask([6, 4], 6)
    out, self_weights, cross_weights = ours(y, memory, causal_mask(4), src_padding)
    expected = theirs(
        y,
        memory,
        tgt_mask=to_torch_mha_mask(causal_mask(4)),
        memory_key_padding_mask=to_torch_key_padding_mask(src_padding),
    )
    torch.testing.assert_close(out, expected)
    assert len(self_weights) == len(cross_weights) == num_layers
    assert all(w.shape == (2, HEADS, 4, 4) for w in self_weights)
    assert all(w.shape == (2, HEADS, 4, 6) for w in cross_weights)


def test_float32_layers_agree_with_torch_to_1e_5() -> None:
    torch.manual_seed(0)
    theirs = nn.TransformerDecoderLayer(D_MODEL, HEADS, D_FF, dropout=0.0, batch_first=True)
    _randomise(theirs, seed=60)
    ours = _decoder_layer_from_torch(theirs.double(), norm_first=False).float()
    theirs = theirs.float().train()
    y, memory = _inputs(2, 5, seed=61).float(), _inputs(2, 3, seed=62).float()
    expected = theirs(y, memory, tgt_mask=to_torch_mha_mask(causal_mask(5)))
    torch.testing.assert_close(ours(y, memory, causal_mask(5))[0], expected, atol=1e-5, rtol=1e-5)


def test_decoder_layer_is_causal() -> None:
    """With the causal mask, output t is unchanged when target positions after t change."""
    torch.manual_seed(0)
    layer = DecoderLayer(D_MODEL, HEADS, D_FF).double().eval()
    y, memory = _inputs(1, 6, seed=70), _inputs(1, 4, seed=71)
    out = layer(y, memory, causal_mask(6))[0]
    changed = y.clone()
    changed[:, 4:] = _inputs(1, 2, seed=72)
    torch.testing.assert_close(layer(changed, memory, causal_mask(6))[0][:, :4], out[:, :4])
    assert not torch.allclose(layer(changed, memory)[0][:, :4], out[:, :4])  # no mask: it leaks


def test_gelu_activation_and_dropout_reach_the_sublayers() -> None:
    layer = EncoderLayer(8, 2, 16, dropout=0.25, activation="gelu")
    assert layer.feed_forward.activation == "gelu"
    assert layer.self_attention.dropout == 0.25
    assert layer.dropout.p == layer.feed_forward.dropout.p == 0.25  # residual and hidden
    assert layer.norm_first and not DecoderLayer(8, 2, 16, norm_first=False).norm_first


def test_the_layers_write_their_residuals_out_and_use_no_residual_module() -> None:
    from attnlib.residual import Residual

    for layer in (EncoderLayer(8, 2, 16), DecoderLayer(8, 2, 16)):
        assert not any(isinstance(module, Residual) for module in layer.modules())
    # Sublayers before norms: the parameters() order of every model trained so far, which
    # gradient clipping sums over (another order changes trained weights in the last bits).
    assert [name for name, _ in EncoderLayer(8, 2, 16).named_children()] == [
        "self_attention", "feed_forward", "norm_1", "norm_2", "dropout",
    ]  # fmt: skip
    assert [name for name, _ in DecoderLayer(8, 2, 16).named_children()] == [
        "self_attention", "cross_attention", "feed_forward", "norm_1", "norm_2", "norm_3",
        "dropout",
    ]  # fmt: skip


@pytest.mark.parametrize("norm_first", [True, False])
def test_residual_dropout_hits_each_sublayer_output_in_order(norm_first: bool) -> None:
    """In training, the same seed gives the same draws as the formula written by hand."""
    torch.manual_seed(0)
    layer = EncoderLayer(D_MODEL, HEADS, D_FF, dropout=0.3, norm_first=norm_first).double()
    layer.self_attention.dropout = layer.feed_forward.dropout.p = 0.0  # residual dropout only
    x = _inputs(2, 5, seed=80)
    torch.manual_seed(1)
    out, _ = layer.train()(x)
    attend, ffn, drop = layer.self_attention, layer.feed_forward, torch.nn.functional.dropout
    torch.manual_seed(1)
    if norm_first:
        h = x + drop(attend(layer.norm_1(x))[0], 0.3)
        expected = h + drop(ffn(layer.norm_2(h)), 0.3)
    else:
        h = layer.norm_1(x + drop(attend(x)[0], 0.3))
        expected = layer.norm_2(h + drop(ffn(h), 0.3))
    torch.testing.assert_close(out, expected)
    assert not torch.allclose(out, layer.eval()(x)[0])  # the draws did drop something


def test_bad_construction_and_inputs() -> None:
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by num_heads \(4\)"):
        EncoderLayer(10, 4, 16)
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by num_heads \(4\)"):
        DecoderLayer(10, 4, 16)
    with pytest.raises(ValueError, match="activation must be one of"):
        Encoder(2, 8, 2, 16, activation="swish")
    with pytest.raises(ValueError, match="dropout must be in"):
        Decoder(1, 8, 2, 16, dropout=1.0)
    for norm_first in (True, False):  # the stacks check before a pre-norm LayerNorm can fail
        encoder = Encoder(2, 8, 2, 16, norm_first=norm_first)
        with pytest.raises(ValueError, match=r"x must have shape \(B, T, 8\), got \(2, 3, 6\)"):
            encoder(torch.randn(2, 3, 6))
        with pytest.raises(ValueError, match=r"x must have shape \(B, T, 8\), got \(3, 8\)"):
            encoder(torch.randn(3, 8))
        with pytest.raises(TypeError, match="x must have a floating-point dtype"):
            encoder(torch.ones(2, 3, 8, dtype=torch.long))
        decoder = Decoder(2, 8, 2, 16, norm_first=norm_first)
        with pytest.raises(ValueError, match=r"y must have shape \(B, T, 8\), got \(2, 3, 6\)"):
            decoder(torch.randn(2, 3, 6), torch.randn(2, 4, 8))
        with pytest.raises(ValueError, match=r"memory must have shape \(B, T, 8\), got \(4, 6\)"):
            decoder(torch.randn(2, 3, 8), torch.randn(4, 6))
        with pytest.raises(
            ValueError, match=r"must share the batch size, got \(2, 3, 8\) and \(3, 4, 8\)"
        ):
            decoder(torch.randn(2, 3, 8), torch.randn(3, 4, 8))
    # A layer trusts its caller; its attention still checks what reaches it.
    with pytest.raises(ValueError, match="share the batch size"):
        DecoderLayer(8, 2, 16)(torch.randn(2, 3, 8), torch.randn(3, 4, 8))
    with pytest.raises(ValueError, match="does not broadcast"):
        EncoderLayer(8, 2, 16)(torch.randn(2, 3, 8), torch.ones(2, 1, 1, 4, dtype=torch.bool))


@pytest.mark.parametrize("norm_first", [True, False])
def test_one_stack_serves_encoder_and_decoder_and_keeps_every_hidden_state(
    norm_first: bool,
) -> None:
    from attnlib.layer_stack import LayerStack

    torch.manual_seed(0)
    encoder = Encoder(3, D_MODEL, HEADS, D_FF, norm_first=norm_first).double().eval()
    decoder = Decoder(2, D_MODEL, HEADS, D_FF, norm_first=norm_first).double().eval()
    assert isinstance(encoder, LayerStack) and isinstance(decoder, LayerStack)
    x, y = _inputs(2, 5, seed=90), _inputs(2, 4, seed=91)
    with torch.no_grad():
        run = encoder.run(x, None)
        by_hand, weights = [x], []
        for layer in encoder.layers:
            h, w = layer(by_hand[-1])
            by_hand.append(h)
            weights.append(w)
        assert len(run.hidden_states) == 4 and torch.equal(run.hidden_states[0], x)
        for ours, theirs in zip(run.hidden_states, by_hand, strict=True):
            torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
        torch.testing.assert_close(run.output, encoder.final_norm(by_hand[-1]), rtol=0, atol=0)
        assert [len(kind) for kind in run.weights] == [3]  # one attention per encoder layer
        memory, enc_weights = encoder(x)
        torch.testing.assert_close(memory, run.output, rtol=0, atol=0)
        assert all(torch.equal(a, b) for a, b in zip(enc_weights, weights, strict=True))
        out, self_w, cross_w = decoder(y, memory, causal_mask(4))
        dec_run = decoder.run(y, memory, causal_mask(4), None)
        assert [len(kind) for kind in dec_run.weights] == [2, 2]  # self- and cross-attention
        torch.testing.assert_close(out, dec_run.output, rtol=0, atol=0)
        assert cross_w[0].shape == (2, HEADS, 4, 5) and self_w[1].shape == (2, HEADS, 4, 4)
