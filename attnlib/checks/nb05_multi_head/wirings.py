"""Multi-head attention written the ways learners write it, right and wrong, for the table of
mistakes of notebook 05's Exercise 3: one :class:`Wiring` says how each step is done (split,
scale, softmax, merge, W^O, where the queries come from), and :func:`run` follows it.

Notebook 05.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

Tensor = torch.Tensor
Pair = tuple[Tensor, Tensor]
# (tensor, B, T, H, D) → the heads, or (heads, B, T, H, D) → the joined (B, T, C)
Step = Callable[[Tensor, int, int, int, int], Tensor]


def split_right(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.view(b, t, h, d).transpose(1, 2)  # (B, H, T, D)


def split_straight(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.view(b, h, t, d)  # same shape, tokens cut across heads


def split_no_transpose(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.view(b, t, h, d)  # (B, T, H, D): attention then runs across the heads


def split_interleaved(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.view(b, t, d, h).permute(0, 3, 1, 2)  # head i gets dims i, i + H, …


def merge_right(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.transpose(1, 2).reshape(b, t, h * d)


def merge_straight(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.reshape(b, t, h * d)


def merge_view(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.transpose(1, 2).view(b, t, h * d)


def merge_interleaved(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.permute(0, 2, 3, 1).reshape(b, t, h * d)  # dims i, i + H, … back to head i


def merge_swapped_last(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.transpose(2, 3).reshape(b, t, h * d)


def merge_outer(x: Tensor, b: int, t: int, h: int, d: int) -> Tensor:
    return x.transpose(1, 3).reshape(b, t, h * d)


def last_two_swapped(k: Tensor) -> Tensor:
    return k.transpose(-2, -1)


def _softmax_unshifted(scores: Tensor, dim: int) -> Tensor:
    exps = torch.exp(scores)
    return exps / exps.sum(dim=dim, keepdim=True)


@dataclass(frozen=True)
class Wiring:
    """How one answer does each step; the defaults are right."""

    split: Step = split_right
    merge: Step = merge_right
    divide_by: Callable[[int, int], float] = lambda c, d: math.sqrt(d)  # (C, D) → divisor
    softmax: Callable[[Tensor, int], Tensor] = torch.softmax
    dim: int = -1
    w_o: str = "full"  # "full", "none" (forgotten) or "diagonal" (split among the heads)
    stored_out_in: bool = False  # used each weight as nn.Linear's (out, in): x @ w.T
    w_o_stored_out_in: bool = False  # and W^O too: concat @ w_o.T
    flip_k: Callable[[Tensor], Tensor] = last_two_swapped  # how k is transposed for the scores
    queries_from: str = "y"
    keys_values_from: str = "x"
    average_weights: bool = False
    pair_swapped: bool = False
    only_out: bool = False
    one_head: bool = False  # ignored num_heads: one head of width C
    kv_length_of_y: bool = False  # cut x's keys and values with y's length


def run(
    wiring: Wiring,
    y: Tensor,
    x: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    w_o: Tensor,
    num_heads: int,
) -> Pair:
    """Multi-head cross-attention of y (B, T_y, C) to x (B, T_x, C), done as ``wiring`` says."""
    sources = {"y": y, "x": x}
    q_in, kv_in = sources[wiring.queries_from], sources[wiring.keys_values_from]
    b, c = y.shape[0], y.shape[-1]
    h = 1 if wiring.one_head else num_heads
    d = c // h
    t_q, t_kv = q_in.shape[1], kv_in.shape[1]
    if wiring.kv_length_of_y:
        t_kv = t_q

    def project(t: Tensor, w: Tensor) -> Tensor:
        return t @ (w.T if wiring.stored_out_in else w)

    q = wiring.split(project(q_in, w_q), b, t_q, h, d)
    k = wiring.split(project(kv_in, w_k), b, t_kv, h, d)
    v = wiring.split(project(kv_in, w_v), b, t_kv, h, d)
    scores = q @ wiring.flip_k(k) / wiring.divide_by(c, d)
    weights = wiring.softmax(scores, wiring.dim)
    concat = wiring.merge(weights @ v, b, t_q, h, d)  # (B, T_q, C)
    if wiring.w_o == "full":
        out = concat @ (w_o.T if wiring.w_o_stored_out_in else w_o)
    elif wiring.w_o == "diagonal":  # each head through its own diagonal block of W^O
        blocks = [w_o[i * d : (i + 1) * d, i * d : (i + 1) * d] for i in range(h)]
        out = concat @ torch.block_diag(*blocks)
    else:
        out = concat
    if wiring.average_weights:
        weights = weights.mean(dim=1)
    if wiring.only_out:
        return out  # type: ignore[return-value]
    return (weights, out) if wiring.pair_swapped else (out, weights)


def wired(**knobs: object) -> Callable[..., Pair]:
    """The answer that follows ``Wiring(**knobs)``."""
    wiring = Wiring(**knobs)  # type: ignore[arg-type]

    def answer(*args: object) -> Pair:
        return run(wiring, *args)  # type: ignore[arg-type]

    return answer


UNSHIFTED = _softmax_unshifted
