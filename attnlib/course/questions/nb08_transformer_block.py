"""Notebook 08's predict-first questions: the FFN and one changed input, the gradient through a
residual stack, and the parameter count as the number of heads varies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attnlib.course.predictions import Prediction, Question


def _ffn_outputs_that_move(moved: Sequence[Sequence[float]], changed_at: Sequence[int]) -> str:
    # moved[b][t]: how far output (b, t) moved when the input at changed_at = (b, t) changed.
    sentence, position = changed_at
    moved_at = {(b, t) for b, row in enumerate(moved) for t, dist in enumerate(row) if dist > 0}
    if moved_at == {(sentence, position)}:
        return "b"
    if len(moved_at) == sum(len(row) for row in moved):
        return "a"
    return "c"


def _gradient_at_layer_0(first: float, last: float) -> str:
    # first, last: the size of the gradient reaching the residual stack's first and last layers.
    if first == 0:
        return "c"
    return "b" if first >= 0.5 * last else "a"


def _parameters_as_heads_vary(counts: Mapping[int, int]) -> str:
    # counts[h]: the parameters of the model with h heads of d_model / h.
    if len(set(counts.values())) == 1:
        return "b"
    fewest, most = min(counts), max(counts)
    return "a" if counts[most] > counts[fewest] else "c"


QUESTIONS = (
    Question(
        "08.ffn-outputs-that-move",
        Prediction(
            "One input vector of the batch (sentence 0, position 2) is replaced: how many of the "
            "10 outputs of the FFN change?",
            choices={
                "a": "all 10",
                "b": "only that one",
                "c": "that one and the positions after it",
            },
            why={
                "b": "FFN(x) is a formula of one vector x: two linear maps and a ReLU, with the "
                "same weights at every position. Nothing in it reads another position, so a new "
                "vector at (0, 2) can move only the output at (0, 2).",
                "a": "mixing the positions is attention's part of the block; the FFN's formula "
                "has no sum over positions, so the other nine outputs have no way to hear of "
                "the change.",
                "c": "that is what a causal decoder's self-attention would do; the FFN reads no "
                "position but its own, earlier or later.",
            },
        ),
        answer="b",
        observe=_ffn_outputs_that_move,
        giveaways=(
            "only that position's output changes",
            "each position is computed on its own",
            "acts on each position alone",
            "transforms each position on its own",
            "no vector sees another",
        ),
    ),
    Question(
        "08.gradient-at-layer-0",
        Prediction(
            "In the residual stack of 30 layers, how does the gradient at the first layer "
            "compare with the gradient at the last?",
            choices={
                "a": "about 1e-9 of it, as in the plain stack",
                "b": "about the same size or larger",
                "c": "exactly zero",
            },
            why={
                "b": "with h ← h + f(h), each layer's Jacobian is I + ∂f/∂h. The identity carries "
                "the gradient from the top to the bottom as it is, and the ∂f/∂h terms are added "
                "to it, not multiplied into it: nothing multiplies it by 0.5 thirty times (here "
                "they even make it larger).",
                "a": "the plain stack has nothing but the ∂f/∂h path, which halves the gradient "
                "at every layer; the residual stack adds an identity path beside it.",
                "c": "a gradient is exactly zero only where nothing depends on the input; the "
                "top of the stack depends on layer 0 through the identity path, at least.",
            },
        ),
        answer="b",
        observe=_gradient_at_layer_0,
        giveaways=(
            "passes through unchanged",
            "arrives undiminished",
            "lets gradients reach the first",
            "a path for the gradient",
        ),
    ),
    Question(
        "08.parameters-as-heads-vary",
        Prediction(
            "Rows (A) of Table 3: 1, 4, 16 or 32 heads instead of 8, with d_k = 512 / h. The "
            "model's parameter count …",
            choices={
                "a": "grows with h",
                "b": "stays the same",
                "c": "shrinks as h grows",
            },
            why={
                "b": "h heads of d_model / h columns each are one d_model × d_model matrix for "
                "W^Q, W^K and W^V, cut into h slices, and W^O takes the h slices back in one "
                "d_model × d_model matrix: h changes how the matrices are cut, not their size.",
                "a": "more heads means more, but smaller, projections: h of them, each "
                "d_model × d_model / h, add up to the same d_model × d_model.",
                "c": "fewer columns per head are made up for by more heads, exactly: the "
                "product h · d_k stays d_model.",
            },
        ),
        answer="b",
        observe=_parameters_as_heads_vary,
        giveaways=(
            "the heads do not appear",
            "the number of heads changes nothing",
            "heads change nothing",
            "the same d × d matrices as one head",
        ),
    ),
)
