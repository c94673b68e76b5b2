"""Notebook 07, Exercise 2: the padding mask of a batch, ``(B, 1, 1, seq_len)``, True = real token.

The cases show each mistake: lengths that end in the middle (``<`` versus ``<=``, counting from 1),
a square batch (B = seq_len hides a transposed comparison), a sentence of length 0, and a seq_len
longer than every sentence (a mask only as wide as the longest one).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks._outcomes import call
from attnlib.checks.engine import Property, check_function

Tensor = torch.Tensor

PADDING_MASK = register(
    Exercise(
        id="ex2_padding_mask",
        notebook="07",
        number=2,
        name="my_padding_mask",
        hints=(
            "Key j of sentence b is a real token when it comes before the end of that sentence: "
            "j < lengths[b], positions counting from 0. The mask answers that question for every "
            "sentence and every position, in a shape that broadcasts against scores "
            "(B, H, T_q, T_k).",
            "One comparison can answer it for the whole batch: the positions 0 … seq_len − 1 laid "
            "out along one dimension, the B lengths along another, and broadcasting makes the "
            "(B, seq_len) table. The scores have two more dimensions, heads and queries, between "
            "the batch and the keys.",
            "Compare a row of the positions (size seq_len) with a column of the lengths (shape "
            "(B, 1)) using a strict 'less than'; that gives (B, seq_len). Then insert two "
            "dimensions of size 1 after the batch dimension. A length of 0 gives a row of "
            "False; a length equal to seq_len a row of True.",
        ),
    )
)

PADDING_MASK_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.padding_mask: "attnlib.padding_mask",
        attnlib.padding_mask_from_ids: "attnlib.padding_mask_from_ids",
        attnlib.padding_mask_from_token_mask: "attnlib.padding_mask_from_token_mask",
    }
)


def _table(lengths: list[int], seq_len: int, *, shift: int = 0) -> Tensor:
    """(B, seq_len): position j + shift < lengths[b]."""
    positions = torch.arange(seq_len) + shift
    return positions[None, :] < torch.tensor(lengths)[:, None]


def reference(lengths: list[int], seq_len: int) -> Tensor:
    """True at key j of sentence b when j < lengths[b]: ``(B, 1, 1, seq_len)``."""
    return _table(lengths, seq_len)[:, None, None, :]


def _transposed(lengths: list[int], seq_len: int) -> Tensor:
    table = torch.tensor(lengths)[None, :] > torch.arange(seq_len)[:, None]  # (seq_len, B)
    return table[:, None, None, :]


def _transposed_reshaped(lengths: list[int], seq_len: int) -> Tensor:
    table = torch.arange(seq_len)[:, None] < torch.tensor(lengths)[None, :]  # (seq_len, B)
    return table.reshape(len(lengths), 1, 1, seq_len)


def _as_wide_as_the_longest(lengths: list[int], seq_len: int) -> Tensor:
    return reference(lengths, max(lengths))


def _real_tokens_at_the_end(lengths: list[int], seq_len: int) -> Tensor:
    table = torch.arange(seq_len)[None, :] >= seq_len - torch.tensor(lengths)[:, None]
    return table[:, None, None, :]


def _last_slots_by_slicing(lengths: list[int], seq_len: int) -> Tensor:
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, length in enumerate(lengths):
        mask[b, ..., -length:] = True  # -0: is the whole row
    return mask


def _same_dimension(lengths: list[int], seq_len: int) -> Tensor:
    side_by_side = torch.arange(seq_len) < torch.tensor(lengths)  # (seq_len,) when it broadcasts
    return side_by_side.reshape(-1, 1, 1, seq_len)


WITHOUT_DIMS = Mistake(
    "returned the (B, seq_len) table without the two size-1 dimensions",
    "scores are (B, H, T_q, T_k): a (B, seq_len) mask lines up its batch with the queries "
    "instead, so it needs size 1 at the head and query dimensions.",
    lambda lengths, n: _table(lengths, n),
)


MISTAKES = (
    Mistake(
        "compared with <= instead of <: the position just after each sentence counts as real",
        "positions count from 0, so a sentence of length 3 has its real tokens at 0, 1 and 2; "
        "position 3 is the first pad.",
        lambda lengths, n: (torch.arange(n)[None, :] <= torch.tensor(lengths)[:, None])[
            :, None, None, :
        ],
    ),
    Mistake(
        "counted the positions from 1: the last real token is marked as padding",
        "the first key is position 0, so key j is real when j < length; with positions "
        "1 … seq_len the last word of every sentence is hidden.",
        lambda lengths, n: _table(lengths, n, shift=1)[:, None, None, :],
    ),
    Mistake(
        "wrote True for the padding (True = ignore this key)",
        "in this course True means 'may attend', a real token; True = ignore is "
        "nn.MultiheadAttention's key_padding_mask, the opposite convention.",
        lambda lengths, n: ~reference(lengths, n),
    ),
    WITHOUT_DIMS,
    Mistake(
        "put the positions in the query dimension, (B, 1, seq_len, 1)",
        "padding hides keys, not queries: the positions go last, where they broadcast against "
        "the keys' dimension of the scores.",
        lambda lengths, n: _table(lengths, n)[:, None, :, None],
    ),
    Mistake(
        "put the size-1 dimensions first, (1, 1, B, seq_len)",
        "the batch comes first, as in the scores (B, H, T_q, T_k): with the batch in the query "
        "dimension, sentence b's mask would be used for query b of every sentence.",
        lambda lengths, n: _table(lengths, n)[None, None],
    ),
    Mistake(
        "compared the lengths along the rows and the positions along the columns: (seq_len, B)",
        "each sentence of the batch gets one row of the mask, one entry per position: the "
        "table is (B, seq_len).",
        _transposed,
    ),
    Mistake(
        "compared the lengths along the rows and the positions along the columns: (seq_len, B)",
        "each sentence of the batch gets one row of the mask, one entry per position; reshaping "
        "a (seq_len, B) table to (B, 1, 1, seq_len) does not transpose it, it reads its numbers "
        "in memory order and mixes sentences and positions.",
        _transposed_reshaped,
    ),
    Mistake(
        "returned a mask of numbers (0 and 1), not a bool tensor",
        "masks are bool: PyTorch reads a float mask as numbers to add to the scores, so 1 and 0 "
        "would hide nothing.",
        lambda lengths, n: reference(lengths, n).float(),
    ),
    Mistake(
        "made the mask as wide as the longest sentence instead of seq_len",
        "the batch is padded to seq_len, which can be longer than every sentence: the mask needs "
        "a column for every key of the scores.",
        _as_wide_as_the_longest,
    ),
    Mistake(
        "put the real tokens at the end of each row (padding on the left)",
        "these sentences are padded on the right: the real tokens are the first lengths[b] "
        "positions.",
        _real_tokens_at_the_end,
    ),
    Mistake(  # the same, cut as the last `length` slots: a slice from -0 takes the whole row
        "put the real tokens at the end of each row (padding on the left)",
        "these sentences are padded on the right: the real tokens are the first lengths[b] "
        "positions. Counted from the end, an empty sentence also comes out all real, because "
        "the last 0 positions counted with a minus sign start at position 0.",
        _last_slots_by_slicing,
    ),
    Mistake(
        "repeated each row for every query: the mask is (B, 1, seq_len, seq_len)",
        "the size-1 query dimension lets broadcasting reuse one row for every query, without "
        "storing seq_len copies of it.",
        lambda lengths, n: reference(lengths, n).expand(-1, 1, n, n),
    ),
    Mistake(
        "inserted only one size-1 dimension: the mask is (B, 1, seq_len)",
        "scores are (B, H, T_q, T_k), four dimensions: broadcasting lines a 3-D mask up from the "
        "right, so its batch would meet the heads. Both the head and the query dimension need "
        "size 1.",
        lambda lengths, n: _table(lengths, n)[:, None],
    ),
    Mistake(
        "compared the positions with the lengths while both lay along the same dimension",
        "positions (seq_len,) and lengths (B,) side by side compare position j with sentence "
        "j's length (or do not broadcast at all): the lengths need a dimension of their own, "
        "across the positions, to give a (B, seq_len) table.",
        _same_dimension,
    ),
)


def _first_wrong_entry() -> Property:
    def problem(got: object, case: Case) -> str | None:
        lengths, _ = case.args
        if not isinstance(got, Tensor) or got.shape != case.expected.shape:
            return None
        real, expected = got.detach() != 0, case.expected
        if torch.equal(real, expected):
            return None  # right values in another dtype: the comparison says so
        if torch.equal(real, ~expected):
            return "every entry is the opposite of what it should be (True means 'may attend')"
        b, _, _, j = (int(n) for n in torch.nonzero(real != expected)[0])
        if j < lengths[b]:
            return (
                f"sentence {b} has length {lengths[b]}, so position {j} is a real token (True), "
                "got False"
            )
        return f"sentence {b} has length {lengths[b]}, so position {j} is padding (False), got True"

    return Property(problem)


def _cases() -> list[Case]:
    specs = [
        ("lengths [3, 5, 1], seq_len 5", [3, 5, 1], 5),
        ("one full sentence: lengths [4], seq_len 4", [4], 4),
        ("a square batch: lengths [1, 3, 2], seq_len 3", [1, 3, 2], 3),
        ("an empty sentence: lengths [0, 2], seq_len 3", [0, 2], 3),
        ("seq_len longer than every sentence: lengths [1, 2], seq_len 6", [1, 2], 6),
        ("lengths [2, 7, 4, 6], seq_len 7", [2, 7, 4, 6], 7),
    ]
    return [Case(name, (lengths, n), reference(lengths, n)) for name, lengths, n in specs]


@checker_of(PADDING_MASK, MISTAKES)
def check_my_padding_mask(fn: Callable[[list[int], int], Tensor]) -> CheckResult:
    """Check ``my_padding_mask(lengths, seq_len)``: bool ``(B, 1, 1, seq_len)``."""
    cases = _cases()
    result = check_function(
        PADDING_MASK,
        fn,
        cases,
        MISTAKES,
        forbidden=PADDING_MASK_IMPLEMENTATIONS,
        properties=(_first_wrong_entry(),),
    )
    if result.passed or "not one of the usual mistakes" not in result.message:
        return result
    # A (B, seq_len) table is named for its missing dimensions first, whatever else is wrong.
    tables = [call(fn, case).value for case in cases]
    if all(_is_bare_table(table, case) for table, case in zip(tables, cases, strict=True)):
        named = Mistake(WITHOUT_DIMS.name, WITHOUT_DIMS.why, fn)
        return check_function(PADDING_MASK, fn, cases, [named], properties=(_first_wrong_entry(),))
    return result


def _is_bare_table(table: object, case: Case) -> bool:
    lengths, seq_len = case.args
    return isinstance(table, Tensor) and tuple(table.shape) == (len(lengths), seq_len)
