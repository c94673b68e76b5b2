"""Checkers for the exercises of notebooks 09–10: training losses, schedules and sampling."""

from __future__ import annotations

from collections.abc import Callable

import torch

from attnlib.checks import CheckResult
from attnlib.checks._framework import Case, compare_outputs, fixed_generator, run_cases
from attnlib.checks.sampling_mistakes import TOP_K_MISTAKES
from attnlib.training import label_smoothed_cross_entropy, warmup_inverse_sqrt


def check_label_smoothed_loss(
    fn: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor],
) -> CheckResult:
    """Check ``loss(logits, target, smoothing)``: (1-ε)·NLL + ε·mean over classes of -log p."""
    g = fixed_generator()
    logits = torch.randn(6, 5, generator=g, dtype=torch.float64)
    target = torch.randint(5, (6,), generator=g)
    cases = [
        Case(f"ε = {eps}", (logits, target, eps), label_smoothed_cross_entropy(logits, target, eps))
        for eps in (0.0, 0.1, 0.3)
    ]
    hints = {
        "default": "log_p = logits.log_softmax(-1); nll = -log_p.gather(1, target[:, None]); "
        "uniform = -log_p.mean(-1); return ((1 - ε) * nll[:, 0] + ε * uniform).mean().",
        "ε = 0.0": "with ε = 0 this is plain cross-entropy: the mean of -log p[target].",
    }
    return run_cases("label_smoothed_loss", fn, cases, hints, atol=1e-7)


def check_warmup_schedule(fn: Callable[[int, int, int], float]) -> CheckResult:
    """Check ``lr(step, d_model, warmup)`` = d^-0.5 · min(step^-0.5, step · warmup^-1.5)."""
    cases = [
        Case(
            f"step {step}, d_model 512, warm-up 4000",
            (step, 512, 4000),
            torch.tensor(warmup_inverse_sqrt(step, 512, 4000), dtype=torch.float64),
        )
        for step in (1, 100, 4000, 20000)
    ]
    hints = {
        "default": "d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5): the second "
        "term wins while step < warmup (linear rise), the first after it (1/√step decay).",
    }
    return run_cases("warmup_schedule", fn, cases, hints, atol=1e-12, rtol=1e-9)


def check_temperature_probs(fn: Callable[[torch.Tensor, float], torch.Tensor]) -> CheckResult:
    """Check ``probs(logits, temperature)`` = softmax(logits / temperature) over the last dim."""
    g = fixed_generator()
    logits = torch.randn(2, 7, generator=g, dtype=torch.float64) * 3
    cases = [
        Case(f"temperature {t}", (logits, t), torch.softmax(logits / t, dim=-1))
        for t in (1.0, 0.5, 2.0)
    ]
    hints = {"default": "divide the logits by the temperature, then softmax over dim=-1."}
    return run_cases("temperature_probs", fn, cases, hints)


def check_top_k_logits(fn: Callable[[torch.Tensor, int], torch.Tensor]) -> CheckResult:
    """Check ``top_k(logits, k)``: keep the k largest logits per row, set the rest to -inf.

    A failure is named when the learner's results match one of
    :data:`attnlib.checks.sampling_mistakes.TOP_K_MISTAKES` in every case.
    """
    g = fixed_generator()
    logits = torch.randn(3, 8, generator=g, dtype=torch.float64)
    cases = []
    for k in (1, 3, 8):
        kth = logits.topk(k, dim=-1).values[:, -1:]
        cases.append(Case(f"k = {k}", (logits, k), logits.masked_fill(logits < kth, -torch.inf)))
    hints = {
        "default": "kth = logits.topk(k, dim=-1).values[:, -1:] is each row's k-th largest "
        "logit; logits.masked_fill(logits < kth, -torch.inf) removes the rest.",
        "raised": "each row's k-th largest logit, logits.topk(k, dim=-1).values[:, -1:], has "
        "shape (B, 1) and so compares with its own row; values[:, -1] has shape (B,).",
    }
    result = run_cases("top_k_logits", fn, cases, hints)
    if result.passed or not result.done or "your function raised" in result.message:
        return result
    cause = _top_k_mistake(fn, cases)
    if cause is None:
        return result
    report, hint = result.message.split("\n  hint: ", 1)
    return CheckResult(
        result.name, False, f"{report}\n  likely cause: {cause}\n  hint: {hint}", result.done
    )


def _top_k_mistake(
    fn: Callable[[torch.Tensor, int], torch.Tensor], cases: list[Case]
) -> str | None:
    """The first usual mistake whose results equal the learner's in every case."""
    try:
        outputs = [fn(logits.clone(), k) for logits, k in (case.args for case in cases)]
    except Exception:  # a learner's function that raises on a case matches no mistake
        return None
    for mistake, wrong in TOP_K_MISTAKES.items():
        if all(
            compare_outputs(out, wrong(*case.args), "", atol=1e-5, rtol=1e-4) is None
            for out, case in zip(outputs, cases, strict=True)
        ):
            return mistake
    return None
