"""Notebook 00's predict-first questions: broadcasting, keepdim, accumulated gradients."""

from __future__ import annotations

from attnlib.course.predictions import Prediction, Question


def _broadcast_shape(shape: tuple[int, ...] | None) -> str:
    # shape is None when the addition raised.
    if shape is None:
        return "c"
    return "a" if tuple(shape) == (4, 3) else "b"


def _divided_without_keepdim(row_sums: list[float] | None) -> str:
    # row_sums is None when the division raised.
    if row_sums is None:
        return "b"
    return "a" if all(abs(total - 1.0) < 1e-6 for total in row_sums) else "c"


def _second_backward(grad: float) -> str:
    return {6.0: "a", 12.0: "b", 0.0: "c"}.get(grad, "a" if abs(grad - 6.0) < 1e-9 else "b")


QUESTIONS = (
    Question(
        "00.broadcast-shape",
        Prediction(
            "the shape of zeros(4, 1) + zeros(3)?",
            choices={"a": "(4, 3)", "b": "(4, 1)", "c": "an error"},
            why={
                "a": "line the shapes up from the right: (4, 1) against (3,). 1 against 3 "
                "stretches the 1, and the missing dimension of (3,) counts as 1.",
                "c": "sizes may differ when one of them is 1: that size is stretched, not an "
                "error.",
                "b": "a size-1 dimension is stretched to the other side's size; the result "
                "takes the larger of the two in every dimension.",
            },
        ),
        answer="a",
        observe=_broadcast_shape,
    ),
    Question(
        "00.divide-without-keepdim",
        Prediction(
            "a square M / M.sum(dim=-1) without keepdim?",
            choices={
                "a": "each row sums to 1",
                "b": "an error",
                "c": "it runs, but the rows do not sum to 1",
            },
            why={
                "c": "(3, 3) / (3,) lines the three sums up with the columns: column j is "
                "divided by row j's sum. No error, wrong numbers.",
                "b": "for a non-square matrix it would be an error; a square one fits, by bad "
                "luck.",
                "a": "that needs (3, 3) / (3, 1): without keepdim the sums form a row, not a "
                "column.",
            },
        ),
        answer="c",
        observe=_divided_without_keepdim,
    ),
    Question(
        "00.second-backward",
        Prediction(
            "w.grad after a second backward() without clearing it?",
            choices={"a": "6", "b": "12", "c": "0"},
            why={
                "b": "backward() adds each new gradient to .grad: 6 + 6. That is why every "
                "training step starts with optimizer.zero_grad().",
                "a": "it would be 6 only if .grad were cleared in between; backward() accumulates.",
                "c": "nothing clears .grad on its own; backward() adds to what is there.",
            },
        ),
        answer="b",
        observe=_second_backward,
    ),
)
