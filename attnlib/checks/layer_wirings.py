"""The usual wrong wirings of an encoder or decoder layer, and PyTorch's layers, same weights.

:mod:`attnlib.checks.transformer_layers` recomputes each wrong wiring from the
reference layer's own submodules and names the one a learner's output matches;
PyTorch's ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer`` with the
same weights confirm that attnlib's post-norm layers are the standard ones.

Notebook 08.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from attnlib.decoder import DecoderLayer
from attnlib.encoder import EncoderLayer
from attnlib.masks import causal_mask

# The checkers' layer size: small enough to be quick, with 2 heads so that a head mix-up shows.
D_MODEL, NUM_HEADS, D_FF = 8, 2, 16
Tensor = torch.Tensor
Variants = dict[str, Tensor]


def encoder_variants(layer: EncoderLayer, x: Tensor, mask: Tensor) -> Variants:
    attend, ffn, n1, n2 = layer.self_attention, layer.feed_forward, layer.norm_1, layer.norm_2

    def wired(
        first: Callable[[Tensor, Tensor], Tensor],
        second: Callable[[Tensor, Tensor], Tensor],
        attention_mask: Tensor | None = mask,
    ) -> Tensor:
        h = first(x, attend(x, mask=attention_mask)[0])
        return second(h, ffn(h))

    with torch.no_grad():
        return {
            "it is pre-norm, x + f(LN(x)): the paper's layer is post-norm, LN(x + f(x))": (
                pre_norm(layer)(x, mask)[0]
            ),
            "the self-attention has no residual: norm_1 must get x + attention, not attention": (
                wired(lambda _x, a: n1(a), lambda h, f: n2(h + f))
            ),
            "the feed-forward network has no residual: norm_2 must get h + FFN(h)": (
                wired(lambda x_, a: n1(x_ + a), lambda _h, f: n2(f))
            ),
            "there is no LayerNorm: each sum x + f(x) must go through its norm": (
                wired(lambda x_, a: x_ + a, lambda h, f: h + f)
            ),
            "norm_1 and norm_2 are swapped: norm_1 follows the attention, norm_2 the FFN": (
                wired(lambda x_, a: n2(x_ + a), lambda h, f: n1(h + f))
            ),
            "the padding mask is ignored: pass mask=mask to the self-attention": (
                wired(lambda x_, a: n1(x_ + a), lambda h, f: n2(h + f), attention_mask=None)
            ),
            "the padding mask is inverted: in this course True means 'may attend'": (
                wired(lambda x_, a: n1(x_ + a), lambda h, f: n2(h + f), attention_mask=~mask)
            ),
        }


def decoder_variants(
    layer: DecoderLayer, y: Tensor, memory: Tensor, memory_mask: Tensor
) -> Variants:
    t = y.shape[1]
    causal = causal_mask(t)

    def wired(
        self_mask: Tensor | None = causal,
        cross_source: str = "memory",
        cross_mask: Tensor | None = memory_mask,
        residual: tuple[bool, bool, bool] = (True, True, True),
        norms: tuple[nn.Module, nn.Module, nn.Module] | None = None,
    ) -> Tensor:
        n1, n2, n3 = norms or (layer.norm_1, layer.norm_2, layer.norm_3)
        a = layer.self_attention(y, mask=self_mask)[0]
        h1 = n1(y + a if residual[0] else a)
        keys = memory if cross_source == "memory" else h1
        c = layer.cross_attention(h1, keys, mask=cross_mask if cross_source == "memory" else None)[
            0
        ]
        h2 = n2(h1 + c if residual[1] else c)
        f = layer.feed_forward(h2)
        return n3(h2 + f if residual[2] else f)

    identity = nn.Identity()
    with torch.no_grad():
        return {
            "it is pre-norm, y + f(LN(y)): the paper's layer is post-norm, LN(y + f(y))": (
                pre_norm(layer)(y, memory, causal, memory_mask)[0]
            ),
            "the causal mask is inverted: causal_mask(T) is True where a position may attend": (
                wired(self_mask=~causal)
            ),
            "there is no causal mask: a position reads the target tokens after it": wired(None),
            "cross-attention reads the decoder instead of the encoder: its keys and values "
            "must be memory": wired(cross_source="decoder"),
            "the memory padding mask is ignored: pass mask=memory_mask to the cross-attention": (
                wired(cross_mask=None)
            ),
            "the memory padding mask is inverted: True means 'may attend'": (
                wired(cross_mask=~memory_mask)
            ),
            "the self-attention has no residual": wired(residual=(False, True, True)),
            "the cross-attention has no residual": wired(residual=(True, False, True)),
            "the feed-forward network has no residual": wired(residual=(True, True, False)),
            "there is no LayerNorm: each sum must go through its norm": (
                wired(norms=(identity, identity, identity))
            ),
            "the norms are in the wrong order: norm_1, norm_2, norm_3 follow self-attention, "
            "cross-attention and the FFN": wired(norms=(layer.norm_3, layer.norm_2, layer.norm_1)),
        }


def pre_norm(layer: EncoderLayer | DecoderLayer) -> nn.Module:
    """The same weights in the same kind of layer, wired pre-norm (``norm_first=True``)."""
    pre = type(layer)(D_MODEL, NUM_HEADS, D_FF, norm_first=True).to(torch.float64).eval()
    pre.load_state_dict(layer.state_dict())
    return pre


def sees_the_future(learner: nn.Module, y: Tensor, memory: Tensor, memory_mask: Tensor) -> bool:
    """Whether changing the last target vector moves an earlier output of the learner's layer."""
    if y.shape[1] < 2:
        return False
    later = y.clone()
    later[:, -1] += 1.0
    with torch.no_grad():
        before, after = (
            _outputs(learner, y, memory, memory_mask),
            _outputs(learner, later, memory, memory_mask),
        )
    if not (isinstance(before, tuple) and isinstance(after, tuple)):
        return False
    return not torch.allclose(before[0][:, :-1], after[0][:, :-1], atol=1e-9)


def torch_encoder_layer(layer: EncoderLayer) -> nn.TransformerEncoderLayer:
    theirs = nn.TransformerEncoderLayer(
        D_MODEL, NUM_HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=False
    )
    theirs = theirs.to(torch.float64).eval()
    with torch.no_grad():
        _copy_attention(layer.self_attention, theirs.self_attn)
        theirs.linear1.load_state_dict(layer.feed_forward.linear1.state_dict())
        theirs.linear2.load_state_dict(layer.feed_forward.linear2.state_dict())
        theirs.norm1.load_state_dict(layer.norm_1.state_dict())
        theirs.norm2.load_state_dict(layer.norm_2.state_dict())
    return theirs


def torch_decoder_layer(layer: DecoderLayer) -> nn.TransformerDecoderLayer:
    theirs = nn.TransformerDecoderLayer(
        D_MODEL, NUM_HEADS, D_FF, dropout=0.0, batch_first=True, norm_first=False
    )
    theirs = theirs.to(torch.float64).eval()
    with torch.no_grad():
        _copy_attention(layer.self_attention, theirs.self_attn)
        _copy_attention(layer.cross_attention, theirs.multihead_attn)
        theirs.linear1.load_state_dict(layer.feed_forward.linear1.state_dict())
        theirs.linear2.load_state_dict(layer.feed_forward.linear2.state_dict())
        for ours, torch_norm in zip(
            (layer.norm_1, layer.norm_2, layer.norm_3),
            (theirs.norm1, theirs.norm2, theirs.norm3),
            strict=True,
        ):
            torch_norm.load_state_dict(ours.state_dict())
    return theirs


def _copy_attention(ours: nn.Module, theirs: nn.MultiheadAttention) -> None:
    # PyTorch packs W_q, W_k, W_v into one (3C, C) in_proj_weight.
    theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
    theirs.out_proj.load_state_dict(ours.w_o.state_dict())


def _outputs(learner: nn.Module, *args: Tensor) -> object:
    try:
        return learner(*args)
    except Exception as error:  # a crash here is reported by the comparison, not raised
        return error
