"""Notebook 12's predict-first questions: the score matrix's growth, the online softmax, tiles."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question

# The shapes notebook 12's tiled run uses: 8 heads, T = 2048, d = 64, tiles of 256.
_HEADS, _T, _D, _TILE = 8, 2048, 64, 256


def _score_memory_per_doubling(growth: float) -> str:
    # growth: the score matrix's bytes at 2T over its bytes at T.
    return "a" if growth < 3 else "b" if growth < 6 else "c"


def _running_sum_factor(factor: float) -> str:
    if abs(factor - 1) < 1e-6:
        return "a"
    return "b" if factor < 1 else "c"


def _largest_tiled_tensor(largest: int) -> str:
    # largest: the number of elements of the largest tensor the tiled call made.
    sizes = {_HEADS * _T * _T: "a", _HEADS * _T * _D: "b", _HEADS * _TILE * _TILE: "c"}
    return sizes.get(largest, "a" if largest > _HEADS * _T * _D else "c")


QUESTIONS = (
    Question(
        "12.score-memory-per-doubling",
        Prediction(
            "what doubling T does to the memory of one score matrix?",
            choices={"a": "× 2", "b": "× 4", "c": "× 8"},
            why={
                "b": "a score matrix has a number for every query and key pair: T queries by T "
                "keys. Doubling T doubles the rows and doubles the columns, 2 · 2 = 4 times the "
                "numbers, while Q, K and V only double.",
                "a": "× 2 is what happens to Q, K, V and the output: each is T rows of d numbers, "
                "and d does not change.",
                "c": "only two of the score matrix's dimensions grow with T; the head size d is "
                "not one of its dimensions at all.",
            },
        ),
        answer="b",
        observe=_score_memory_per_doubling,
        giveaways=("quadratic", "quadruples", "square of the length", "4× per doubling"),
    ),
    Question(
        "12.running-sum-factor",
        Prediction(
            "the factor ℓ is multiplied by when the running maximum grows from 3 to 5?",
            choices={"a": "1: ℓ stays", "b": "e^(3 - 5) ≈ 0.135", "c": "e^(5 - 3) ≈ 7.39"},
            why={
                "b": "every old term was e^(s - 3); measured from the new maximum it must be "
                "e^(s - 5), which is e^(s - 3) times e^(-2). One product moves the whole sum to "
                "the new reference, and since the reference went up, the factor shrinks it.",
                "a": "left alone, the old terms would still be measured from 3: each too large, "
                "by a factor e^2, next to the new block's terms, measured from 5.",
                "c": "raising the maximum lowers every e^(s - m), so the factor must be below 1; "
                "e^(5 - 3) would inflate the old terms instead.",
            },
        ),
        answer="b",
        observe=_running_sum_factor,
        giveaways=("e^(m - m')",),
    ),
    Question(
        "12.largest-tiled-tensor",
        Prediction(
            "the largest tensor tiled attention makes at T = 2048, with tiles of 256?",
            choices={
                "a": "the full (8, 2048, 2048) score matrix",
                "b": "one the size of Q, (8, 2048, 64)",
                "c": "one 256 × 256 score tile per head",
            },
            why={
                "b": "the scores never exist beyond one tile, but the inputs and the output are "
                "whole: tiled_attention scales Q by 1/√d once, before its loops (a copy of Q), "
                "and writes every query's output, both (8, 2048, 64). Per head that is 2048 × "
                "64 = 131 072 numbers, twice a tile's 65 536.",
                "a": "the full matrix is exactly what tiling never builds: each tile of scores "
                "goes into the running m, ℓ and output, then is overwritten by the next.",
                "c": "the tiles are the largest tensors of scores, but not the largest tensors: "
                "256 × 256 per head is half of Q's 2048 × 64.",
            },
        ),
        answer="b",
        observe=_largest_tiled_tensor,
        giveaways=("nothing larger than Q", "anything larger than Q", "the size of Q itself"),
    ),
)
