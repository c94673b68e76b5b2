"""Notebook 01's predict-first questions: a longer vector, an analogy's query words, cat·dog."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _three_times_longer(dot_ratio: float, cos_ratio: float) -> str:
    # The ratios (3a)·b / a·b and cos(3a, b) / cos(a, b).
    if abs(cos_ratio - 3) < 1e-5:
        return "a"
    return "b" if abs(dot_ratio - 3) < 1e-5 else "c"


_ANALOGY_LETTERS = {"queen": "a", "woman": "b", "king": "c"}


def _analogy_nearest(nearest: str) -> str:
    # nearest: the first word analogy returns once the query words are allowed back in.
    if nearest not in _ANALOGY_LETTERS:
        raise ValueError(
            f"the nearest word is {nearest!r}, none of the choices {sorted(_ANALOGY_LETTERS)}"
        )
    return _ANALOGY_LETTERS[nearest]


def _cat_cat_or_cat_dog(cat_cat: float, cat_dog: float) -> str:
    if cat_dog > cat_cat:
        return "a"
    return "b" if cat_cat > cat_dog else "c"


QUESTIONS = (
    Question(
        "01.three-times-longer",
        Prediction(
            "3a instead of a: what happens to a·b and cos(a, b)?",
            choices={
                "a": "both triple",
                "b": "the dot product triples, the cosine stays the same",
                "c": "both stay the same",
            },
            why={
                "b": "a·b = ‖a‖‖b‖cos θ carries the length ‖a‖, which tripled; the cosine "
                "divides by ‖3a‖ = 3‖a‖, so the 3 cancels and only the angle is left.",
                "a": "cos(a, b) = a·b / (‖a‖‖b‖): the factor 3 turns up in the numerator and "
                "in the denominator, and cancels.",
                "c": "the direction did not change, so the cosine cannot; but a·b is ‖a‖‖b‖cos θ, "
                "and ‖a‖ is now three times what it was.",
            },
        ),
        answer="b",
        observe=_three_times_longer,
        giveaways=("the cosine did not notice", "keeps only the direction"),
    ),
    Question(
        "01.analogy-query-words-allowed",
        Prediction(
            "king − man + woman with the query words allowed: the nearest word?",
            choices={"a": "queen", "b": "woman", "c": "king"},
            why={
                "c": "the target is king plus the step woman − man, and that step (about 2.6 "
                "long) is short next to king's vector (about 5.4): the target moves towards "
                "queen, but king is still the closest word to it.",
                "a": "queen wins only when king, man and woman are left out of the answers, "
                "which is what analogy does unless told otherwise.",
                "b": "woman enters only through the difference woman − man, a short step added "
                "to the long king vector; the target stays far from woman's own vector.",
            },
        ),
        answer="c",
        observe=_analogy_nearest,
        giveaways=(
            "still closest to king",
            "only once the three query words are excluded",
            "king stays nearest",
        ),
    ),
    Question(
        "01.cat-cat-or-cat-dog",
        Prediction(
            "which is larger, cat·cat or cat·dog?",
            choices={"a": "cat·dog", "b": "cat·cat", "c": "they are equal"},
            why={
                "a": "cat·dog = ‖cat‖‖dog‖cos θ: the angle costs a little (cos θ ≈ 0.92), but "
                "dog's vector is longer than cat's, enough to beat ‖cat‖² itself. The plain dot "
                "product rewards length.",
                "b": "a word is most similar to itself by cosine (cos(cat, cat) = 1); the dot "
                "product also counts lengths, and a longer neighbour can outscore ‖cat‖².",
                "c": "equal would need ‖dog‖ cos θ to be exactly ‖cat‖; nothing in how the "
                "vectors were learned makes it so.",
            },
        ),
        answer="a",
        observe=_cat_cat_or_cat_dog,
        giveaways=(
            "the diagonal wins only usually",
            "a long vector can beat",
            "a longer vector can beat",
        ),
    ),
)
