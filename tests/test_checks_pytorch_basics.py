"""The checkers of notebook 00 pass a right answer and name each usual mistake."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from attnlib import checks


def _not_done(*_: object) -> None:
    raise NotImplementedError("write the function body")


def _crashes(*_: object) -> None:
    raise ZeroDivisionError("oops")


def _pick(log_p: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return log_p[torch.arange(len(targets)), targets]


def _gradient(f, x):
    x = x.detach().clone().requires_grad_(True)
    f(x).backward()
    return x.grad


def _gradient_twice(f, x):
    x = x.detach().clone().requires_grad_(True)
    f(x).backward()
    f(x).backward()
    return x.grad


def _gradient_of_a_copy(f, x):
    copy = x.detach().clone().requires_grad_(True)
    f(x.requires_grad_(True)).backward()
    return copy.grad  # backward() reached x, not this copy: None


def _step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()  # a float is as good as a 0-d tensor


def _step_without_zero_grad(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def _step_without_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    return loss


def _step_zero_grad_in_between(model, optimizer, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss


def _step_summed(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).sum()
    loss.backward()
    optimizer.step()
    return loss


def _step_returning_the_new_loss(model, optimizer, x, y):
    _step(model, optimizer, x, y)
    return F.mse_loss(model(x), y)


RIGHT = [
    (checks.check_row_normalise, lambda x: x / x.sum(dim=-1, keepdim=True)),
    (checks.check_batched_scores, lambda q, k: q @ k.transpose(-2, -1)),
    (checks.check_linear, lambda x, w, b: x @ w.T + b),
    (checks.check_cross_entropy, lambda z, y: -_pick(z.log_softmax(-1), y).mean()),
    (checks.check_cross_entropy, lambda z, y: F.nll_loss(F.log_softmax(z, dim=1), y)),
    (checks.check_gradient, _gradient),
    (checks.check_training_step, _step),
]

# checker, a wrong answer, the words its report must contain (the mistake named)
WRONG = [
    (checks.check_row_normalise, lambda x: x / x.sum(dim=-1), "missing keepdim=True"),
    (checks.check_row_normalise, lambda x: x / x.sum(dim=0, keepdim=True), "dim=0"),
    (checks.check_row_normalise, lambda x: x / x.sum(dim=1, keepdim=True), "dim=1"),
    (checks.check_row_normalise, lambda x: x / x.sum(), "sum of the whole tensor"),
    (checks.check_batched_scores, lambda q, k: q @ k, "forgetting the transpose"),
    (checks.check_batched_scores, lambda q, k: k @ q.transpose(-2, -1), "keys first"),
    (checks.check_batched_scores, lambda q, k: (q * k).sum(-1), "query t with key t only"),
    (checks.check_linear, lambda x, w, b: x @ w + b, "forgetting the transpose"),
    (checks.check_linear, lambda x, w, b: x @ w.T, "forgetting the bias"),
    (checks.check_linear, lambda x, w, b: w @ x.T + b[:, None], "weight @ x.T"),
    (
        checks.check_cross_entropy,
        lambda z, y: -_pick(torch.log(torch.softmax(z, -1)), y).mean(),
        "the log of softmax",
    ),
    (
        checks.check_cross_entropy,
        lambda z, y: -_pick(z.log_softmax(-1), y).sum(),
        "sum over the rows instead of the mean",
    ),
    (
        checks.check_cross_entropy,
        lambda z, y: _pick(z.log_softmax(-1), y).mean(),
        "forgetting the minus sign",
    ),
    (checks.check_cross_entropy, lambda z, y: -_pick(z, y).mean(), "raw logits"),
    (checks.check_cross_entropy, lambda z, y: -_pick(z.log_softmax(0), y).mean(), "dim=0"),
    (checks.check_cross_entropy, lambda z, y: -z.log_softmax(-1)[:, y].mean(), "[:, targets]"),
    (
        checks.check_gradient,
        lambda f, x: (f(x).backward(), x.grad)[1],
        "does not require grad",
    ),
    (checks.check_gradient, lambda f, x: f(x), "returning f(x) instead of its gradient"),
    (checks.check_gradient, _gradient_of_a_copy, "a .grad that is still None"),
    (checks.check_gradient, _gradient_twice, "twice the gradient"),
    (checks.check_training_step, _step_without_zero_grad, "forgetting optimizer.zero_grad()"),
    (checks.check_training_step, _step_without_step, "never moves the parameters"),
    (checks.check_training_step, _step_zero_grad_in_between, "never moves the parameters"),
    (checks.check_training_step, _step_summed, "summed squared error"),
    (checks.check_training_step, _step_returning_the_new_loss, "loss after the step"),
]

CHECKERS = sorted({checker for checker, _ in RIGHT}, key=lambda c: c.__name__)


@pytest.mark.parametrize(("checker", "right"), RIGHT, ids=lambda a: getattr(a, "__name__", ""))
def test_right_answer_passes(checker, right) -> None:
    result = checker(right)
    assert result.passed and result.done, result.message
    assert result.message.startswith("✓") and "correct" in result.message


@pytest.mark.parametrize(("checker", "wrong", "mistake"), WRONG, ids=[w[2] for w in WRONG])
def test_each_usual_mistake_is_named(checker, wrong, mistake) -> None:
    result = checker(wrong)
    assert not result.passed and result.done
    assert result.message.startswith("✗") and "case '" in result.message
    named = re.search(r"That is what (.+) (gives|does)\n", result.message)
    assert named and mistake in named.group(1), result.message
    assert "hint:" in result.message


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_a_stub_is_not_done_yet(checker) -> None:
    result = checker(_not_done)
    assert not result.passed and not result.done
    assert "not done yet (write the function body)" in result.message


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_a_crash_is_reported_not_raised(checker) -> None:
    result = checker(_crashes)
    assert not result.passed and result.done
    assert "raised ZeroDivisionError: oops" in result.message and "hint:" in result.message


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_a_non_function_is_explained(checker) -> None:
    assert "expected a function, got int" in checker(42).message


def test_an_unknown_wrong_answer_gets_the_general_hint() -> None:
    result = checks.check_linear(lambda x, w, b: x @ w.T + 2 * b)
    assert "That is what" not in result.message
    assert "hint: return x @ weight.T + bias." in result.message


def test_the_checks_leave_the_global_random_generator_alone() -> None:
    torch.manual_seed(0)
    before = torch.random.get_rng_state()
    checks.check_training_step(_step)
    checks.check_cross_entropy(lambda z, y: F.cross_entropy(z, y))
    assert torch.equal(torch.random.get_rng_state(), before)


def test_a_check_does_not_change_the_learners_inputs() -> None:
    seen = []

    def normalise_in_place(x):
        seen.append(x)
        return x.div_(x.sum(dim=-1, keepdim=True))

    assert checks.check_row_normalise(normalise_in_place)
    assert checks.check_row_normalise(lambda x: x / x.sum(dim=-1, keepdim=True))
