"""Exercises whose task says the result keeps its input's dtype, as PyTorch's own functions do:
a right answer passes in that dtype, and the same answer with its result in another dtype is
named "returns <got> for <given> input" (issue 40: a float32 answer to float64 input, or a
float64 one to float16 logits, slipped through where the task asked for the input's dtype)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import Tensor

from attnlib import checks


def columns(x: Tensor) -> Tensor:
    return x / x.sum(dim=-2, keepdim=True)


def masked_loss(logits: Tensor, targets: Tensor, mask: Tensor) -> Tensor:
    shifted = logits - logits.amax(-1, keepdim=True)
    log_p = shifted - shifted.exp().sum(-1, keepdim=True).log()
    nll = -log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return nll[mask].sum() / mask.sum().clamp_min(1)


def dot(a: Tensor, b: Tensor) -> Tensor:
    return (a * b).sum(-1)


def cosine(a: Tensor, b: Tensor) -> Tensor:
    lengths = a.norm(dim=-1) * b.norm(dim=-1)
    safe = torch.where(lengths > 0, lengths, torch.ones_like(lengths))
    return torch.where(lengths > 0, (a * b).sum(-1) / safe, torch.zeros_like(lengths))


def softmax_formula(x: Tensor) -> Tensor:
    e = x.exp()
    return e / e.sum(-1, keepdim=True)


def temperature(z: Tensor, t: float) -> Tensor:
    shifted = z - z.amax(-1, keepdim=True)
    if t == 0:
        top = (shifted == 0).to(z.dtype)
        return top / top.sum(-1, keepdim=True)
    e = (shifted / t).exp()
    return e / e.sum(-1, keepdim=True)


def tiled(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, tile_size: int) -> Tensor:
    scale = q.shape[-1] ** -0.5
    m = torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype)
    ell = torch.zeros(q.shape[:-1], dtype=q.dtype)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype)
    for s in range(0, k.shape[-2], tile_size):
        scores = q @ k[..., s : s + tile_size, :].mT * scale  # (..., T_q, tile)
        if mask is not None:
            allowed = mask.expand(*scores.shape[:-1], mask.shape[-1])[..., s : s + tile_size]
            scores = scores.masked_fill(~allowed, float("-inf"))
        new_m = torch.maximum(m, scores.amax(-1))
        safe_m = torch.where(torch.isinf(new_m), torch.zeros_like(new_m), new_m)
        p = (scores - safe_m.unsqueeze(-1)).exp()
        factor = (m - safe_m).exp()
        ell = ell * factor + p.sum(-1)
        acc = acc * factor.unsqueeze(-1) + p @ v[..., s : s + tile_size, :]
        m = new_m
    return torch.where(ell.unsqueeze(-1) > 0, acc / ell.clamp_min(1e-300).unsqueeze(-1), 0.0)


# (checker, a right answer, the float dtype its wrong twin returns, the dtype the report names
# as the input's): each checker's cases hold inputs of that dtype.
KEEPS_DTYPE: dict[str, tuple[Callable, Callable, torch.dtype, str]] = {
    "00 Ex 1 normalise_columns": (
        checks.check_normalise_columns,
        columns,
        torch.float32,
        "float64",
    ),
    "00 Ex 4 masked_cross_entropy": (
        checks.check_masked_cross_entropy,
        masked_loss,
        torch.float32,
        "float64",
    ),
    "01 Ex 1 dot_product": (checks.check_dot_product, dot, torch.float32, "float64"),
    "01 Ex 2 cosine": (checks.check_cosine, cosine, torch.float32, "float64"),
    "02 Ex 1 softmax_from_formula": (
        checks.check_softmax_from_formula,
        softmax_formula,
        torch.float32,
        "float64",
    ),
    "10 Ex 4 my_temperature_probs": (
        checks.check_my_temperature_probs,
        temperature,
        torch.float64,
        "float32",
    ),
    "12 Ex 3 my_tiled_attention": (
        checks.check_my_tiled_attention,
        tiled,
        torch.float64,
        "float32",
    ),
}


@pytest.mark.parametrize("name", sorted(KEEPS_DTYPE))
def test_a_right_answer_in_its_inputs_dtype_passes(name: str) -> None:
    checker, right, _, _ = KEEPS_DTYPE[name]
    report = checker(right)
    assert report.passed, report


@pytest.mark.parametrize("name", sorted(KEEPS_DTYPE))
def test_a_result_in_another_dtype_is_named(name: str) -> None:
    checker, right, other, given = KEEPS_DTYPE[name]

    def in_another_dtype(*args: object) -> Tensor:
        return right(*args).to(other)

    report = checker(in_another_dtype)
    assert not report.passed and report.done, report
    got = str(other).removeprefix("torch.")
    assert f"The mistake: returns {got} for {given} input" in str(report), report
