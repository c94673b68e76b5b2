"""Notebook 02's predict-first questions: one score raised, scores times ten, Var(q·k).

The slider question of notebook 02 (the gradient at a small scale) is
:func:`attnlib.course.playgrounds.predict_first_questions.gradient_at_high_temperature`.
"""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _raise_first_score(last_change: float) -> str:
    # last_change: the last position's weight after the first score rose, minus before.
    if abs(last_change) < 1e-9:
        return "b"
    return "a" if last_change < 0 else "c"


def _scores_times_ten(top_1: float, top_10: float) -> str:
    # The largest weight of softmax(z) and of softmax(10 · z).
    if top_10 > 0.99:
        return "b"
    return "c" if top_10 < top_1 - 0.01 else "a"


_GROWTHS = {"a": 0.0, "b": 0.5, "c": 1.0}


def _variance_as_width_grows(growth: float) -> str:
    # growth: the exponent of the fit Var(q·k) ∝ d_k^growth; the nearest choice's.
    return min(_GROWTHS, key=lambda letter: abs(growth - _GROWTHS[letter]))


QUESTIONS = (
    Question(
        "02.raise-first-score",
        Prediction(
            "raise the first score from 1 to 3: the weight of the last one (score 4)?",
            choices={"a": "drops", "b": "stays 0.64", "c": "rises"},
            why={
                "a": "every weight is its e^(z_i) over one shared total Σ_j e^(z_j). Raising "
                "the first score makes that total larger, so each untouched weight is divided "
                "by more: what the first position gains, the other three pay for.",
                "b": "its own e^4 did not change, but a weight is e^4 divided by the sum over "
                "all four positions, and that sum grew when the first score rose.",
                "c": "a weight rises only when its score gains on the others; here another "
                "score gained on it, and the weights still add up to 1.",
            },
        ),
        answer="a",
        observe=_raise_first_score,
        giveaways=(
            "its gain is paid for by all the others",
            "raising one score lowers every other weight",
        ),
    ),
    Question(
        "02.scores-times-ten",
        Prediction(
            "scores × 10: the largest weight (0.64 before)?",
            choices={"a": "stays 0.64", "b": "moves close to 1", "c": "moves down towards 1/4"},
            why={
                "b": "softmax reads the gaps between scores, not their ratios: times ten, gaps "
                "of 1 become gaps of 10, and e^(−10) ≈ 0.00005 leaves almost nothing for the "
                "other scores. Multiplying by 10 is a temperature of 0.1.",
                "a": "the ratios do not matter: adding a constant to every score changes nothing, "
                "so only differences count, and they grew tenfold.",
                "c": "the weights flatten towards 1/4 when the scores are divided (a high "
                "temperature), not when they are multiplied.",
            },
        ),
        answer="b",
        observe=_scores_times_ten,
        giveaways=("saturates into a one-hot", "is the same as a temperature of"),
    ),
    Question(
        "02.variance-as-width-grows",
        Prediction(
            "Var(q·k) as d_k grows from 1 to 1024?",
            choices={"a": "stays about 1", "b": "grows like √d_k", "c": "grows like d_k"},
            why={
                "c": "q·k adds up d_k products q_i k_i, each of mean 0 and variance 1, and "
                "independent of each other; the variance of a sum of independent terms is the "
                "sum of their variances, d_k.",
                "a": "each product has variance 1, but the score is a sum of d_k of them, and "
                "their variances add up.",
                "b": "√d_k is how the spread (the standard deviation) grows; the variance is its "
                "square. Dividing by √d_k brings the standard deviation back to 1.",
            },
        ),
        answer="c",
        observe=_variance_as_width_grows,
        giveaways=("Var(q·k) = d_k", "grow with the width"),
    ),
)
