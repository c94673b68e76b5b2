"""When two raised errors are the same mistake: the same type, and a message of the same kind.

Many mistakes raise a RuntimeError for very different reasons ("The size of tensor a must
match…", "Boolean value of Tensor with more than one value is ambiguous", "expected scalar
type Float"), so a checker that named a mistake by the error's type alone would misname them.
Every message that says two shapes do not fit counts as one kind (an elementwise product, ``@``
and einsum word it differently), so does every message that says a size is not a whole number
(``view``, ``reshape``, ``split`` …); any other message is its own kind, known by its first two
words.
"""

from __future__ import annotations

# How torch starts the messages that say two shapes do not fit together.
SHAPES_DO_NOT_FIT = (
    "The size of tensor",
    "mat1 and mat2",
    "einsum(): subscript",
    "einsum(): operands do not broadcast",
    "Expected size for first",
    "Expected batch2_sizes",
    "inconsistent tensor size",
    "size mismatch",
    "shape '",
    "The expanded size",
    "self must be a matrix",
    "vector + matrix @ vector",
    "Incompatible matrix sizes",
    "both arguments to matmul need to be at least 1D",
)


# How torch says a size or a shape is not made of whole numbers (a float from `/`).
NOT_WHOLE_NUMBERS = ("tuple of ints,but got float", "must be tuple of ints, not float")


def kind_of(error: BaseException) -> tuple[type, str]:
    """The error's type and the kind of its message."""
    message = str(error).strip()
    if message.startswith(SHAPES_DO_NOT_FIT):
        return type(error), "shapes do not fit"
    if any(words in message for words in NOT_WHOLE_NUMBERS):
        return type(error), "a size is not a whole number"
    return type(error), " ".join(message.split()[:2])


def same_error(a: BaseException, b: BaseException) -> bool:
    return kind_of(a) == kind_of(b)
