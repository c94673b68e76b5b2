"""Notebook 01's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(einsum, loops, matrix products of unit vectors, torch.where, F.normalize, float32) must pass;
answers that call attnlib's or torch's dot product or cosine similarity must be refused.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes

Tensor = torch.Tensor


def _caught(report: object, words: str) -> bool:
    return not report.passed and "The mistake:" in str(report) and words in str(report)


# -- Exercise 1: the dot product ----------------------------------------------------------------


def dot_loop(a: Tensor, b: Tensor) -> Tensor:
    a, b = torch.broadcast_tensors(a, b)
    total = torch.zeros(a.shape[:-1], dtype=a.dtype)
    for i in range(a.shape[-1]):
        total = total + a[..., i] * b[..., i]
    return total


DOT_RIGHT: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "multiply and sum": lambda a, b: torch.sum(a * b, dim=-1),
    "einsum": lambda a, b: torch.einsum("...i,...i->...", a, b),
    "a loop over the entries": dot_loop,
    "batched matrix product": lambda a, b: (a.unsqueeze(-2) @ b.unsqueeze(-1))[..., 0, 0],
    "mul then sum with axis": lambda a, b: a.mul(b).sum(axis=-1),
    "in float32, back in the inputs' dtype": lambda a, b: (
        (a.float() * b.float()).sum(-1).to(a.dtype)
    ),
}


def diagonal_of_the_table(a: Tensor, b: Tensor) -> Tensor:
    with warnings.catch_warnings():  # .T of a single vector is deprecated, and a no-op
        warnings.simplefilter("ignore")
        return torch.diag(a @ b.T)


def diagonal_of_a_times_b_t(a: Tensor, b: Tensor) -> Tensor:
    with warnings.catch_warnings():  # .T of a batch is deprecated
        warnings.simplefilter("ignore")
        return torch.diagonal(torch.matmul(a, b.T))


def dot_over_len(a: Tensor, b: Tensor) -> Tensor:
    products = [a[i] * b[i] for i in range(len(a))]
    return sum(products)


def dot_in_place(a: Tensor, b: Tensor) -> Tensor:
    a *= b
    return a.sum(-1)


def dot_over_zip(a: Tensor, b: Tensor) -> Tensor:
    results = []
    for first, second in zip(a, b, strict=False):  # meant as the pairs of vectors
        results.append(torch.sum(first * second))
    return torch.stack(results)


DOT_WRONG: dict[str, tuple[Callable[[Tensor, Tensor], Tensor], str]] = {
    # The task asks for the inputs' dtype (issue 40).
    "float32 whatever the inputs": (
        lambda a, b: (a.float() * b.float()).sum(-1),
        "returns float32 for float64 input",
    ),
    "sum of everything": (lambda a, b: torch.sum(a * b), "with no dimension"),
    "dim 0": (lambda a, b: (a * b).sum(axis=0), "along dim 0"),
    "dim 1": (lambda a, b: torch.sum(a * b, 1), "along dim 1"),
    "matmul": (lambda a, b: torch.matmul(a, b), "matrix product"),
    "table": (
        lambda a, b: a @ b.T if b.dim() == 2 else a @ b,
        "every vector of a by every vector of b",
    ),
    "mean": (lambda a, b: torch.mean(a * b, dim=-1), "averaged the products"),
    "diag": (diagonal_of_the_table, "torch.diag"),
    ".diagonal() of a times b transposed": (diagonal_of_a_times_b_t, "the diagonal of a times b"),
    "2-D einsum": (lambda a, b: torch.einsum("bi,bi->b", a, b), "an einsum for two stacks"),
    "keepdim": (lambda a, b: torch.sum(a * b, -1, keepdim=True), "kept the summed dimension"),
    "item": (lambda a, b: torch.einsum("...i,...i->...", a, b).item(), "a Python number"),
    "no sum": (lambda a, b: torch.mul(a, b), "without adding them up"),
    "plus": (lambda a, b: torch.sum(a + b, -1), "added the entries"),
    "product of sums": (
        lambda a, b: torch.sum(a, -1) * torch.sum(b, -1),
        "multiplied the two sums",
    ),
    "lengths": (
        lambda a, b: torch.linalg.norm(a, dim=-1) * torch.linalg.norm(b, dim=-1),
        "lengths",
    ),
    "1-D einsum": (lambda a, b: torch.einsum("n,n", a, b), "an einsum for two single vectors"),
    "a loop over len(a)": (dot_over_len, "looped over range(len(a))"),
    "in place": (dot_in_place, "multiplied a in place"),
    "a loop over zip": (dot_over_zip, "looped over zip(a, b)"),
}


@pytest.mark.parametrize("name", DOT_RIGHT)
def test_right_dot_products_pass(name: str) -> None:
    report = checks.check_dot_product(DOT_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", DOT_WRONG)
def test_each_dot_product_mistake_is_caught_and_named(name: str) -> None:
    fn, words = DOT_WRONG[name]
    report = checks.check_dot_product(fn)
    assert _caught(report, words), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda a, b: attnlib.dot(a, b),
        lambda a, b: torch.dot(a, b) if a.dim() == 1 else attnlib.dot(a, b),
        lambda a, b: torch.linalg.vecdot(a, b),
        lambda a, b: (
            torch.stack([torch.inner(x, y) for x, y in zip(a, b, strict=False)])
            if a.dim() > 1
            else a.dot(b)
        ),
    ],
    ids=["attnlib.dot", "torch.dot", "vecdot", "inner"],
)
def test_an_existing_dot_product_is_refused(cheat: Callable[[Tensor, Tensor], Tensor]) -> None:
    report = checks.check_dot_product(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 2: cosine similarity --------------------------------------------------------------


def cosine_where(a: Tensor, b: Tensor) -> Tensor:
    lengths = torch.sqrt((a * a).sum(-1)) * torch.sqrt((b * b).sum(-1))
    dot = (a * b).sum(-1)
    return torch.where(
        lengths == 0, torch.zeros_like(dot), dot / torch.where(lengths == 0, 1, lengths)
    )


COSINE_RIGHT = {
    "clamp": lambda a, b: (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1)).clamp(min=1e-12),
    "torch.where": cosine_where,
    "unit vectors with F.normalize": lambda a, b: (
        F.normalize(a, dim=-1) * F.normalize(b, dim=-1)
    ).sum(-1),
    "nan_to_num": lambda a, b: torch.nan_to_num(
        torch.einsum("...i,...i->...", a, b) / (a.norm(dim=-1) * b.norm(dim=-1)), nan=0.0
    ),
    "a small eps": lambda a, b: (
        (a * b).sum(-1)
        / (torch.linalg.vector_norm(a, dim=-1) * torch.linalg.vector_norm(b, dim=-1) + 1e-9)
    ),
}


def cosine_one_for_zero(a: Tensor, b: Tensor) -> Tensor:
    lengths = a.norm(dim=-1) * b.norm(dim=-1)
    cos = (a * b).sum(-1) / lengths
    return torch.where(lengths > 0, cos, torch.tensor(1.0, dtype=cos.dtype))


def cosine_if(a: Tensor, b: Tensor) -> Tensor:
    if a.norm(dim=-1) == 0 or b.norm(dim=-1) == 0:
        return torch.tensor(0.0)
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1))


def cosine_all_zero(a: Tensor, b: Tensor) -> Tensor:
    norms = torch.linalg.norm(a, dim=-1) * torch.linalg.norm(b, dim=-1)
    if torch.any(norms == 0):
        return torch.zeros(norms.shape)
    return (a * b).sum(-1) / norms


def cosine_if_whole(a: Tensor, b: Tensor) -> Tensor:
    if torch.all(a == 0) or torch.all(b == 0):
        return torch.zeros(())
    return (a * b).sum(-1) / (torch.linalg.vector_norm(a, dim=-1) * b.norm(dim=-1))


def cosine_zero_a_only(a: Tensor, b: Tensor) -> Tensor:
    dot = (a * b).sum(-1)
    a_len, b_len = a.norm(dim=-1), b.norm(dim=-1)
    safe = torch.where(a_len == 0, torch.ones_like(a_len), a_len)
    return torch.where(a_len == 0, torch.zeros_like(dot), dot / (safe * b_len))


def cosine_zero_b_only(a: Tensor, b: Tensor) -> Tensor:
    b_len = torch.linalg.vector_norm(b, dim=-1)
    cos = (a * b).sum(-1) / (torch.linalg.vector_norm(a, dim=-1) * b_len)
    return cos.masked_fill(b_len == 0, 0.0)


COSINE_WRONG = {
    "+ 1e-6 on the product of the lengths": (
        lambda a, b: (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1) + 1e-6),
        "an epsilon",
    ),
    "+ 1e-5 on each length": (
        lambda a, b: (a * b).sum(-1) / ((a.norm(dim=-1) + 1e-5) * (b.norm(dim=-1) + 1e-5)),
        "an epsilon",
    ),
    "+ 1e-6 under each root": (
        lambda a, b: (
            (a * b).sum(-1) / (((a * a).sum(-1) + 1e-6).sqrt() * ((b * b).sum(-1) + 1e-6).sqrt())
        ),
        "an epsilon",
    ),
    "1 for zero": (cosine_one_for_zero, "a cosine of 1 instead of 0"),
    "NaN for zero": (
        lambda a, b: (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1)),
        "zero vector",
    ),
    "one length": (
        lambda a, b: (a * b).sum(-1) / a.norm(dim=-1).clamp(min=1e-12),
        "length of a only",
    ),
    "squared lengths": (
        lambda a, b: (a * b).sum(-1) / ((a**2).sum(-1) * (b**2).sum(-1)),
        "without the square root",
    ),
    "sum of lengths": (
        lambda a, b: (a * b).sum(-1) / (a.norm(dim=-1) + b.norm(dim=-1)),
        "sum of the lengths",
    ),
    "whole-tensor norms": (
        lambda a, b: (a * b).sum(-1) / (torch.norm(a) * torch.norm(b)),
        "each whole tensor",
    ),
    "norms along dim 0": (
        lambda a, b: (a * b).sum(-1) / (a.norm(dim=0) * b.norm(dim=0)),
        "along dim 0",
    ),
    "sum of everything": (
        lambda a, b: (a * b).sum() / (a.norm(dim=-1) * b.norm(dim=-1)),
        "with no dimension",
    ),
    "absolute value": (
        lambda a, b: torch.abs((a * b).sum(-1)) / (a.norm(dim=-1) * b.norm(dim=-1)),
        "absolute value",
    ),
    "mean": (
        lambda a, b: (a * b).mean(-1) / (a.norm(dim=-1) * b.norm(dim=-1)),
        "averaged the products",
    ),
    "keepdim lengths": (
        lambda a, b: (
            (a * b).sum(-1)
            / (torch.norm(a, dim=-1, keepdim=True) * torch.norm(b, dim=-1, keepdim=True) + 1e-12)
        ),
        "keepdim",
    ),
    "distance": (
        lambda a, b: 1 - (F.normalize(a, dim=-1) * F.normalize(b, dim=-1)).sum(-1),
        "cosine distance",
    ),
    "no division": (lambda a, b: torch.einsum("...i,...i->...", a, b), "without dividing"),
    "an if": (cosine_if, "Python's if"),
    "floor at 1": (
        lambda a, b: (a * b).sum(-1) / torch.clamp(a.norm(dim=-1) * b.norm(dim=-1), min=1),
        "falling below 1",
    ),
    "all zeros": (cosine_all_zero, "when any pair"),
    "each length floored at 1": (
        lambda a, b: (
            (a * b).sum(-1)
            / (torch.clamp(a.norm(dim=-1), min=1) * torch.clamp(b.norm(dim=-1), min=1))
        ),
        "each length from falling below 1",
    ),
    "a zero a only": (cosine_zero_a_only, "in one of the two tensors only"),
    "a zero b only": (cosine_zero_b_only, "in one of the two tensors only"),
    "a·a": (
        lambda a, b: torch.einsum("...i,...i->...", a, b) / a.pow(2).sum(-1),
        "squared length of a",
    ),
    "b·b, the projection": (
        lambda a, b: (a * b).sum(-1) / torch.linalg.vector_norm(b, dim=-1) ** 2,
        "squared length of b",
    ),
    "unit vectors without keepdim": (
        lambda a, b: (a / torch.norm(a, dim=-1) * (b / torch.norm(b, dim=-1))).sum(-1),
        "without keeping the lengths' last dimension",
    ),
    "an if on the whole tensor": (cosine_if_whole, "length of the whole tensor"),
}


@pytest.mark.parametrize("name", COSINE_RIGHT)
def test_right_cosines_pass(name: str) -> None:
    report = checks.check_cosine(COSINE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", COSINE_WRONG)
def test_each_cosine_mistake_is_caught_and_named(name: str) -> None:
    fn, words = COSINE_WRONG[name]
    report = checks.check_cosine(fn)
    assert _caught(report, words), report


def test_a_wrong_formula_that_handles_zero_is_still_named() -> None:
    def one_length_guarded(a: Tensor, b: Tensor) -> Tensor:
        length = a.norm(dim=-1)
        return torch.where(length > 0, (a * b).sum(-1) / length.clamp(min=1e-12), 0.0)

    assert _caught(checks.check_cosine(one_length_guarded), "length of a only")


@pytest.mark.parametrize(
    "cheat",
    [
        lambda a, b: attnlib.cosine_similarity(a, b),
        lambda a, b: F.cosine_similarity(a, b, dim=-1),
        lambda a, b: torch.cosine_similarity(a, b, dim=-1),
        lambda a, b: nn.CosineSimilarity(dim=-1)(a, b),
    ],
    ids=["attnlib", "F.cosine_similarity", "torch.cosine_similarity", "nn.CosineSimilarity"],
)
def test_an_existing_cosine_is_refused(cheat: Callable[[Tensor, Tensor], Tensor]) -> None:
    report = checks.check_cosine(cheat)
    assert not report.passed and "does not accept it" in str(report), report
    stacked = checks.check_most_similar_other(
        lambda x: cheat(x[..., :, None, :], x[..., None, :, :])
    )
    assert not stacked.passed and "does not accept it" in str(stacked), stacked


# -- Exercise 3: the most similar other vector --------------------------------------------------


def best_loop(x: Tensor) -> Tensor:
    rows = x.reshape(-1, *x.shape[-2:])
    out = []
    for stack in rows:
        picks = []
        for i, xi in enumerate(stack):
            scores = [
                (float(xi @ xj / (xi.norm() * xj.norm())), j)
                for j, xj in enumerate(stack)
                if j != i
            ]
            picks.append(max(scores)[1])
        out.append(picks)
    return torch.tensor(out).reshape(x.shape[:-1])


def best_topk(x: Tensor) -> Tensor:
    unit = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    return (unit @ unit.mT).topk(2, dim=-1).indices[..., 1]


def best_minus_two(x: Tensor) -> Tensor:
    unit = F.normalize(x, dim=-1)
    table = torch.einsum("...ic,...jc->...ij", unit, unit)
    return (table - 3 * torch.eye(x.shape[-2], dtype=x.dtype)).argmax(-1)


def best_right_side_only(x: Tensor) -> Tensor:
    # dividing by ‖x_j‖ alone ranks row i exactly as the cosine does (‖x_i‖ is the same in a row)
    table = x @ (x / x.norm(dim=-1, keepdim=True)).transpose(-1, -2)
    table.diagonal(dim1=-2, dim2=-1).fill_(-float("inf"))
    return table.argmax(-1)


BEST_RIGHT = {
    "masked_fill -inf": lambda x: (
        ((u := x / x.norm(dim=-1, keepdim=True)) @ u.transpose(-2, -1))
        .masked_fill(torch.eye(x.shape[-2], dtype=torch.bool), -math.inf)
        .argmax(dim=-1)
    ),
    "a loop": best_loop,
    "minus 3 on the diagonal": best_minus_two,
    "dividing by the other vector's length only": best_right_side_only,
}


def self_included(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return (u @ u.mT).argmax(-1)


def by_dot(x: Tensor) -> Tensor:
    s = x @ x.mT
    return s.masked_fill(torch.eye(x.shape[-2], dtype=torch.bool), float("-inf")).argmax(-1)


def left_side_only(x: Tensor) -> Tensor:
    s = (x / x.norm(dim=-1, keepdim=True)) @ x.mT
    return s.masked_fill(torch.eye(x.shape[-2], dtype=torch.bool), float("-inf")).argmax(-1)


def zero_diagonal(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    s = u @ u.mT
    return (s * (1 - torch.eye(x.shape[-2], dtype=x.dtype))).argmax(-1)


def column_norms(x: Tensor) -> Tensor:
    u = x / x.norm(dim=-2, keepdim=True)
    return by_dot(u)


def argmin(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return (u @ u.mT + 10 * torch.eye(x.shape[-2], dtype=x.dtype)).argmin(-1)


def values(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return (u @ u.mT).masked_fill(torch.eye(x.shape[-2], dtype=torch.bool), -2).max(-1).values


def columns_table(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return by_dot(u.mT)


def dim_zero(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return (u @ u.mT).masked_fill(torch.eye(x.shape[-2], dtype=torch.bool), -9).argmax(0)


def reversed_dims(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return by_dot_table(u @ u.permute(*range(u.dim() - 1, -1, -1)))


def by_dot_table(s: Tensor) -> Tensor:
    return s.masked_fill(torch.eye(s.shape[-1], dtype=torch.bool), -9).argmax(-1)


def filled_diagonal(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    table = u @ u.mT
    table.fill_diagonal_(float("-inf"))
    return table.argmax(-1)


def distance(x: Tensor) -> Tensor:
    d = ((x[..., :, None, :] - x[..., None, :, :]) ** 2).sum(-1)
    return (d + torch.eye(x.shape[-2], dtype=x.dtype) * 1e9).argmin(-1)


def best_sorted_second(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    return torch.argsort(u @ u.mT, dim=-1, descending=True)[..., 1]


def best_unshifted(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    table = u @ u.mT
    t = x.shape[-2]
    keep = ~torch.eye(t, dtype=torch.bool)
    others = table[..., keep].reshape(*table.shape[:-2], t, t - 1)  # each row without itself
    return others.argmax(-1)


def twins_taken_out(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    table = u @ u.mT
    table[torch.isclose(table, torch.ones_like(table))] = -10.0
    return table.argmax(-1)


def eye_from_len(x: Tensor) -> Tensor:
    u = F.normalize(x, dim=-1)
    table = u @ u.transpose(-1, -2)
    return (table - 5 * torch.eye(len(x), dtype=x.dtype)).argmax(-1)


def one_stack_loop(x: Tensor) -> Tensor:
    picks = []
    for i in range(len(x)):
        cosines = [
            (torch.sum(x[i] * x[j]) / (x[i].norm() * x[j].norm())).item() if j != i else -9.0
            for j in range(len(x))
        ]
        picks.append(max(range(len(x)), key=lambda j: cosines[j]))
    return torch.tensor(picks)


BEST_WRONG = {
    "itself": (self_included, "returned each vector itself"),
    "dot product": (by_dot, "the dot product"),
    "one-sided division": (left_side_only, "the dot product"),
    "zero on the diagonal": (zero_diagonal, "putting 0 on the diagonal"),
    "column lengths": (column_norms, "lengths of the columns"),
    "argmin": (argmin, "least similar"),
    "values": (values, "the best cosine, not the position"),
    "XᵀX": (columns_table, "transpose on the left"),
    "dim 0": (dim_zero, "along dim 0"),
    ".T": (reversed_dims, "used .T"),
    "distance": (distance, "distance between the vectors"),
    "fill_diagonal_": (filled_diagonal, "fill_diagonal_"),
    "topk, second": (best_topk, "the second-largest cosine"),
    "a sort, second": (best_sorted_second, "the second-largest cosine"),
    "row without itself, not shifted back": (best_unshifted, "did not shift the positions"),
    "every cosine of 1 taken out": (twins_taken_out, "took out every cosine of 1"),
    "a diagonal sized by len(x)": (eye_from_len, "the size of the first dimension"),
    "a loop over one stack": (one_stack_loop, "for one (T, C) stack only"),
}


@pytest.mark.parametrize("name", BEST_RIGHT)
def test_right_most_similar_pass(name: str) -> None:
    report = checks.check_most_similar_other(BEST_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", BEST_WRONG)
def test_each_most_similar_mistake_is_caught_and_named(name: str) -> None:
    fn, words = BEST_WRONG[name]
    report = checks.check_most_similar_other(fn)
    assert _caught(report, words), report


def test_a_float_result_is_told_to_hold_positions() -> None:
    report = checks.check_most_similar_other(lambda x: best_minus_two(x).double() + 0.5)
    assert "should hold positions" in str(report), report


# -- every exercise -----------------------------------------------------------------------------

CHECKERS = {
    "ex1_dot_product": checks.check_dot_product,
    "ex2_cosine": checks.check_cosine,
    "ex3_most_similar_other": checks.check_most_similar_other,
}
WRITTEN_AGAIN = {
    "ex1_dot_product": DOT_WRONG,
    "ex2_cosine": COSINE_WRONG,
    "ex3_most_similar_other": BEST_WRONG,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    checker = CHECKERS[exercise_id]
    assert checker.exercise.id == exercise_id and checker.exercise.notebook == "01"
    for mistake in known_mistakes(exercise_id):
        report = checker(mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, report)


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_also_written_again_here(exercise_id: str) -> None:
    words = [w for _, w in WRITTEN_AGAIN[exercise_id].values()]
    for mistake in known_mistakes(exercise_id):
        assert any(w in mistake.name for w in words), f"{mistake.name!r} is not written again"


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_no_hint_or_report_prints_code(exercise_id: str) -> None:
    exercise = CHECKERS[exercise_id].exercise
    texts = [*exercise.hints, *(m.name + m.why for m in known_mistakes(exercise_id))]
    for text in texts:
        for code in ("keepdim=True", ".sum(", ".norm(", "a * b", "@ ", ".transpose(", "argmax("):
            assert code not in text, (code, text)
