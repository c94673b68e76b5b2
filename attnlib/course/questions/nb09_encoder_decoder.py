"""Notebook 09's predict-first questions: the best model under label smoothing, the warm-up
schedule's rate far after its peak, and beam search against greedy decoding on dates."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _nearest(value: float, letters: dict[str, float]) -> str:
    return min(letters, key=lambda letter: abs(letters[letter] - value))


def _best_smoothed_probability(p_right: float, eps: float, vocab_size: int) -> str:
    # p_right: the probability the loss-minimising logits give the right token.
    return _nearest(p_right, {"a": 1.0, "b": 1 - eps, "c": 1 - eps + eps / vocab_size})


def _rate_far_after_the_peak(ratio: float) -> str:
    # ratio: the learning rate at four times the peak's step, over the peak's.
    return _nearest(ratio, {"a": 0.5, "b": 0.25, "c": 0.0})


def _beam_against_greedy(greedy: float, beam: float) -> str:
    # greedy, beam: the two decoders' exact-match accuracies on the same held-out pairs.
    gap = beam - greedy
    if gap > 0.005:
        return "a"
    return "c" if gap < -0.005 else "b"


QUESTIONS = (
    Question(
        "09.best-smoothed-probability",
        Prediction(
            "With label smoothing, ε = 0.1 and V = 5 tokens, what probability does the best "
            "possible model put on the right token?",
            choices={"a": "1, as before", "b": "0.9 = 1 − ε", "c": "0.92 = 1 − ε + ε/V"},
            why={
                "c": "the smoothed loss −Σ q_k log p_k is a cross-entropy against q, and a "
                "cross-entropy is lowest where p equals its target: p = q. The right token's "
                "entry of q is its 1 − ε plus its own share of the spread, ε/V: 0.9 + 0.02.",
                "a": "probability 1 on the right token leaves 0 for the others, and the loss "
                "takes −log 0 for each of them with weight ε/V: certainty is what plain "
                "cross-entropy rewards and what the smoothed loss punishes without limit.",
                "b": "ε is spread over all V tokens, the right one among them, so the right "
                "token gets its 1 − ε and a share ε/V on top.",
            },
        ),
        answer="c",
        observe=_best_smoothed_probability,
        giveaways=("the best model predicts q itself", "the smoothed target itself"),
    ),
    Question(
        "09.rate-at-step-16000",
        Prediction(
            "After its peak at step 4000, how large is the warm-up schedule's learning rate at "
            "step 16,000, four times as far into training?",
            choices={"a": "half the peak", "b": "a quarter of the peak", "c": "almost zero"},
            why={
                "a": "past the warm-up the rate is d_model^(−1/2) · s^(−1/2): it falls as one "
                "over the square root of the step, and √(16000 / 4000) = √4 = 2, so the rate is "
                "1/2 of its peak.",
                "b": "a quarter would be a decay as 1/s; the schedule's s^(−1/2) is slower: four "
                "times the steps divide the rate by √4 only.",
                "c": "s^(−1/2) never reaches zero, and it slows down as it goes: at step 16,000 "
                "it has only halved since step 4000.",
            },
        ),
        answer="a",
        observe=_rate_far_after_the_peak,
        giveaways=("four times the steps, half the rate", "half the rate"),
    ),
    Question(
        "09.beam-against-greedy",
        Prediction(
            "Beam search with k = 4 against greedy decoding, on the 1000 held-out pairs: beam "
            "search's accuracy is …",
            choices={
                "a": "higher by more than half a percentage point",
                "b": "the same to within half a point",
                "c": "lower by more than half a point",
            },
            why={
                "b": "beam search can only win where a close second at one step leads to a more "
                "likely whole output. This model's probability for the right character "
                "averages above 0.99, and every right output has the same length, so the "
                "likeliest sequence is almost always the greedy one.",
                "a": "beam search helps a model that hesitates; here the model hardly does, and "
                "its rare mistakes are made with confidence, where no other beam scores higher.",
                "c": "a beam can in principle pick a likelier wrong output, but with one output "
                "length and a confident model it nearly always picks the greedy one.",
            },
        ),
        answer="b",
        observe=_beam_against_greedy,
        giveaways=(
            "as accurate as greedy decoding",
            "beam search has little to fix",
        ),
    ),
)
