"""Notebook 12, Exercise 1: the FLOPs of tiled causal attention that skips the hidden tiles.

``causal_tile_flops(batch_heads, t, d, tile_size)``: the FLOPs of the two matrix products
(QKᵀ and PV) when tiled attention with a causal mask computes every tile in which at least one
query may attend to one key, whole, and skips every other tile. With tiles of rows
``[start, end)``, query tile i computes its rows against keys ``0 … end − 1``: 4 · rows · end · d
FLOPs per head. The cases show each mistake: a single position, lengths that tiles of 2, 3 or
128 do not divide (the last, shorter tile), a length shorter than one tile, tiles of one
position (the exact triangle) and a realistic shape.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks.engine import check_function

CAUSAL_TILE_FLOPS = register(
    Exercise(
        id="ex1_causal_tile_flops",
        notebook="12",
        number=1,
        name="causal_tile_flops",
        hints=(
            "Draw the grid of section 4 with the causal triangle on it: a tile is skipped only "
            "when every key in it comes after every query in it. Then add up what each computed "
            "tile costs, the two matrix products for its rows and columns, as in section 1.",
            "Go through the query tiles one at a time. A query tile's last row decides how far "
            "into the keys it must go; the key tiles up to that point are all computed, the "
            "diagonal one whole. The last tile of each side can be shorter than tile_size.",
            "For the query tile of rows start … end − 1 (end is at most t), the computed key "
            "tiles cover keys 0 … end − 1, so that tile costs 2·rows·end·d FLOPs for the scores "
            "and as many for P·V. Sum over the query tiles and multiply by batch_heads. With "
            "tile_size = 1 you should get the exact triangle of t(t+1)/2 pairs.",
        ),
    )
)


def _tiles(t: int, size: int) -> list[tuple[int, int]]:
    """(start, end) of each tile of ``size`` positions over ``t`` positions."""
    return [(start, min(start + size, t)) for start in range(0, t, size)]


def causal_tile_flops(batch_heads: int, t: int, d: int, tile_size: int) -> int:
    """The right count, for the cases."""
    pairs = sum((end - start) * end for start, end in _tiles(t, tile_size))
    return 4 * batch_heads * d * pairs


def _full_tiles(t: int, size: int) -> list[tuple[int, int]]:
    """Every tile counted as tile_size long, the last one included."""
    return [(start, start + size) for start in range(0, t, size)]


MISTAKES = (
    Mistake(
        "skipped nothing: counted every tile of the full T × T grid",
        "with a causal mask the tiles above the diagonal hold only keys after all their "
        "queries: every weight in them is 0, and a kernel that knows this skips them.",
        lambda bh, t, d, size: 4 * bh * t * t * d,
    ),
    Mistake(
        "counted the exact triangle of allowed pairs, not whole tiles",
        "a tile on the diagonal is computed whole, its hidden half included: the kernel "
        "skips tiles, not single scores. Only with tile_size = 1 are the two the same.",
        lambda bh, t, d, size: 4 * bh * d * t * (t + 1) // 2,
    ),
    Mistake(
        "halved the full count",
        "the diagonal tiles are computed whole, so more than half of the T × T scores are "
        "computed; and when T is not a multiple of tile_size the tiles are not all alike.",
        lambda bh, t, d, size: 2 * bh * t * t * d,
    ),
    Mistake(
        "skipped the tiles on the diagonal too",
        "a diagonal tile holds each query's own key and the keys just before it: those "
        "weights are not 0, so the tile must be computed.",
        lambda bh, t, d, size: 4 * bh * d * sum((e - s) * s for s, e in _tiles(t, size)),
    ),
    Mistake(
        "dropped the last, shorter tile when t is not a multiple of tile_size",
        "t // tile_size counts only the full tiles; the positions left over form one more, "
        "shorter tile, and it is computed too.",
        lambda bh, t, d, size: (
            4 * bh * d * sum((e - s) * e for s, e in _full_tiles(t, size)[: t // size])
        ),
    ),
    Mistake(
        "counted the last tile as a full tile of tile_size positions",
        "when t is not a multiple of tile_size the last tile is shorter: it has only the "
        "positions that are left, as rows and as keys.",
        lambda bh, t, d, size: 4 * bh * d * sum((e - s) * e for s, e in _full_tiles(t, size)),
    ),
    Mistake(
        "counted every key tile as tile_size keys, though the last one is shorter",
        "the key tiles of a query tile end at its last row, and the last of them stops at t: "
        "a query tile computes exactly the keys up to its own end.",
        lambda bh, t, d, size: 4 * bh * d * sum((e - s) * (s + size) for s, e in _tiles(t, size)),
    ),
    Mistake(
        "counted every query tile as tile_size rows, though the last one is shorter",
        "when t is not a multiple of tile_size the last query tile has only the rows that are "
        "left: it computes fewer scores than the others.",
        lambda bh, t, d, size: 4 * bh * d * sum(size * e for s, e in _tiles(t, size)),
    ),
    Mistake(
        "counted half the FLOPs: a multiply-add as one FLOP, or only one of the two products",
        "each of QKᵀ and PV costs 2 FLOPs (a multiply and an add) per term of each dot "
        "product, and attention does both products.",
        lambda bh, t, d, size: causal_tile_flops(bh, t, d, size) // 2,
    ),
    Mistake(
        "counted one head only: batch_heads is missing",
        "every (batch, head) pair runs the same tiles on its own queries and keys: the count "
        "is multiplied by batch_heads.",
        lambda bh, t, d, size: causal_tile_flops(1, t, d, size),
    ),
    Mistake(
        "counted one key too many for each query tile, its end taken as its last row",
        "a tile of rows start … end − 1 ends one before end: its last query sees keys 0 … "
        "end − 1, which is end keys, not end + 1.",
        lambda bh, t, d, size: 4 * bh * d * sum((e - s) * (e + 1) for s, e in _tiles(t, size)),
    ),
    Mistake(
        "counted the softmax's FLOPs too, a few per score, on top of the two products",
        "the task counts the FLOPs of the two matrix products, QKᵀ and PV, as section 1 adds "
        "them up; the softmax's handful per score is left out of that total.",
        lambda bh, t, d, size: (
            causal_tile_flops(bh, t, d, size) + 5 * bh * (causal_tile_flops(1, t, 1, size) // 4)
        ),
    ),
    Mistake(
        "went through the keys of a query tile only up to its first row",
        "the tile's later rows see more keys than its first, and the tiles are computed whole: "
        "a query tile reaches as far into the keys as its last row does.",
        lambda bh, t, d, size: 4 * bh * d * sum((e - s) * (s + 1) for s, e in _tiles(t, size)),
    ),
    Mistake(
        "used the closed form for n(n + 1)/2 square tiles with n = t / tile_size, a fraction "
        "of a tile when tile_size does not divide t",
        "the formula counts whole square tiles; when tile_size does not divide t the last row "
        "and column of tiles are shorter, and a fractional n counts them as neither whole nor "
        "as long as they are.",
        lambda bh, t, d, size: 4 * bh * d * (t / size) * (t / size + 1) / 2 * size**2,
    ),
    Mistake(
        "left out the head size d",
        "each score is a dot product of length d, and each output number sums over its keys "
        "for each of d columns: both products grow with d.",
        lambda bh, t, d, size: causal_tile_flops(bh, t, 1, size),
    ),
)


def _cases() -> list[Case]:
    shapes = [
        (1, 1, 1, 1, "a single position"),
        (1, 4, 1, 2, "t = 4 in tiles of 2"),
        (1, 5, 1, 2, "t = 5 in tiles of 2: the last tile has 1 position"),
        (4, 10, 8, 3, "t = 10 in tiles of 3"),
        (3, 7, 5, 1, "tiles of 1 position: the exact triangle"),
        (2, 100, 16, 256, "t = 100 shorter than one tile of 256"),
        (12, 1000, 32, 128, "t = 1000 in tiles of 128"),
        (8, 2048, 64, 256, "the benchmark's shape: 8 heads, t = 2048, d = 64, tiles of 256"),
    ]
    return [
        Case(
            f"{what} (batch_heads={bh}, t={t}, d={d}, tile_size={size})",
            (bh, t, d, size),
            causal_tile_flops(bh, t, d, size),  # a whole number: a float is refused
        )
        for bh, t, d, size, what in shapes
    ]


@checker_of(CAUSAL_TILE_FLOPS, MISTAKES)
def check_causal_tile_flops(fn: Callable[[int, int, int, int], int]) -> CheckResult:
    """Check ``causal_tile_flops(batch_heads, t, d, tile_size)``, an int."""
    return check_function(CAUSAL_TILE_FLOPS, fn, _cases(), MISTAKES)
