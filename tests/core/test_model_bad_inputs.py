"""Bad inputs to the model layers: a TypeError or ValueError that names the caller's argument.

Each case is one class of mistake a learner makes, with the words the message must hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

import attnlib
from attnlib import (
    Decoder,
    Encoder,
    FeedForward,
    MultiHeadAttention,
    Residual,
    Transformer,
    TransformerConfig,
    fused_attention,
    merge_heads,
    scaled_dot_product_attention,
    split_heads,
    tiled_attention,
)
from attnlib.single_head import SelfAttention

Q = torch.randn(2, 3, 4)


def _transformer() -> Transformer:
    config = TransformerConfig(
        src_vocab_size=11, tgt_vocab_size=13, d_model=8, num_heads=2,
        num_encoder_layers=1, num_decoder_layers=1, d_ff=16, max_len=10,
    )  # fmt: skip
    return Transformer(config).eval()


def _ids(batch: int, length: int) -> torch.Tensor:
    return torch.randint(3, 10, (batch, length))


CASES: dict[str, tuple[Callable[[], object], type[Exception], str]] = {
    # split_heads / merge_heads: the shape they cut or glue
    "split_heads width not divisible": (
        lambda: split_heads(torch.randn(2, 3, 10), 4),
        ValueError,
        r"num_heads=4 must divide the width of x, got x of shape \(2, 3, 10\)",
    ),
    "split_heads 2-D input": (
        lambda: split_heads(torch.randn(3, 8), 2),
        ValueError,
        r"x must have shape \(B, T, C\) \(3 dims\), got shape \(3, 8\)",
    ),
    "split_heads zero heads": (
        lambda: split_heads(torch.randn(2, 3, 8), 0),
        ValueError,
        r"num_heads must be a positive int, got 0",
    ),
    "merge_heads 3-D input": (
        lambda: merge_heads(torch.randn(2, 3, 8)),
        ValueError,
        r"x must have shape \(B, H, T, D\) \(4 dims\), got shape \(2, 3, 8\)",
    ),
    # dtypes that do not match the weights
    "MultiHeadAttention float64 input": (
        lambda: MultiHeadAttention(8, 2)(torch.randn(1, 3, 8, dtype=torch.float64)),
        TypeError,
        r"query has dtype torch.float64 but the module's weights are torch.float32",
    ),
    "FeedForward int input": (
        lambda: FeedForward(8, 16)(torch.ones(2, 8, dtype=torch.long)),
        TypeError,
        r"x must have a floating-point dtype, got torch.int64",
    ),
    "FeedForward float64 input": (
        lambda: FeedForward(8, 16)(torch.randn(2, 8, dtype=torch.float64)),
        TypeError,
        r"x has dtype torch.float64 but the module's weights are torch.float32",
    ),
    "Encoder float64 input": (
        lambda: Encoder(1, 8, 2, 16)(torch.randn(1, 3, 8, dtype=torch.float64)),
        TypeError,
        r"x has dtype torch.float64",
    ),
    "Decoder float64 memory": (
        lambda: Decoder(1, 8, 2, 16)(torch.randn(1, 3, 8), torch.randn(1, 4, 8).double()),
        TypeError,
        r"memory has dtype torch.float64",
    ),
    # the caller's own argument names
    "SelfAttention names x": (
        lambda: SelfAttention(4, 3)(torch.randn(2, 5, 6)),
        ValueError,
        r"^x must have shape \(\.\.\., T, 4\), got \(2, 5, 6\)",
    ),
    "MultiHeadAttention mask that does not broadcast": (
        lambda: MultiHeadAttention(8, 2)(torch.randn(2, 3, 8), mask=torch.ones(3, 4).bool()),
        ValueError,
        r"mask of shape \(3, 4\) does not broadcast to the attention scores of shape "
        r"\(2, 2, 3, 3\)",
    ),
    "Transformer src and tgt batch sizes": (
        lambda: _transformer()(_ids(2, 5), _ids(3, 4)),
        ValueError,
        r"src \(B, S\) and tgt \(B, T\) must hold the same number of sequences B, got "
        r"src \(2, 5\) and tgt \(3, 4\)",
    ),
    "Transformer attention_maps batch sizes": (
        lambda: _transformer().attention_maps(_ids(2, 5), _ids(1, 4)),
        ValueError,
        r"must hold the same number of sequences",
    ),
    "Transformer.decode memory of another batch": (
        lambda: _transformer().decode(_ids(3, 4), *_transformer().encode(_ids(2, 5))[:2]),
        ValueError,
        r"memory \(B, S, C\) must come from a source batch of tgt's size B",
    ),
    # sizes that build nothing
    "Residual norm_eps zero": (
        lambda: Residual(8, norm_eps=0.0),
        ValueError,
        r"norm_eps must be positive and finite, got 0.0",
    ),
    "Residual norm_eps negative": (
        lambda: Residual(8, norm_eps=-1e-5),
        ValueError,
        r"norm_eps must be positive and finite",
    ),
    "Residual bad dropout": (
        lambda: Residual(8, dropout=1.5),
        ValueError,
        r"dropout must be in \[0, 1\), got 1.5",
    ),
    "Residual int input": (
        lambda: Residual(8)(torch.ones(2, 8, dtype=torch.long), lambda x: x),
        TypeError,
        r"x must have a floating-point dtype",
    ),
    "Encoder no layers": (
        lambda: Encoder(0, 8, 2, 16),
        ValueError,
        r"num_layers must be a positive int, got 0",
    ),
    "Decoder no layers": (
        lambda: Decoder(0, 8, 2, 16),
        ValueError,
        r"num_layers must be a positive int, got 0",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_input_gets_an_error_naming_it(case: str) -> None:
    call, error, message = CASES[case]
    with pytest.raises(error, match=message):
        call()


ATTENTIONS = {
    "scaled_dot_product_attention": lambda **kw: scaled_dot_product_attention(Q, Q, Q, **kw),
    "fused_attention": lambda **kw: fused_attention(Q, Q, Q, **kw),
    "tiled_attention": lambda **kw: tiled_attention(Q, Q, Q, **kw),
}


@pytest.mark.parametrize("function", sorted(ATTENTIONS))
@pytest.mark.parametrize("scale", [0, 0.0, -0.5, math.nan, math.inf, -math.inf])
def test_attention_refuses_a_scale_that_is_not_positive_and_finite(
    function: str, scale: float
) -> None:
    with pytest.raises(ValueError, match=rf"scale must be positive and finite, got {scale}"):
        ATTENTIONS[function](scale=scale)


@pytest.mark.parametrize("function", sorted(ATTENTIONS))
@pytest.mark.parametrize("scale", ["0.5", True, torch.tensor(0.5)])
def test_attention_refuses_a_scale_that_is_not_a_number(function: str, scale: object) -> None:
    with pytest.raises(TypeError, match=r"scale must be a number"):
        ATTENTIONS[function](scale=scale)


@pytest.mark.parametrize("function", sorted(ATTENTIONS))
def test_the_default_scale_is_one_over_root_d_k(function: str) -> None:
    default = ATTENTIONS[function]()
    explicit = ATTENTIONS[function](scale=1 / math.sqrt(Q.shape[-1]))
    out = default[0] if isinstance(default, tuple) else default
    torch.testing.assert_close(out, explicit[0] if isinstance(explicit, tuple) else explicit)


def test_the_scale_is_computed_in_attention_py() -> None:
    assert attnlib.attention.default_scale(16) == 0.25
    assert attnlib.attention.default_scale(0) == 1.0  # no scores to scale
