"""Notebook 11's predict-first questions: the gap to the reference, "bears" in context."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _largest_embedding_gap(largest_gap: float) -> str:
    if largest_gap == 0:
        return "a"
    return "b" if largest_gap < 1e-5 else "c"


def _bears_furthest_apart(animals: float, love_verb: float, grizzly_verb: float) -> str:
    # The three cosines after the last layer: the lowest is the pair furthest apart.
    if min(animals, love_verb, grizzly_verb) > 0.95:
        return "c"
    return "a" if animals < min(love_verb, grizzly_verb) else "b"


def _bears_closest_to_team(sport: float, grizzly: float) -> str:
    # Cosines with "team" after the last layer.
    if abs(sport - grizzly) < 0.05:
        return "c"
    return "a" if sport > grizzly else "b"


QUESTIONS = (
    Question(
        "11.largest-embedding-gap",
        Prediction(
            "the largest gap between our embeddings and sentence-transformers'?",
            choices={
                "a": "exactly 0",
                "b": "tiny, far below 1e-5: float32 rounding",
                "c": "around 1e-2: two implementations never agree closely",
            },
            why={
                "b": "the formulas and weights are the same, but the two programs add the "
                "products up in another order (one kernel fuses the attention, the other takes "
                "its softmax step by step). Each float32 sum is rounded, and rounding depends on "
                "the order, so the last bits differ: a handful of float32 steps, each about "
                "1e-7 near 1.",
                "a": "bit-for-bit equality would need the very same operations in the very same "
                "order. Float32 addition is not associative: (x + y) + z and x + (y + z) can "
                "round to different floats.",
                "c": "a gap of that size is what a real bug gives (the broken copies below move "
                "the embeddings by more than 1e-4); two correct float32 programs differ only by "
                "rounding.",
            },
        ),
        answer="b",
        observe=_largest_embedding_gap,
        giveaways=("rounds differently", "within 1e-5 of sentence-transformers"),
    ),
    Question(
        "11.bears-furthest-apart",
        Prediction(
            'which two of the three "bears" end furthest apart after six layers?',
            choices={
                "a": "the two animals",
                "b": "the verb and an animal",
                "c": "none: the same token stays alike",
            },
            why={
                "b": 'each layer mixes every token with the words around it. "She bears the '
                'pain" uses the token as a verb, among words unlike those around either '
                "animal, so its vector travels furthest from theirs, to a cosine near 0.55; the "
                "animals keep a cosine near 0.9.",
                "a": "the two animals share a meaning and a part of speech; of the three pairs "
                "theirs keeps the highest cosine, not the lowest.",
                "c": "one token, one vector holds only for the embedding layer, before any "
                "attention (there the three differ only by position); every layer after it adds "
                "what the sentence around the token says.",
            },
        ),
        answer="b",
        observe=_bears_furthest_apart,
        giveaways=("the verb moves away", "the verb has moved away", "verb ends furthest"),
    ),
    Question(
        "11.bears-closest-to-team",
        Prediction(
            'which "bears" ends closest to "team" in "The team won the match."?',
            choices={
                "a": "Bears won the game (the team)",
                "b": "Grizzly bears (the animal)",
                "c": "all about the same",
            },
            why={
                "a": '"won" and "game" give the sports Bears a context of sport, and six '
                'layers of attention carry that into its vector: its cosine with "team" ends '
                "about twice the animals'.",
                "b": "the grizzly's sentence is about animals and mountains, with nothing of "
                'sport in it; of the three it ends among the furthest from "team".',
                "c": 'the three start equally far from "team" at the embedding layer (one '
                "token, one table row), but every layer after it mixes in a different sentence.",
            },
        ),
        answer="a",
        observe=_bears_closest_to_team,
        giveaways=("the team sense is nearer", "pulls the team sense"),
    ),
)
