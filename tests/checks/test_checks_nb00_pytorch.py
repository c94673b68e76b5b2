"""Notebook 00's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(einsum, loops, permute, reshape of a contiguous copy, torch.where, float32 cast back) must
pass; answers that call torch's or attnlib's version of what the exercise asks for must be refused.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

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


# -- Exercise 1: columns that add up to 1 --------------------------------------------------------


def columns_loop(x: Tensor) -> Tensor:
    out = torch.empty_like(x)
    for index in range(x.shape[-1]):
        column = x[..., :, index]  # (..., T)
        out[..., :, index] = column / column.sum(dim=-1, keepdim=True)
    return out


def columns_of_one_matrix(x: Tensor) -> Tensor:
    result = x.clone()
    for j in range(x.size(1)):
        total = x[:, j].sum()
        result[:, j] = x[:, j] / total
    return result


def columns_of_one_matrix_by_width(x: Tensor) -> Tensor:
    out = x.clone()
    n_columns = x.shape[-1]
    for j in range(n_columns):
        out[:, j] = x[:, j] / torch.sum(x[:, j])
    return out


def columns_in_place(x: Tensor) -> Tensor:
    x.div_(x.sum(-2, keepdim=True))
    return x


COLUMNS_RIGHT: dict[str, Callable[[Tensor], Tensor]] = {
    "keepdim": lambda x: x / x.sum(-2, keepdim=True),
    "transpose, rows, transpose back": lambda x: (
        (t := x.transpose(-1, -2)) / t.sum(-1, keepdim=True)
    ).transpose(-1, -2),
    "unsqueeze": lambda x: x / x.sum(dim=-2).unsqueeze(-2),
    "a loop over the columns": columns_loop,
    "einsum": lambda x: torch.einsum("...tn,...n->...tn", x, 1 / x.sum(-2)),
    "in float32, back in x's dtype": lambda x: ((y := x.float()) / y.sum(-2, keepdim=True)).to(
        x.dtype
    ),
}


def columns_through_dot_t(x: Tensor) -> Tensor:
    with warnings.catch_warnings():  # .T of a batch is deprecated
        warnings.simplefilter("ignore", UserWarning)
        rows = x.T  # section 3 did rows
        return (rows / rows.sum(-1, keepdim=True)).T


def columns_in_numpy(x: Tensor) -> Tensor:
    values = x.numpy()  # numpy is what I know
    return values / values.sum(axis=0 if values.ndim == 2 else -2, keepdims=True)


COLUMNS_WRONG: dict[str, tuple[Callable[[Tensor], Tensor], str]] = {
    # The task says the result keeps x's dtype (issue 40).
    "float32 whatever x is": (
        lambda x: (y := x.float()) / y.sum(-2, keepdim=True),
        "returns float32 for float64 input",
    ),
    "rows": (lambda x: x / x.sum(axis=-1, keepdims=True), "normalised each row"),
    "dim 0": (lambda x: x / torch.sum(x, 0, keepdim=True), "summed along dim 0"),
    "dim 1": (lambda x: x / x.sum(1, True), "summed along dim 1"),
    "no keepdim": (lambda x: x / torch.sum(x, dim=-2), "without keeping their dimension"),
    "everything": (lambda x: x / torch.sum(x), "the whole tensor"),
    "the matrix": (lambda x: x / x.sum(-1, True).sum(-2, True), "each whole matrix"),
    "mean": (lambda x: x / x.mean(-2, True), "column's mean"),
    "max": (lambda x: x / x.max(dim=-2, keepdim=True).values, "largest entry"),
    "left transposed": (
        lambda x: x.mT / x.mT.sum(-1, keepdim=True),
        "returned it still transposed",
    ),
    "reshape": (
        lambda x: (r := x.reshape(*x.shape[:-2], x.shape[-1], -1)) / r.sum(-1, True),
        None,  # the shape of x is not restored: caught, but as a shape, not by name
    ),
    "reshape, and back": (
        lambda x: ((r := x.reshape(*x.shape[:-2], x.shape[-1], -1)) / r.sum(-1, True)).reshape(
            x.shape
        ),
        "reshaped the matrix",
    ),
    "softmax by hand": (lambda x: x.exp() / x.exp().sum(-2, True), "a softmax"),
    "length": (
        lambda x: x / torch.linalg.vector_norm(x, dim=-2, keepdim=True),
        "each column's length",
    ),
    "upside down": (lambda x: torch.sum(x, -2, keepdim=True) / x, "the wrong way round"),
    "by T": (lambda x: x / x.size(-2), "number of rows T"),
    "size-1 dimension last": (lambda x: x / torch.sum(x, dim=-2)[..., None], "in the wrong place"),
    "a loop over x[:, j]": (columns_of_one_matrix, "looped over x[:, j]"),
    "a loop over x[:, j], for each of the N columns": (
        columns_of_one_matrix_by_width,
        "looped over x[:, j]",
    ),
    "floor division": (lambda x: torch.floor_divide(x, x.sum(-2, True)), "divided with //"),
    "in place": (columns_in_place, "divided x in place"),
    "numpy": (columns_in_numpy, "worked in numpy"),
    "rows of x.T, and .T back": (columns_through_dot_t, "used .T on a batch"),
    "transpose(0, 1), rows, and back": (
        lambda x: ((t := x.transpose(0, 1)) / t.sum(-1, keepdim=True)).transpose(0, 1),
        "swapped dimensions 0 and 1",
    ),
    "an epsilon in the totals": (
        lambda x: x / (x.sum(-2, keepdim=True) + 1e-3),
        "an epsilon",
    ),
}


@pytest.mark.parametrize("name", COLUMNS_RIGHT)
def test_right_column_normalisations_pass(name: str) -> None:
    report = checks.check_normalise_columns(COLUMNS_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", COLUMNS_WRONG)
def test_each_column_mistake_is_caught_and_named(name: str) -> None:
    fn, words = COLUMNS_WRONG[name]
    report = checks.check_normalise_columns(fn)
    assert not report.passed
    if words is not None:
        assert _caught(report, words), report


def test_torchs_normalize_is_refused() -> None:
    report = checks.check_normalise_columns(lambda x: F.normalize(x, p=1, dim=-2))
    assert not report.passed and "does not accept it" in str(report)


# -- Exercise 2: scores head by head ------------------------------------------------------------


def scores_loop(q: Tensor, k: Tensor) -> Tensor:
    b, t, h, _ = q.shape
    out = q.new_zeros(b, h, t, k.shape[1])
    for head in range(h):
        out[:, head] = q[:, :, head] @ k[:, :, head].transpose(-2, -1)
    return out


def scores_heads_flattened(q: Tensor, k: Tensor) -> Tensor:
    h = q.shape[2]
    flat = torch.einsum("btx,bsx->bts", q.flatten(2), k.flatten(2))  # (B, T, S)
    return flat[:, None].repeat(1, h, 1, 1)


def scores_heads_last(q: Tensor, k: Tensor) -> Tensor:
    per_head = [q[:, :, h] @ k[:, :, h].mT for h in range(q.shape[2])]
    return torch.stack(per_head, dim=3)


SCORES_RIGHT = {
    "transpose and permute": lambda q, k: q.transpose(1, 2) @ k.permute(0, 2, 3, 1),
    "einsum": lambda q, k: torch.einsum("bthd,bshd->bhts", q, k),
    "permute both, then mT": lambda q, k: q.permute(0, 2, 1, 3) @ k.permute(0, 2, 1, 3).mT,
    "a loop over the heads": scores_loop,
    "contiguous then reshape-free": lambda q, k: (
        q.transpose(1, 2).contiguous() @ k.transpose(1, 2).transpose(2, 3).contiguous()
    ),
}

SCORES_WRONG = {
    "q @ kᵀ as it is": (lambda q, k: q @ k.mT, "without moving the heads"),
    "reshape": (
        lambda q, k: (
            q.reshape(q.size(0), q.size(2), q.size(1), -1)
            @ k.reshape(k.size(0), k.size(2), k.size(1), -1).mT
        ),
        "reshaped to (B, H, T, D)",
    ),
    "reshaped keys": (
        lambda q, k: q.permute(0, 2, 1, 3) @ k.reshape(k.size(0), k.size(2), k.size(3), -1),
        "reshaped the keys straight",
    ),
    "last two only": (lambda q, k: q.transpose(1, 2) @ k.mT, "swapped only the last two"),
    "no key transpose": (
        lambda q, k: q.permute(0, 2, 1, 3) @ k.permute(0, 2, 1, 3),
        "did not transpose the keys",
    ),
    "queries not moved": (
        lambda q, k: torch.matmul(q, k.transpose(1, 2).transpose(2, 3)),
        "not the queries'",
    ),
    "keys first": (
        lambda q, k: k.transpose(1, 2) @ q.permute(0, 2, 3, 1),
        "put the keys first",
    ),
    "(B, T, H, S)": (
        lambda q, k: (q.transpose(1, 2) @ k.permute(0, 2, 3, 1)).transpose(1, 2),
        "left the heads after the queries",
    ),
    "transpose(1, 3)": (lambda q, k: q.transpose(1, 2) @ k.transpose(1, 3), "dimensions 1 and 3"),
    "scaled": (
        lambda q, k: q.transpose(1, 2) @ k.permute(0, 2, 3, 1) / q.shape[-1] ** 0.5,
        "divided the scores by √D",
    ),
    "softmax": (
        lambda q, k: F.softmax(torch.einsum("bthd,bshd->bhts", q, k), dim=-1),
        "with a softmax",
    ),
    "diagonal": (lambda q, k: torch.einsum("bthd,bthd->bht", q, k), "paired query t with key t"),
    "summed heads": (
        lambda q, k: (q.transpose(1, 2) @ k.permute(0, 2, 3, 1)).sum(1),
        "added up the scores of all heads",
    ),
    "heads flattened, then repeated": (scores_heads_flattened, "copied it to every head"),
    "both viewed": (
        lambda q, k: (
            q.contiguous().view(q.size(0), q.size(2), q.size(1), q.size(3))
            @ k.contiguous().view(k.size(0), k.size(2), k.size(3), k.size(1))
        ),
        "reshaped q to (B, H, T, D) and the keys straight",
    ),
    "heads last": (scores_heads_last, "put the heads last"),
    "float16": (
        lambda q, k: torch.einsum("bthd,bshd->bhts", q.half(), k.half()).double(),
        "16-bit floats",
    ),
    "bfloat16": (
        lambda q, k: (
            q.to(torch.bfloat16).transpose(1, 2) @ k.to(torch.bfloat16).permute(0, 2, 3, 1)
        ),
        "16-bit floats",
    ),
}


@pytest.mark.parametrize("name", SCORES_RIGHT)
def test_right_head_scores_pass(name: str) -> None:
    report = checks.check_head_scores(SCORES_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", SCORES_WRONG)
def test_each_head_scores_mistake_is_caught_and_named(name: str) -> None:
    fn, words = SCORES_WRONG[name]
    assert _caught(checks.check_head_scores(fn), words), checks.check_head_scores(fn)


# -- Exercise 3: a linear layer across the positions --------------------------------------------


def mix_loop(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    rows = [sum(w[u, t] * x[..., t, :] for t in range(w.shape[1])) + b[u] for u in range(len(b))]
    return torch.stack(rows, dim=-2)


def mix_with_dot_t(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    with warnings.catch_warnings():  # .T of a batch is deprecated
        warnings.simplefilter("ignore", UserWarning)
        out = x.T @ w.t() + b  # (C, T) @ (T, T_out): fine for one sequence
        return out.T


def mix_channels_of_one_sequence(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    out = torch.zeros(*x.shape[:-2], w.shape[0], x.shape[-1], dtype=x.dtype)
    for c in range(x.shape[1]):
        out[:, c] = torch.mv(w, x[:, c]) + b
    return out


def mix_from_weight_columns(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    out = []
    for u in range(len(b)):
        weights = w[:, u].unsqueeze(-1)  # meant as the weights of output u
        out.append(torch.sum(weights * x, dim=-2) + b[u])
    return torch.stack(out, dim=-2)


def mix_bias_twice(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    out = (x.mT @ w.T + b).mT  # the layer along the positions, bias included
    return out + b.view(-1, 1)  # ... and the bias once more


MIX_RIGHT = {
    "weight on the left": lambda x, w, b: w @ x + b[:, None],
    "transpose, formula, transpose back": lambda x, w, b: (x.mT @ w.T + b).mT,
    "einsum": lambda x, w, b: torch.einsum("ut,...tc->...uc", w, x) + b.unsqueeze(-1),
    "matmul and view": lambda x, w, b: torch.matmul(w, x) + b.view(-1, 1),
    "a loop over the output positions": mix_loop,
}

MIX_WRONG = {
    "channels": (lambda x, w, b: x @ w.t() + b, "applied the layer to the channels"),
    "bias on channels": (lambda x, w, b: torch.matmul(w, x) + b, "along the channels"),
    "no bias": (lambda x, w, b: torch.matmul(w, x), "left out the bias"),
    "transposed weight": (lambda x, w, b: w.t() @ x + b.unsqueeze(1), "the wrong way round"),
    "bias first": (lambda x, w, b: w @ (x + b.unsqueeze(-1)), "before multiplying"),
    "reshape": (
        lambda x, w, b: (x.reshape(*x.shape[:-2], x.shape[-1], -1) @ w.T + b).reshape(
            *x.shape[:-2], -1, x.shape[-1]
        ),
        "reshaped x",
    ),
    "dims 1 and 2": (
        lambda x, w, b: torch.transpose(torch.transpose(x, 1, 2) @ w.t() + b, 1, 2),
        "swapped dimensions 1 and 2",
    ),
    "not moved back": (lambda x, w, b: x.transpose(-1, -2) @ w.T + b, "did not move them back"),
    "einsum, weight read as (T, T_out)": (
        lambda x, w, b: torch.einsum("...tc,tu->...uc", x, w) + b.view(-1, 1),
        "read the weight as (T, T_out)",
    ),
    ".T": (mix_with_dot_t, "transposed x with .T"),
    "a loop over x[:, c]": (mix_channels_of_one_sequence, "looped over x[:, c]"),
    "einsum for (B, T, C) only": (
        lambda x, w, b: torch.einsum("btc,ut->buc", x, w) + b.unsqueeze(-1),
        "in the einsum, so it fits no other shape",
    ),
    "einsum for one (T, C) sequence only": (
        lambda x, w, b: torch.einsum("ut,tc->uc", w, x) + b.unsqueeze(1),
        "the two dimensions of one (T, C) sequence",
    ),
    "bias twice": (mix_bias_twice, "added the bias twice"),
    "column u of the weight": (mix_from_weight_columns, "took column u of the weight"),
    "mean": (
        lambda x, w, b: torch.einsum("ut,...tc->...uc", w, x) / w.shape[1] + b[:, None],
        "averaged the weighted positions",
    ),
}


@pytest.mark.parametrize("name", MIX_RIGHT)
def test_right_position_mixers_pass(name: str) -> None:
    report = checks.check_mix_positions(MIX_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", MIX_WRONG)
def test_each_position_mixing_mistake_is_caught_and_named(name: str) -> None:
    fn, words = MIX_WRONG[name]
    assert _caught(checks.check_mix_positions(fn), words), checks.check_mix_positions(fn)


@pytest.mark.parametrize(
    "cheat",
    [
        lambda x, w, b: F.linear(x.mT, w, b).mT,
        lambda x, w, b: torch.nn.functional.linear(x.transpose(-2, -1), w, b).transpose(-2, -1),
    ],
)
def test_torchs_linear_layer_is_refused(cheat: Callable[..., Tensor]) -> None:
    report = checks.check_mix_positions(cheat)
    assert not report.passed and "does not accept it" in str(report)


# -- Exercise 4: cross-entropy over a padded batch ----------------------------------------------


def loss_flattened(z: Tensor, y: Tensor, m: Tensor) -> Tensor:
    log_p = z.reshape(-1, z.shape[-1]).log_softmax(-1)
    picked = log_p[torch.arange(log_p.shape[0]), y.reshape(-1)]
    return -picked[m.reshape(-1)].mean()


def loss_logsumexp(z: Tensor, y: Tensor, m: Tensor) -> Tensor:
    top = z.amax(-1, keepdim=True)
    lse = top[..., 0] + (z - top).exp().sum(-1).log()
    per = lse - z.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    return torch.where(m, per, torch.zeros_like(per)).sum() / m.sum()


LOSS_RIGHT = {
    "flattened, arange": loss_flattened,
    "gather, masked mean": lambda z, y, m: (
        -(F.log_softmax(z, dim=-1).gather(2, y[..., None]).squeeze(2)[m].mean())
    ),
    "log-sum-exp by hand, torch.where": loss_logsumexp,
    "multiply by the mask": lambda z, y, m: (
        -(z.log_softmax(-1).gather(-1, y[..., None])[..., 0] * m).sum() / m.float().sum()
    ),
    "in float64, back in the logits' dtype": lambda z, y, m: loss_flattened(z.double(), y, m).to(
        z.dtype
    ),
}

LOSS_WRONG = {
    # The task asks for the loss in the logits' dtype (issue 40).
    "float64 whatever the logits": (
        lambda z, y, m: loss_flattened(z.double(), y, m),
        "returns float64 for float32 input",
    ),
    "the count + 1": (
        lambda z, y, m: (
            -(z.log_softmax(-1).gather(-1, y[..., None])[..., 0] * m).sum() / (m.sum() + 1)
        ),
        "added a number to the count",
    ),
    "the targets as an index": (
        lambda z, y, m: -z.log_softmax(-1)[..., y][m].mean(),
        "picks every target at every position",
    ),
    "every position": (
        lambda z, y, m: -z.log_softmax(-1).gather(-1, y[..., None]).mean(),
        "padding included",
    ),
    "B·T": (
        lambda z, y, m: -(z.log_softmax(-1).gather(-1, y[..., None])[..., 0] * m).mean(),
        "divided by the number of all positions",
    ),
    "per sequence": (
        lambda z, y, m: torch.stack(
            [loss_flattened(z[i : i + 1], y[i : i + 1], m[i : i + 1]) for i in range(len(z))]
        ).mean(),
        "each sequence on its own",
    ),
    "per sequence, an empty one as 0": (
        lambda z, y, m: torch.stack(
            [
                loss_flattened(z[i : i + 1], y[i : i + 1], m[i : i + 1])
                if m[i].any()
                else z.new_zeros(())
                for i in range(len(z))
            ]
        ).mean(),
        "an all-padding one as 0",
    ),
    "batch dim": (
        lambda z, y, m: -F.log_softmax(z, 0).gather(-1, y.unsqueeze(-1)).squeeze(-1)[m].mean(),
        "over the batch (dim 0)",
    ),
    "polarity": (lambda z, y, m: loss_flattened(z, y, ~m), "the wrong way round"),
    "log of softmax": (
        lambda z, y, m: -torch.log(F.softmax(z, -1)).gather(-1, y[..., None])[..., 0][m].mean(),
        "before taking the log",
    ),
    "exp overflow": (
        lambda z, y, m: (z.exp().sum(-1).log() - z.gather(-1, y[..., None])[..., 0])[m].mean(),
        "before taking the log",
    ),
    "dim 1": (
        lambda z, y, m: -z.log_softmax(1).gather(-1, y[..., None])[..., 0][m].mean(),
        "over the positions (dim 1)",
    ),
    "raw logits": (lambda z, y, m: -z.gather(-1, y[..., None])[..., 0][m].mean(), "raw logits"),
    "no minus": (lambda z, y, m: -loss_flattened(z, y, m), "minus sign"),
    "sum": (lambda z, y, m: loss_flattened(z, y, m) * m.sum(), "instead of averaging"),
    "per sequence count": (
        lambda z, y, m: loss_flattened(z, y, m) * m.sum() / len(z),
        "number of sequences",
    ),
    "zeroed logits": (
        lambda z, y, m: loss_flattened(z * m.unsqueeze(-1), y, torch.ones_like(m)),
        "zeroed the padding's logits",
    ),
    "a Python float": (lambda z, y, m: float(loss_flattened(z, y, m)), "a Python number"),
}


@pytest.mark.parametrize("name", LOSS_RIGHT)
def test_right_masked_losses_pass(name: str) -> None:
    report = checks.check_masked_cross_entropy(LOSS_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", LOSS_WRONG)
def test_each_masked_loss_mistake_is_caught_and_named(name: str) -> None:
    fn, words = LOSS_WRONG[name]
    report = checks.check_masked_cross_entropy(fn)
    assert _caught(report, words), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda z, y, m: F.cross_entropy(z[m], y[m]),
        lambda z, y, m: F.cross_entropy(z.flatten(0, 1), y.masked_fill(~m, -100).flatten()),
        lambda z, y, m: F.nll_loss(z[m].log_softmax(-1), y[m]),
        lambda z, y, m: nn.CrossEntropyLoss()(z[m], y[m]),
        lambda z, y, m: attnlib.label_smoothed_cross_entropy(z[m], y[m], smoothing=0.0),
    ],
    ids=["F.cross_entropy", "ignore_index", "F.nll_loss", "nn.CrossEntropyLoss", "attnlib"],
)
def test_an_existing_cross_entropy_is_refused(cheat: Callable[..., Tensor]) -> None:
    report = checks.check_masked_cross_entropy(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_no_report_repeats_the_wrong_underflow_threshold() -> None:
    texts = [m.why for m in known_mistakes("ex4_masked_cross_entropy")]
    texts += list(checks.check_masked_cross_entropy.exercise.hints)
    assert not any("1e-308" in text for text in texts)


# -- Exercise 5: derivatives at many points -----------------------------------------------------


def derivative_loop(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    slopes = []
    for value in x.flatten():
        point = value.detach().clone().requires_grad_()
        f(point).backward()
        slopes.append(point.grad)
    return torch.stack(slopes).reshape(x.shape)


def derivative_ones(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    x = x.clone().requires_grad_(True)
    y = f(x)
    y.backward(torch.ones_like(y))
    return x.grad


DERIVATIVE_RIGHT = {
    "sum then backward": lambda f, x: (
        (c := x.detach().clone().requires_grad_()) is not None
        and f(c).sum().backward() is None
        and c.grad
    ),
    "backward with ones": derivative_ones,
    "torch.autograd.grad": lambda f, x: torch.autograd.grad(
        f(c := x.detach().requires_grad_()).sum(), c
    )[0],
    "one point at a time": derivative_loop,
    "torch.func": lambda f, x: torch.func.vmap(torch.func.grad(f))(x.flatten()).reshape(x.shape),
}


def non_scalar(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    x = x.detach().clone().requires_grad_()
    f(x).backward()
    return x.grad


def with_mean(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    x = torch.tensor(x.tolist(), dtype=x.dtype, requires_grad=True)
    torch.mean(f(x)).backward()
    return x.grad


def forgot_requires_grad(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    y = f(x.clone())
    y.sum().backward()
    return x.grad


def twice(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    x = x.detach().clone().requires_grad_()
    for _ in range(2):
        f(x).sum().backward()
    return x.grad


def original_grad(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    copy = x.detach().clone().requires_grad_()
    f(copy).sum().backward()
    return x.grad


def grad_of_the_output(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    y = f(x.detach().clone().requires_grad_())
    y.sum().backward()
    y.retain_grad()  # too late: backward() has already run
    return y.grad


def output_grad_retained(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    leaf = x.clone().requires_grad_()
    y = f(leaf)
    y.retain_grad()
    y.backward(torch.ones_like(y))
    return y.grad


def the_leaf_itself(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    leaf = x.clone().requires_grad_()
    torch.sum(f(leaf)).backward()
    return leaf


def entry_by_entry_of_a_vector(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    out = torch.empty_like(x)
    for i, value in enumerate(x):
        point = value.clone().requires_grad_()
        f(point).backward()
        out[i] = point.grad
    return out


def in_place(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    x.requires_grad = True
    f(x).sum().backward()
    return x.grad


def derivative_under_no_grad(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    leaf = x.clone().requires_grad_()
    with torch.no_grad():
        total = f(leaf).sum()
    total.backward()
    return leaf.grad


def derivative_in_float32(f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    leaf = x.to(torch.float32).requires_grad_()
    (slopes,) = torch.autograd.grad(f(leaf).sum(), leaf)
    return slopes.to(x.dtype)


DERIVATIVE_WRONG = {
    "backward on many numbers": (non_scalar, "which holds many numbers"),
    "mean": (with_mean, "took the mean of f(x)"),
    "no requires_grad": (forgot_requires_grad, "did not ask for gradients"),
    "f(x)": (lambda f, x: f(x), "returned f(x)"),
    "twice": (twice, "ran backward() twice"),
    "the original's .grad": (original_grad, "never filled"),
    "the .grad of f(x)": (grad_of_the_output, "never filled"),
    "the .grad of f(x), retained": (output_grad_retained, "the output, which is all ones"),
    "the copy itself": (the_leaf_itself, "returned the copy of x"),
    "x[i] one at a time": (entry_by_entry_of_a_vector, "looped over x[i]"),
    "the tuple": (
        lambda f, x: torch.autograd.grad(f(c := x.clone().requires_grad_()).sum(), c),
        "the tuple",
    ),
    "x changed": (in_place, "instead of a copy"),
    "forward difference": (
        lambda f, x: (f(x + 1e-5) - f(x)) / 1e-5,
        "finite difference",
    ),
    "central difference": (
        lambda f, x: (f(x + 1e-4) - f(x - 1e-4)) / 2e-4,
        "finite difference",
    ),
    "a coarse forward difference": (
        lambda f, x: (f(x + 0.05) - f(x)) / 0.05,
        "finite difference",
    ),
    "no_grad": (derivative_under_no_grad, "under torch.no_grad()"),
    "float32": (derivative_in_float32, "float32"),
    "the Jacobian": (
        lambda f, x: torch.autograd.functional.jacobian(f, x.clone()),
        "the whole Jacobian",
    ),
    "the Jacobian's diagonal": (
        lambda f, x: torch.diagonal(torch.autograd.functional.jacobian(f, x)),
        "the Jacobian's diagonal",
    ),
}


@pytest.mark.parametrize("name", DERIVATIVE_RIGHT)
def test_right_derivatives_pass(name: str) -> None:
    report = checks.check_elementwise_derivative(DERIVATIVE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", DERIVATIVE_WRONG)
def test_each_derivative_mistake_is_caught_and_named(name: str) -> None:
    fn, words = DERIVATIVE_WRONG[name]
    report = checks.check_elementwise_derivative(fn)
    assert _caught(report, words), report


# -- Exercise 6: one step on several batches ----------------------------------------------------


def step_loss(model: nn.Module, tokens: Tensor, targets: Tensor) -> Tensor:
    logits = model(tokens)
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def step_right(model: nn.Module, optimizer: Any, batches: list) -> float:
    model.zero_grad()
    losses = []
    for tokens, targets in batches:
        loss = step_loss(model, tokens, targets)
        (loss / len(batches)).backward()
        losses.append(loss.item())
    optimizer.step()
    return sum(losses) / len(losses)


def step_transpose(model: nn.Module, optimizer: Any, batches: list) -> Tensor:
    optimizer.zero_grad(set_to_none=False)
    total = torch.zeros(())
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens).transpose(1, 2), targets) / len(batches)
        loss.backward()
        total += loss.detach()
    optimizer.step()
    return total


def step_one_graph(model: nn.Module, optimizer: Any, batches: list) -> Tensor:
    optimizer.zero_grad()
    mean = sum(step_loss(model, t, y) for t, y in batches) / len(batches)
    mean.backward()
    optimizer.step()
    return mean


def step_with(**how: Any) -> Callable[..., Any]:
    def step(model: nn.Module, optimizer: Any, batches: list) -> Any:
        k = len(batches)
        if how.get("zero", "start") == "start":
            optimizer.zero_grad()
        returned = []
        for tokens, targets in batches:
            if how.get("zero") == "loop":
                optimizer.zero_grad()
            loss = step_loss(model, tokens, targets)
            scale = how.get("scale", "k")
            if scale == "k":
                (loss / k).backward()
            elif scale == "tokens":
                (loss * tokens.numel() / sum(t.numel() for t, _ in batches)).backward()
            else:
                loss.backward()
            returned.append(loss.item())
            if how.get("step_in_loop"):
                optimizer.step()
        if how.get("zero") == "end":
            optimizer.zero_grad()
        if not how.get("step_in_loop"):
            optimizer.step()
        if how.get("zero") == "after":
            optimizer.zero_grad()
        return how.get("returned", lambda r: sum(r) / len(r))(returned)

    return step


STEP_RIGHT = {
    "model.zero_grad and a list": step_right,
    "transpose for cross_entropy, a tensor total": step_transpose,
}


def step_no_step(model: nn.Module, optimizer: Any, batches: list) -> float:
    optimizer.zero_grad()
    for tokens, targets in batches:
        (step_loss(model, tokens, targets) / len(batches)).backward()
    return sum(step_loss(model, t, y).item() for t, y in batches) / len(batches)


def step_no_return(model: nn.Module, optimizer: Any, batches: list) -> None:
    step_right(model, optimizer, batches)


def step_no_flatten(model: nn.Module, optimizer: Any, batches: list) -> float:
    optimizer.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens), targets) / len(batches)
        loss.backward()
        total += float(loss)
    optimizer.step()
    return total


def step_targets_as_they_are(model: nn.Module, optimizer: Any, batches: list) -> float:
    optimizer.zero_grad()
    total = 0.0
    for tokens, targets in batches:
        loss = F.cross_entropy(model(tokens).view(-1, 7), targets) / len(batches)
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


def step_running_total(model: nn.Module, optimizer: Any, batches: list) -> Tensor:
    optimizer.zero_grad()
    total = torch.tensor(0.0)
    for tokens, targets in batches:
        total = total + step_loss(model, tokens, targets) / len(batches)
        total.backward()
    optimizer.step()
    return total


def step_loss_after(model: nn.Module, optimizer: Any, batches: list) -> float:
    step_right(model, optimizer, batches)
    with torch.no_grad():
        return sum(step_loss(model, t, y).item() for t, y in batches) / len(batches)


def step_weighted(model: nn.Module, optimizer: Any, batches: list) -> Tensor:
    optimizer.zero_grad()
    n = sum(t.numel() for t, _ in batches)
    total = 0
    for tokens, targets in batches:
        loss = step_loss(model, tokens, targets) * tokens.numel() / n
        loss.backward()
        total = total + loss.detach()
    optimizer.step()
    return total


STEP_WRONG = {
    "zero in loop": (step_with(zero="loop"), "inside the loop"),
    "never zero": (step_with(zero="never"), "never cleared"),
    "zero before step": (step_with(zero="end"), "just before step()"),
    "no step": (step_no_step, "no step() at all"),
    "no return": (step_no_return, "returned nothing"),
    "step in loop": (step_with(step_in_loop=True), "after every batch"),
    "ordinary steps": (step_with(zero="loop", step_in_loop=True, scale=1), "ordinary"),
    "sum": (step_with(scale=1, returned=sum), "added up the batches' losses"),
    "unscaled gradient": (step_with(scale=1), "but not the gradients"),
    "per token": (step_weighted, "by its number of tokens"),
    "last loss": (step_with(returned=lambda r: r[-1]), "last batch's loss"),
    "loss after": (step_loss_after, "after the step"),
    "no flatten": (step_no_flatten, "without flattening"),
    "running total": (step_running_total, "on the running total"),
    "targets not flattened": (step_targets_as_they_are, "but not the targets"),
    "sum returned": (step_with(returned=sum), "not their mean"),
    "zero after step": (step_with(zero="after"), "after step()"),
    "one graph for all batches": (step_one_graph, "called backward() once"),
}


@pytest.mark.parametrize("name", STEP_RIGHT)
def test_right_accumulated_steps_pass(name: str) -> None:
    report = checks.check_accumulated_step(STEP_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", STEP_WRONG)
def test_each_accumulation_mistake_is_caught_and_named(name: str) -> None:
    fn, words = STEP_WRONG[name]
    report = checks.check_accumulated_step(fn)
    assert _caught(report, words), report


def test_the_check_leaves_the_thread_count_as_it_was() -> None:
    before = torch.get_num_threads()
    checks.check_accumulated_step(step_right)
    assert torch.get_num_threads() == before


# -- every exercise -----------------------------------------------------------------------------

CHECKERS = {
    "ex1_normalise_columns": checks.check_normalise_columns,
    "ex2_head_scores": checks.check_head_scores,
    "ex3_mix_positions": checks.check_mix_positions,
    "ex4_masked_cross_entropy": checks.check_masked_cross_entropy,
    "ex5_elementwise_derivative": checks.check_elementwise_derivative,
    "ex6_accumulated_step": checks.check_accumulated_step,
}
WRITTEN_AGAIN = {
    "ex1_normalise_columns": COLUMNS_WRONG,
    "ex2_head_scores": SCORES_WRONG,
    "ex3_mix_positions": MIX_WRONG,
    "ex4_masked_cross_entropy": LOSS_WRONG,
    "ex5_elementwise_derivative": DERIVATIVE_WRONG,
    "ex6_accumulated_step": STEP_WRONG,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    checker = CHECKERS[exercise_id]
    assert checker.exercise.id == exercise_id and checker.exercise.notebook == "00"
    for mistake in known_mistakes(exercise_id):
        report = checker(mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, report)


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_also_written_again_here(exercise_id: str) -> None:
    names = [m.name for m in known_mistakes(exercise_id)]
    words = [w for _, w in WRITTEN_AGAIN[exercise_id].values() if w is not None]
    for name in names:
        assert any(w in name for w in words), f"{name!r} is not written again in these tests"


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_no_hint_or_report_prints_code(exercise_id: str) -> None:
    exercise = CHECKERS[exercise_id].exercise
    texts = [*exercise.hints, *(m.name + m.why for m in known_mistakes(exercise_id))]
    for text in texts:
        for code in ("keepdim=True", "dim=-", ".transpose(", ".sum(", "x @", "[:, None]"):
            assert code not in text, (code, text)


# -- slips the engine names in any exercise (issue 40) -------------------------------------------


def scores_of_dot_t(q: Tensor, k: Tensor) -> Tensor:
    qh, kh = q.permute(0, 2, 1, 3), k.permute(0, 2, 1, 3)  # (B, H, T, D), (B, H, S, D)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return qh @ kh.T  # kh.T is (D, S, H, B)


def loss_gathered_without_a_last_dimension(z: Tensor, y: Tensor, m: Tensor) -> Tensor:
    picked = z.log_softmax(-1).gather(-1, y)  # y is (B, T): one dimension short
    return -(picked * m).sum() / m.sum()


ENGINE_NAMED = {
    "head scores: kh.T of a 4-D tensor": (
        checks.check_head_scores,
        scores_of_dot_t,
        "used .T on a batch",
    ),
    "masked loss: gather with (B, T) targets": (
        checks.check_masked_cross_entropy,
        loss_gathered_without_a_last_dimension,
        "gave gather or scatter an index with fewer dimensions",
    ),
}


@pytest.mark.parametrize("name", ENGINE_NAMED)
def test_a_crash_is_named_by_the_slip_its_line_shows(name: str) -> None:
    checker, fn, words = ENGINE_NAMED[name]
    report = checker(fn)
    assert not report.passed and report.mistake.startswith(words), report
    assert "at line" in str(report) and "of your " in str(report), report
