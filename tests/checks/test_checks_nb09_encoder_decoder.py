"""Notebook 09's checkers against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table),
and must be caught and named; right answers written differently from the worked solution
(a target built as a tensor or written out term by term, loops, NumPy, tensors, a batched beam
search) must pass; answers that call attnlib's implementation, PyTorch's cross_entropy or a
learning-rate scheduler must be refused.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.checks.nb09_encoder_decoder import beam, toys
from attnlib.checks.nb09_encoder_decoder.beam_rules import RIGHT, Rules, plain_beam_search

Tensor = torch.Tensor


def _named(report: object, words: str) -> bool:
    return words in str(report) and "The mistake:" in str(report)


# -- Exercise 1: the smoothed loss ----------------------------------------------------------------


def loss_from_q(logits: Tensor, target: Tensor, eps: float, pad: int) -> Tensor:
    V = logits.shape[-1]
    q = torch.full(logits.shape, eps / (V - 2), dtype=logits.dtype)
    q = torch.where(F.one_hot(target, V).bool(), 1 - eps, q)
    q[..., pad] = 0
    per = -(q * F.log_softmax(logits, dim=2)).sum(2)
    mask = (target != pad).to(per.dtype)
    return (per * mask).sum() / mask.sum()


def loss_term_by_term(logits: Tensor, target: Tensor, eps: float, pad: int) -> Tensor:
    nll = -logits.log_softmax(-1)
    right = nll.gather(2, target[..., None]).squeeze(2)
    rest = nll.sum(-1) - right - nll[:, :, pad]
    per = (1 - eps) * right + eps / (logits.size(-1) - 2) * rest
    return per.masked_select(target.ne(pad)).mean()


def loss_in_a_loop(logits: Tensor, target: Tensor, eps: float, pad: int) -> float:
    total, count, V = 0.0, 0, logits.shape[-1]
    for b in range(logits.shape[0]):
        for t in range(logits.shape[1]):
            y = int(target[b, t])
            if y == pad:
                continue
            row = logits[b, t].double()
            log_p = row - row.max() - torch.log(torch.exp(row - row.max()).sum())
            q = [0.0 if k == pad else 1 - eps if k == y else eps / (V - 2) for k in range(V)]
            total -= sum(qk * float(lp) for qk, lp in zip(q, log_p, strict=True))
            count += 1
    return total / count


SMOOTHING_RIGHT: dict[str, Callable[..., Any]] = {
    "a target tensor built with one_hot": loss_from_q,
    "term by term": loss_term_by_term,
    "a loop returning a float": loss_in_a_loop,
    "in float64, back in the logits' dtype": lambda x, y, e, p: loss_from_q(x.double(), y, e, p).to(
        x.dtype
    ),
    "logsumexp": lambda x, y, e, p: loss_term_by_term(x - x.logsumexp(-1, keepdim=True), y, e, p),
}


def _masked_mean(per: Tensor, target: Tensor, pad: int) -> Tensor:
    return per[target != pad].mean()


def _per_position(logits: Tensor, target: Tensor, eps: float, pad: int, **how: Any) -> Tensor:
    """A learner's per-position loss with one thing done their way."""
    V = logits.shape[-1]
    log_p = how.get("log_p", lambda x: x.log_softmax(-1))(logits)
    right_share, other = how.get("shares", (1 - eps, eps / (V - 2)))
    q = torch.ones_like(log_p) * other
    q.scatter_(-1, target.unsqueeze(-1), right_share)
    if how.get("zero_pad", True):
        q[..., pad] = 0
    return -(q * log_p).sum(-1)


def kl_instead(x: Tensor, y: Tensor, e: float, p: int) -> Tensor:
    V = x.shape[-1]
    q = torch.where(F.one_hot(y, V).bool(), 1 - e, e / (V - 2)).double()
    q[..., p] = 0
    kl = F.kl_div(x.double().log_softmax(-1), q, reduction="none").sum(-1)
    return kl[y != p].mean()


def unmasked_term_by_term(x: Tensor, y: Tensor, e: float, p: int) -> Tensor:
    nll = -x.log_softmax(-1)
    right = nll.gather(-1, y[..., None])[..., 0]
    per = (1 - e) * right + e / (x.shape[-1] - 2) * (nll.sum(-1) - right - nll[..., p])
    return per.mean()


def shares(right: Callable[[float, int], float], other: Callable[[float, int], float], **how: Any):
    """A learner's loss whose target gives the right token right(ε, V), the others other(ε, V)."""

    def loss(x: Tensor, y: Tensor, e: float, p: int) -> Tensor:
        V = x.shape[-1]
        per = _per_position(x, y, e, p, shares=(right(e, V), other(e, V)), **how)
        return _masked_mean(per, y, p)

    return loss


def column_0_zeroed(x: Tensor, y: Tensor, e: float, p: int) -> Tensor:
    V = x.shape[-1]
    q = torch.full_like(x, e / (V - 2)).scatter(-1, y[..., None], 1 - e)
    q[:, :, 0] = 0.0  # the tokenizer's <pad> is 0
    per = -(q * x.log_softmax(-1)).sum(-1)
    return per[y != p].mean()


SMOOTHING_WRONG: dict[str, tuple[Callable[..., Any], str]] = {
    "divided by the count + 1": (
        lambda x, y, e, p: (
            ((per := _per_position(x, y, e, p)) * (keep := (y != p).to(per.dtype))).sum()
            / (keep.sum() + 1)
        ),
        "added a number to the count",
    ),
    "log of softmax": (
        lambda x, y, e, p: _masked_mean(
            _per_position(x, y, e, p, log_p=lambda z: torch.log(torch.softmax(z, dim=-1))), y, p
        ),
        "logarithm of the softmax",
    ),
    "log-sum-exp by hand, no shift": (
        lambda x, y, e, p: _masked_mean(
            _per_position(
                x, y, e, p, log_p=lambda z: z - torch.log(torch.exp(z).sum(2))[..., None]
            ),
            y,
            p,
        ),
        "without subtracting the largest logit",
    ),
    "the lesson's q": (
        lambda x, y, e, p: _masked_mean(
            (1 - e) * -x.log_softmax(-1).gather(-1, y[..., None])[..., 0]
            + e * -x.log_softmax(-1).mean(-1),
            y,
            p,
        ),
        "spread ε over all V tokens",
    ),
    "ε / V": (shares(lambda e, V: 1 - e, lambda e, V: e / V), "ε / V"),
    "ε / (V - 1)": (shares(lambda e, V: 1 - e, lambda e, V: e / (V - 1)), "ε / (V − 1)"),
    "pad gets a share": (
        shares(lambda e, V: 1 - e, lambda e, V: e / (V - 1), zero_pad=False),
        "gave <pad> a share",
    ),
    "pad keeps its share": (
        shares(lambda e, V: 1 - e, lambda e, V: e / (V - 2), zero_pad=False),
        "gave <pad> the same share ε / (V − 2)",
    ),
    "pad's term left in, term by term": (
        lambda x, y, e, p: _masked_mean(
            (1 - e) * (nll := -x.log_softmax(-1)).gather(-1, y[..., None])[..., 0]
            + e / (x.shape[-1] - 2) * (nll.sum(-1) - nll.gather(-1, y[..., None])[..., 0]),
            y,
            p,
        ),
        "gave <pad> the same share ε / (V − 2)",
    ),
    "1 − ε added to the right token's share": (
        shares(lambda e, V: 1 - e + e / (V - 2), lambda e, V: e / (V - 2)),
        "1 − ε on top of its share",
    ),
    "raw logits": (
        lambda x, y, e, p: _masked_mean(_per_position(x, y, e, p, log_p=lambda z: z), y, p),
        "used the raw logits as log-probabilities",
    ),
    "the right token shares too": (
        shares(lambda e, V: 1 - e + e / (V - 1), lambda e, V: e / (V - 1)),
        "the right one included",
    ),
    "swapped": (shares(lambda e, V: e, lambda e, V: (1 - e) / (V - 2)), "put ε on the right token"),
    "no mask": (lambda x, y, e, p: _per_position(x, y, e, p).mean(), "padding included"),
    "no mask, term by term": (unmasked_term_by_term, "padding included"),
    "mask in the numerator only": (
        lambda x, y, e, p: (_per_position(x, y, e, p) * (y != p)).mean(),
        "divided by the number of all positions",
    ),
    "mean of the sentences' means": (
        lambda x, y, e, p: torch.stack(
            [_masked_mean(_per_position(x, y, e, p)[b], y[b], p) for b in range(x.shape[0])]
        ).mean(),
        "averaged each sequence first",
    ),
    "sum": (lambda x, y, e, p: _per_position(x, y, e, p)[y != p].sum(), "summed"),
    "kl_div": (kl_instead, "KL divergence"),
    "no minus": (lambda x, y, e, p: -loss_from_q(x, y, e, p), "minus sign"),
    "no smoothing": (
        lambda x, y, e, p: F.nll_loss(x.log_softmax(-1).flatten(0, 1), y.flatten(), ignore_index=p),
        "plain cross-entropy",
    ),
    "dim=1": (
        lambda x, y, e, p: _masked_mean(
            _per_position(x, y, e, p, log_p=lambda z: z.log_softmax(1)), y, p
        ),
        "along the positions",
    ),
    "pad is 0": (lambda x, y, e, p: loss_from_q(x, y, e, 0), "token 0 as <pad>"),
    "column 0 of q zeroed": (column_0_zeroed, "zeroed token 0's share of q instead of pad_id's"),
}


@pytest.mark.parametrize("name", SMOOTHING_RIGHT)
def test_right_smoothed_losses_pass(name: str) -> None:
    report = checks.check_smoothed_loss(SMOOTHING_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", SMOOTHING_WRONG)
def test_each_smoothing_mistake_is_caught_and_named(name: str) -> None:
    fn, words = SMOOTHING_WRONG[name]
    report = checks.check_smoothed_loss(fn)
    assert not report.passed
    assert _named(report, words), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda x, y, e, p: (
            attnlib.label_smoothed_cross_entropy(x, y, e, p) * 0 + loss_from_q(x, y, e, p)
        ),
        lambda x, y, e, p: F.cross_entropy(
            x.flatten(0, 1), y.flatten(), ignore_index=p, label_smoothing=e
        ),
        lambda x, y, e, p: torch.nn.CrossEntropyLoss(ignore_index=p)(x.transpose(1, 2), y),
    ],
    ids=["attnlib", "F.cross_entropy", "nn.CrossEntropyLoss"],
)
def test_a_loss_that_calls_an_existing_one_is_refused(cheat: Callable[..., Any]) -> None:
    report = checks.check_smoothed_loss(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 2: the schedule ---------------------------------------------------------------------


def schedule_by_cases(step: int, peak: float, warmup: int, n: int, floor: float) -> float:
    if step <= warmup:
        return peak * step / warmup
    if step >= n:
        return peak * floor
    done = (step - warmup) / (n - warmup)
    return peak * (1 - done) + peak * floor * done


SCHEDULE_RIGHT: dict[str, Callable[..., Any]] = {
    "if / else": schedule_by_cases,
    "numpy": lambda s, peak, w, n, f: peak * np.minimum(s / w, np.interp(s, [w, n], [1.0, f])),
    "a 0-dim tensor": lambda s, peak, w, n, f: (
        peak
        * torch.minimum(
            torch.tensor(s / w, dtype=torch.float64),
            torch.tensor(1 - (1 - f) * (s - w) / (n - w), dtype=torch.float64).clamp_min(f),
        )
    ),
    "an int step with float()": lambda s, peak, w, n, f: float(
        schedule_by_cases(int(s), peak, w, n, f)
    ),
}


def _line(s: float, peak: float, w: int, n: int, f: float) -> float:
    return peak * (1 - (1 - f) * (s - w) / (n - w))


def absolute_floor(s: float, peak: float, w: int, n: int, f: float) -> float:
    if s <= w:
        return peak * s / w
    return max(f, peak + (f - peak) * (s - w) / (n - w))


def test_a_float32_loss_for_float64_logits_is_named() -> None:
    # The task names both dtypes: the loss comes back in the logits' own (issue 40).
    report = checks.check_smoothed_loss(lambda x, y, e, p: loss_from_q(x.float(), y, e, p))
    assert _named(report, "returns float32 for float64 input"), report


SCHEDULE_WRONG: dict[str, tuple[Callable[..., Any], str]] = {
    "warm-up times a decay to the floor from step 0": (
        lambda s, peak, w, n, f: peak * min(s / w, 1) * (1 - (1 - f) * min(s / n, 1)),
        "a decay that starts at the first step",
    ),
    "§6's product": (
        lambda s, peak, w, n, f: peak * min(1.0, s / w) * max(f, 1.0 - (s - 1) / n),
        "as §6's loop does",
    ),
    "floor in the warm-up": (
        lambda s, peak, w, n, f: max(peak * f, schedule_by_cases(s, peak, w, n, f)),
        "during the warm-up too",
    ),
    "decay from step 0": (
        lambda s, peak, w, n, f: (
            peak * s / w if s <= w else max(peak * f, peak - peak * (1 - f) * s / n)
        ),
        "start at step 0",
    ),
    "line to zero": (
        lambda s, peak, w, n, f: (
            peak * s / w if s <= w else max(peak * f, peak * (n - s) / (n - w))
        ),
        "reach 0 at n_steps",
    ),
    "over n_steps": (
        lambda s, peak, w, n, f: (
            peak * s / w if s < w else max(peak * f, peak - peak * (1 - f) * (s - w) / n)
        ),
        "instead of by its length",
    ),
    "step + 1": (
        lambda s, peak, w, n, f: schedule_by_cases(s + 1, peak, w, n, f),
        "one step early",
    ),
    "step - 1": (lambda s, peak, w, n, f: schedule_by_cases(s - 1, peak, w, n, f), "one step late"),
    "no floor": (
        lambda s, peak, w, n, f: peak * s / w if s <= w else _line(s, peak, w, n, f),
        "left out the floor",
    ),
    "max of the lines": (
        lambda s, peak, w, n, f: max(peak * s / w, _line(s, peak, w, n, f), peak * f),
        "larger of the rising and the falling line",
    ),
    "absolute floor": (absolute_floor, "floor as a learning rate"),
    "line to floor · peak, held at floor": (
        lambda s, peak, w, n, f: peak * s / w if s <= w else max(_line(s, peak, w, n, f), f),
        "floor as a learning rate",
    ),
    "np.interp to floor itself": (
        lambda s, peak, w, n, f: float(np.interp(s, [0, w, n], [0, peak, f])),
        "floor as a learning rate",
    ),
    "§6's product, 1 − step / n": (
        lambda s, peak, w, n, f: min(peak * s / w, peak) * max(f, 1 - s / n),
        "as §6's loop does",
    ),
    "1/sqrt tail": (
        lambda s, peak, w, n, f: peak * s / w if s <= w else max(peak * f, peak * math.sqrt(w / s)),
        "1/√step",
    ),
    "1/sqrt with the floor around everything": (
        lambda s, peak, w, n, f: max(peak * f, min(peak * s / w, peak * math.sqrt(w / s))),
        "1/√step",
    ),
    "cosine": (
        lambda s, peak, w, n, f: (
            peak * s / w
            if s <= w
            else peak * f
            + (peak - peak * f) * 0.5 * (1 + math.cos(math.pi * min(s - w, n - w) / (n - w)))
        ),
        "along a cosine",
    ),
    "//": (
        lambda s, peak, w, n, f: min(peak * (s // w), max(peak * f, _line(s, peak, w, n, f))),
        "divided with //",
    ),
    "rising line": (
        lambda s, peak, w, n, f: min(
            peak * s / w, max(peak * f, peak * (1 + (1 - f) * (s - w) / (n - w)))
        ),
        "rise instead of fall",
    ),
}


@pytest.mark.parametrize("name", SCHEDULE_RIGHT)
def test_right_schedules_pass(name: str) -> None:
    report = checks.check_warmup_linear_decay(SCHEDULE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", SCHEDULE_WRONG)
def test_each_schedule_mistake_is_caught_and_named(name: str) -> None:
    fn, words = SCHEDULE_WRONG[name]
    report = checks.check_warmup_linear_decay(fn)
    assert not report.passed
    assert _named(report, words), report


def schedule_from_a_scheduler(step: int, peak: float, w: int, n: int, f: float) -> float:
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=peak)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda i: schedule_by_cases(i + 1, 1.0, w, n, f)
    )
    for _ in range(step - 1):
        optimizer.step()
        scheduler.step()
    return optimizer.param_groups[0]["lr"]


@pytest.mark.parametrize(
    "cheat",
    [
        schedule_from_a_scheduler,
        lambda s, peak, w, n, f: (
            attnlib.warmup_inverse_sqrt(s, 64, w) * 0 + schedule_by_cases(s, peak, w, n, f)
        ),
    ],
    ids=["LambdaLR", "attnlib.warmup_inverse_sqrt"],
)
def test_a_schedule_from_a_scheduler_is_refused(cheat: Callable[..., Any]) -> None:
    report = checks.check_warmup_linear_decay(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 3: beam search ----------------------------------------------------------------------


def learner_beam(
    model: Any,
    src: Tensor,
    bos: int,
    eos: int,
    max_new_tokens: int,
    k: int,
    alpha: float,
    slip: str = "",
) -> tuple[Tensor, Tensor]:
    """A learner's beam search with tensors and heapq; ``slip`` makes one usual mistake."""
    memory, mask, _ = model.encode(src)
    alive = [(0.0, [])]  # (sum, tokens)
    done: list[tuple[float, list[int]]] = []
    finished: list[tuple[float, list[int]]] = []

    def length(tokens: list[int]) -> int:
        n = len(tokens) + (slip == "bos in |y|")
        return n - 1 if slip == "no eos in |y|" and tokens[-1:] == [eos] else n

    def score(total: float, tokens: list[int]) -> float:
        n = length(tokens)
        if slip == "no penalty":
            return total
        if slip == "|y|^α":
            return total / n**alpha
        if slip == "6**α":
            return total / ((5 + n) / 6**alpha)
        if slip == "/ (5 + n) / 6**α":
            return total / (5 + n) / 6**alpha
        if slip == "(5 + n)**α / 6":
            return total / ((5 + n) ** alpha / 6)
        if slip == "(5 + n) / 6 · α":
            return total / ((5 + n) / 6 * alpha)
        if slip == "(5 + n / 6)**α":
            return total / (5 + n / 6) ** alpha
        if slip == "times":
            return total * ((5 + n) / 6) ** alpha
        return total / ((5 + n) / 6) ** alpha

    steps = max_new_tokens + {"one short": -1, "one long": 1}.get(slip, 0)
    for _ in range(steps):
        pool: list[tuple[float, list[int]]] = [] if slip in ("drop ended", "aside") else list(done)
        for total, tokens in alive:
            prefix = [tokens[-1] if tokens else bos] if slip == "last token" else [bos, *tokens]
            out, _, _ = model.decode(torch.tensor([prefix]), memory, mask)
            logits = out[0, 0 if slip == "first position" else -1].double()
            if slip == "positions":  # normalised down the column of positions
                full = out[0].double()
                values = (full - torch.logsumexp(full, 0))[-1]
            elif slip == "logits":
                values = logits
            elif slip == "probs":
                values = torch.softmax(logits, 0)
            else:
                values = logits - torch.logsumexp(logits, 0)
            width = {"greedy": 1, "aside, k open ones": k + 1}.get(slip, k)  # k + 1: one <eos>
            if slip == "positions":  # every token ties at the first step: a stable sort
                ids = torch.sort(values, descending=True, stable=True).indices[:width]
            else:
                ids = values.topk(min(width, values.numel())).indices
            pool += [(total + float(values[i]), [*tokens, int(i)]) for i in ids]
        key = (lambda c: score(*c)) if slip == "normalised pruning" else (lambda c: c[0])
        kept = heapq.nlargest(1 if slip == "greedy" else k, pool, key=key)
        extend = slip.startswith("extend ended")
        ends = (lambda c: False) if extend else (lambda c: c[1][-1] == eos)
        if slip == "extend ended, stop when all end" and all(c[1][-1] == eos for c in kept):
            alive = kept
            break
        if slip == "extend ended, stop when all hold one" and all(eos in c[1] for c in kept):
            alive = kept
            break
        if slip == "aside, k open ones":  # each finished one set aside as it comes
            alive = []
            for c in heapq.nlargest(len(pool), pool, key=key):
                if len(alive) == k:
                    break
                (finished if ends(c) else alive).append(c)
            if not alive:
                break
            continue
        if slip == "aside":  # a list of finished outputs beside the beam
            finished += [c for c in kept if ends(c)]
            alive = [c for c in kept if not ends(c)]
            if len(finished) >= k or not alive:
                break
            continue
        done = [c for c in kept if ends(c)]
        alive = [c for c in kept if not ends(c)]
        if not alive or (slip == "stop at best" and ends(kept[0])):
            break
    finals = done + alive if slip != "drop ended" else (done + alive or kept)
    finals += finished
    total, tokens = max(
        finals, key=(lambda c: c[0]) if slip == "raw-sum winner" else (lambda c: score(*c))
    )
    shown_score = total if slip == "raw score" else score(total, tokens)
    if slip == "no eos shown" and tokens[-1:] == [eos]:
        tokens = tokens[:-1]  # after the score is taken
    shown = torch.tensor(([bos] if slip == "with bos" else []) + tokens)
    return shown, torch.tensor(shown_score)


BEAM_WRONG = {
    "normalised pruning": "pruned the beam by the length-normalised score",
    "no penalty": "with no length penalty",
    "raw-sum winner": "chose the winner by its raw sum, and only then",
    "|y|^α": "divided by |y|^α",
    "6**α": "raised only the 6 to the power α",
    "/ (5 + n) / 6**α": "raised only the 6 to the power α",
    "(5 + n)**α / 6": "raised only 5 + |y| to the power α and divided by 6 after",
    "(5 + n) / 6 · α": "by α instead of raising it to the power α",
    "(5 + n / 6)**α": "divided only |y| by 6",
    "last token": "gave the decoder only the last token",
    "times": "multiplied the sum by the length penalty",
    "no eos in |y|": "left the <eos> out of |y|",
    "bos in |y|": "counted the <bos> in |y|",
    "drop ended": "dropped the hypotheses that ended",
    "extend ended": "kept extending hypotheses after their <eos>",
    "stop at best": "stopped as soon as the best kept hypothesis ended",
    "first position": "at the first position instead of the last",
    "logits": "added up raw logits",
    "probs": "added up probabilities",
    "raw score": "returned the raw sum as the score",
    "one short": "ran one step fewer than max_new_tokens",
    "with bos": "with the <bos> in front",
    "greedy": "kept one hypothesis at each step",
    "aside": "moved the hypotheses that ended out of the beam",
    "aside, k open ones": "moved the hypotheses that ended out of the beam",
    "extend ended, stop when all end": "kept extending hypotheses after their <eos>",
    "extend ended, stop when all hold one": "kept extending hypotheses after their <eos>",
    "positions": "along the positions instead of along the vocabulary",
    "one long": "ran one step more than max_new_tokens",
    "no eos shown": "left the <eos> off the returned tokens",
}


def test_the_learner_style_search_without_a_slip_is_right() -> None:
    assert checks.check_beam_search_gnmt(learner_beam).passed


@pytest.mark.slow
@pytest.mark.parametrize("slip", BEAM_WRONG)
def test_each_beam_search_mistake_is_caught_and_named(slip: str) -> None:
    def wrong(model, src, bos, eos, max_new_tokens, k, alpha):  # type: ignore[no-untyped-def]
        return learner_beam(model, src, bos, eos, max_new_tokens, k, alpha, slip)

    report = checks.check_beam_search_gnmt(wrong)
    assert not report.passed
    assert _named(report, BEAM_WRONG[slip]), report


def test_a_search_without_length_penalty_is_not_said_to_miscount_eos() -> None:
    # The first edition named this "|y| should count the <eos>".
    def no_penalty(model, src, bos, eos, max_new_tokens, k, alpha):  # type: ignore[no-untyped-def]
        return plain_beam_search(model, src, bos, eos, max_new_tokens, k, 0.0)

    report = str(checks.check_beam_search_gnmt(no_penalty))
    assert "with no length penalty" in report and "<eos> out of |y|" not in report


def batched_beam(model, src, bos, eos, max_new_tokens, k, alpha):  # type: ignore[no-untyped-def]
    """All hypotheses in one tensor; finished ones extended by <eos> at no cost."""
    memory, mask, _ = model.encode(src)
    seqs = torch.tensor([[bos]])
    sums = torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        ended = seqs[:, 1:].eq(eos).any(1)
        if ended.all():
            break
        n = seqs.shape[0]
        logits, _, _ = model.decode(
            seqs, memory.expand(n, *memory.shape[1:]), mask.expand(n, *mask.shape[1:])
        )
        log_p = torch.log_softmax(logits[:, -1].double(), -1)
        free = torch.full_like(log_p, -math.inf)
        free[:, eos] = 0.0
        log_p = torch.where(ended[:, None], free, log_p)
        flat = (sums[:, None] + log_p).flatten()
        sums, index = flat.topk(min(k, int(torch.isfinite(flat).sum())))
        V = log_p.shape[1]
        seqs = torch.cat([seqs[index // V], (index % V)[:, None]], 1)
    outputs = []
    for row, total in zip(seqs.tolist(), sums.tolist(), strict=True):
        tokens = row[1 : row.index(eos, 1) + 1] if eos in row[1:] else row[1:]
        outputs.append((total / ((5 + len(tokens)) / 6) ** alpha, tokens))
    score, tokens = max(outputs)
    return tokens, score


def top_k_of_each_first(model, src, bos, eos, max_new_tokens, k, alpha):  # type: ignore[no-untyped-def]
    """Keeps only each hypothesis's k best extensions before pruning: the same beams."""
    return learner_beam(model, src, bos, eos, max_new_tokens, k, alpha)


@pytest.mark.parametrize(
    "right",
    [
        lambda *args: plain_beam_search(*args),
        batched_beam,
        top_k_of_each_first,
        lambda *args: tuple(t.tolist() for t in learner_beam(*args)),
    ],
    ids=["plain", "batched tensors", "top-k of each first", "lists"],
)
def test_right_beam_searches_pass(right: Callable[..., Any]) -> None:
    report = checks.check_beam_search_gnmt(right)
    assert report.passed, report


@pytest.mark.parametrize(
    "cheat",
    [
        checks.reference_beam_search_gnmt,
        lambda m, s, b, e, n, k, a: (
            attnlib.beam_search(m, s, b, e, n, k, a, "gnmt")[0].tolist(),
            0.0,
        ),
        lambda m, s, b, e, n, k, a: (attnlib.greedy_decode(m, s, b, e, n)[0].tolist(), 0.0),
    ],
    ids=["attnlib.beam_search_with_scores", "attnlib.beam_search", "attnlib.greedy_decode"],
)
def test_a_beam_search_that_calls_attnlibs_is_refused(cheat: Callable[..., Any]) -> None:
    report = checks.check_beam_search_gnmt(cheat)
    assert not report.passed and "does not accept it" in str(report), report


def test_a_stub_a_crash_and_a_bad_return_are_explained() -> None:
    def stub(model, src, bos, eos, max_new_tokens, k, alpha):  # type: ignore[no-untyped-def]
        """Search with a beam."""
        raise NotImplementedError

    unfinished = checks.check_beam_search_gnmt(stub)
    assert not unfinished.done and "Search with a beam." in str(unfinished)
    assert "raised ZeroDivisionError" in str(checks.check_beam_search_gnmt(lambda *a: 1 / 0))
    assert "should return a pair (tokens, score)" in str(
        checks.check_beam_search_gnmt(lambda *a: [3, 2, 1])
    )


# -- The references -------------------------------------------------------------------------------


@pytest.mark.parametrize("penalty", ["gnmt", "power"])
@pytest.mark.parametrize("beam_size", [1, 2, 3])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
@pytest.mark.parametrize("name", ["hand-set", "trap", "late"])
def test_the_plain_search_is_attnlibs_batched_one_on_the_toys(
    name: str, penalty: str, beam_size: int, alpha: float
) -> None:
    toy, src = toys.toy(name), torch.zeros(1, 1, dtype=torch.long)
    out, score = attnlib.beam_search_with_scores(toy, src, 1, 2, 7, beam_size, alpha, penalty)
    tokens, expected = plain_beam_search(
        toy, src, 1, 2, 7, beam_size, alpha, Rules(penalty=penalty)
    )
    got = out[0].tolist()
    assert (got[: got.index(2) + 1] if 2 in got else got) == tokens
    assert math.isclose(score.item(), expected, rel_tol=1e-9)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("beam_size", [1, 3])
def test_the_plain_search_is_attnlibs_on_untrained_transformers(seed: int, beam_size: int) -> None:
    model = toys.random_transformer(seed)
    src = torch.randint(3, 9, (3, 5), generator=torch.Generator().manual_seed(seed))
    out, scores = attnlib.beam_search_with_scores(model, src, 1, 2, 8, beam_size, 0.6, "gnmt")
    for row in range(3):
        tokens, expected = plain_beam_search(model, src[row : row + 1], 1, 2, 8, beam_size, 0.6)
        got = out[row].tolist()
        assert (got[: got.index(2) + 1] if 2 in got else got) == tokens
        assert math.isclose(scores[row].item(), expected, rel_tol=1e-9)


def test_every_case_of_the_beam_check_is_what_attnlib_finds() -> None:
    for case in beam._cases():
        tokens, score = checks.reference_beam_search_gnmt(*case.args)
        assert tokens == case.expected[0] and math.isclose(score, case.expected[1], rel_tol=1e-9)
    assert Rules() == RIGHT


def test_gnmts_penalty_by_hand_on_the_toy_of_section_8() -> None:
    from attnlib.course.hand_set import BOS, EOS, HandSetTranslator, next_token_probs

    src, want = torch.zeros(1, 1, dtype=torch.long), [4, 4, 4, 4, EOS]  # B B B B <eos>
    log_p = sum(math.log(next_token_probs([BOS, *want[:t]])[want[t]]) for t in range(len(want)))
    out, score = attnlib.beam_search_with_scores(
        HandSetTranslator(), src, BOS, EOS, 6, 2, 0.6, penalty="gnmt"
    )
    assert out[0].tolist()[:5] == want
    # (1e-9: the toy gives every other token 1e-12, so its rows sum to 1 + 3e-12)
    assert math.isclose(score.item(), log_p / ((5 + 5) / 6) ** 0.6, rel_tol=1e-9)
    greedy = attnlib.greedy_decode(HandSetTranslator(), src, BOS, EOS, 6)
    assert greedy[0].tolist()[:2] == [3, EOS]  # A <eos>: greedy misses it
    with pytest.raises(ValueError, match="penalty must be one of"):
        attnlib.beam_search(HandSetTranslator(), src, BOS, EOS, 6, penalty="wu")


# -- All three ----------------------------------------------------------------------------------

CHECKERS = {
    "ex1_smoothed_loss": checks.check_smoothed_loss,
    "ex2_warmup_linear_decay": checks.check_warmup_linear_decay,
    "ex3_beam_search_gnmt": checks.check_beam_search_gnmt,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    table = known_mistakes(exercise_id)
    assert len(table) >= 10
    for mistake in table:
        report = CHECKERS[exercise_id](mistake.fn)
        assert f"The mistake: {mistake.name}." in str(report), (mistake.name, str(report))


@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_a_later_cell_uses_an_answer_only_once_its_check_passed(
    exercise_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    right = {
        "ex1_smoothed_loss": loss_from_q,
        "ex2_warmup_linear_decay": schedule_by_cases,
        "ex3_beam_search_gnmt": batched_beam,
    }[exercise_id]
    fallback = {
        "ex1_smoothed_loss": checks.reference_smoothed_loss,
        "ex2_warmup_linear_decay": checks.reference_warmup_linear_decay,
        "ex3_beam_search_gnmt": checks.reference_beam_search_gnmt,
    }[exercise_id]
    assert CHECKERS[exercise_id](right).passed
    assert checks.yours_or_attnlib(exercise_id, right, fallback) is right
    wrong = lambda *args: 0  # noqa: E731
    assert not CHECKERS[exercise_id](wrong).passed  # another answer fails: right stays passed
    assert checks.yours_or_attnlib(exercise_id, right, fallback) is right
    assert checks.yours_or_attnlib(exercise_id, wrong, fallback) is fallback
    assert "Using attnlib's" in capsys.readouterr().out


def test_each_exercise_has_hints_in_three_levels_without_code() -> None:
    for exercise_id in CHECKERS:
        exercise = CHECKERS[exercise_id].exercise
        assert exercise.id == exercise_id and exercise.notebook == "09"
        assert len(exercise.hints) == 3
        for hint in exercise.hints:  # words and maths, never a line of code
            assert not any(
                code in hint for code in ("torch.", "lambda", ".sum(", "return ", "def ")
            )
