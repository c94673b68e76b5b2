"""Notebook 05's predict-first questions: what 8 heads cost, and 2 heads against 1 in training."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _parameters_of_eight_heads(eight_heads: int, one_head: int) -> str:
    # eight_heads, one_head: the parameter counts of d_model = 512 as 8 heads and as 1 head.
    if eight_heads == one_head:
        return "b"
    return "a" if eight_heads > one_head else "c"


def _lower_final_loss(two_heads: float, one_head: float) -> str:
    # two_heads, one_head: the mean loss of the last 50 training steps of each model.
    if two_heads < one_head / 2:
        return "b"
    if one_head < two_heads / 2:
        return "a"
    return "c"


QUESTIONS = (
    Question(
        "05.parameters-of-eight-heads",
        Prediction(
            "d_model = 512 as 8 heads of 64 instead of 1 head of 512: the parameter count?",
            choices={"a": "grows 8 times", "b": "stays the same", "c": "shrinks 8 times"},
            why={
                "b": "the 8 heads' W^Q_i sit side by side in one 512 × 512 matrix, the size of "
                "one full-width head's; likewise W^K, W^V and W^O. Heads cut the width into "
                "slices, they add no weights: 4·512² + 4·512 either way.",
                "a": "the heads are not 8 full-width copies: each gets 512 / 8 = 64 of the dims.",
                "c": "each head is 8 times narrower, but there are 8 of them.",
            },
        ),
        answer="b",
        observe=_parameters_of_eight_heads,
        giveaways=(
            "the same number of parameters",
            "no more parameters",
            "does not add a single weight",
        ),
    ),
    Question(
        "05.two-heads-or-one",
        Prediction(
            "Width 32: 2 heads of 16 or 1 head of 32, which ends with the lower loss?",
            choices={"a": "1 head of 32", "b": "2 heads of 16", "c": "about the same"},
            why={
                "b": "every position needs two relations, left and right; one head has one row "
                "of weights per query and must blend them, two heads can take one each.",
                "a": "width does not help here: a wider head still has one row of weights per "
                "query, and one row cannot point left and right at once.",
                "c": "the two models have the same width and the same number of weights, but "
                "not the same number of rows of weights per query: one row blends the two "
                "neighbours, two rows keep them apart.",
            },
        ),
        answer="b",
        observe=_lower_final_loss,
        giveaways=(
            "one head looks left and the other looks right",
            "two heads learn two",
            "one looks left",
        ),
    ),
)
