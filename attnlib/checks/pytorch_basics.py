"""Checkers for the tensor exercises of the PyTorch primer: ``dim``/``keepdim``, batched
matrix products, ``nn.Linear``'s formula and cross-entropy (autograd and the optimizer
step are in :mod:`attnlib.checks.pytorch_training`).

Each checker runs the learner's function on several float64 cases and compares it with an
independent reference (a loop over rows, ``torch.einsum``, ``F.linear``,
``F.cross_entropy``). When a result is wrong, it recomputes the usual mistakes from the same
inputs (a wrong ``dim``, a missing ``keepdim``, a forgotten transpose or bias, the log of a
softmax, ...) and names the one the result matches.

Notebook 00.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from attnlib.checks._framework import (
    Case,
    CheckResult,
    compare_outputs,
    fixed_generator,
    not_done,
    randn64,
)

ATOL, RTOL = 1e-7, 1e-6


def _copies(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def failed(name: str, case: str, problem: str, hint: str) -> CheckResult:
    """A failed check's report: the case, what is wrong, and a hint."""
    return CheckResult(name, False, f"✗ {name}, case '{case}': {problem}\n  hint: {hint}")


def _same(got: Any, wrong: Callable[..., Any], args: tuple[Any, ...]) -> bool:
    """Whether ``got`` is what the wrong formula returns on these inputs."""
    try:
        expected = wrong(*_copies(args))
    except Exception:
        return False
    if expected is None or got is None:
        return expected is None and got is None
    return compare_outputs(got, expected, "", ATOL, RTOL) is None


def _same_error(error: Exception, wrong: Callable[..., Any], args: tuple[Any, ...]) -> bool:
    """Whether the wrong formula raises the very error the learner's function raised."""
    try:
        wrong(*_copies(args))
    except Exception as other:
        return type(other) is type(error) and str(other) == str(error)
    return False


def run_with_mistakes(
    name: str,
    fn: Callable[..., Any],
    cases: list[Case],
    mistakes: dict[str, Callable[..., Any]],
    hints: dict[str, str],
) -> CheckResult:
    """Run ``fn`` on each case; on a mismatch, name the usual mistake it matches, if any.

    ``mistakes`` maps a mistake's label to what it returns from a case's inputs; ``hints``
    maps each label, or a case description, to its hint. ``"default"`` is required and
    ``"raised"`` is used when the learner's function raises an error no mistake explains.
    """
    if not callable(fn):
        return CheckResult(name, False, f"✗ {name}: expected a function, got {type(fn).__name__}")
    for case in cases:
        try:
            got = fn(*_copies(case.args))
        except NotImplementedError as error:
            return not_done(name, fn, error)
        except Exception as error:  # the learner's bug, explained rather than raised
            raised = f"your function raised {type(error).__name__}: {error}"
            for label, wrong in mistakes.items():
                if _same_error(error, wrong, case.args):
                    problem = f"{raised}. That is what {label} does"
                    return failed(name, case.description, problem, hints[label])
            return failed(name, case.description, raised, hints.get("raised", hints["default"]))
        problem = compare_outputs(got, case.expected, "the result", ATOL, RTOL)
        if problem is None:
            continue
        for label, wrong in mistakes.items():
            if _same(got, wrong, case.args):
                problem = f"{problem}. That is what {label} gives"
                return failed(name, case.description, problem, hints[label])
        hint = hints.get(case.description, hints["default"])
        return failed(name, case.description, problem, hint)
    return CheckResult(name, True, f"✓ {name} is correct on all {len(cases)} cases.")


# --- dim and keepdim -----------------------------------------------------------------------


def _rows_one_by_one(x: torch.Tensor) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1])
    return torch.stack([row / row.sum() for row in rows]).reshape(x.shape)


def check_row_normalise(fn: Callable[[torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``row_normalise(x)``: each row (along the last dim) divided by its own sum."""
    g = fixed_generator()
    square = torch.arange(1.0, 10.0, dtype=torch.float64).reshape(3, 3)
    wide = torch.rand(2, 4, generator=g, dtype=torch.float64) + 0.5
    batch = torch.rand(2, 3, 4, generator=g, dtype=torch.float64) + 0.5
    cases = [
        Case(description, (x,), _rows_one_by_one(x))
        for description, x in [
            ("a 3×3 matrix", square),
            ("a 2×4 matrix", wide),
            ("a batch of shape (2, 3, 4)", batch),
        ]
    ]
    mistakes = {
        "a missing keepdim=True": lambda x: x / x.sum(dim=-1),
        "summing over dim=0": lambda x: x / x.sum(dim=0, keepdim=True),
        "summing over dim=1": lambda x: x / x.sum(dim=1, keepdim=True),
        "dividing by the sum of the whole tensor": lambda x: x / x.sum(),
    }
    hints = {
        "default": "return x / x.sum(dim=-1, keepdim=True): every row then sums to 1.",
        "a missing keepdim=True": "x.sum(dim=-1) drops the summed dim, so its (T,) sums line "
        "up with the columns of (T, N), not the rows (or fail to broadcast). keepdim=True "
        "keeps a size-1 dim: (T, N) / (T, 1) divides each row by its own sum.",
        "summing over dim=0": "dim=0 adds down each column. A row's entries run along the "
        "last dim: x.sum(dim=-1, keepdim=True).",
        "summing over dim=1": "dim=1 is the last dim only for a matrix; for a batch (B, T, N) "
        "it runs over T. dim=-1 is the last dim whatever the shape.",
        "dividing by the sum of the whole tensor": "x.sum() with no dim adds every entry; "
        "each row needs its own sum: x.sum(dim=-1, keepdim=True).",
    }
    return run_with_mistakes("row_normalise", fn, cases, mistakes, hints)


# --- batched matrix products and nn.Linear -------------------------------------------------


def check_batched_scores(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``batched_scores(q, k)``: every query against every key, ``(B, T, S)``."""
    g = fixed_generator()
    cases = []
    for description, q_shape, k_shape in [
        ("q and k of shape (2, 4, 4)", (2, 4, 4), (2, 4, 4)),
        ("2 queries against 5 keys: (1, 2, 3) and (1, 5, 3)", (1, 2, 3), (1, 5, 3)),
        ("a batch of 3: (3, 4, 2) and (3, 6, 2)", (3, 4, 2), (3, 6, 2)),
    ]:
        q, k = randn64(*q_shape, generator=g), randn64(*k_shape, generator=g)
        cases.append(Case(description, (q, k), torch.einsum("btd,bsd->bts", q, k)))
    mistakes = {
        "forgetting the transpose (q @ k)": lambda q, k: q @ k,
        "putting the keys first (k @ q.transpose(-2, -1))": lambda q, k: k @ q.transpose(-2, -1),
        "pairing query t with key t only ((q * k).sum(-1))": lambda q, k: (q * k).sum(-1),
    }
    hints = {
        "default": "return q @ k.transpose(-2, -1): shape (B, T, S).",
        "raised": "k.T and k.transpose(0, 1) move the batch dim too: for (B, S, D) keys swap "
        "only the last two dims, k.transpose(-2, -1) -> (B, D, S).",
        "forgetting the transpose (q @ k)": "score[t, s] = q[t] · k[s], so the keys must "
        "stand as columns: q @ k.transpose(-2, -1), (B, T, D) @ (B, D, S) -> (B, T, S).",
        "putting the keys first (k @ q.transpose(-2, -1))": "that puts the keys on the rows, "
        "(B, S, T): the queries go first, q @ k.transpose(-2, -1).",
        "pairing query t with key t only ((q * k).sum(-1))": "(q * k).sum(-1) gives one "
        "score per position; attention needs every query against every key, a matrix "
        "product: q @ k.transpose(-2, -1).",
    }
    return run_with_mistakes("batched_scores", fn, cases, mistakes, hints)


def check_linear(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``linear(x, weight, bias)`` against ``F.linear``: ``x @ weight.T + bias``."""
    g = fixed_generator()
    cases = []
    for description, x_shape, out_features in [
        ("a square weight (3, 3) on 2 inputs", (2, 3), 3),
        ("3 -> 4 features on 5 inputs", (5, 3), 4),
        ("a batch (2, 3, 3) -> 2 features", (2, 3, 3), 2),
    ]:
        x = randn64(*x_shape, generator=g)
        weight = randn64(out_features, x_shape[-1], generator=g)
        bias = randn64(out_features, generator=g)
        cases.append(Case(description, (x, weight, bias), F.linear(x, weight, bias)))
    mistakes = {
        "forgetting the transpose (x @ weight + bias)": lambda x, w, b: x @ w + b,
        "forgetting the bias": lambda x, w, b: x @ w.T,
        "weight @ x.T + bias[:, None]": lambda x, w, b: w @ x.T + b[:, None],
    }
    hints = {
        "default": "return x @ weight.T + bias.",
        "raised": "x is (..., in_features), weight (out_features, in_features), bias "
        "(out_features,): x @ weight.T + bias is (..., out_features).",
        "forgetting the transpose (x @ weight + bias)": "nn.Linear stores weight as "
        "(out_features, in_features); x ends in in_features, so x @ weight.T: "
        "(..., in) @ (in, out).",
        "forgetting the bias": "add the bias after the product: x @ weight.T + bias "
        "(it broadcasts over the rows).",
        "weight @ x.T + bias[:, None]": "that is the answer transposed, (out, N): keep one "
        "row per input, x @ weight.T + bias.",
    }
    return run_with_mistakes("linear", fn, cases, mistakes, hints)


# --- cross-entropy -------------------------------------------------------------------------


def _pick(log_p: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return log_p[torch.arange(len(targets)), targets]


def check_cross_entropy(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``cross_entropy(logits, targets)`` for ``(N, V)`` logits against F.cross_entropy."""
    g = fixed_generator()
    small = torch.tensor([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]], dtype=torch.float64)
    random_logits, random_targets = randn64(8, 5, generator=g), torch.randint(5, (8,), generator=g)
    extreme = torch.tensor([[800.0, 0.0, 0.0], [1.0, 2.0, 3.0]], dtype=torch.float64)
    cases = [
        Case(description, (z, y), F.cross_entropy(z, y))
        for description, z, y in [
            ("2 rows of 3 classes", small, torch.tensor([0, 1])),
            ("8 rows of 5 classes", random_logits, random_targets),
            ("an extreme row, logits [800, 0, 0] with target 1", extreme, torch.tensor([1, 2])),
        ]
    ]
    mistakes = {
        "the log of softmax": lambda z, y: -_pick(torch.softmax(z, -1).log(), y).mean(),
        "a sum over the rows instead of the mean": lambda z, y: -_pick(z.log_softmax(-1), y).sum(),
        "forgetting the minus sign": lambda z, y: _pick(z.log_softmax(-1), y).mean(),
        "using the raw logits (no log_softmax)": lambda z, y: -_pick(z, y).mean(),
        "log_softmax over dim=0": lambda z, y: -_pick(z.log_softmax(0), y).mean(),
        "log_p[:, targets]": lambda z, y: -z.log_softmax(-1)[:, y].mean(),
    }
    hints = {
        "default": "log_p = logits.log_softmax(dim=-1); return "
        "-log_p[torch.arange(len(targets)), targets].mean().",
        "an extreme row, logits [800, 0, 0] with target 1": "exp(800) overflows: use "
        "logits.log_softmax(dim=-1), which never exponentiates a large number.",
        "the log of softmax": "softmax rounds a probability below about 1e-308 to exactly 0, "
        "and log(0) = -inf. logits.log_softmax(dim=-1) gives the same numbers without "
        "forming the tiny probability: it subtracts the log-sum-exp.",
        "a sum over the rows instead of the mean": "F.cross_entropy averages over the N rows: "
        ".mean(), not .sum().",
        "forgetting the minus sign": "log-probabilities are ≤ 0; the loss is their negative, "
        "so it is ≥ 0.",
        "using the raw logits (no log_softmax)": "a logit is not a log-probability: "
        "normalise first, logits.log_softmax(dim=-1).",
        "log_softmax over dim=0": "each row is one prediction over the V classes: "
        "log_softmax(dim=-1).",
        "log_p[:, targets]": "log_p[:, targets] takes every target for every row, (N, N). "
        "Pick one entry per row: log_p[torch.arange(N), targets].",
    }
    return run_with_mistakes("cross_entropy", fn, cases, mistakes, hints)
