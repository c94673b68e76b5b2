"""Notebook 02's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(einsum, loops, torch.where, float64, log-sum-exp) must pass; answers that call an existing
softmax or autograd must be refused.
"""

from __future__ import annotations

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


# -- Exercise 1 ---------------------------------------------------------------------------------


def formula_loop(x: Tensor) -> Tensor:
    rows = x.reshape(-1, x.shape[-1])
    out = torch.stack([torch.exp(r) / sum(torch.exp(v) for v in r) for r in rows])
    return out.reshape(x.shape)


FORMULA_RIGHT: dict[str, Callable[[Tensor], Tensor]] = {
    "keepdim": lambda x: x.exp() / x.exp().sum(-1, keepdim=True),
    "einsum": lambda x: torch.einsum("...i,...->...i", x.exp(), 1 / x.exp().sum(-1)),
    "a loop over the rows": formula_loop,
    "unsqueeze": lambda x: torch.exp(x) / torch.sum(torch.exp(x), dim=-1).unsqueeze(-1),
    "in float64, back in x's dtype": lambda x: (
        (e := x.double().exp()) / e.sum(-1, keepdim=True)
    ).to(x.dtype),
    "exp(x - logsumexp)": lambda x: torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True)),
}


def formula_rows_of(x: Tensor) -> Tensor:
    out = torch.empty_like(x)
    for i, row in enumerate(x):
        out[i] = row.exp() / row.exp().sum()
    return out


def formula_in_place(x: Tensor) -> Tensor:
    torch.exp_(x)
    x /= x.sum(-1, keepdim=True)
    return x


FORMULA_WRONG: dict[str, tuple[Callable[[Tensor], Tensor], str]] = {
    "exps over the scores' total": (
        lambda x: torch.exp(x) / torch.sum(x, -1, keepdim=True),
        "the total of the raw scores",
    ),
    "sigmoid": (lambda x: 1 / (1 + torch.exp(-x)), "used the sigmoid"),
    "the sum of everything": (
        lambda x: torch.exp(x) / torch.sum(torch.exp(x)),
        "divided by the total of the whole tensor",
    ),
    "no keepdim": (
        lambda x: x.exp() / x.exp().sum(dim=-1),
        "summed each row but dropped the summed dimension",
    ),
    "columns": (
        lambda x: x.exp() / x.exp().sum(axis=0, keepdims=True),
        "normalised along the first dimension",
    ),
    "dim=1": (lambda x: x.exp() / x.exp().sum(1, keepdim=True), "summed along dim 1"),
    "no exp": (lambda x: x / torch.sum(x, -1, keepdim=True), "without exponentiating"),
    "no division": (lambda x: torch.exp(x), "without dividing by their total"),
    "the mean": (lambda x: x.exp() / x.exp().mean(-1, keepdim=True), "by the row's mean"),
    "the max": (
        lambda x: x.exp() / x.exp().max(dim=-1, keepdim=True).values,
        "by the row's largest exponential",
    ),
    "log-probabilities": (
        lambda x: x - x.exp().sum(-1, keepdim=True).log(),
        "returned the log of the softmax",
    ),
    "√n first": (
        lambda x: (e := (x / x.size(-1) ** 0.5).exp()) / e.sum(-1, keepdim=True),
        "divided the scores by √n first",
    ),
    "for row in x": (formula_rows_of, "for row in x"),
    "2.72 for e": (lambda x: (e := 2.72**x) / e.sum(-1, keepdim=True), "a rounded value of e"),
    "in place": (formula_in_place, "exponentiated x in place"),
    "an epsilon": (lambda x: (e := x.exp()) / (e.sum(-1, keepdim=True) + 1e-3), "an epsilon"),
}


@pytest.mark.parametrize("name", FORMULA_RIGHT)
def test_right_softmaxes_pass(name: str) -> None:
    report = checks.check_softmax_from_formula(FORMULA_RIGHT[name])
    assert report.passed, report


# Not in the table: the check names any result in another dtype (issue 40).
FORMULA_DTYPE_WRONG: dict[str, tuple[Callable[[Tensor], Tensor], str]] = {
    "float64 whatever x is": (
        lambda x: (e := x.double().exp()) / e.sum(-1, keepdim=True),
        "returns float64 for float32 input",
    ),
    "float32 whatever x is": (
        lambda x: (e := x.float().exp()) / e.sum(-1, keepdim=True),
        "returns float32 for float64 input",
    ),
}


@pytest.mark.parametrize("name", [*FORMULA_WRONG, *FORMULA_DTYPE_WRONG])
def test_each_formula_mistake_is_caught_and_named(name: str) -> None:
    fn, words = (FORMULA_WRONG | FORMULA_DTYPE_WRONG)[name]
    report = checks.check_softmax_from_formula(fn)
    assert not report.passed
    assert words in str(report), report


def test_the_table_of_exercise_1_is_the_one_tested_here() -> None:
    table = list(dict.fromkeys(m.name for m in known_mistakes("ex1_softmax_from_formula")))
    for _, words in FORMULA_WRONG.values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(FORMULA_WRONG)


def backward_through_dot_t(p: Tensor, g: Tensor) -> Tensor:
    jacobian = torch.diag_embed(p) - p[..., :, None] * p[..., None, :]
    with warnings.catch_warnings():  # .T of anything but a matrix is deprecated
        warnings.simplefilter("ignore", UserWarning)
        return (jacobian @ g.T).T


def backward_float32_jacobian(p: Tensor, g: Tensor) -> Tensor:
    n = p.shape[-1]
    jacobian = torch.zeros(*p.shape, n)  # float32, whatever p is
    jacobian[...] = torch.diag_embed(p) - p[..., :, None] * p[..., None, :]
    return (jacobian @ g[..., None])[..., 0]


def shifted_by_logsumexp(x: Tensor, dim: int = -1) -> Tensor:
    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))


def test_logsumexp_is_refused_only_where_it_does_the_exercise() -> None:
    shifted = shifted_by_logsumexp
    assert checks.check_softmax_from_formula(shifted).passed  # the formula, written in logs
    report = checks.check_stable_softmax(shifted)  # logsumexp shifts by the maximum itself
    assert not report.passed and "does not accept it" in str(report), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda x: attnlib.softmax(x),
        lambda x: torch.softmax(x, dim=-1),
        lambda x: F.softmax(x, dim=-1),
        lambda x: x.softmax(-1),
        lambda x: torch.exp(x.log_softmax(-1)),
        lambda x: attnlib.naive_softmax(x),
    ],
)
def test_a_softmax_that_calls_an_existing_one_is_refused(cheat: Callable[[Tensor], Tensor]) -> None:
    report = checks.check_softmax_from_formula(cheat)
    assert not report.passed and "does not accept it" in str(report)
    assert "does not accept it" in str(checks.check_stable_softmax(lambda x, dim=-1: cheat(x)))


# -- Exercise 2 ---------------------------------------------------------------------------------


def stable_where(x: Tensor, dim: int = -1) -> Tensor:
    shift = torch.where(torch.isfinite(x), x - x.max(dim, keepdim=True).values, x)
    e = shift.exp()
    return e / e.sum(dim, keepdim=True)


def stable_logsumexp_by_hand(x: Tensor, dim: int = -1) -> Tensor:
    m = x.amax(dim=dim, keepdim=True)
    return torch.exp(x - m - torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True)))


def stable_transpose(x: Tensor, dim: int = -1) -> Tensor:
    moved = x.transpose(dim, -1)
    e = torch.exp(moved - moved.max(-1, keepdim=True)[0])
    return (e / e.sum(-1, keepdim=True)).transpose(dim, -1)


STABLE_RIGHT = {
    "amax": lambda x, dim=-1: (e := (x - x.amax(dim, keepdim=True)).exp()) / e.sum(dim, True),
    "torch.where": stable_where,
    "log-sum-exp by hand": stable_logsumexp_by_hand,
    "moved to the last dimension": stable_transpose,
    "in float32, back in the input's dtype": lambda x, dim=-1: stable_where(x.float(), dim).to(
        x.dtype
    ),
}

STABLE_WRONG = {
    # The task names float16: a result in another dtype is named (issue 40).
    "in float32 whatever the input": (
        lambda x, dim=-1: stable_where(x.float(), dim),
        "returns float32 for float16 input",
    ),
    "in float64 to be safe": (
        lambda x, dim=-1: stable_where(x.double(), dim),
        "returns float64 for float32 input",
    ),
    "an epsilon in the total": (
        lambda x, dim=-1: (
            (e := (x - x.amax(dim, keepdim=True)).exp()) / (e.sum(dim, keepdim=True) + 1e-2)
        ),
        "an epsilon",
    ),
    "the formula": (
        lambda x, dim=-1: x.exp() / x.exp().sum(dim, keepdim=True),
        "without shifting them",
    ),
    "the formula in float64": (
        lambda x, dim=-1: (e := x.double().exp()) / e.sum(dim, keepdim=True),
        "without shifting them",
    ),
    "one maximum for everything": (
        lambda x, dim=-1: (e := torch.exp(x - torch.max(x))) / e.sum(dim, keepdim=True),
        "the largest score of the whole tensor",
    ),
    "the minimum": (
        lambda x, dim=-1: (
            (e := torch.exp(x - x.min(dim, keepdim=True).values)) / e.sum(dim, keepdim=True)
        ),
        "by its smallest score",
    ),
    "the mean": (
        lambda x, dim=-1: (e := torch.exp(x - x.mean(dim, keepdim=True))) / e.sum(dim, True),
        "by its mean",
    ),
    "ignores dim": (stable_where, None),  # replaced below: always the last dimension
    "total along -1": (
        lambda x, dim=-1: (e := torch.exp(x - x.amax(dim, keepdim=True))) / e.sum(-1, True),
        "took the total along the last dimension",
    ),
    "no keepdim on the max": (
        lambda x, dim=-1: (e := torch.exp(x - x.amax(dim))) / e.sum(dim, keepdim=True),
        "without keeping its dimension",
    ),
    "clamp": (
        lambda x, dim=-1: (e := torch.clamp(x, min=-80, max=80).exp()) / e.sum(dim, keepdim=True),
        "clamped the scores",
    ),
    "clamp from above": (
        lambda x, dim=-1: (e := x.clamp(max=50.0).exp()) / e.sum(dim, keepdim=True),
        "clamped the large scores from above",
    ),
    "the indices of the max": (
        lambda x, dim=-1: (e := (x - torch.max(x, dim, True)[1]).exp()) / e.sum(dim, True),
        "the positions of the largest scores",
    ),
    "divide by the max after exp": (
        lambda x, dim=-1: (e := x.exp() / x.exp().amax(dim, keepdim=True)) / e.sum(dim, True),
        "after exponentiating",
    ),
    "max without .values": (
        lambda x, dim=-1: (e := (x - torch.max(x, dim=dim, keepdim=True)).exp()) / e.sum(dim, True),
        "values and indices together",
    ),
    "divided by the max": (
        lambda x, dim=-1: stable_where(x / x.max(dim, keepdim=True).values, dim),
        "divided the scores by the row's largest score",
    ),
    "divided by the largest |score|": (
        lambda x, dim=-1: stable_where(x / x.abs().max(dim, keepdim=True).values, dim),
        "largest absolute score",
    ),
}
STABLE_WRONG["ignores dim"] = (lambda x, dim=-1: stable_where(x, -1), "whatever `dim` was")


@pytest.mark.parametrize("name", STABLE_RIGHT)
def test_right_stable_softmaxes_pass(name: str) -> None:
    report = checks.check_stable_softmax(STABLE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", STABLE_WRONG)
def test_each_stable_mistake_is_caught_and_named(name: str) -> None:
    fn, words = STABLE_WRONG[name]
    report = checks.check_stable_softmax(fn)
    assert not report.passed
    assert words in str(report), report


def test_a_max_without_values_is_caught() -> None:
    report = checks.check_stable_softmax(lambda x, dim=-1: torch.exp(x - x.max(dim, keepdim=True)))
    assert not report.passed and "raised TypeError" in str(report)
    assert "values and indices together" in str(report)


# -- Exercise 3 ---------------------------------------------------------------------------------


def backward_loop(p: Tensor, g: Tensor) -> Tensor:
    rows_p, rows_g = p.reshape(-1, p.shape[-1]), g.reshape(-1, g.shape[-1])
    out = []
    for pr, gr in zip(rows_p, rows_g, strict=True):
        n = pr.shape[0]
        jac = torch.stack(
            [torch.stack([pr[i] * (float(i == j) - pr[j]) for j in range(n)]) for i in range(n)]
        )
        out.append(jac.T @ gr)
    return torch.stack(out).reshape(p.shape)


BACKWARD_RIGHT = {
    "weighted sum": lambda p, g: p * g - p * (p * g).sum(-1, keepdim=True),
    "einsum": lambda p, g: p * (g - torch.einsum("...i,...i->...", p, g)[..., None]),
    "a batched Jacobian": lambda p, g: (
        (torch.diag_embed(p) - p[..., :, None] * p[..., None, :]) @ g[..., None]
    ).squeeze(-1),
    "a loop with the Jacobian of each row": backward_loop,
}

BACKWARD_WRONG = {
    "J @ g.T, and .T back": (backward_through_dot_t, "used .T on a batch"),
    "J filled in a float32 buffer": (
        backward_float32_jacobian,
        "a float32 constant breaks float64",
    ),
    "the mean of p g": (
        lambda p, g: p * g - p * torch.mean(p * g, dim=-1, keepdim=True),
        "the mean of p·g",
    ),
    "p * g": (lambda p, g: g * p, "only the diagonal term"),
    "the diagonal of J": (lambda p, g: g * p - g * p**2, "used only the diagonal of J"),
    "the sign": (lambda p, g: (p * g).sum(-1, keepdim=True) * p - g * p, "the sign"),
    "the mean of g": (lambda p, g: p * (g - g.mean(-1, True)), "the plain mean of g"),
    "the batch sum": (lambda p, g: p * g - p * torch.sum(p * g), "over the whole batch"),
    "the sum down the batch": (
        lambda p, g: p * g - p * (p * g).sum(0, keepdim=True),
        "down the batch (dim 0)",
    ),
    "no keepdim": (lambda p, g: p * g - p * (p * g).sum(-1), "without keeping its dimension"),
    "the Jacobian": (
        lambda p, g: torch.diag_embed(p) - torch.einsum("...i,...j->...ij", p, p),
        "returned the Jacobian",
    ),
    "diag and outer": (
        lambda p, g: (torch.diag(p) - torch.outer(p, p)) @ g,
        "torch.diag and torch.outer",
    ),
    "Σ p instead of Σ p g": (lambda p, g: p * (g - p.sum(-1, True)), "the weights' product"),
    "the plain sum of g": (lambda p, g: p * g - p * g.sum(-1, True), "the plain sum of g"),
    "no final p": (
        lambda p, g: g - torch.einsum("...i,...i->...", p, g).unsqueeze(-1),
        "the final multiplication by p",
    ),
    "J = diag(p) + p pᵀ": (
        lambda p, g: (
            (torch.diag_embed(p) + p[..., :, None] * p[..., None, :]) @ g[..., None]
        ).squeeze(-1),
        "added p·pᵀ",
    ),
    "p and g swapped": (lambda p, g: g * p - g * (g * p).sum(-1, True), "mixed up p and g"),
}


@pytest.mark.parametrize("name", BACKWARD_RIGHT)
def test_right_backward_passes(name: str) -> None:
    report = checks.check_softmax_backward(BACKWARD_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", BACKWARD_WRONG)
def test_each_backward_mistake_is_caught_and_named(name: str) -> None:
    fn, words = BACKWARD_WRONG[name]
    report = checks.check_softmax_backward(fn)
    assert not report.passed
    assert words in str(report), report


def autograd_backward(p: Tensor, g: Tensor) -> Tensor:
    z = p.log().detach().requires_grad_()
    torch.softmax(z, -1).backward(g)
    return z.grad


@pytest.mark.parametrize(
    "cheat",
    [
        autograd_backward,
        lambda p, g: torch.autograd.grad(torch.softmax(z := p.log().requires_grad_(), -1), z, g)[0],
        lambda p, g: (attnlib.softmax_jacobian(p) @ g[..., None]).squeeze(-1),
    ],
    ids=["Tensor.backward", "torch.autograd.grad", "attnlib.softmax_jacobian"],
)
def test_a_backward_that_calls_autograd_is_refused(
    cheat: Callable[[Tensor, Tensor], Tensor],
) -> None:
    report = checks.check_softmax_backward(cheat)
    assert not report.passed and "does not accept it" in str(report), report


@pytest.mark.slow
@pytest.mark.parametrize(
    "exercise_id", ["ex1_softmax_from_formula", "ex2_stable_softmax", "ex3_softmax_backward"]
)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    checker = {
        "ex1_softmax_from_formula": checks.check_softmax_from_formula,
        "ex2_stable_softmax": checks.check_stable_softmax,
        "ex3_softmax_backward": checks.check_softmax_backward,
    }[exercise_id]
    for mistake in known_mistakes(exercise_id):
        assert _named(checker(mistake.fn), mistake.name), mistake.name
