"""Notebook 10's predict-first questions: the future and the past, validation against training
loss, made-up words at two temperatures."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _first_logits_moved(change_at_0: float, spread_at_0: float) -> str:
    # change_at_0: the largest change of a logit at position 0; spread_at_0: how far its
    # logits lie apart (largest minus smallest), the scale "a little" is read against.
    if change_at_0 == 0:
        return "b"
    return "a" if change_at_0 < 0.1 * spread_at_0 else "c"


def _validation_against_training(training: float, validation: float) -> str:
    gap = validation - training
    if gap < 0:
        return "a"
    return "b" if gap < 0.5 else "c"


def _made_up_words(at_half: int, at_one_and_a_half: int) -> str:
    # Counts of made-up words in the same number of samples at T = 0.5 and at T = 1.5.
    if at_one_and_a_half > 2 * at_half:
        return "b"
    return "a" if at_half > 2 * at_one_and_a_half else "c"


QUESTIONS = (
    Question(
        "10.first-logits-after-changing-the-last-token",
        Prediction(
            "change only the last character of the window: what happens to the logits at "
            "position 0?",
            choices={
                "a": "they change a little",
                "b": "they stay exactly the same",
                "c": "they change a lot",
            },
            why={
                "b": "the causal mask gives every later position a weight of exactly 0, in every "
                "block, and the feed-forward network and the LayerNorms work on each position "
                "alone: nothing of a later character reaches an earlier position, not even in "
                "the last bit.",
                "a": "attention mixes positions, but only those a query may attend to: under the "
                "causal mask position 0 attends to itself alone, and its weight on anything "
                "later is exactly 0, not small.",
                "c": "a change can only travel forwards: position 0 reads no later position in "
                "any layer, so there is no path by which the last character could move it.",
            },
        ),
        answer="b",
        observe=_first_logits_moved,
        giveaways=(
            "bit for bit",
            "never depends on later tokens",
            "must change no logit",
            "not approximately, exactly",
        ),
    ),
    Question(
        "10.validation-against-training-loss",
        Prediction(
            "after 600 steps, the loss on the validation text compared with the loss on the "
            "training text?",
            choices={
                "a": "it is lower",
                "b": "it is a little higher",
                "c": "it is far higher: the model has memorised its training text",
            },
            why={
                "b": "text the model never saw is a little harder to predict than text it "
                "trained on, so its validation loss lies above the training loss; but a model "
                "this small, trained for 600 steps, cannot learn its training text by heart: "
                "what it learned (spelling, spaces, common words) carries over.",
                "a": "the model's weights were fitted to the training text and never to the "
                "validation text, so on average they serve the training text at least as well; "
                "a lower validation loss would need validation text that happens to be easier.",
                "c": "memorising shows as a validation loss that stops falling, then rises, while "
                "the training loss keeps falling; here the validation loss falls at every "
                "evaluation (the table below).",
            },
        ),
        answer="b",
        observe=_validation_against_training,
        giveaways=(
            "a little above the training loss",
            "a little worse on unseen text",
            "the two curves fall together",
        ),
    ),
    Question(
        "10.made-up-words-at-two-temperatures",
        Prediction(
            "which temperature gives more made-up words, words that appear nowhere in the "
            "course's text?",
            choices={"a": "T = 0.5", "b": "T = 1.5", "c": "about as many at both"},
            why={
                "b": "a higher temperature flattens the distribution, so the characters the "
                "model finds unlikely, the ones that break a word, are drawn more often: the "
                "words it spells fall apart.",
                "a": "a low temperature sharpens the distribution towards the likeliest "
                "characters, and those are the ones that continue real words.",
                "c": "the temperature changes how likely each character is to be drawn, and the "
                "unlikely ones are what break words: dividing the logits by 1.5 instead of 0.5 "
                "is a threefold difference in the exponent.",
            },
        ),
        answer="b",
        observe=_made_up_words,
        giveaways=("more nonsense", "more variety", "more made-up words at t = 1.5"),
    ),
)
