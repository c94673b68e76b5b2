"""The predict-first questions asked before the key sliders of notebooks 02, 03, 06 and 07.

Each function returns a :class:`attnlib.course.playgrounds.predict_first.SliderQuestion`
whose ``observe`` calls the notebook's own slider function (from
:mod:`attnlib.course.sliders`, looked up when the answer is checked) at the settings the
question names, and picks the choice the numbers match:

- :func:`gradient_at_high_temperature` (02): ‖J‖ of softmax at a small scale;
- :func:`weights_at_small_scale` (03): naive self-attention's weights for small vectors;
- :func:`slow_dimension` (06): how far a slow dimension's wave gets over the table;
- :func:`pad_query_keys` (07): which keys a padding query reads under causal + padding.

Notebooks 02, 03, 06 and 07.
"""

from __future__ import annotations

import torch

from attnlib.course import sliders
from attnlib.course.playgrounds.predict_first import Observation, SliderQuestion
from attnlib.course.predictions import Prediction

# 02: the limits between the choices "larger than 1", "in between" and "close to 0".
LARGE_GRADIENT = 1.0
VANISHED_GRADIENT = 0.05


def gradient_at_high_temperature(small: float = 0.1, start: float = 1.0) -> SliderQuestion:
    """Notebook 02: does ‖J‖ keep growing as the scale falls below 1 (a high temperature)?"""

    def observe() -> Observation:
        at_small = sliders.softmax_at_scale(small).jacobian_norm
        at_start = sliders.softmax_at_scale(start).jacobian_norm
        if at_small > LARGE_GRADIENT:
            letter = "a"
        elif at_small < VANISHED_GRADIENT:
            letter = "c"
        else:
            letter = "b"
        return Observation(letter, f"‖J‖ = {at_small:.3f} (at scale {start:g}: {at_start:.3f})")

    start_norm = sliders.softmax_at_scale(start).jacobian_norm
    return SliderQuestion(
        Prediction(
            f"At scale {start:g}, ‖J‖ is about {start_norm:.2f}; at scale 10 it has all but "
            f"vanished. Slide the scale down to {small:g} instead (a high temperature). "
            "‖J‖ there is …",
            choices={
                "a": f"larger than {LARGE_GRADIENT:g}: small scores, large gradients",
                "b": f"between {VANISHED_GRADIENT:g} and {LARGE_GRADIENT:g}: about as large as "
                f"at scale {start:g}",
                "c": f"below {VANISHED_GRADIENT:g}: close to 0 again, as at scale 10",
            },
            why={
                "b": "as the scale falls the weights tend to the uniform 1/n, and J to "
                "diag(p) − ppᵀ at p = 1/4, whose norm is √3/4 ≈ 0.43. Saturation is a danger "
                "on one side only.",
                "a": "J = diag(p) − ppᵀ is built from weights between 0 and 1; it cannot grow "
                "without bound.",
                "c": "‖J‖ vanishes when one weight takes everything; at a small scale none does.",
            },
        ),
        where=f"at scale {small:g}",
        observe=observe,
        giveaways=("0.43 at the flat end", "decreases at every step of the grid"),
    )


def weights_at_small_scale(x: torch.Tensor, small: float = 0.05) -> SliderQuestion:
    """Notebook 03: at a small scale ``s``, where does naive self-attention's weight go?

    Shapes:
        x: ``(T, C)``, the sentence the slider shows.
    """

    def observe() -> Observation:
        weights = sliders.naive_weights_at_scale(x, small).double()  # (T, T)
        size = weights.shape[0]
        one_column = torch.zeros_like(weights)  # (T, T)
        one_column[:, int(weights.mean(dim=0).argmax())] = 1.0
        pictures = {
            "a": torch.eye(size, dtype=weights.dtype),
            "b": one_column,
            "c": torch.full_like(weights, 1 / size),
        }
        distance = {k: float((weights - v).abs().max()) for k, v in pictures.items()}
        letter = min(distance, key=distance.__getitem__)  # the nearest picture
        return Observation(
            letter,
            f"mean self-weight {float(weights.diagonal().mean()):.2f}, "
            f"every weight between {float(weights.min()):.2f} and {float(weights.max()):.2f} "
            f"(uniform: {1 / size:.2f})",
        )

    start_self_weight = float(sliders.naive_weights_at_scale(x, 1.0).diagonal().mean())
    return SliderQuestion(
        Prediction(
            f"At s = 1 the mean self-weight is {start_self_weight:.2f}: each word looks mostly at "
            f"itself. Slide s down to {small:g}. The weights become …",
            choices={
                "a": "still the diagonal: scaling does not change which score is largest",
                "b": "one column: every word looks at the same word",
                "c": "nearly uniform: every word takes in every word about equally",
            },
            why={
                "c": f"the scores shrink like s², to nearly 0 at s = {small:g}, and the softmax "
                "of nearly equal scores is nearly uniform. Each word then becomes the average of "
                "the sentence, no more useful than looking only at itself: the useful mixing lies "
                "in between.",
                "a": "the order stays, but softmax reads the gaps between scores, and they shrink.",
                "b": "one column would need one score far above the rest in every row; the gaps "
                "all shrink together.",
            },
        ),
        where=f"at s = {small:g}",
        observe=observe,
        giveaways=(
            "every row becomes nearly uniform",
            "all weights close to 1/4",
            "just the average of the sentence",
        ),
    )


def slow_dimension(dimension: int = 40, max_len: int = 64) -> SliderQuestion:
    """Notebook 06: how much of its wave a slow dimension covers over the table's positions."""

    def observe() -> Observation:
        view = sliders.encoding_at(0, dimension, max_len=max_len)
        column = view.encoding[:, dimension]  # (max_len,)
        turns = (max_len - 1) / view.wavelength
        if not bool(column.any()):
            letter = "c"
        elif turns >= 1:
            letter = "b"
        else:
            letter = "a"
        return Observation(
            letter,
            f"wavelength {view.wavelength:.0f} positions, so positions 0 to {max_len - 1} "
            f"cover {turns:.0%} of one wave; PE goes from {float(column.min()):+.3f} "
            f"to {float(column.max()):+.3f}",
        )

    fast_turns = (max_len - 1) / sliders.encoding_at(0, 0, max_len=max_len).wavelength
    slow = sliders.encoding_at(0, dimension, max_len=max_len)
    d_model = slow.encoding.shape[1]
    return SliderQuestion(
        Prediction(
            f"Dimension 0 goes through about {fast_turns:.0f} full waves over the {max_len} "
            f"positions. Set the dimension to {dimension} and slide the position from 0 to "
            f"{max_len - 1}. PE[position, {dimension}] …",
            choices={
                "a": "moves only a little: a small part of one wave",
                "b": "goes through one full wave or more, too",
                "c": "stays exactly 0",
            },
            why={
                "a": f"dimension {dimension} turns by ω = 10000^(−{2 * (dimension // 2)}/"
                f"{d_model}) radians per position: its wave is about {slow.wavelength:,.0f} "
                "positions long.",
                "b": "each pair of dimensions has its own wavelength, growing geometrically from "
                "2π to nearly 10000·2π.",
                "c": "sin(p·ω) is 0 only at p = 0; it is small, but it moves.",
            },
        ),
        where=f"at dimension {dimension}",
        observe=observe,
        giveaways=("nearly flat", "hardly change", "barely moves", "the wave stretches"),
    )


def pad_query_keys(query: int = 2, real_length: int = 1) -> SliderQuestion:
    """Notebook 07: under causal + padding, which keys a query that is now padding reads."""
    kind = "causal + padding"
    words = sliders.MASK_DEMO_WORDS
    if not 1 <= real_length <= query < len(words):
        raise ValueError(
            f"query must be a pad position, real_length <= query < {len(words)}, "
            f"got query={query}, real_length={real_length}"
        )

    def observe() -> Observation:
        row = sliders.masked_weights(kind, real_length=real_length).weights[query]  # (T,)
        read = [int(key) for key in torch.nonzero(row > 0).flatten()]
        if not read:
            letter = "c"
        elif max(read) < real_length:
            letter = "b"  # the real keys only
        else:
            letter = "a"  # pad keys too
        shown = [w if i < real_length else "<pad>" for i, w in enumerate(words)]
        named = ", ".join(f"{shown[k]!r} ({float(row[k]):.2f})" for k in read) or "no key"
        return Observation(letter, f"row {query} reads {named}")

    real = " ".join(repr(w) for w in words[:real_length])
    return SliderQuestion(
        Prediction(
            f"Mask {kind!r}, real tokens slid down to {real_length}: only {real} is real, and "
            f"{words[query]!r} (query {query}) is now padding. Which keys does its row read?",
            choices={
                "a": f"every key up to itself, 0 … {query}, pads included: the causal mask "
                "allows them",
                "b": f"only {real}: the padding mask hides the pad keys from every query",
                "c": "none: a pad query's row is all zeros",
            },
            why={
                "b": "a padding mask blocks the pad keys (columns) for every query; it leaves the "
                "pad queries (rows) alone, and the loss ignores their outputs instead.",
                "a": "causal + padding allows a pair only if both masks do; the pad keys fail "
                "the padding mask.",
                "c": "the padding mask blocks columns, not rows: a pad query still has the real "
                "tokens to read, and its row still sums to 1.",
            },
        ),
        where=f"at {kind!r} with {real_length} real token{'s' if real_length != 1 else ''}",
        observe=observe,
        giveaways=(
            "every query can only look at",
            "every row puts all its weight there",
            "pad queries still read the real tokens",
        ),
    )
