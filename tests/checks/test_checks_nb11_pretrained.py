"""Notebook 11's checkers of Exercises 1–3 against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(loops, torch.where, -inf, float64, F.cosine_similarity) must pass; answers that call the
implementation must be refused. The capstone (Exercises 4–7) is tested in
``test_checks_nb11_pretrained_capstone.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.course import inspection, own_encoder

Tensor = torch.Tensor
INF = float("-inf")


def _table_is_tested(exercise_id: str, wrong: dict[str, tuple[object, str]]) -> None:
    table = [m.name for m in known_mistakes(exercise_id)]
    for _, words in wrong.values():
        assert sum(words in name for name in table) == 1, words
    assert {name for name in table} == {
        name for name in table if any(words in name for _, words in wrong.values())
    }, "a mistake of the table is not written again here"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("check", "exercise_id"),
    [
        (checks.check_masked_max_pool, "ex1_my_max_pool"),
        (checks.check_previous_token_weight, "ex2_my_previous_token_share"),
        (checks.check_cosine_search, "ex3_my_semantic_search"),
    ],
)
def test_every_entry_of_the_table_is_named_when_made(check, exercise_id: str) -> None:
    assert check.exercise.id == exercise_id
    mistakes = known_mistakes(exercise_id)
    assert 6 <= len(mistakes) <= 15
    for mistake in mistakes:
        report = check(mistake.fn)
        assert not report.passed
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


# -- Exercise 1: max pooling ----------------------------------------------------------------


def pool_loop(hidden: Tensor, token_mask: Tensor) -> Tensor:
    return torch.stack([h[m].max(dim=0).values for h, m in zip(hidden, token_mask, strict=True)])


POOL_RIGHT: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "finfo.min": lambda h, m: h.masked_fill(~m[..., None], torch.finfo(h.dtype).min).amax(1),
    "torch.where and -inf": lambda h, m: torch.where(m.unsqueeze(2), h, INF).max(dim=1).values,
    "a loop over the sentences": pool_loop,
    "float64, back in hidden's dtype": lambda h, m: (
        h.double().masked_fill(~m[..., None], INF).amax(dim=1).to(h.dtype)
    ),
    "below the smallest value": lambda h, m: torch.where(m[..., None], h, h.min() - 1).amax(1),
}

# The task names float16: a result in another dtype is named, by the engine rather than the
# exercise's table (issue 40).
POOL_IN_ANOTHER_DTYPE: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], str]] = {
    "float64 whatever the input": (
        lambda h, m: h.double().masked_fill(~m[..., None], INF).amax(dim=1),
        "returns float64 for float16 input",
    ),
    "torch.where with a float32 -inf tensor": (
        lambda h, m: torch.where(m[..., None], h, torch.full(h.shape, -math.inf)).amax(dim=1),
        "returns float32 for float16 input",
    ),
}


@pytest.mark.parametrize("name", POOL_IN_ANOTHER_DTYPE)
def test_a_pool_in_another_dtype_is_named(name: str) -> None:
    fn, words = POOL_IN_ANOTHER_DTYPE[name]
    report = checks.check_masked_max_pool(fn)
    assert not report.passed and f"The mistake: {words}" in str(report), report


POOL_WRONG: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], str]] = {
    "the mean": (
        lambda h, m: (h * m.unsqueeze(-1)).sum(1) / m.sum(1).unsqueeze(-1),
        "averaged the real tokens",
    ),
    "no mask": (lambda h, m: torch.max(h, dim=1).values, "padding included"),
    "times the mask": (
        lambda h, m: (h * m[:, :, None].to(h.dtype)).max(dim=1)[0],
        "set the padding to 0",
    ),
    "inverted": (
        lambda h, m: h.masked_fill(m[..., None], INF).max(1).values,
        "blocked the real tokens",
    ),
    "-1e9": (lambda h, m: h.masked_fill(~m[..., None], -1e9).max(1).values, "-1e9"),
    "over the features": (
        lambda h, m: torch.where(m[..., None], h, INF).max(-1).values,
        "over the features",
    ),
    "over the batch": (lambda h, m: torch.where(m[..., None], h, INF).amax(0), "over the batch"),
    "flattened": (lambda h, m: h[m].max(dim=0).values, "of the whole batch"),
    "the pair": (lambda h, m: torch.max(h.masked_fill(~m[..., None], INF), 1), "pair (values"),
    "argmax": (lambda h, m: torch.where(m[..., None], h, INF).argmax(1), "argmax"),
    "no feature dimension": (lambda h, m: torch.where(m, h, INF).amax(1), "size-1 feature"),
    "mask as (B, 1, T)": (
        lambda h, m: torch.where(m[:, None, :], h, INF).max(dim=1).values,
        "in the middle, (B, 1, T)",
    ),
    "-10000": (
        lambda h, m: torch.where(m[..., None], h, torch.tensor(-1e4, dtype=h.dtype)).amax(1),
        "(such as -10000)",
    ),
    "the first `length` tokens": (
        lambda h, m: torch.stack(
            [row[: int(n)].max(0).values for row, n in zip(h, m.sum(-1), strict=True)]
        ),
        "as if the padding always came last",
    ),
    "masked_fill_": (lambda h, m: h.masked_fill_(~m[..., None], INF).amax(1), "in place"),
}


@pytest.mark.parametrize("name", POOL_RIGHT)
def test_right_max_pools_pass(name: str) -> None:
    report = checks.check_masked_max_pool(POOL_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", POOL_WRONG)
def test_each_max_pool_mistake_is_caught_and_named(name: str) -> None:
    fn, words = POOL_WRONG[name]
    report = checks.check_masked_max_pool(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


def test_a_fill_of_float32s_minimum_is_named_with_the_1e9_fill() -> None:
    report = checks.check_masked_max_pool(
        lambda h, m: h.masked_fill(~m[..., None], torch.finfo(torch.float32).min).amax(1)
    )
    assert "float16 cannot hold" in str(report)


def test_the_table_of_exercise_1_is_the_one_tested_here() -> None:
    _table_is_tested("ex1_my_max_pool", POOL_WRONG)


def test_a_max_pool_that_calls_attnlibs_is_refused() -> None:
    report = checks.check_masked_max_pool(lambda h, m: own_encoder.max_pool(h, m))
    assert not report.passed and "does not accept it" in str(report)


# -- Exercise 2: the previous-token share (optional) -----------------------------------------


def share_loop(w: Tensor) -> Tensor:
    T = w.shape[-1]
    return sum(w[..., i, i - 1] for i in range(1, T)) / (T - 1)


SHARE_RIGHT = {
    "diagonal": lambda w: torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).mean(-1),
    "a loop": share_loop,
    "a mask below the diagonal": lambda w: (
        (w * torch.ones(w.shape[-1], w.shape[-1]).tril(-1).triu(-1)).sum((-2, -1))
        / (w.shape[-1] - 1)
    ),
    "index tensors": lambda w: w[
        ..., torch.arange(1, w.shape[-1]), torch.arange(w.shape[-1] - 1)
    ].mean(-1),
}

SHARE_WRONG = {
    "divided by T": (
        lambda w: torch.diagonal(w, -1, -2, -1).sum(-1) / w.size(-1),
        "counting the first one",
    ),
    "itself": (
        lambda w: torch.stack([w[..., i, i] for i in range(1, w.shape[-1])], -1).mean(-1),
        "puts on itself",
    ),
    "the next token": (
        lambda w: torch.diagonal(w, offset=1, dim1=-2, dim2=-1).mean(-1),
        "on the next token",
    ),
    "the first two dims": (lambda w: torch.diagonal(w, -1).mean(-1), "first two dimensions"),
    "wrap-around": (
        lambda w: w[
            ..., torch.arange(w.shape[-1]), (torch.arange(w.shape[-1]) - 1) % w.shape[-1]
        ].mean(-1),
        "wrapped around",
    ),
    "off by one": (
        lambda w: sum(w[..., i, i - 1] for i in range(w.shape[-1] - 1)) / (w.shape[-1] - 1),
        "an off-by-one",
    ),
    "everything below the diagonal": (
        lambda w: torch.tril(w, -1).sum((-1, -2)) / (w.shape[-1] - 1),
        "every weight below the diagonal",
    ),
    "summed": (lambda w: w.diagonal(-1, -2, -1).sum(-1), "summed the weights"),
    "one number": (lambda w: w.diagonal(-1, -2, -1).mean(), "giving one number"),
    "the whole matrix": (
        lambda w: w.sum((-2, -1)) / w.shape[-1] ** 2,
        "every weight of the matrix",
    ),
    "a loop that stops early": (
        lambda w: sum(w[..., i, i - 1] for i in range(1, w.shape[-1] - 1)) / (w.shape[-1] - 1),
        "stops one query early",
    ),
    "the first query on itself": (
        lambda w: (torch.diagonal(w, -1, -2, -1).sum(-1) + w[..., 0, 0]) / w.shape[-1],
        "its weight on its own token",
    ),
    "argmax": (
        lambda w: (w.argmax(-1)[..., 1:] == torch.arange(w.shape[-1] - 1)).float().mean(-1),
        "largest weight is on the previous token",
    ),
    "argmax, in the weights' dtype": (  # float64: named at float32's tolerance all the same
        lambda w: (w[..., 1:, :].argmax(-1) == torch.arange(w.shape[-1] - 1)).to(w).mean(-1),
        "largest weight is on the previous token",
    ),
    "the main diagonal, all of it": (
        lambda w: torch.einsum("...ii->...i", w).mean(-1),
        "main diagonal over all T queries",
    ),
    "a loop that stops early, from a tensor of zeros": (  # T = 2: a tensor, not 0
        lambda w: (
            sum((w[..., i, i - 1] for i in range(1, w.shape[-1] - 1)), torch.zeros(w.shape[:-2]))
            / (w.shape[-1] - 1)
        ),
        "stops one query early",
    ),
    "one matrix": (
        lambda w: torch.stack([w[i, i - 1] for i in range(1, w.shape[-1])]).mean(),
        "as if the weights were one (T, T) matrix",
    ),
}


@pytest.mark.parametrize("name", SHARE_RIGHT)
def test_right_shares_pass(name: str) -> None:
    report = checks.check_previous_token_weight(SHARE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", SHARE_WRONG)
def test_each_share_mistake_is_caught_and_named(name: str) -> None:
    fn, words = SHARE_WRONG[name]
    report = checks.check_previous_token_weight(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


def test_the_table_of_exercise_2_is_the_one_tested_here() -> None:
    _table_is_tested("ex2_my_previous_token_share", SHARE_WRONG)


def test_exercise_2_is_optional_and_calling_attnlibs_share_is_refused() -> None:
    assert checks.check_previous_token_weight.exercise.optional
    report = checks.check_previous_token_weight(lambda w: inspection.previous_token_share(w))
    assert not report.passed and "does not accept it" in str(report)

    def stub(weights: Tensor) -> Tensor:
        raise NotImplementedError

    assert "skip it if you like" in str(checks.check_previous_token_weight(stub))


# -- Exercise 3: semantic search by cosine ----------------------------------------------------


def search_loop(query: Tensor, corpus: Tensor, k: int) -> Tensor:
    scores = [float(row @ query / (row.norm() * query.norm())) for row in corpus]
    return torch.tensor(sorted(range(len(scores)), key=lambda i: -scores[i])[:k])


SEARCH_RIGHT = {
    "cosine_similarity": lambda q, c, k: F.cosine_similarity(c, q[None], dim=-1).topk(k).indices,
    "normalize and argsort": lambda q, c, k: (F.normalize(c, dim=1) @ q).argsort(descending=True)[
        :k
    ],
    "a loop": search_loop,
    "the corpus only": lambda q, c, k: torch.topk(c @ q / c.norm(dim=-1), k)[1],
}

SEARCH_WRONG = {
    "raw dot": (lambda q, c, k: torch.topk(c @ q, k).indices, "raw dot product"),
    "the query only": (
        lambda q, c, k: (c @ (q / q.norm())).topk(k).indices,
        "raw dot product",
    ),
    "ascending": (
        lambda q, c, k: (F.normalize(c, dim=-1) @ q).argsort()[:k],
        "ranked the rows worst first",
    ),
    "the end of an ascending sort": (
        lambda q, c, k: torch.sort(F.cosine_similarity(c, q[None], dim=1)).indices[-k:],
        "end of an ascending sort",
    ),
    "the scores": (
        lambda q, c, k: torch.sort(F.normalize(c, dim=-1) @ q, descending=True).values[:k],
        "returned the cosines",
    ),
    "the pair": (lambda q, c, k: torch.topk(F.normalize(c, dim=-1) @ q, k), "topk's pair"),
    "every row": (
        lambda q, c, k: torch.argsort(F.normalize(c, dim=-1) @ q, descending=True),
        "every row's index",
    ),
    "index order": (
        lambda q, c, k: torch.sort((F.normalize(c, dim=-1) @ q).topk(k).indices).values,
        "in the corpus's order",
    ),
    "dim 0": (lambda q, c, k: (F.normalize(c, dim=0) @ q).topk(k).indices, "(dim 0)"),
    "distance": (
        lambda q, c, k: torch.cdist(q[None], c)[0].topk(k, largest=False).indices,
        "Euclidean distance",
    ),
    "squared length": (
        lambda q, c, k: (c @ q / c.norm(dim=1) ** 2).topk(k).indices,
        "squared length",
    ),
    "the best skipped": (
        lambda q, c, k: F.cosine_similarity(c, q[None]).argsort(descending=True)[1 : k + 1],
        "as if it were the query itself",
    ),
    "the best skipped with topk(k + 1)": (  # raises where k is every row: named where it ran
        lambda q, c, k: F.cosine_similarity(c, q[None], dim=-1).topk(k + 1).indices[1:],
        "as if it were the query itself",
    ),
    "a list": (
        lambda q, c, k: (F.normalize(c, dim=-1) @ q).topk(k).indices.tolist(),
        "a Python list",
    ),
}


@pytest.mark.parametrize("name", SEARCH_RIGHT)
def test_right_searches_pass(name: str) -> None:
    report = checks.check_cosine_search(SEARCH_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", SEARCH_WRONG)
def test_each_search_mistake_is_caught_and_named(name: str) -> None:
    fn, words = SEARCH_WRONG[name]
    report = checks.check_cosine_search(fn)
    assert not report.passed
    assert "The mistake:" in str(report) and words in str(report), report


def test_the_table_of_exercise_3_is_the_one_tested_here() -> None:
    _table_is_tested("ex3_my_semantic_search", SEARCH_WRONG)


def test_a_search_that_calls_attnlibs_is_refused() -> None:
    report = checks.check_cosine_search(
        lambda q, c, k: attnlib.semantic_search(q[None], c, k)[1][0]
    )
    assert not report.passed and "does not accept it" in str(report)


def test_no_report_prints_code_of_the_solution() -> None:
    # A failed report names the mistake and says why, in words: never the worked solution's code.
    from attnlib.checks.help import _solutions

    for check, fn in [
        (checks.check_masked_max_pool, POOL_WRONG["times the mask"][0]),
        (checks.check_previous_token_weight, SHARE_WRONG["divided by T"][0]),
        (checks.check_cosine_search, SEARCH_WRONG["raw dot"][0]),
    ]:
        report = str(check(fn)).replace(" ", "")
        solution = _solutions()[check.exercise.id]["source"]
        for line in solution.splitlines()[2:]:
            code = line.split("  #")[0].strip().replace(" ", "")
            assert len(code) < 12 or code not in report, code
