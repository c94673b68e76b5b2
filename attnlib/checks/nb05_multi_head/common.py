"""What notebook 05's checkers share: the implementations an answer may not call, the reference
split and merge, and the ways of splitting and merging learners write by mistake.

Notebook 05.
"""

from __future__ import annotations

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._implementations import ATTENTION, ATTENTION_MODULES

Tensor = torch.Tensor

# Exercise 1 may not hand the split to attnlib (nor to its unchecked inner version).
SPLIT_IMPLEMENTATIONS = Forbidden(
    python={attnlib.split_heads: "attnlib.split_heads"},
    paths={"attnlib.multi_head:_split_heads": "attnlib.split_heads"},
)

# Exercise 3 builds multi-head attention from tensor operations and a softmax.
MULTI_HEAD_IMPLEMENTATIONS = (
    ATTENTION
    | ATTENTION_MODULES
    | SPLIT_IMPLEMENTATIONS
    | Forbidden(
        python={attnlib.merge_heads: "attnlib.merge_heads"},
        paths={"attnlib.multi_head:_merge_heads": "attnlib.merge_heads"},
    )
)


def split(x: Tensor, num_heads: int) -> Tensor:
    """(B, T, C) → (B, H, T, D): cut the width, then move the heads in front of the tokens."""
    b, t, c = x.shape
    return x.reshape(b, t, num_heads, c // num_heads).transpose(1, 2)


def split_without_transpose(x: Tensor, num_heads: int) -> Tensor:
    """(B, T, C) read straight as (B, H, T, D): the mistake of section 3."""
    b, t, c = x.shape
    return x.reshape(b, num_heads, t, c // num_heads)


def split_interleaved(x: Tensor, num_heads: int) -> Tensor:
    """(B, T, C) cut as (D, H): head h gets dims h, h + H, h + 2H, …"""
    b, t, c = x.shape
    return x.reshape(b, t, c // num_heads, num_heads).permute(0, 3, 1, 2)


def merge(x: Tensor) -> Tensor:
    """(B, H, T, D) → (B, T, H·D)."""
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


def merge_without_transpose(x: Tensor) -> Tensor:
    """(B, H, T, D) read straight as (B, T, H·D): joins numbers of different tokens."""
    b, h, t, d = x.shape
    return x.reshape(b, t, h * d)


def merge_with_view(x: Tensor) -> Tensor:
    """Transpose, then ``view``: refused by torch once the transpose made x non-contiguous."""
    b, h, t, d = x.shape
    return x.transpose(1, 2).view(b, t, h * d)
