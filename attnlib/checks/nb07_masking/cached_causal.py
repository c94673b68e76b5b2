"""Notebook 07, Exercise 1: the causal mask of T_q new queries that come after cached keys.

The new queries stand at positions T_k − T_q … T_k − 1 of the T_k keys (a KV cache's step). The
cases show each mistake: a square mask (the diagonal, the polarity, the upper triangle), more keys
than queries (the offset and its sign, the cached keys, a transposed mask), one query (it sees
everything) and T = 1 last, where a missing diagonal and an inverted mask look alike.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

import attnlib
from attnlib.checks._calls import Forbidden
from attnlib.checks._exercise import Exercise, Mistake, checker_of, register
from attnlib.checks._framework import Case, CheckResult
from attnlib.checks.engine import Property, check_function

Tensor = torch.Tensor

CACHED_CAUSAL_MASK = register(
    Exercise(
        id="ex1_cached_causal_mask",
        notebook="07",
        number=1,
        name="cached_causal_mask",
        hints=(
            "Give every query its place in the whole sequence: the T_k keys are positions "
            "0 … T_k − 1, and the T_q new queries are the last T_q of them. A query may attend to "
            "every key at or before its own position, itself included, and to nothing after it.",
            "Query i stands at position i + (T_k − T_q). Compared with the square causal mask of "
            "section 2, the border between True and False moves T_k − T_q keys to the right: "
            "every new query also sees all the cached keys.",
            "Build a (T_q, T_k) bool tensor that is True where the key's index is at most the "
            "query's position: a lower triangle whose diagonal is shifted T_k − T_q places to the "
            "right (or, the same thing, the last T_q rows of the square (T_k, T_k) causal mask). "
            "Check T_q = 1: its one row is all True.",
        ),
    )
)

# An answer may not take the mask from attnlib or from torch: torch's causal bias aligned to the
# lower right is this very mask.
CAUSAL_MASK_IMPLEMENTATIONS = Forbidden(
    python={
        attnlib.causal_mask: "attnlib.causal_mask",
        torch.nn.Transformer.generate_square_subsequent_mask: (
            "torch.nn.Transformer.generate_square_subsequent_mask"
        ),
    },
    paths={
        "torch.nn.modules.transformer:_generate_square_subsequent_mask": (
            "torch.nn.Transformer.generate_square_subsequent_mask"
        ),
        # By path: importing torch.nn.attention.bias imports torch.compile's machinery (2 s).
        **{
            f"torch.nn.attention.bias:{name}": f"torch.nn.attention.bias.{name}"
            for name in ("causal_lower_right", "causal_upper_left", "CausalBias")
        },
    },
)


# Comparisons of aranges rather than a bool tril, which takes milliseconds on a CPU.


def _below(t_q: int, t_k: int, diagonal: int = 0) -> Tensor:
    """What ``torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal)`` is: key j ≤ i + diagonal."""
    return torch.arange(t_k)[None, :] <= torch.arange(t_q)[:, None] + diagonal


def _above(t_q: int, t_k: int, diagonal: int = 0) -> Tensor:
    """``….triu(diagonal)``: key j ≥ i + diagonal."""
    return torch.arange(t_k)[None, :] >= torch.arange(t_q)[:, None] + diagonal


def reference(t_q: int, t_k: int) -> Tensor:
    """True where key j ≤ query i's position i + (t_k − t_q)."""
    return _below(t_q, t_k, t_k - t_q)


def _cached_keys_blocked(t_q: int, t_k: int) -> Tensor:
    cached = torch.zeros(t_q, t_k - t_q, dtype=torch.bool)
    return torch.cat([cached, _below(t_q, t_q)], dim=1)


def _additive(t_q: int, t_k: int) -> Tensor:
    return torch.zeros(t_q, t_k).masked_fill(~reference(t_q, t_k), -torch.inf)


def _first_t_q_keys_only(t_q: int, t_k: int) -> Tensor:
    return reference(t_q, t_k) & (torch.arange(t_k) < t_q)[None, :]


MISTAKES = (
    Mistake(
        "wrote True for the keys a query may not see (True = blocked)",
        "in this course, as in F.scaled_dot_product_attention, True means 'may attend'; True = "
        "blocked is nn.MultiheadAttention's convention, the opposite.",
        lambda t_q, t_k: ~reference(t_q, t_k),
    ),
    Mistake(
        "placed the new queries at positions 0 … T_q − 1, ignoring the cached keys",
        "the cached keys come first: the new queries are the last T_q positions, so each one "
        "sees every cached key as well as the new keys up to itself.",
        lambda t_q, t_k: _below(t_q, t_k),
    ),
    Mistake(
        "left out the diagonal: a query may not attend to its own key",
        "the token at a query's own position is an input the model may read; only keys after it "
        "are the future.",
        lambda t_q, t_k: _below(t_q, t_k, t_k - t_q - 1),
    ),
    Mistake(
        "moved the border the wrong way, by T_q − T_k instead of T_k − T_q",
        "the new queries come after the cached keys, so each sees more keys than its row number, "
        "not fewer.",
        lambda t_q, t_k: _below(t_q, t_k, t_q - t_k),
    ),
    Mistake(
        "let each query see one key too many, the one just after its position",
        "query i stands at position T_k − T_q + i: the key after it is the next token, the very "
        "one the model has to predict.",
        lambda t_q, t_k: _below(t_q, t_k, t_k - t_q + 1),
    ),
    Mistake(
        "kept the upper triangle: each query sees itself and the keys after it",
        "the upper triangle is the future; a causal mask keeps the past, the keys at or before "
        "the query's position.",
        lambda t_q, t_k: _above(t_q, t_k, t_k - t_q),
    ),
    Mistake(
        "returned a mask of numbers (0 and 1), not a bool tensor",
        "masks are bool: PyTorch reads a float mask as numbers to add to the scores, so 1 and 0 "
        "would block nothing.",
        lambda t_q, t_k: reference(t_q, t_k).float(),
    ),
    Mistake(
        "returned an additive float mask (0 where allowed, −inf where blocked), not a bool one",
        "that is the other way PyTorch takes masks, numbers added to the scores; this course's "
        "masks are bool with True = may attend, and read as bool a 0 means blocked and −inf "
        "allowed: the opposite.",
        _additive,
    ),
    Mistake(
        "looked only at the first T_q keys: the keys from T_q on are never allowed",
        "the mask has a column for each of the T_k keys, and a query may attend to every key up "
        "to its own position T_k − T_q + i; a loop over the keys that stops at T_q leaves the "
        "last T_k − T_q columns False.",
        _first_t_q_keys_only,
    ),
    Mistake(
        "returned the whole (T_k, T_k) mask, not the rows of the T_q new queries",
        "with a cache only the new queries are computed: the mask has one row per new query, "
        "(T_q, T_k).",
        lambda t_q, t_k: _below(t_k, t_k),
    ),
    Mistake(
        "made a square (T_q, T_q) mask, leaving out the cached keys",
        "the scores of the new queries are (T_q, T_k): one column for every key, cached or new.",
        lambda t_q, t_k: _below(t_q, t_q),
    ),
    Mistake(
        "blocked the cached keys: the new queries see only the new keys",
        "the cached keys are earlier tokens of the same text: every new query may attend to all "
        "of them, and that is why they are kept.",
        _cached_keys_blocked,
    ),
    Mistake(
        "allowed every key: the mask is all True",
        "a new query that is not the last may not attend to the new keys after it, or it could "
        "read the token it has to predict.",
        lambda t_q, t_k: torch.ones(t_q, t_k, dtype=torch.bool),
    ),
    Mistake(
        "put the keys in the rows and the queries in the columns",
        "rows are queries and columns keys, as in the scores q kᵀ: the mask is (T_q, T_k).",
        lambda t_q, t_k: reference(t_q, t_k).T,
    ),
)


def _first_wrong_entry() -> Property:
    """Say which query and key are wrong, and why, in words."""

    def problem(got: object, case: Case) -> str | None:
        t_q, t_k = case.args
        if not isinstance(got, Tensor) or tuple(got.shape) != (t_q, t_k):
            return None
        if got.is_floating_point() and bool(torch.isinf(got).any()):
            return "the result should be a bool mask (True = may attend), got numbers and −inf"
        allowed = got.detach() != 0
        expected = case.expected
        if torch.equal(allowed, expected):
            return None  # right values in another dtype: the comparison says so
        if torch.equal(allowed, ~expected):
            return "every entry is the opposite of what it should be (True means 'may attend')"
        i, j = (int(n) for n in torch.nonzero(allowed != expected)[0])
        position = t_k - t_q + i
        if j > position:
            return (
                f"query {i} stands at position {position} and key {j} comes after it, so the "
                f"mask should be False there (may not attend), got True"
            )
        where = "is its own position" if j == position else "comes before it"
        return (
            f"query {i} stands at position {position} and key {j} {where}, so the mask "
            f"should be True there (may attend), got False"
        )

    return Property(problem)


def _cases() -> list[Case]:
    # T_q = T_k = 1 comes last: there a missing diagonal and an inverted mask are the same entry.
    sizes = [(4, 4), (3, 5), (1, 6), (2, 7), (5, 8), (1, 1)]
    return [
        Case(f"T_q = {t_q}, T_k = {t_k}", (t_q, t_k), reference(t_q, t_k)) for t_q, t_k in sizes
    ]


@checker_of(CACHED_CAUSAL_MASK, MISTAKES)
def check_cached_causal_mask(fn: Callable[[int, int], Tensor]) -> CheckResult:
    """Check ``cached_causal_mask(T_q, T_k)``: bool ``(T_q, T_k)``, the queries last."""
    return check_function(
        CACHED_CAUSAL_MASK,
        fn,
        _cases(),
        MISTAKES,
        forbidden=CAUSAL_MASK_IMPLEMENTATIONS,
        properties=(_first_wrong_entry(),),
    )
