"""Notebook 07's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named, by its behaviour on every case (a missing diagonal is not called
"inverted" because T = 1 looks alike); right answers written differently (tril, comparisons of
aranges, slices of the square mask, loops, torch.where, float32, −inf handled safely) must pass;
answers that call attnlib's masks or attention, or PyTorch's, must be refused.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes

Tensor = torch.Tensor


def _named(report: object, mistake: str) -> bool:
    return f"The mistake: {mistake}." in str(report)


# -- Exercise 1: the causal mask of queries after cached keys ---------------------------------


def causal_compare(T_q: int, T_k: int) -> Tensor:
    query_positions = torch.arange(T_k - T_q, T_k)[:, None]  # (T_q, 1)
    return torch.arange(T_k)[None, :] <= query_positions


def causal_loop(T_q: int, T_k: int) -> Tensor:
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        mask[i, : T_k - T_q + i + 1] = True
    return mask


CAUSAL_RIGHT = {
    "tril with an offset": lambda T_q, T_k: torch.ones(T_q, T_k).tril(T_k - T_q).bool(),
    "a comparison of positions": causal_compare,
    "the last rows of the square mask": lambda T_q, T_k: torch.tril(
        torch.ones(T_k, T_k, dtype=torch.bool)
    )[-T_q:],
    "a loop": causal_loop,
    "not triu": lambda T_q, T_k: ~torch.ones(T_q, T_k, dtype=torch.bool).triu(T_k - T_q + 1),
}


def cached_blocked(T_q: int, T_k: int) -> Tensor:
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    mask[:, T_k - T_q :] = torch.ones(T_q, T_q, dtype=torch.bool).tril()
    return mask


def keys_loop_to_t_q(T_q: int, T_k: int) -> Tensor:
    mask = torch.zeros(T_q, T_k, dtype=torch.bool)
    for i in range(T_q):
        for j in range(T_q):  # should run over the T_k keys
            mask[i, j] = j <= T_k - T_q + i
    return mask


CAUSAL_WRONG: dict[str, tuple[Callable[[int, int], Tensor], str]] = {
    "True = blocked": (
        lambda T_q, T_k: torch.ones(T_q, T_k, dtype=torch.bool).triu(T_k - T_q + 1),
        "True = blocked",
    ),
    "no offset": (
        lambda T_q, T_k: torch.arange(T_k)[None] <= torch.arange(T_q)[:, None],
        "ignoring the cached keys",
    ),
    "no diagonal": (
        lambda T_q, T_k: torch.arange(T_k)[None] < torch.arange(T_k - T_q, T_k)[:, None],
        "left out the diagonal",
    ),
    "offset the wrong way": (
        lambda T_q, T_k: torch.tril(torch.ones(T_q, T_k, dtype=torch.bool), T_q - T_k),
        "the wrong way",
    ),
    "one key too many": (
        lambda T_q, T_k: torch.arange(T_k)[None] <= torch.arange(T_k - T_q + 1, T_k + 1)[:, None],
        "one key too many",
    ),
    "upper triangle": (
        lambda T_q, T_k: torch.arange(T_k)[None] >= torch.arange(T_k - T_q, T_k)[:, None],
        "kept the upper triangle",
    ),
    "ints": (
        lambda T_q, T_k: torch.ones(T_q, T_k, dtype=torch.int64).tril(T_k - T_q),
        "a mask of numbers",
    ),
    "the whole square": (
        lambda T_q, T_k: torch.ones(T_k, T_k, dtype=torch.bool).tril(),
        "the whole (T_k, T_k) mask",
    ),
    "square of the queries": (
        lambda T_q, T_k: torch.tril(torch.ones(T_q, T_q)) > 0,
        "a square (T_q, T_q) mask",
    ),
    "cached keys blocked": (cached_blocked, "blocked the cached keys"),
    "all True": (lambda T_q, T_k: torch.ones(T_q, T_k) > 0, "allowed every key"),
    "transposed": (
        lambda T_q, T_k: torch.arange(T_k)[:, None] <= torch.arange(T_k - T_q, T_k)[None],
        "keys in the rows",
    ),
    "additive": (
        lambda T_q, T_k: torch.full((T_q, T_k), float("-inf")).triu(T_k - T_q + 1),
        "an additive float mask",
    ),
    "keys loop stops at T_q": (keys_loop_to_t_q, "looked only at the first T_q keys"),
}


@pytest.mark.parametrize("name", CAUSAL_RIGHT)
def test_right_cached_causal_masks_pass(name: str) -> None:
    report = checks.check_cached_causal_mask(CAUSAL_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", CAUSAL_WRONG)
def test_each_cached_causal_mistake_is_caught_and_named(name: str) -> None:
    fn, words = CAUSAL_WRONG[name]
    report = checks.check_cached_causal_mask(fn)
    assert not report.passed
    assert words in str(report), report


def test_a_missing_diagonal_is_not_called_inverted() -> None:
    # The first edition ran T = 1 first, where tril(-1) and the inverted mask are one entry.
    strict = str(
        checks.check_cached_causal_mask(lambda T_q, T_k: causal_loop(T_q, T_k).tril(T_k - T_q - 1))
    )
    assert "left out the diagonal" in strict
    assert "inverted" not in strict and "opposite" not in strict and "True = blocked" not in strict
    square_only = str(
        checks.check_cached_causal_mask(lambda T_q, T_k: torch.ones(T_q, T_k).bool().tril(-1))
    )
    assert "its own position, so the mask should be True there" in square_only
    assert "opposite" not in square_only and "True = blocked" not in square_only
    inverted = str(checks.check_cached_causal_mask(lambda T_q, T_k: ~causal_compare(T_q, T_k)))
    assert "True = blocked" in inverted and "diagonal" not in inverted


def test_the_table_of_exercise_1_is_the_one_tested_here() -> None:
    table = [m.name for m in known_mistakes("ex1_cached_causal_mask")]
    for _, words in CAUSAL_WRONG.values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(CAUSAL_WRONG)


@pytest.mark.parametrize(
    "cheat",
    [
        lambda T_q, T_k: attnlib.causal_mask(T_q, T_k),
        lambda T_q, T_k: attnlib.causal_mask(T_k)[-T_q:],
        lambda T_q, T_k: torch.nn.Transformer.generate_square_subsequent_mask(T_k)[-T_q:] == 0,
    ],
    ids=["attnlib.causal_mask", "attnlib's square mask, sliced", "torch's square mask"],
)
def test_a_mask_taken_from_a_library_is_refused(cheat: Callable[[int, int], Tensor]) -> None:
    report = checks.check_cached_causal_mask(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 2: the padding mask ----------------------------------------------------------


def padding_loop(lengths: list[int], seq_len: int) -> Tensor:
    mask = torch.zeros(len(lengths), 1, 1, seq_len, dtype=torch.bool)
    for b, length in enumerate(lengths):
        mask[b, 0, 0, :length] = True
    return mask


PADDING_RIGHT = {
    "unsqueeze": lambda lengths, n: (
        (torch.arange(n) < torch.tensor(lengths).unsqueeze(1)).unsqueeze(1).unsqueeze(1)
    ),
    "a loop": padding_loop,
    "view": lambda lengths, n: (
        torch.arange(n).expand(len(lengths), n) < torch.tensor(lengths).view(-1, 1)
    ).view(len(lengths), 1, 1, n),
    "greater than": lambda lengths, n: torch.tensor(lengths)[:, None, None, None] > torch.arange(n),
}

PADDING_WRONG: dict[str, tuple[Callable[[list[int], int], Tensor], str]] = {
    "<=": (
        lambda lengths, n: (torch.arange(n) <= torch.tensor(lengths)[:, None])[:, None, None],
        "<= instead of <",
    ),
    "from 1": (
        lambda lengths, n: (torch.arange(1, n + 1) < torch.tensor(lengths)[:, None])[:, None, None],
        "counted the positions from 1",
    ),
    "inverted": (
        lambda lengths, n: (torch.arange(n) >= torch.tensor(lengths)[:, None])[:, None, None],
        "True for the padding",
    ),
    "(B, T)": (
        lambda lengths, n: torch.arange(n)[None, :] < torch.tensor(lengths)[:, None],
        "without the two size-1 dimensions",
    ),
    "(B, 1, T, 1)": (
        lambda lengths, n: (torch.arange(n) < torch.tensor(lengths)[:, None]).unsqueeze(1)[
            ..., None
        ],
        "in the query dimension",
    ),
    "(1, 1, B, T)": (
        lambda lengths, n: (torch.arange(n) < torch.tensor(lengths)[:, None]).expand(1, 1, -1, -1),
        "size-1 dimensions first",
    ),
    "(T, B)": (
        lambda lengths, n: (torch.arange(n)[:, None] < torch.tensor(lengths))[:, None, None, :],
        "the lengths along the rows",
    ),
    "floats": (lambda lengths, n: padding_loop(lengths, n).int(), "a mask of numbers"),
    "as wide as the longest": (
        lambda lengths, n: padding_loop(lengths, max(lengths)),
        "as wide as the longest sentence",
    ),
    "left padding": (
        lambda lengths, n: (
            padding_loop([n] * len(lengths), n)
            & (torch.arange(n) >= n - torch.tensor(lengths)[:, None])[:, None, None]
        ),
        "real tokens at the end",
    ),
    "a row per query": (
        lambda lengths, n: padding_loop(lengths, n).repeat(1, 1, n, 1),
        "repeated each row for every query",
    ),
    "(B, 1, T)": (lambda lengths, n: padding_loop(lengths, n)[:, 0], "only one size-1 dimension"),
    "lengths beside the positions": (
        lambda lengths, n: (torch.tensor(lengths) > torch.arange(n)).view(-1, 1, 1, n),
        "along the same dimension",
    ),
}


def padding_the_last_slots(lengths: list[int], seq_len: int) -> Tensor:
    mask = torch.zeros(len(lengths), seq_len, dtype=torch.bool)
    for row, length in zip(mask, lengths, strict=True):
        row[-length:] = True  # the last `length` slots (and, for length 0, the whole row)
    return mask.view(len(lengths), 1, 1, seq_len)


# A mistake the table writes twice, as the two ways give different numbers.
PADDING_SECOND_WAYS = {
    "the last `length` slots, sliced from the end": (
        padding_the_last_slots,
        "real tokens at the end",
    ),
    "(T, B) reshaped to (B, 1, 1, T)": (
        lambda lengths, n: torch.stack([torch.arange(n) < m for m in lengths], 1).view(
            len(lengths), 1, 1, n
        ),
        "the lengths along the rows",
    ),
}


@pytest.mark.parametrize("name", PADDING_RIGHT)
def test_right_padding_masks_pass(name: str) -> None:
    report = checks.check_my_padding_mask(PADDING_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", [*PADDING_WRONG, *PADDING_SECOND_WAYS])
def test_each_padding_mistake_is_caught_and_named(name: str) -> None:
    fn, words = {**PADDING_WRONG, **PADDING_SECOND_WAYS}[name]
    report = checks.check_my_padding_mask(fn)
    assert not report.passed
    assert words in str(report), report


def test_the_table_of_exercise_2_is_the_one_tested_here() -> None:
    table = list(dict.fromkeys(m.name for m in known_mistakes("ex2_padding_mask")))
    for _, words in PADDING_WRONG.values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(PADDING_WRONG)


@pytest.mark.parametrize(
    "cheat",
    [
        lambda lengths, n: attnlib.padding_mask(lengths, n),
        lambda lengths, n: attnlib.padding_mask_from_token_mask(padding_loop(lengths, n)[:, 0, 0]),
    ],
    ids=["padding_mask", "padding_mask_from_token_mask"],
)
def test_a_padding_mask_from_attnlib_is_refused(cheat: Callable[[list[int], int], Tensor]) -> None:
    report = checks.check_my_padding_mask(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 3: masked attention ------------------------------------------------------------


def attention_min_fill(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def attention_inf_then_where(q: Tensor, k: Tensor, v: Tensor, mask: Tensor):
    scores = torch.matmul(q, k.mT) * q.size(-1) ** -0.5
    weights = torch.where(mask, scores, float("-inf")).softmax(-1)
    weights = torch.where(mask, weights, torch.zeros_like(weights))  # NaN rows become 0
    return weights @ v, weights


def attention_nan_to_num(q: Tensor, k: Tensor, v: Tensor, mask: Tensor):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(k.shape[-1])
    weights = torch.nan_to_num(torch.softmax(scores.masked_fill(mask == 0, -math.inf), -1))
    return torch.einsum("...qk,...kd->...qd", weights, v), weights


def attention_float32(q: Tensor, k: Tensor, v: Tensor, mask: Tensor):
    q, k, v = q.float(), k.float(), v.float()
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, -1e9)
    weights = scores.softmax(dim=-1) * mask
    return weights @ v, weights


def attention_by_hand_softmax(q: Tensor, k: Tensor, v: Tensor, mask: Tensor):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores - scores.amax(dim=-1, keepdim=True)
    exps = torch.exp(scores) * mask  # blocked pairs contribute nothing
    totals = exps.sum(dim=-1, keepdim=True)
    weights = torch.where(totals > 0, exps / totals.clamp_min(1e-30), torch.zeros_like(exps))
    return weights @ v, weights


ATTENTION_RIGHT = {
    "finfo.min, then zeroed": attention_min_fill,
    "−inf with torch.where, then zeroed": attention_inf_then_where,
    "−inf, einsum, nan_to_num": attention_nan_to_num,
    "computed in float32, back in the input's dtype": lambda q, k, v, mask: tuple(
        t.to(q.dtype) for t in attention_float32(q, k, v, mask)
    ),
    "a softmax by hand over the allowed keys": attention_by_hand_softmax,
}


def _scores(q: Tensor, k: Tensor, scale: float | None = None) -> Tensor:
    return q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale is None else scale)


def inverted(q, k, v, mask):
    scores = _scores(q, k).masked_fill(mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, -1).masked_fill(mask, 0)
    return weights @ v, weights


def renormalised(q, k, v, mask):
    weights = torch.softmax(_scores(q, k), -1) * mask
    weights = weights / weights.sum(-1, keepdim=True)
    return weights @ v, weights


def never_zeroed(q, k, v, mask):
    weights = torch.softmax(torch.where(mask, _scores(q, k), torch.finfo(q.dtype).min), -1)
    return weights @ v, weights


def minus_1e9_only(q, k, v, mask):
    weights = torch.softmax(_scores(q, k).masked_fill(mask == False, -1e9), dim=-1)  # noqa: E712
    return torch.matmul(weights, v), weights


def minus_1e9_zeroed(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, -1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def minus_1e9_where(q, k, v, mask):
    scores = torch.where(mask, _scores(q, k), torch.tensor(-1e9))  # a float16 -inf in float16
    weights = F.softmax(scores, dim=-1)
    return weights @ v, weights


def zeroed_by_a_float_mask(q, k, v, mask):
    scores = _scores(q, k).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(scores, dim=-1) * mask.float()  # float32 from here on
    return weights @ v, weights


def zeroed_after_only(q, k, v, mask):
    weights = torch.softmax(_scores(q, k), -1) * mask
    return weights @ v, weights


def scores_times_mask(q, k, v, mask):
    weights = torch.softmax(_scores(q, k) * mask, -1)
    weights = weights * mask
    return weights @ v, weights


def zeroed_for_the_caller(q, k, v, mask):
    weights = torch.softmax(_scores(q, k).masked_fill(~mask, torch.finfo(q.dtype).min), -1)
    out = weights @ v
    return out, weights * mask


def mask_made_4d(q, k, v, mask):
    mask = mask[None, None]  # (1, 1, T_q, T_k), like the scores of a batch of heads
    s = _scores(q, k).masked_fill(~mask, torch.finfo(q.dtype).min)
    weights = torch.softmax(s, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights


def _right_with(scores: Callable[[Tensor, Tensor, Tensor], Tensor], dim: int = -1):
    def attend(q, k, v, mask):
        s = scores(q, k, v).masked_fill(~mask, torch.finfo(q.dtype).min)
        weights = torch.softmax(s, dim=dim).masked_fill(~mask, 0.0)
        return weights @ v, weights

    return attend


def dot_with_t(q, k, v):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return q @ k.T / math.sqrt(q.shape[-1])


def attention_total_plus(eps: float) -> Callable[..., tuple[Tensor, Tensor]]:
    def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        scores = _scores(q, k)
        e = torch.exp(scores - scores.amax(dim=-1, keepdim=True)) * mask
        weights = e / (e.sum(dim=-1, keepdim=True) + eps)  # never 0 / 0, I thought
        return weights @ v, weights

    return attention


def attention_empty_rows_float32(q: Tensor, k: Tensor, v: Tensor, mask: Tensor):
    _, weights = attention_nan_to_num(q, k, v, mask)
    empty = ~mask.any(dim=-1, keepdim=True)
    weights = torch.where(empty, torch.zeros(weights.shape), weights)  # float32 zeros
    return weights @ v.to(weights.dtype), weights


# Named by the engine, not by the table: the task names float16, so a result in another
# dtype is named (issue 40).
ATTENTION_IN_ANOTHER_DTYPE = {
    "computed in float32 whatever the input": (attention_float32, "returns float32 for float64"),
    "empty rows zeroed with a float32 tensor": (
        attention_empty_rows_float32,
        "returns float32 for float16 input",
    ),
}


@pytest.mark.parametrize("name", ATTENTION_IN_ANOTHER_DTYPE)
def test_a_result_in_another_dtype_is_named(name: str) -> None:
    fn, words = ATTENTION_IN_ANOTHER_DTYPE[name]
    report = checks.check_my_masked_attention(fn)
    assert not report.passed and f"The mistake: {words}" in str(report), report


ATTENTION_WRONG: dict[str, tuple[Callable[..., tuple[Tensor, Tensor]], str]] = {
    "1e-9 on the total: 0 in float16": (attention_total_plus(1e-9), "float16 rounds to 0"),
    "1e-4 on the total": (attention_total_plus(1e-4), "add up to less than 1"),
    "inverted": (inverted, "(True = blocked)"),
    "−inf": (
        lambda q, k, v, mask: (
            (w := torch.softmax(_scores(q, k).masked_fill(~mask, float("-inf")), -1)) @ v,
            w,
        ),
        "divide 0 by 0",
    ),
    "renormalised": (renormalised, "divide 0 by 0"),
    "never zeroed": (never_zeroed, "filled the blocked scores but never set"),
    "−1e9 only": (minus_1e9_only, "with −1e9 and never set"),
    "float32's smallest, zeroed": (minus_1e9_zeroed, "broke float16"),
    "mask.float(), zeroed": (zeroed_by_a_float_mask, "broke float16"),
    "an additive mask": (
        lambda q, k, v, mask: (
            (w := F.softmax(_scores(q, k) + torch.where(mask, 0.0, -1e9), dim=-1)) @ v,
            w,
        ),
        "added −1e9",
    ),
    "only out": (lambda q, k, v, mask: attention_min_fill(q, k, v, mask)[0], "returned only out"),
    "−1e9 with torch.where": (minus_1e9_where, "(−inf in float16)"),
    "zeroed after only": (zeroed_after_only, "without masking the scores first"),
    "scores times mask": (scores_times_mask, "set the blocked scores to 0"),
    "scores times mask, never zeroed": (
        lambda q, k, v, mask: ((w := (_scores(q, k) * mask).softmax(-1)) @ v, w),
        "set the blocked scores to 0",
    ),
    "mask made 4-D": (mask_made_4d, "two new leading dimensions"),
    "zeroed for the caller": (zeroed_for_the_caller, "only in the weights returned"),
    "√d_v": (_right_with(lambda q, k, v: _scores(q, k, math.sqrt(v.size(-1)))), "√d_v"),
    "no scale": (_right_with(lambda q, k, v: q @ k.transpose(-2, -1)), "did not scale"),
    "d_k": (_right_with(lambda q, k, v: _scores(q, k, q.shape[-1])), "by d_k instead"),
    ".T": (_right_with(dot_with_t), "with .T"),
    "transpose(0, 1)": (
        _right_with(lambda q, k, v: q @ k.transpose(0, 1) / math.sqrt(q.shape[-1])),
        "first two dimensions",
    ),
    "transpose(2, 3)": (
        _right_with(lambda q, k, v: torch.matmul(q, k.transpose(2, 3)) / q.shape[-1] ** 0.5),
        "dimensions 2 and 3",
    ),
    "dim 1": (_right_with(lambda q, k, v: _scores(q, k), dim=1), "along dim 1"),
    "dim -2": (_right_with(lambda q, k, v: _scores(q, k), dim=-2), "over the queries"),
    "swapped": (lambda q, k, v, mask: attention_min_fill(q, k, v, mask)[::-1], "(weights, out)"),
    "mask added": (
        lambda q, k, v, mask: (
            (w := torch.softmax(_scores(q, k) + mask.to(q.dtype), dim=-1)) @ v,
            w,
        ),
        "added the bool mask",
    ),
}


@pytest.mark.parametrize("name", ATTENTION_RIGHT)
def test_right_masked_attention_passes(name: str) -> None:
    report = checks.check_my_masked_attention(ATTENTION_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", ATTENTION_WRONG)
def test_each_masked_attention_mistake_is_caught_and_named(name: str) -> None:
    fn, words = ATTENTION_WRONG[name]
    report = checks.check_my_masked_attention(fn)
    assert not report.passed
    assert words in str(report), report


def test_the_table_of_exercise_3_is_the_one_tested_here() -> None:
    table = list(dict.fromkeys(m.name for m in known_mistakes("ex3_masked_attention")))
    for _, words in ATTENTION_WRONG.values():
        assert sum(words in name for name in table) == 1, words
    # −inf and renormalising: one mistake; so are a fill float16 cannot hold and float32 mixed
    # in (which the table writes twice, as they raise different errors), and the scores set to
    # 0 with or without the blocked weights zeroed after
    assert len(table) == len(ATTENTION_WRONG) - 3


def test_an_empty_row_and_a_blocked_weight_are_reported_in_words() -> None:
    report = str(checks.check_my_masked_attention(never_zeroed))
    assert "may attend to no key: its weights and its output should be 0" in report
    report = str(checks.check_my_masked_attention(zeroed_after_only))
    assert "its weights sum to" in report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda q, k, v, mask: attnlib.scaled_dot_product_attention(q, k, v, mask),
        lambda q, k, v, mask: (
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
            attention_min_fill(q, k, v, mask)[1],
        ),
        lambda q, k, v, mask: attnlib.fused_attention(q, k, v, mask),
    ],
    ids=["attnlib", "torch.nn.functional", "attnlib.fused_attention"],
)
def test_masked_attention_from_a_library_is_refused(cheat: Callable[..., tuple]) -> None:
    report = checks.check_my_masked_attention(cheat)
    assert not report.passed and "does not accept it" in str(report), report


@pytest.mark.slow
@pytest.mark.parametrize(
    ("exercise_id", "checker"),
    [
        ("ex1_cached_causal_mask", checks.check_cached_causal_mask),
        ("ex2_padding_mask", checks.check_my_padding_mask),
        ("ex3_masked_attention", checks.check_my_masked_attention),
    ],
)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str, checker) -> None:
    for mistake in known_mistakes(exercise_id):
        assert _named(checker(mistake.fn), mistake.name), mistake.name


@pytest.mark.parametrize(
    "table",
    [
        lambda lengths, n: torch.arange(n)[None] <= torch.tensor(lengths)[:, None],
        lambda lengths, n: (torch.arange(n) < torch.tensor(lengths)[:, None]).float(),
        lambda lengths, n: torch.arange(n)[None] >= torch.tensor(lengths)[:, None],
    ],
    ids=["<=", "floats", "inverted"],
)
def test_a_bare_table_is_named_for_its_missing_dimensions_first(table: Callable) -> None:
    report = checks.check_my_padding_mask(table)
    assert _named(report, known_mistakes("ex2_padding_mask")[3].name), report


# -- slips the engine names (issue 40) ------------------------------------------------------------


def padding_of_a_list(lengths: list[int], seq_len: int) -> Tensor:
    return (torch.arange(seq_len)[None, :] < lengths[:, None])[:, None, None, :]  # type: ignore[call-overload]


def test_a_python_list_indexed_as_a_tensor_is_named() -> None:
    report = checks.check_my_padding_mask(padding_of_a_list)
    assert report.mistake == "indexed a Python list as if it were a tensor", report
    assert "`lengths[:, None]`" in str(report), report
