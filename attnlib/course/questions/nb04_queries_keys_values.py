"""Notebook 04's predict-first questions: keys multiplied by 2, and an all-zero key."""

from __future__ import annotations

from collections.abc import Sequence

from attnlib.course.predictions import Prediction, Question

# A change of a weight smaller than this is no change (the weights are float32).
_TOLERANCE = 1e-3


def _keys_times_two(top: Sequence[float], top_2k: Sequence[float]) -> str:
    # top, top_2k: the largest weight of each row, with K and with 2K.
    if all(after > before + _TOLERANCE for before, after in zip(top, top_2k, strict=True)):
        return "b"
    if all(after < before - _TOLERANCE for before, after in zip(top, top_2k, strict=True)):
        return "c"
    return "a"


def _zero_key_weight(the: float, black: float) -> str:
    # the, black: the weights "chat" gives "the" (all-zero key) and "black".
    if abs(the - black) < 1e-6:
        return "b"
    return "a" if the < black else "c"


QUESTIONS = (
    Question(
        "04.keys-times-two",
        Prediction(
            "Multiply every key by 2: what happens to the weights?",
            choices={
                "a": "nothing changes",
                "b": "every row gets sharper",
                "c": "every row gets flatter",
            },
            why={
                "b": "doubling K doubles every score q·k, which acts like halving the temperature "
                "of notebook 02: the same winner in each row, with more of the weight.",
                "a": "softmax keeps the order of the scores, but not their gaps: a gap twice as "
                "wide gives a larger share to the winner.",
                "c": "a flatter row needs scores closer together; doubling every score moves "
                "them twice as far apart.",
            },
        ),
        answer="b",
        observe=_keys_times_two,
        giveaways=("rows get sharper", "softmax sharpens", "halving the temperature"),
    ),
    Question(
        "04.zero-key-weight",
        Prediction(
            'How much weight does "chat" give "the" (all-zero key), compared with "black"?',
            choices={
                "a": "much less than black",
                "b": "the same as black",
                "c": "more than black",
            },
            why={
                "b": "q·0 = 0, and every key that shares no meaning dimension with chat's query "
                "scores 0 too: equal scores, equal weights. What makes both small is the one "
                "key that matches.",
                "a": "an all-zero key does not block anything: its score is 0, like that of any "
                "key orthogonal to the query, and softmax gives equal scores equal weights.",
                "c": "a score of 0 only wins against negative scores; here the other keys that "
                "do not match score 0 as well.",
            },
        ),
        answer="b",
        observe=_zero_key_weight,
        giveaways=("not a blocked key", "equal scores, equal weights", "gets exactly as much"),
    ),
)
