"""Notebook 03's predict-first questions: the last token changed, a reversed sentence, two layers.

The slider question of notebook 03 (the weights at a small scale) is
:func:`attnlib.course.playgrounds.predict_first_questions.weights_at_small_scale`.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlib.course.predictions import Prediction, Question

# A vector that moved by less than this did not move (float32 rounding is far smaller).
_MOVED = 0.01
# Two vectors closer than this are the same vector (float32 rounding is far smaller).
_SAME = 1e-5


def _change_last_token(moved: Sequence[float]) -> str:
    # moved: how far each output moved when the last token changed, outputs 0 … T − 1.
    did = [distance > _MOVED for distance in moved]
    if all(did):
        return "b"
    if not any(did):
        return "c"
    if did == [False] * (len(did) - 1) + [True]:
        return "a"
    raise ValueError(f"outputs {[i for i, d in enumerate(did) if d]} moved: none of the choices")


def _reversed_sentence(to_before: float, to_average: float) -> str:
    # The largest difference between dog's output in the reversed sentence and its output in
    # the original one (to_before), and the sentence's average vector (to_average).
    if to_before < _SAME:
        return "c"
    return "b" if to_average < _SAME else "a"


def _two_layers(one_layer: Sequence[float], two_layers: Sequence[float]) -> str:
    # The distances between every pair of vectors after one layer and after two.
    pairs = list(zip(one_layer, two_layers, strict=True))
    if all(after < before for before, after in pairs):
        return "a"
    if all(after > before for before, after in pairs):
        return "b"
    if all(abs(after - before) < _SAME for before, after in pairs):
        return "c"
    raise ValueError(f"some pairs moved closer, others apart: {pairs}: none of the choices")


QUESTIONS = (
    Question(
        "03.change-last-token",
        Prediction(
            "change the last token: which self-attention outputs move?",
            choices={"a": "only output 3, as in the RNN", "b": "all four", "c": "none of them"},
            why={
                "b": "each output is a weighted mix of all the inputs: output 0 scores the changed "
                "last token, weighs it and mixes its vector in. No output waits for an earlier "
                "one, and none is cut off from a later token.",
                "a": "the RNN's h_0 could not see x_3 because it was computed before x_3 was "
                "read; attention computes output 0 from all four tokens at once.",
                "c": "the changed vector is one of the vectors being averaged, and its scores "
                "with every token change too, so every average moves.",
            },
        ),
        answer="b",
        observe=_change_last_token,
        giveaways=("computes every output from every input", "seeing the future"),
    ),
    Question(
        "03.reversed-sentence",
        Prediction(
            '"dog bites man" reversed: the output vector of "dog"?',
            choices={
                "a": "it changes",
                "b": "it becomes the average of the sentence",
                "c": "exactly the same vector, in another row",
            },
            why={
                "c": "naive attention sees a set of vectors, not a sequence: the scores, each "
                "row's softmax and the mix never use a position, so reversing the rows only "
                "reverses the outputs.",
                "a": "who bites whom is carried by the word order alone, and dog's scores with "
                "'bites' and 'man' are the same numbers in either sentence.",
                "b": "dog's scores did not change, so neither did its weights: it still looks "
                "mostly at itself, not evenly at all three words.",
            },
        ),
        answer="c",
        observe=_reversed_sentence,
        giveaways=("ignores word order", "ignore word order", "order-blind"),
    ),
    Question(
        "03.two-layers-spread",
        Prediction(
            "after two layers, the three vectors are …",
            choices={"a": "closer together", "b": "further apart", "c": "exactly as far apart"},
            why={
                "a": "each output is an average of the layer's inputs, weighted by a row that "
                "sums to 1. Mixing every vector with the others pulls them towards each other: "
                "the three distances shrank in layer 1, and again in layer 2.",
                "b": "an average lands inside the region its points span; a layer of averages "
                "cannot spread its outputs beyond its inputs.",
                "c": "a layer makes no new features, but each output is a mix, not a copy: "
                "every vector moves towards the others.",
            },
        ),
        answer="a",
        observe=_two_layers,
        giveaways=("pulls the vectors closer together", "only blur the vectors together"),
    ),
)
