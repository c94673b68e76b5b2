"""A char GPT small enough for a unit test, on a nine-character vocabulary (the playgrounds')."""

from __future__ import annotations

import torch

import attnlib
from attnlib.course.char_data import CharTokenizer

VOCAB = CharTokenizer("hello world\n")  # " ", "\n", d, e, h, l, o, r, w
MAX_LEN = 8


def tiny_char_gpt(num_layers: int, weight_scale: float = 1.0) -> attnlib.GPT:
    """A seeded float64 GPT over :data:`VOCAB` in eval mode; ``weight_scale`` > 1 makes its
    heads differ visibly (a fresh GPT's attention is nearly uniform)."""
    torch.manual_seed(0)
    config = attnlib.GPTConfig(
        vocab_size=VOCAB.vocab_size, max_len=MAX_LEN, d_model=16, num_heads=2,
        num_layers=num_layers, dropout=0.0,
    )  # fmt: skip
    model = attnlib.GPT(config).double().eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(weight_scale)
    return model
