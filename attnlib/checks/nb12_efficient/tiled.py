"""Notebook 12, optional Exercise 3: tiled attention for every query at once, masks included.

``my_tiled_attention(q, k, v, mask, tile_size)`` returns softmax(QKᵀ/√d_k + mask) V of shape
(..., T_q, d_v), reading keys and values ``tile_size`` rows at a time; a query with no allowed
key gets 0. The cases show each mistake: one tile, tiles that do not divide T_k and one longer
than T_k, scores in the thousands and scores all far below 0 (a running maximum started at 0
underflows), d_v ≠ d_k, a causal mask, a left-padded batch whose first tiles are fully masked
for some rows, a padding mask with T_q ≠ T_k, in several tiles and in one, and more queries
than keys in one tile (where a mask applied whole, sliced along its rows or tested with
``if mask:`` each behave differently), and one head without a batch (where ``.T`` is right).
After the values, a run under a log of torch operations checks that no (T_q, T_k) score
matrix was ever made.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

import attnlib
from attnlib.checks._exercise import Exercise, checker_of, failed, passed, register
from attnlib.checks._framework import Case, CheckResult, fixed_generator
from attnlib.checks._implementations import ATTENTION, ATTENTION_MODULES
from attnlib.checks.engine import check_function
from attnlib.checks.nb12_efficient.merge import ONLINE_SOFTMAX
from attnlib.checks.nb12_efficient.tiled_mistakes import MISTAKES, WHOLE_MATRIX

Tensor = torch.Tensor

TILED = register(
    Exercise(
        id="ex3_my_tiled_attention",
        notebook="12",
        number=3,
        name="my_tiled_attention",
        optional=True,
        hints=(
            "Section 4's attend_one_query, for every query at once: each query keeps its own "
            "running maximum, running sum and unnormalised output while the tiles of keys go "
            "by, and a masked score contributes e^(−inf) = 0.",
            "Keep m and ℓ with shape (..., T_q, 1), so that they line up with a tile's columns "
            "and with õ's d_v columns. Two things need care with a mask: a row whose keys so far "
            "are all masked still has m = −inf (measure it from 0, as the text says), and a row "
            "with no allowed key at all ends with ℓ = 0 and õ = 0.",
            "For each start in range(0, T_k, tile_size): the tile's scores are q times the "
            "tile's keys transposed, times 1/√d_k; fill the masked ones (the mask sliced to the "
            "tile's columns) with −inf; take the row maxima with keepdim and the larger of them "
            "and m; replace −inf references by 0; rescale ℓ and õ by e^(m − reference) and add "
            "the tile's sums and its P times the tile's values. At the end, divide õ by ℓ where "
            "ℓ > 0 and leave 0 elsewhere.",
        ),
    )
)

# Attention done by someone else, whole or by attnlib's online softmax.
ATTENTION_IMPLEMENTATIONS = ATTENTION | ATTENTION_MODULES | ONLINE_SOFTMAX


def _reference(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> Tensor:
    out, _ = attnlib.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    return out


def _cases() -> list[Case]:
    g = fixed_generator()

    def randn(*shape: int) -> Tensor:
        return torch.randn(*shape, generator=g)

    q, k, v = randn(2, 5, 4), randn(2, 7, 4), randn(2, 7, 3)
    big = 30 * randn(1, 6, 4)
    far = 30 * randn(1, 3, 4).abs()  # queries against keys that point away: every score ≪ 0
    wide_q, wide_k, wide_v = randn(1, 4, 16), randn(1, 6, 16), randn(1, 6, 3)
    cq, ck, cv = randn(2, 9, 4), randn(2, 9, 4), randn(2, 9, 3)
    causal = attnlib.causal_mask(9)  # (9, 9)
    pq, pk, pv = randn(2, 2, 9, 4), randn(2, 2, 9, 4), randn(2, 2, 9, 2)
    left_padded = causal & attnlib.padding_mask([9, 5], 9).flip(-1)  # (2, 1, 9, 9)
    xq, xk, xv = randn(2, 1, 5, 4), randn(2, 1, 8, 4), randn(2, 1, 8, 3)
    padding = attnlib.padding_mask([8, 3], 8)  # (2, 1, 1, 8)
    tall_q, tall_k, tall_v = randn(1, 6, 4), randn(1, 3, 4), randn(1, 3, 2)
    tall = torch.tensor([[1, 0, 0], [1, 1, 0], [0, 0, 0], [0, 1, 1], [0, 0, 1], [1, 0, 1]]).bool()
    specs = [
        ("no mask, tile_size 7: one tile holds all 7 keys", (q, k, v, None, 7)),
        ("no mask, tile_size 2: T_k = 7 is not a multiple", (q, k, v, None, 2)),
        ("no mask, tile_size 1", (q, k, v, None, 1)),
        ("no mask, tile_size 10, longer than T_k = 7", (q, k, v, None, 10)),
        ("scores in the thousands, tile_size 4", (big, big, big, None, 4)),
        (
            "every score in the negative hundreds, tile_size 2",
            (far, -far.flip(1), big[:, :3], None, 2),
        ),
        ("d_k = 16, d_v = 3, tile_size 4", (wide_q, wide_k, wide_v, None, 4)),
        ("a causal (9, 9) mask, tile_size 4", (cq, ck, cv, causal, 4)),
        (
            "causal on a left-padded batch: 4 rows see no key at all, tile_size 3",
            (pq, pk, pv, left_padded, 3),
        ),
        ("a (B, 1, 1, T_k) padding mask, T_q = 5, T_k = 8, tile_size 3", (xq, xk, xv, padding, 3)),
        ("the same padding mask in one tile of 8 keys", (xq, xk, xv, padding, 8)),
        (
            "a (6, 3) mask, more queries than keys, one of them seeing none, in one tile of 3",
            (tall_q, tall_k, tall_v, tall, 3),
        ),
        ("one head without a batch: q (5, 4), k (7, 4), tile_size 3", (q[0], k[0], v[0], None, 3)),
    ]
    return [Case(name, args, _reference(*args[:4]), atol=3e-5, rtol=1e-4) for name, args in specs]


class _FloatShapes(TorchFunctionMode):
    """Records the number of elements of every floating tensor a torch operation returns."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[tuple[str, tuple[int, ...]]] = []

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if isinstance(out, Tensor) and out.is_floating_point():
            self.sizes.append((getattr(func, "__name__", "?"), tuple(out.shape)))
        return out


def _whole_matrix_made(fn: Callable[..., Tensor]) -> tuple[str, tuple[int, ...]] | None:
    """The first float tensor as large as all the scores, made by ``fn`` on a run of 4 tiles."""
    g = fixed_generator()
    q, k, v = (torch.randn(1, 2, t, d, generator=g) for t, d in ((12, 4), (16, 4), (16, 3)))
    whole = 2 * 12 * 16
    log = _FloatShapes()
    with torch.no_grad(), log:
        fn(q, k, v, None, 4)
    return next(((n, s) for n, s in log.sizes if math.prod(s) >= whole), None)


@checker_of(TILED, MISTAKES)
def check_my_tiled_attention(fn: Callable[..., Tensor]) -> CheckResult:
    """Check ``my_tiled_attention(q, k, v, mask, tile_size) -> (..., T_q, d_v)`` (optional)."""
    result = check_function(
        TILED,
        fn,
        _cases(),
        MISTAKES,
        forbidden=ATTENTION_IMPLEMENTATIONS,
        output_names=("out",),
        dtypes=(torch.float64,),
    )
    if not result.passed:
        return result
    made = _whole_matrix_made(fn)
    if made is not None:
        name, shape = made
        where = "a run with T_q = 12, T_k = 16 and tiles of 4 keys"
        problem = f"{name} made a tensor of shape {shape}, as large as every score at once"
        return failed(TILED, fn, where, problem, WHOLE_MATRIX)
    return passed(TILED, fn, f"all {len(_cases())} cases, and it never held all the scores")
