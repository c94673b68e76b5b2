"""What notebook 04's checkers share: the reference, the implementations an answer may not call,
and attention written with one thing changed, from which the tables of mistakes are made.

Notebook 04.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._implementations import ATTENTION, ATTENTION_MODULES, TORCH_ATTENTION

Tensor = torch.Tensor
Pair = tuple[Tensor, Tensor]

# A module that computes a whole head (or several) does the work of every exercise of 04.
# Exercise 1 asks for scaled dot-product attention itself: no implementation of it may be called.
ATTENTION_IMPLEMENTATIONS = ATTENTION | ATTENTION_MODULES

# Exercises 2 and 3 may use attention (attnlib's or the learner's own), not a whole head, nor
# torch's attention.
HEAD_IMPLEMENTATIONS = ATTENTION_MODULES | TORCH_ATTENTION


def reference(q: Tensor, k: Tensor, v: Tensor) -> Pair:
    """softmax(q kᵀ / √d_k) v and the weights, in float64."""
    return attnlib.scaled_dot_product_attention(q.double(), k.double(), v.double())


def last_two_swapped(t: Tensor) -> Tensor:
    """``t.transpose(-2, -1)``."""
    return t.transpose(-2, -1)


def reversed_dims(t: Tensor) -> Tensor:
    """What ``t.T`` gives (all dimensions reversed), without its deprecation warning."""
    return t.permute(*range(t.dim() - 1, -1, -1))


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    divide_by: Callable[[Tensor, Tensor, Tensor], float] = lambda q, k, v: math.sqrt(q.shape[-1]),
    flip: Callable[[Tensor], Tensor] = last_two_swapped,
    dim: int = -1,
) -> Pair:
    """Attention with one knob turned: what the scores are divided by, how k is transposed,
    which dimension the softmax runs along."""
    scores = q @ flip(k) / divide_by(q, k, v)
    weights = torch.softmax(scores, dim=dim)
    return weights @ v, weights


def by_hand_softmax_unshifted(scores: Tensor) -> Tensor:
    """Softmax from its formula, without subtracting the row's maximum (overflows)."""
    exps = torch.exp(scores)
    return exps / exps.sum(dim=-1, keepdim=True)
