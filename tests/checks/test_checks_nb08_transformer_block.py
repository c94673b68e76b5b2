"""Notebook 08's checkers of functions (Exercises 1–3) against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(F.linear, einsum, loops, var_mean, rsqrt, float64, both branches computed) must pass; answers
that call an existing normalisation or attnlib.Residual must be refused. The layers (Exercises
4 and 5) are in test_checks_nb08_transformer_layers.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import attnlib
from attnlib import checks
from attnlib.checks._exercise import all_exercises, known_mistakes
from attnlib.checks.nb08_transformer_block.layer_norm_mistakes import CANCELLING

Tensor = torch.Tensor


def _named(report: object, mistake: str) -> bool:
    return f"The mistake: {mistake}." in str(report)


# -- Exercise 1: the gated feed-forward network ---------------------------------------------------


def gelu_by_hand(z: Tensor) -> Tensor:
    return z * 0.5 * (1 + torch.erf(z / math.sqrt(2)))


def gated_loop(x: Tensor, w_gate: Tensor, w_up: Tensor, w_down: Tensor) -> Tensor:
    rows = x.reshape(-1, x.shape[-1])
    out = [w_down @ (gelu_by_hand(w_gate @ r) * (w_up @ r)) for r in rows]
    return torch.stack(out).reshape(x.shape)


GATED_RIGHT: dict[str, Callable[..., Tensor]] = {
    "F.linear": lambda x, g, u, d: F.linear(F.gelu(F.linear(x, g)) * F.linear(x, u), d),
    "einsum": lambda x, g, u, d: torch.einsum(
        "...f,df->...d", F.gelu(torch.einsum("...d,fd->...f", x, g)) * (x @ u.t()), d
    ),
    "mT and GELU by hand": lambda x, g, u, d: (gelu_by_hand(x @ g.mT) * (x @ u.mT)) @ d.mT,
    "a loop over positions": gated_loop,
    "transpose(0, 1), in float32": lambda x, g, u, d: (
        (F.gelu(x.float() @ g.float().transpose(0, 1)) * (x.float() @ u.float().transpose(0, 1)))
        @ d.float().transpose(0, 1)
    ).double(),
}


def _tanh_gelu(z: Tensor) -> Tensor:
    return 0.5 * z * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


GATED_WRONG: dict[str, tuple[Callable[..., Tensor], str]] = {
    "no transposes": (
        lambda x, g, u, d: torch.matmul(F.gelu(torch.matmul(x, g)) * torch.matmul(x, u), d),
        "without transposing them",
    ),
    "w_down as stored": (
        lambda x, g, u, d: (F.gelu(F.linear(x, g)) * F.linear(x, u)) @ d,
        "but not w_down",
    ),
    "GELU twice": (
        lambda x, g, u, d: F.linear(F.gelu(F.linear(x, g)) * F.gelu(F.linear(x, u)), d),
        "to both branches",
    ),
    "GELU on the up branch": (
        lambda x, g, u, d: torch.einsum("...f,df->...d", (x @ g.T) * F.gelu(x @ u.T), d),
        "on the up branch",
    ),
    "GELU of the product": (
        lambda x, g, u, d: F.linear(F.gelu(F.linear(x, g) * F.linear(x, u)), d),
        "after multiplying",
    ),
    "a sum": (lambda x, g, u, d: (F.gelu(x @ g.T) + (x @ u.T)) @ d.T, "added the two branches"),
    "no up branch": (lambda x, g, u, d: F.linear(F.gelu(F.linear(x, g)), d), "left out the up"),
    "w_gate in both branches": (
        lambda x, g, u, d: (F.gelu(h := F.linear(x, g)) * h) @ d.T,
        "w_up never enters",
    ),
    "ReLU": (lambda x, g, u, d: (F.relu(x @ g.T) * (x @ u.T)) @ d.T, "used ReLU"),
    "sigmoid": (lambda x, g, u, d: (torch.sigmoid(x @ g.T) * (x @ u.T)) @ d.T, "sigmoid gate"),
    "SiLU by hand": (
        lambda x, g, u, d: ((z := x @ g.T) * torch.sigmoid(z) * (x @ u.T)) @ d.T,
        "used SiLU",
    ),
    "GELU of x": (lambda x, g, u, d: F.linear(F.linear(F.gelu(x), g) * F.linear(x, u), d), "to x"),
    "tanh GELU by hand": (
        lambda x, g, u, d: (_tanh_gelu(x @ g.T) * (x @ u.T)) @ d.T,
        "tanh approximation",
    ),
    "no GELU": (lambda x, g, u, d: F.linear(F.linear(x, g) * F.linear(x, u), d), "left GELU out"),
    "torch.mm": (
        lambda x, g, u, d: (F.gelu(x.mm(g.t())) * x.mm(u.t())).mm(d.t()),
        "for a 2-D x only",
    ),
    "GELU as x·σ(1.702x)": (
        lambda x, g, u, d: F.linear(
            (z := F.linear(x, g)) * torch.sigmoid(z * 1.702) * F.linear(x, u), d
        ),
        "sigmoid approximation",
    ),
    "Φ with erf(z / 2)": (
        lambda x, g, u, d: F.linear(
            (z := F.linear(x, g)) * (1 + torch.erf(0.5 * z)) / 2 * F.linear(x, u), d
        ),
        "the √2 is missing",
    ),
    "einsum for (T, d) only": (
        lambda x, g, u, d: F.linear(
            F.gelu(torch.einsum("nd,hd->nh", x, g)) * torch.einsum("nd,hd->nh", x, u), d
        ),
        "einsum subscripts for a 2-D x",
    ),
    "no w_down": (
        lambda x, g, u, d: F.gelu(F.linear(x, g)) * F.linear(x, u),
        "the down projection",
    ),
    "GELU at the end": (
        lambda x, g, u, d: F.gelu(F.linear(F.gelu(F.linear(x, g)) * F.linear(x, u), d)),
        "to the output as well",
    ),
}


@pytest.mark.parametrize("name", GATED_RIGHT)
def test_right_gated_networks_pass(name: str) -> None:
    report = checks.check_gated_feed_forward(GATED_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", GATED_WRONG)
def test_each_gated_mistake_is_caught_and_named(name: str) -> None:
    fn, words = GATED_WRONG[name]
    report = checks.check_gated_feed_forward(fn)
    assert not report.passed
    assert words in str(report), report


# -- Exercise 2: LayerNorm over the trailing dimensions ---------------------------------------


def _dims(gamma: Tensor) -> list[int]:
    return [-i for i in range(gamma.dim(), 0, -1)]


def ln_var_mean(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    var, mean = torch.var_mean(x, dim=_dims(gamma), correction=0, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps) * gamma + beta


def x_hat(x: Tensor, gamma: Tensor, eps: float) -> Tensor:
    var, mean = torch.var_mean(x, dim=_dims(gamma), correction=0, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps)


def ln_flattened(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    flat = x.reshape(*x.shape[: x.dim() - gamma.dim()], -1)  # one row per position
    mean = flat.mean(-1, keepdim=True)
    std = torch.sqrt(((flat - mean) ** 2).sum(-1, keepdim=True) / flat.shape[-1] + eps)
    return ((flat - mean) / std).reshape(x.shape) * gamma + beta


def ln_float64(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    x64, d = x.double(), _dims(gamma)
    centred = x64 - x64.mean(d, keepdim=True)
    out = centred / (centred.pow(2).mean(d, keepdim=True) + eps).sqrt()
    return (out * gamma.double() + beta.double()).to(x.dtype)


def ln_std(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    d = tuple(range(x.dim() - gamma.dim(), x.dim()))
    std = x.std(dim=d, keepdim=True, unbiased=False)
    return gamma * (x - x.mean(dim=d, keepdim=True)) / torch.sqrt(std**2 + eps) + beta


LN_RIGHT: dict[str, Callable[..., Tensor]] = {
    "var_mean and rsqrt": ln_var_mean,
    "flattened positions": ln_flattened,
    "in float64": ln_float64,
    "through the std": ln_std,
}

LN_WRONG: dict[str, tuple[Callable[..., Tensor], str]] = {
    "the last dimension": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(-1, keepdim=True))
            / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + eps)
            + b
        ),
        "over the last dimension only",
    ),
    "everything": (
        lambda x, g, b, eps=1e-5: g * (x - x.mean()) / (x.var(unbiased=False) + eps).sqrt() + b,
        "for the whole tensor",
    ),
    "leading dims": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(list(range(g.dim())), keepdim=True))
            / torch.sqrt(x.var(list(range(g.dim())), keepdim=True, unbiased=False) + eps)
            + b
        ),
        "over the leading dimensions",
    ),
    "unbiased": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(_dims(g), keepdim=True))
            / torch.sqrt(x.var(_dims(g), keepdim=True) + eps)
            + b
        ),
        "unbiased variance",
    ),
    "eps outside": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(_dims(g), keepdim=True))
            / (x.std(_dims(g), keepdim=True, unbiased=False) + eps)
            + b
        ),
        "outside the square root",
    ),
    "eps added after dividing": (
        lambda x, g, b, eps=1e-5: (
            g * (x - x.mean(_dims(g), keepdim=True)) / x.std(_dims(g), keepdim=True, unbiased=False)
            + eps
            + b
        ),
        "added ε after dividing by the square root",
    ),
    "the root of σ + eps": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(_dims(g), keepdim=True))
            / (x.std(_dims(g), keepdim=True, unbiased=False) + eps).sqrt()
            + b
        ),
        "the square root of the standard deviation plus ε",
    ),
    "no eps": (
        lambda x, g, b, eps=1e-5: (
            g * (x - x.mean(_dims(g), keepdim=True)) / x.std(_dims(g), keepdim=True, unbiased=False)
            + b
        ),
        "left ε out",
    ),
    "x.std() + eps": (
        lambda x, g, b, eps=1e-5: (
            (x - x.mean(_dims(g), True)) / (x.std(_dims(g), keepdim=True) + eps) * g + b
        ),
        "used x.std()",
    ),
    "clamp": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(_dims(g), keepdim=True))
            * torch.rsqrt(torch.clamp(torch.var(x, _dims(g), keepdim=True, correction=0), min=eps))
            + b
        ),
        "clamped the variance",
    ),
    "no β": (lambda x, g, b, eps=1e-5: x_hat(x, g, eps) * g, "scaled by γ only"),
    "no γ": (lambda x, g, b, eps=1e-5: b + x_hat(x, g, eps), "shifted by β only"),
    "BatchNorm": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(0, keepdim=True))
            / torch.sqrt(x.var(0, keepdim=True, unbiased=False) + eps)
            + b
        ),
        "along dim 0",
    ),
    "fixed eps": (lambda x, g, b, eps=1e-5: ln_var_mean(x, g, b), "ignoring the eps argument"),
    "no root": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(_dims(g), keepdim=True))
            / (torch.var(x, _dims(g), keepdim=True, correction=0) + eps)
            + b
        ),
        "instead of its square root",
    ),
    "RMSNorm": (
        lambda x, g, b, eps=1e-5: (
            g * x * torch.rsqrt(x.pow(2).mean(_dims(g), keepdim=True) + eps) + b
        ),
        "did not subtract the mean",
    ),
    "mean of x² around the mean": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - x.mean(_dims(g), keepdim=True))
            * torch.rsqrt(x.pow(2).mean(_dims(g), keepdim=True) + eps)
            + b
        ),
        "without centring x first",
    ),
    "E[x²] − E[x]², written otherwise": (
        lambda x, g, b, eps=1e-5: (
            (x - (m := x.mean(_dims(g), keepdim=True)))
            * torch.rsqrt(x.square().mean(_dims(g), keepdim=True) - m.square() + eps)
            * g
            + b
        ),
        "cancels in float32",
    ),
    "no affine": (lambda x, g, b, eps=1e-5: x_hat(x, g, eps), "left out γ and β"),
    "β inside": (lambda x, g, b, eps=1e-5: (x_hat(x, g, eps) + b) * g, "added β before"),
    "γ and β swapped": (lambda x, g, b, eps=1e-5: x_hat(x, g, eps) * b + g, "swapped γ and β"),
    "all but the batch dimension": (
        lambda x, g, b, eps=1e-5: (
            g * x_hat(x.flatten(1), torch.ones(1), eps).reshape(x.shape) + b
            if x.dim() > 1
            else g * x_hat(x[:, None], torch.ones(1), eps)[:, 0] + b
        ),
        "everything after the first dimension",
    ),
    "in place": (
        lambda x, g, b, eps=1e-5: (
            x.sub_(x.mean(_dims(g), keepdim=True))
            .div_(torch.sqrt(x.pow(2).mean(_dims(g), keepdim=True) + eps))
            .mul_(g)
            .add_(b)
        ),
        "changed x in place",
    ),
    "no keepdim": (
        lambda x, g, b, eps=1e-5: (
            g
            * (x - torch.mean(x, _dims(g)))
            / torch.sqrt(torch.var(x, _dims(g), correction=0) + eps)
            + b
        ),
        "without keeping the reduced dimensions",
    ),
    "flattened from the front": (
        lambda x, g, b, eps=1e-5: (
            g
            * (
                (
                    (f := torch.flatten(x, g.dim()))
                    - (vm := torch.var_mean(f, dim=-1, keepdim=True, correction=0))[1]
                )
                * torch.rsqrt(vm[0] + eps)
            ).reshape(x.shape)
            + b
        ),
        "counting from the front",
    ),
}


@pytest.mark.parametrize("name", LN_RIGHT)
def test_right_layer_norms_pass(name: str) -> None:
    report = checks.check_layer_norm_trailing_dims(LN_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", LN_WRONG)
def test_each_layer_norm_mistake_is_caught_and_named(name: str) -> None:
    fn, words = LN_WRONG[name]
    report = checks.check_layer_norm_trailing_dims(fn)
    assert not report.passed
    assert words in str(report), report


def ln_float64_kept(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    return ln_float64(x.double(), gamma, beta, eps)  # never back to x's dtype


def ln_float32_first(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    return ln_var_mean(x.float(), gamma.float(), beta.float(), eps)  # "to be safe"


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (ln_float64_kept, "returns float64 for float32 input"),
        (ln_float32_first, "returns float32 for float64 input"),
    ],
)
def test_a_layer_norm_in_another_dtype_than_its_input_is_named(
    fn: Callable[..., Tensor], words: str
) -> None:
    # The task names float32 inputs: a LayerNorm answers in its input's dtype (issue 40).
    report = checks.check_layer_norm_trailing_dims(fn)
    assert _named(report, words), report


def test_a_variance_that_cancels_is_named_even_when_it_cancels_differently() -> None:
    # Rounding noise differs from one way of writing E[x²] − E[x]² to another: the check
    # recognises the formula by its being right in float64 and wrong in float32.
    def cancelling(x: Tensor, g: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
        n = math.prod(g.shape)
        s1 = x.sum(_dims(g), keepdim=True)
        s2 = (x * x).sum(_dims(g), keepdim=True)
        var = s2 / n - (s1 / n) ** 2
        return g * (x - s1 / n) / (var + eps) ** 0.5 + b

    report = checks.check_layer_norm_trailing_dims(cancelling)
    assert _named(report, CANCELLING.name), report


def test_an_answer_that_edits_x_in_place_is_refused_although_its_result_is_right() -> None:
    def in_place(x: Tensor, g: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
        var, mean = torch.var_mean(x, dim=_dims(g), correction=0, keepdim=True)
        x -= mean
        return g * x / torch.sqrt(var + eps) + b

    report = checks.check_layer_norm_trailing_dims(in_place)
    assert not report.passed and "after the call `x` holds other numbers" in str(report), report
    assert "changed x in place" in str(report)


@pytest.mark.parametrize(
    "cheat",
    [
        lambda x, g, b, eps=1e-5: F.layer_norm(x, g.shape, g, b, eps),
        lambda x, g, b, eps=1e-5: torch.layer_norm(x, list(g.shape), g, b, eps),
        lambda x, g, b, eps=1e-5: torch.native_layer_norm(x, list(g.shape), g, b, eps)[0],
        lambda x, g, b, eps=1e-5: nn.LayerNorm(g.shape, eps=eps).to(x.dtype)(x) * g + b,
    ],
    ids=["F.layer_norm", "torch.layer_norm", "torch.native_layer_norm", "nn.LayerNorm"],
)
def test_a_layer_norm_that_calls_an_existing_one_is_refused(cheat: Callable[..., Tensor]) -> None:
    report = checks.check_layer_norm_trailing_dims(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 3: the residual block ----------------------------------------------------------


def block_both(x: Tensor, sublayer, norm, dropout, norm_first: bool) -> Tensor:
    pre = x + dropout(sublayer(norm(x)))
    post = norm(x + dropout(sublayer(x)))
    return pre if norm_first else post


def block_steps(x: Tensor, sublayer, norm, dropout, norm_first: bool) -> Tensor:
    h = norm(x) if norm_first else x
    h = x + dropout(sublayer(h))
    if not norm_first:
        h = norm(h)
    return h


RESIDUAL_RIGHT = {
    "both computed": block_both,
    "step by step": block_steps,
    "a conditional expression": lambda x, f, n, d, pre: (
        x + d(f(n(x))) if pre else n(torch.add(x, d(f(x))))
    ),
}

RESIDUAL_WRONG = {
    "the flag read backwards": (
        lambda x, f, n, d, pre: block_both(x, f, n, d, not pre),
        "swapped the two wirings",
    ),
    "post-norm always": (lambda x, f, n, d, pre: n(x + d(f(x))), "always used post-norm"),
    "pre-norm always": (lambda x, f, n, d, pre: x + d(f(n(x))), "always used pre-norm"),
    "LN(x) on the skip": (
        lambda x, f, n, d, pre: (lambda h: h + d(f(h)))(n(x)) if pre else n(x + d(f(x))),
        "carried the normalised x",
    ),
    "post-norm on the sublayer only": (
        lambda x, f, n, d, pre: x + d(f(n(x))) if pre else x + n(d(f(x))),
        "normalised the sublayer's output instead of the sum",
    ),
    "pre-norm normalises the output": (
        lambda x, f, n, d, pre: x + n(d(f(x))) if pre else n(x + d(f(x))),
        "normalised the sublayer's output instead of its input",
    ),
    "post-norm without its norm": (
        lambda x, f, n, d, pre: x + d(f(n(x) if pre else x)),
        "in post-norm, left out the LayerNorm",
    ),
    "post-norm LN(x) + f(x)": (
        lambda x, f, n, d, pre: x + d(f(n(x))) if pre else n(x) + d(f(x)),
        "normalised x and then added",
    ),
    "post-norm sublayer reads LN(x)": (
        lambda x, f, n, d, pre: x + d(f(n(x))) if pre else n(x + d(f(n(x)))),
        "gave the sublayer the normalised x",
    ),
    "pre-norm normalises the sum too": (
        lambda x, f, n, d, pre: n(x + d(f(n(x)))) if pre else n(x + d(f(x))),
        "normalised the sum as well",
    ),
    "dropout on the sum": (
        lambda x, f, n, d, pre: d(x + f(n(x))) if pre else n(d(x + f(x))),
        "skip path included",
    ),
    "dropout on the input": (
        lambda x, f, n, d, pre: x + f(d(n(x))) if pre else n(x + f(d(x))),
        "to the sublayer's input",
    ),
    "dropout on x before the norm": (
        lambda x, f, n, d, pre: (
            (lambda dropped: x + f(n(dropped)))(d(x)) if pre else n(x + f(d(x)))
        ),
        "before the norm",
    ),
    "dropout last": (
        lambda x, f, n, d, pre: d(x + f(n(x))) if pre else d(n(x + f(x))),
        "to the block's output",
    ),
    "no dropout": (lambda x, f, n, d, pre: x + f(n(x)) if pre else n(x + f(x)), "left dropout"),
    "dropout twice": (
        lambda x, f, n, d, pre: block_both(x, f, n, lambda t: d(d(t)), pre),
        "applied dropout twice",
    ),
    "F.layer_norm": (
        lambda x, f, n, d, pre: block_both(x, f, lambda t: F.layer_norm(t, (t.shape[-1],)), d, pre),
        "a LayerNorm of your own",
    ),
    "no skip": (lambda x, f, n, d, pre: d(f(n(x))) if pre else n(d(f(x))), "left out the skip"),
}


@pytest.mark.parametrize("name", RESIDUAL_RIGHT)
def test_right_residual_blocks_pass(name: str) -> None:
    report = checks.check_residual_block_with_dropout(RESIDUAL_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", RESIDUAL_WRONG)
def test_each_residual_mistake_is_caught_and_named(name: str) -> None:
    fn, words = RESIDUAL_WRONG[name]
    report = checks.check_residual_block_with_dropout(fn)
    assert not report.passed
    assert words in str(report), report


def test_a_mistake_in_each_wiring_names_the_first_failing_ones() -> None:
    def two_mistakes(x: Tensor, f, n, d, pre: bool) -> Tensor:
        return x + f(n(x)) if pre else n(x) + d(f(x))  # no dropout; LN(x) + f(x)

    report = checks.check_residual_block_with_dropout(two_mistakes)
    assert "case 'post-norm, x of shape (2, 3, 6)'" in str(report)
    assert "normalised x and then added" in str(report), report


def test_a_block_that_uses_attnlib_residual_is_refused() -> None:
    def wrapped(x: Tensor, sublayer, norm, dropout, norm_first: bool) -> Tensor:
        block = attnlib.Residual(x.shape[-1], norm_first=norm_first).to(x.dtype)
        block.norm, block.dropout = norm, dropout
        return block(x, sublayer)

    report = checks.check_residual_block_with_dropout(wrapped)
    assert not report.passed and "attnlib.Residual" in str(report), report


# -- every exercise ----------------------------------------------------------------------------

CHECKERS = {
    "ex1_gated_feed_forward": checks.check_gated_feed_forward,
    "ex2_layer_norm": checks.check_layer_norm_trailing_dims,
    "ex3_residual_block": checks.check_residual_block_with_dropout,
}
WRONG = {
    "ex1_gated_feed_forward": GATED_WRONG,
    "ex2_layer_norm": LN_WRONG,
    "ex3_residual_block": RESIDUAL_WRONG,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    for mistake in known_mistakes(exercise_id):
        report = CHECKERS[exercise_id](mistake.fn)
        assert _named(report, mistake.name), (mistake.name, str(report))


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_each_entry_of_the_table_is_made_again_here(exercise_id: str) -> None:
    table = [m.name for m in known_mistakes(exercise_id)]
    for _, words in WRONG[exercise_id].values():
        assert sum(words in name for name in table) == 1, words
    assert len(table) == len(WRONG[exercise_id])


NOTEBOOK_08 = sorted(i for i, exercise in all_exercises().items() if exercise.notebook == "08")


def test_notebook_08_has_five_exercises() -> None:
    assert NOTEBOOK_08 == [
        "ex1_gated_feed_forward",
        "ex2_layer_norm",
        "ex3_residual_block",
        "ex4_my_encoder_layer",
        "ex5_my_decoder_layer",
    ]


@pytest.mark.parametrize("exercise_id", NOTEBOOK_08)
def test_hints_of_notebook_08_come_in_levels_without_code(exercise_id: str) -> None:
    exercise = all_exercises()[exercise_id]
    assert len(exercise.hints) == 3
    for hint in exercise.hints:
        for code in ("torch.", "F.", " @ ", "keepdim=", "(dim=", "return ", ".mean(", "lambda"):
            assert code not in hint, (exercise_id, code, hint)
