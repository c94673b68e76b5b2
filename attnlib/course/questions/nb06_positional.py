"""Notebook 06's predict-first questions: PE[50]·PE[q] against the distance, and which score
moves when two words slide along the text (added sinusoids or RoPE).

The slider question of 06 (a slow dimension's wave) is in
:mod:`attnlib.course.playgrounds.predict_first_questions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from attnlib.course.predictions import Prediction, Question

# Scores closer than this are the same score (they are computed in float64).
_SAME = 1e-6


def _dot_with_distance(dots: Sequence[float]) -> str:
    # dots[k] = PE[50]·PE[50 + k] for the distances k = 0, 1, 2, ...
    if all(abs(dot - dots[0]) < _SAME for dot in dots):
        return "c"
    goes_up = any(later > earlier for earlier, later in pairwise(dots))
    return "b" if goes_up else "a"


def _which_score_moves(added: Sequence[float], rotated: Sequence[float]) -> str:
    # added, rotated: the score of the same two words, 3 apart, at several places.
    added_moves = max(added) - min(added) > _SAME
    rotated_moves = max(rotated) - min(rotated) > _SAME
    return {(True, True): "a", (True, False): "b", (False, True): "c", (False, False): "d"}[
        added_moves, rotated_moves
    ]


QUESTIONS = (
    Question(
        "06.pe-dot-with-distance",
        Prediction(
            "PE[50]·PE[q] as q moves away from 50?",
            choices={
                "a": "falls steadily",
                "b": "largest at distance 0, falls with ripples",
                "c": "stays the same",
            },
            why={
                "b": "it is a sum of cosines cos(k·ω_i): the fast pairs swing back and forth, the "
                "slow ones fall off gently, so the sum falls overall but not at every step.",
                "a": "each pair's cosine comes back up after half a turn; the fast pairs do so "
                "within a few positions.",
                "c": "equal lengths fix PE[p]·PE[p] only; the angle between two encodings still "
                "changes.",
            },
        ),
        answer="b",
        observe=_dot_with_distance,
        giveaways=("falling off with ripples", "rises again", "not monotonically"),
    ),
    Question(
        "06.slide-two-words",
        Prediction(
            "Slide two words, 3 apart, along the text: which score changes?",
            choices={
                "a": "both",
                "b": "only the added sinusoids'",
                "c": "only RoPE's",
                "d": "neither",
            },
            why={
                "b": "with added encodings the score has four terms, and the two middle ones, "
                "c_q A PE_nᵀ and PE_m A c_kᵀ, each see one token's own position: sliding the pair "
                "changes them. RoPE's score sees the offset n − m alone (section 10).",
                "a": "RoPE turns q by m·ω_i and k by n·ω_i in each pair; a dot product sees only "
                "the angle between them, (n − m)·ω_i, which sliding the pair does not change.",
                "c": "it is the other way round: RoPE's score sees only the offset (section 10), "
                "while an added encoding puts each token's own position into its q and k.",
                "d": "section 7's PE_m·PE_n depends on the offset alone, but the added score has "
                "more in it: c_q A PE_nᵀ and PE_m A c_kᵀ each see one absolute position, and with "
                "A between them even PE_m A PE_nᵀ need not depend on the offset alone.",
            },
        ),
        answer="b",
        observe=_which_score_moves,
        giveaways=("depend on where each token is", "the score depends on where"),
    ),
)
