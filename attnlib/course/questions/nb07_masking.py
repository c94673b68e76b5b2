"""Notebook 07's predict-first questions: a changed future under the causal mask, and a query
that may attend to nothing.

The slider question of section 11 is :func:`attnlib.course.playgrounds.predict_first_questions.
pad_query_keys`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attnlib.course.predictions import Prediction, Question

# An output that moved less than this did not move (float32 outputs of size about 1).
_UNMOVED = 1e-6


def _outputs_that_change(moved: Sequence[float], t: int) -> str:
    # moved[i]: how far output i moved between the two sentences, which agree up to position t.
    changed = [distance > _UNMOVED for distance in moved]
    if not any(changed):
        return "c"
    return "a" if any(changed[: t + 1]) else "b"


def _empty_row_output(rows: Sequence[Sequence[float]]) -> str:
    # rows: the outputs of the queries that may attend to no key, one list per query.
    values = [value for row in rows for value in row]
    if any(math.isnan(value) for value in values):
        return "a"
    return "c" if all(value == 0 for value in values) else "b"


QUESTIONS = (
    Question(
        "07.outputs-that-change",
        Prediction(
            "Sentences a and b agree up to position 3; with the causal mask, which outputs "
            "differ between them?",
            choices={"a": "all seven", "b": "only positions 4, 5 and 6", "c": "none"},
            why={
                "b": "output t reads the inputs 0 … t and nothing later. Positions 4, 5 and 6 "
                "are allowed to read the tokens that differ (each reads itself, at least); "
                "positions 0 to 3 are not allowed to read any of them, so they come out "
                "identical.",
                "a": "every output mixing every token is attention without a mask. With the "
                "causal mask the first four outputs never read past position 3, where the "
                "sentences still agree.",
                "c": "the mask hides what lies after each query, not the changed tokens as such: "
                "position 4 holds a changed token and may read itself.",
            },
        ),
        answer="b",
        observe=_outputs_that_change,
        giveaways=(
            "must be the same for both sentences",
            "the later ones change",
            "positions ≤ t: unchanged",
        ),
    ),
    Question(
        "07.empty-row-output",
        Prediction(
            "A query whose row of the mask allows no key: what does "
            "attnlib.scaled_dot_product_attention output for it?",
            choices={
                "a": "NaN",
                "b": "the plain average of all the values, as if nothing were masked",
                "c": "zeros",
            },
            why={
                "c": "attnlib gives a query with nothing to read weights of 0 and so an output "
                "of 0, as PyTorch's scaled_dot_product_attention does: reading nothing adds up "
                "to nothing, and it stays finite in every dtype.",
                "a": "NaN is what a softmax over a row of -inf makes of it (-inf minus -inf); "
                "attnlib fills with the dtype's smallest finite number instead, and guards the "
                "row.",
                "b": "a row of equal finite scores would indeed give equal weights, an average "
                "of pad values with no meaning; attnlib zeroes the blocked weights after the "
                "softmax, so nothing of that average is left.",
            },
        ),
        answer="c",
        observe=_empty_row_output,
        giveaways=(
            "weights 0 and output 0",
            "weights of 0 and an output of 0",
            "output 0, never NaN",
        ),
    ),
)
