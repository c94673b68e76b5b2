"""Notebook 10, Exercises 4–6: temperature, top-k and top-p against their tables of mistakes.

Each mistake is written here again, as a learner would write it (not copied from the table), and
must be caught and named; right answers written differently from the worked solution must pass;
answers that call an existing softmax or attnlib's sampler must be refused.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import checks
from attnlib.checks._exercise import known_mistakes
from attnlib.course import sliders

Tensor = torch.Tensor
INF = float("inf")


def _named(report: object) -> str:
    """The mistake a report names ('' when it names none)."""
    text = str(report)
    if "The mistake: " not in text:
        return ""
    return text.split("The mistake: ", 1)[1].split("\n")[0].removesuffix(".")


# -- Exercise 4: temperature ----------------------------------------------------------------------


def temperature_where(z: Tensor, t: float) -> Tensor:
    if t == 0:
        top = torch.where(z == z.max(dim=-1, keepdim=True).values, 1.0, 0.0).to(z.dtype)
        return top / top.sum(-1, keepdim=True)
    e = torch.exp((z - z.max(dim=-1, keepdim=True).values) / t)  # shifted, then divided
    return e / e.sum(-1, keepdim=True)


def temperature_logsumexp(z: Tensor, t: float) -> Tensor:
    if t == 0:
        top = (z == z.amax(-1, keepdim=True)).float()
        return (top / top.sum(-1, keepdim=True)).to(z.dtype)
    s = z.double() / t
    m = s.amax(-1, keepdim=True)
    return torch.exp(s - m - torch.log(torch.exp(s - m).sum(-1, keepdim=True))).to(z.dtype)


def temperature_shift_first(z: Tensor, t: float) -> Tensor:
    shifted = z - z.amax(-1, keepdim=True)  # ≤ 0, and still ≤ 0 once divided by T > 0
    if t == 0:
        return (shifted == 0).to(z.dtype) / (shifted == 0).sum(-1, keepdim=True)
    e = (shifted / t).exp()
    return e / e.sum(-1, keepdim=True)


def temperature_rows_loop(z: Tensor, t: float) -> Tensor:
    rows = z.reshape(-1, z.shape[-1])
    out = []
    for row in rows:
        if t == 0:
            hits = [float(v == row.max()) for v in row]
            out.append(torch.tensor(hits, dtype=torch.float64) / sum(hits))
        else:
            e = torch.exp((row.double() - row.max()) / t)
            out.append(e / e.sum())
    return torch.stack(out).reshape(z.shape).to(z.dtype)  # computed in float64, returned in z's


TEMPERATURE_RIGHT = {
    "torch.where": temperature_where,
    "log-sum-exp in float64": temperature_logsumexp,
    "shifted before dividing": temperature_shift_first,
    "a loop over the rows": temperature_rows_loop,
}


def _greedy_limit(z: Tensor) -> Tensor:
    top = (z == z.amax(-1, keepdim=True)).to(z.dtype)
    return top / top.sum(-1, keepdim=True)


def _softmax_by_hand(s: Tensor) -> Tensor:
    e = (s - s.max(-1, keepdim=True).values).exp()
    return e / e.sum(-1, keepdim=True)


TEMPERATURE_WRONG: dict[str, tuple[Callable[[Tensor, float], Tensor], str]] = {
    "no shift": (
        lambda z, t: _greedy_limit(z) if t == 0 else (z / t).exp() / (z / t).exp().sum(-1, True),
        "without first subtracting",
    ),
    "no shift, in float64": (
        lambda z, t: (
            _greedy_limit(z) if t == 0 else (e := (z.double() / t).exp()) / e.sum(-1, True)
        ),
        "without first subtracting",
    ),
    "one max for the batch": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).max())) / e.sum(-1, keepdim=True)
        ),
        "largest value of the whole batch",
    ),
    "the minimum": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).min(-1, keepdim=True).values))
            / e.sum(-1, keepdim=True)
        ),
        "smallest value instead of its largest",
    ),
    "max without keepdim": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).max(-1).values)) / e.sum(-1, keepdim=True)
        ),
        "largest value without keeping",
    ),
    "sum without keepdim": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).amax(-1, keepdim=True))) / e.sum(-1)
        ),
        "summed each row without keeping",
    ),
    "the whole tensor's total": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).amax(-1, True))) / e.sum()
        ),
        "total of the whole tensor",
    ),
    "dim=0": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).amax(0, keepdim=True))) / e.sum(0, keepdim=True)
        ),
        "along dim 0",
    ),
    "ties get 1 each": (
        lambda z, t: (
            torch.where(z == z.max(-1, keepdim=True).values, 1.0, 0.0).to(z.dtype)
            if t == 0
            else _softmax_by_hand(z / t)
        ),
        "a probability of 1",
    ),
    "dim=1": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).amax(1, keepdim=True))) / e.sum(1, keepdim=True)
        ),
        "along dim 1",
    ),
    "times T": (lambda z, t: _greedy_limit(z) if t == 0 else _softmax_by_hand(t * z), "multiplied"),
    "T after softmax": (
        lambda z, t: _greedy_limit(z) if t == 0 else _softmax_by_hand(z) / t,
        "divided the probabilities by the temperature",
    ),
    "no special case at 0": (
        lambda z, t: _softmax_by_hand(z / t),
        "divided by the temperature at T = 0",
    ),
    "T = 0 read as T = 1": (
        lambda z, t: _softmax_by_hand(z / (t if t > 0 else 1.0)),
        "treated T = 0 as T = 1",
    ),
    "one-hot of argmax": (
        lambda z, t: (
            F.one_hot(z.argmax(dim=-1), z.shape[-1]).to(z.dtype)
            if t == 0
            else _softmax_by_hand(z / t)
        ),
        "first of the tied largest",
    ),
    "argmax index": (
        lambda z, t: torch.argmax(z, -1) if t == 0 else _softmax_by_hand(z / t),
        "index of the largest logit",
    ),
    "max(T, 1e-9)": (lambda z, t: _softmax_by_hand(z / max(t, 1e-9)), "plus a tiny number"),
    "no keepdim anywhere": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := torch.exp(z / t - (z / t).max(-1)[0])) / e.sum(dim=-1)
        ),
        "and its sum, both without keeping",
    ),
    "exp, then divided by the largest": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := (z / t).exp() / (z / t).exp().max(-1, keepdim=True)[0]) / e.sum(-1, True)
        ),
        "divided the exponentials by their largest",
    ),
    "probabilities to the power 1/T": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (p := _softmax_by_hand(z) ** (1.0 / t)) / p.sum(-1, keepdim=True)
        ),
        "to the power 1/T",
    ),
    "sum down the batch": (
        lambda z, t: (
            _greedy_limit(z) if t == 0 else (e := (z / t - (z / t).amax(-1, True)).exp()) / e.sum(0)
        ),
        "across the rows of the batch",
    ),
    "mean of the row totals": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := (z / t - (z / t).amax(-1, True)).exp()) / e.sum(-1, True).mean()
        ),
        "across the rows of the batch",
    ),
    "a loop over the batch": (
        lambda z, t: torch.stack([temperature_where(row, t) for row in z]),
        "assumed a 2-D batch",
    ),
    "divided by T, then shifted (float16 [70, 0] at T = 0.001 overflows)": (
        lambda z, t: _greedy_limit(z) if t == 0 else _softmax_by_hand(z / t),
        "divided by T before subtracting each row's maximum",
    ),
    "the maximum divided by T apart": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := (z / t - z.amax(-1, keepdim=True) / t).exp()) / e.sum(-1, keepdim=True)
        ),
        "divided by T before subtracting each row's maximum",
    ),
    "divided first, NaN read as inf": (
        lambda z, t: _greedy_limit(z) if t == 0 else _softmax_by_hand(z / t).nan_to_num(nan=INF),
        "divided by T before subtracting each row's maximum",
    ),
    "shifted first, sum without keepdim": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else (e := ((z - z.amax(-1, keepdim=True)) / t).exp()) / e.sum(-1)
        ),
        "summed each row without keeping",
    ),
    "shifted first, one max for the batch": (
        lambda z, t: (
            _greedy_limit(z) if t == 0 else (e := ((z - z.max()) / t).exp()) / e.sum(-1, True)
        ),
        "largest value of the whole batch",
    ),
    "logits -= max, then logits /= T": (
        lambda z, t: (
            _greedy_limit(z)
            if t == 0
            else _softmax_by_hand(z.sub_(z.amax(-1, keepdim=True)).div_(t))
        ),
        "in place",
    ),
}


@pytest.mark.parametrize("name", TEMPERATURE_RIGHT)
def test_right_temperatures_pass(name: str) -> None:
    report = checks.check_my_temperature_probs(TEMPERATURE_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", TEMPERATURE_WRONG)
def test_each_temperature_mistake_is_caught_and_named(name: str) -> None:
    fn, words = TEMPERATURE_WRONG[name]
    report = checks.check_my_temperature_probs(fn)
    assert words in _named(report), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda z, t: torch.softmax(z / max(t, 1e-9), -1),
        lambda z, t: (z / max(t, 1e-9)).softmax(-1),
        lambda z, t: F.softmax(z / max(t, 1e-9), dim=-1),
        lambda z, t: attnlib.softmax(z / max(t, 1e-9)),
        lambda z, t: attnlib.next_token_probs(z, t),
        lambda z, t: torch.exp(z / max(t, 1e-9) - torch.logsumexp(z / max(t, 1e-9), -1, True)),
    ],
)
def test_a_temperature_that_calls_a_softmax_is_refused(cheat: Callable[..., Tensor]) -> None:
    report = checks.check_my_temperature_probs(cheat)
    assert not report.passed and "does not accept it" in str(report), report


# -- Exercise 5: top-k ----------------------------------------------------------------------------


def top_k_scatter(z: Tensor, k: int) -> Tensor:
    values, indices = torch.topk(z, k)
    return torch.full_like(z, -INF).scatter(-1, indices, values)


def top_k_sorted(z: Tensor, k: int) -> Tensor:
    kth = torch.sort(z, dim=-1, descending=True).values[..., k - 1].unsqueeze(-1)
    return torch.where(z >= kth, z, torch.tensor(-INF, dtype=z.dtype))


def top_k_loop(z: Tensor, k: int) -> Tensor:
    rows = z.reshape(-1, z.shape[-1]).clone()
    for row in rows:
        row[row < sorted(row.tolist(), reverse=True)[k - 1]] = -INF
    return rows.reshape(z.shape)


TOP_K_RIGHT = {
    "topk and masked_fill": lambda z, k: z.masked_fill(z < z.topk(k).values[..., [-1]], -INF),
    "scatter": top_k_scatter,
    "sort and where": top_k_sorted,
    "kthvalue": lambda z, k: z.masked_fill(
        z < (-z).kthvalue(k, dim=-1, keepdim=True).values.neg(), float("-inf")
    ),
    "a loop over the rows": top_k_loop,
}


def _kth(z: Tensor, k: int) -> Tensor:
    return z.topk(k, dim=-1).values[..., -1:]


TOP_K_WRONG: dict[str, tuple[Callable[[Tensor, int], Tensor], str | None]] = {
    "<=": (lambda z, k: torch.where(z <= _kth(z, k), -INF, z), "drops the k-th largest itself"),
    "index k": (
        lambda z, k: z.masked_fill(z < z.sort(-1, descending=True)[0][..., k : k + 1], -INF),
        "at index k",
    ),
    "index k of topk": (
        lambda z, k: z.masked_fill(z < torch.topk(z, k).values[..., k : k + 1], -INF),
        None,
    ),
    "values[:, k]": (
        lambda z, k: torch.where(z < z.topk(k)[0][..., k, None], -INF, z),
        "index k of topk's values",
    ),
    "zeros": (lambda z, k: torch.where(z >= _kth(z, k), z, torch.zeros_like(z)), "to 0 instead"),
    "-1e9": (lambda z, k: z.masked_fill(z < _kth(z, k), -1e9), "large negative number"),
    "smallest": (
        lambda z, k: z.masked_fill(z > torch.topk(z, k, largest=False)[0][..., -1:], -INF),
        "k smallest logits",
    ),
    "ascending sort": (
        lambda z, k: z.masked_fill(z < torch.sort(z)[0][..., k - 1 : k], -INF),
        "ascending order",
    ),
    "one threshold": (
        lambda z, k: z.masked_fill(z < torch.min(z.topk(k)[0]), -INF),
        "one threshold for the whole batch",
    ),
    "no keepdim": (
        lambda z, k: z.masked_fill(z < z.topk(k, dim=-1)[0][..., k - 1], -INF),
        "without keeping its dimension",
    ),
    "[:, -1:]": (
        lambda z, k: z.masked_fill(z < torch.topk(z, k, dim=-1).values[:, -1:], -INF),
        "[:, -1:]",
    ),
    "dim 0": (lambda z, k: z.masked_fill(z < z.topk(k, 0)[0][-1:], -INF), "along dim 0"),
    "the values": (lambda z, k: torch.topk(z, k, dim=-1)[0], "returned the k largest values"),
    "the k-th of the flattened batch": (
        lambda z, k: torch.where(z < z.flatten().sort(descending=True)[0][k - 1], -INF, z),
        "one threshold for the whole batch",
    ),
    "masked the kept ones": (
        lambda z, k: z.masked_fill(~(z < z.topk(k)[0][..., -1:]), -INF),
        "the mask the wrong way round",
    ),
    "a loop over the batch": (
        lambda z, k: torch.stack([row.masked_fill(row < row.topk(k)[0][-1], -INF) for row in z]),
        "assumed a 2-D batch",
    ),
    "masked_fill_": (
        lambda z, k: z.masked_fill_(z < z.topk(k, dim=-1)[0][..., -1:], -INF),
        "in place",
    ),
}


@pytest.mark.parametrize("name", TOP_K_RIGHT)
def test_right_top_ks_pass(name: str) -> None:
    report = checks.check_my_top_k_logits(TOP_K_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", TOP_K_WRONG)
def test_each_top_k_mistake_is_caught_and_named(name: str) -> None:
    fn, words = TOP_K_WRONG[name]
    report = checks.check_my_top_k_logits(fn)
    assert not report.passed and (words is None or words in _named(report)), report


def test_a_top_k_that_calls_attnlibs_sampler_is_refused() -> None:
    def cheat(z: Tensor, k: int) -> Tensor:
        return attnlib.next_token_probs(z, 1.0, k).log()

    report = checks.check_my_top_k_logits(cheat)
    assert "does not accept it" in str(report)


# -- Exercise 6: top-p ----------------------------------------------------------------------------


def top_p_loop(probs: Tensor, top_p: float) -> Tensor:
    rows = probs.reshape(-1, probs.shape[-1])
    out = torch.zeros_like(rows)
    for r, row in enumerate(rows):
        total = 0.0
        for i in sorted(range(row.shape[0]), key=lambda i: -float(row[i])):
            if total >= top_p:
                break
            out[r, i] = row[i]
            total += float(row[i])
    return (out / out.sum(-1, keepdim=True)).reshape(probs.shape)


def top_p_shifted_cumsum(probs: Tensor, top_p: float) -> Tensor:
    ranked, order = torch.sort(probs, descending=True)
    before = torch.cat([torch.zeros_like(ranked[..., :1]), ranked.cumsum(-1)[..., :-1]], -1)
    drop = torch.empty_like(before, dtype=torch.bool).scatter_(-1, order, before >= top_p)
    kept = probs.masked_fill(drop, 0)
    return kept / kept.sum(-1, keepdim=True)


def top_p_argsort(probs: Tensor, top_p: float) -> Tensor:
    order = probs.argsort(dim=-1, descending=True)
    ranked = probs.gather(-1, order)
    keep = (ranked.cumsum(-1) - ranked) < top_p
    inverse = order.argsort(dim=-1)
    kept = probs * keep.gather(-1, inverse)
    return kept / kept.sum(dim=-1, keepdim=True)


TOP_P_RIGHT = {
    "a loop": top_p_loop,
    "the total before each token": top_p_shifted_cumsum,
    "argsort and its inverse": top_p_argsort,
}


def _kept(probs: Tensor, top_p: float, keep: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    ranked, order = probs.sort(-1, descending=True)
    mask = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, order, keep(ranked, order))
    return torch.where(mask, probs, torch.zeros_like(probs))


def _renorm(kept: Tensor) -> Tensor:
    return kept / kept.sum(-1, keepdim=True)


TOP_P_WRONG = {
    "cumsum < p": (
        lambda p, top_p: _renorm(_kept(p, top_p, lambda r, o: r.cumsum(-1) < top_p)),
        "drops the token that carries the total past top_p",
    ),
    "cumsum <= p, the first always": (
        lambda p, top_p: _renorm(
            _kept(p, top_p, lambda r, o: (r.cumsum(-1) <= top_p) | (torch.arange(r.shape[-1]) == 0))
        ),
        "kept the likeliest token, then only",
    ),
    "marks left in rank order": (
        lambda p, top_p: _renorm(
            p * ((r := p.sort(-1, descending=True).values).cumsum(-1) - r < top_p).to(p.dtype)
        ),
        "without mapping them back",
    ),
    "sorted order": (
        lambda p, top_p: _renorm(
            (r := p.sort(-1, descending=True)[0]) * ((r.cumsum(-1) - r) < top_p).float()
        ),
        "left the kept probabilities in sorted order",
    ),
    "gather": (
        lambda p, top_p: _renorm(
            p
            * (
                ((r := p.sort(-1, descending=True))[0].cumsum(-1) - r[0] < top_p)
                .gather(-1, r[1])
                .to(p.dtype)
            )
        ),
        "gather instead of scatter",
    ),
    "no sort": (
        lambda p, top_p: _renorm(p * ((p.cumsum(-1) - p) < top_p)),
        "without ranking the tokens first",
    ),
    "ascending": (
        lambda p, top_p: _renorm(
            torch.zeros_like(p).scatter(
                -1, (s := p.sort(-1))[1], s[0] * ((s[0].cumsum(-1) - s[0]) < top_p)
            )
        ),
        "from the least likely",
    ),
    "not renormalised": (
        lambda p, top_p: _kept(p, top_p, lambda r, o: r.cumsum(-1) - r < top_p),
        "did not renormalise",
    ),
    "at most p above": (
        lambda p, top_p: _renorm(_kept(p, top_p, lambda r, o: r.cumsum(-1) - r <= top_p)),
        "hold at most top_p (<=)",
    ),
    "divided by p": (
        lambda p, top_p: _kept(p, top_p, lambda r, o: r.cumsum(-1) - r < top_p) / top_p,
        "divided the kept probabilities by top_p",
    ),
    "batch total": (
        lambda p, top_p: (k := _kept(p, top_p, lambda r, o: r.cumsum(-1) - r < top_p)) / k.sum(),
        "total of the whole batch",
    ),
    "no keepdim": (
        lambda p, top_p: (k := _kept(p, top_p, lambda r, o: r.cumsum(-1) - r < top_p)) / k.sum(-1),
        "without keeping its dimension",
    ),
    "each at least p": (
        lambda p, top_p: _renorm(torch.where(p >= top_p, p, 0.0)),
        "own probability is at least top_p",
    ),
    "kept if the one before was": (
        lambda p, top_p: _renorm(
            _kept(p, top_p, lambda r, o: F.pad((r.cumsum(-1) - r)[..., :-1], (1, 0)) < top_p)
        ),
        "one token more than the nucleus",
    ),
    "one nucleus, top_p times the rows": (
        lambda p, top_p: _renorm(
            p
            * torch.zeros(p.numel(), dtype=torch.bool)
            .scatter(
                0,
                (s := p.flatten().sort(descending=True))[1],
                s[0].cumsum(0) - s[0] < top_p * p[..., 0].numel(),
            )
            .reshape(p.shape)
        ),
        "one nucleus for the whole batch",
    ),
    "a loop over the batch": (
        lambda p, top_p: torch.stack([top_p_loop(row[None], top_p)[0] for row in p]),
        "assumed a 2-D batch",
    ),
    "mul_ and div_": (
        lambda p, top_p: p.mul_(_kept(p, top_p, lambda r, o: r.cumsum(-1) - r < top_p) > 0).div_(
            p.sum(-1, keepdim=True)
        ),
        "in place",
    ),
}


@pytest.mark.parametrize("name", TOP_P_RIGHT)
def test_right_top_ps_pass(name: str) -> None:
    report = checks.check_my_top_p_probs(TOP_P_RIGHT[name])
    assert report.passed, report


@pytest.mark.parametrize("name", TOP_P_WRONG)
def test_each_top_p_mistake_is_caught_and_named(name: str) -> None:
    fn, words = TOP_P_WRONG[name]
    report = checks.check_my_top_p_probs(fn)
    assert words in _named(report), report


@pytest.mark.parametrize(
    "cheat",
    [
        lambda p, top_p: attnlib.sampling.nucleus(p, top_p),
        lambda p, top_p: attnlib.next_token_probs(p.log(), 1.0, None, top_p),
    ],
)
def test_a_top_p_that_calls_attnlibs_nucleus_is_refused(cheat: Callable[..., Tensor]) -> None:
    assert "does not accept it" in str(checks.check_my_top_p_probs(cheat))


def test_every_case_of_top_p_stays_away_from_its_boundary_or_sits_on_it_exactly() -> None:
    from attnlib.checks.nb10_gpt import top_p

    on_the_boundary = 0
    for case in top_p._cases():
        probs, p = case.args
        ranked = probs.sort(dim=-1, descending=True).values
        if ((ranked.cumsum(-1) - p).abs() > 0.01).all():
            continue
        # Halves, quarters, sixteenths: every running total is exact, in any float type.
        assert torch.equal(probs * 16, (probs * 16).round()) and (probs * 16).sum() == 16
        assert (ranked.cumsum(-1) == p).any(), case.description
        on_the_boundary += 1
    assert on_the_boundary == 1


# -- every table -----------------------------------------------------------------------------------

CHECKERS = {
    "ex4_my_temperature_probs": checks.check_my_temperature_probs,
    "ex5_my_top_k_logits": checks.check_my_top_k_logits,
    "ex6_my_top_p_probs": checks.check_my_top_p_probs,
}


@pytest.mark.slow
@pytest.mark.parametrize("exercise_id", CHECKERS)
def test_every_mistake_of_the_table_is_named_when_made(exercise_id: str) -> None:
    for mistake in known_mistakes(exercise_id):
        report = CHECKERS[exercise_id](mistake.fn)
        assert _named(report) == mistake.name, (mistake.name, str(report))


def test_the_sliders_distribution_counts_as_attnlibs_sampler() -> None:
    report = checks.check_my_top_k_logits(
        lambda z, k: sliders.sampling_distribution(z.reshape(-1)[: z.shape[-1]], 1.0, k).log()
    )
    assert "does not accept it" in str(report)


# -- two mistakes at once ---------------------------------------------------------------------


def _formula_everywhere(z: Tensor, t: float) -> Tensor:
    e = torch.exp(z / t)  # no shift, and z / 0 at T = 0
    return e / e.sum(dim=-1, keepdim=True)


def _unshifted_first_of_ties(z: Tensor, t: float) -> Tensor:
    if t == 0:
        return F.one_hot(z.argmax(dim=-1), z.shape[-1]).to(z.dtype)
    return torch.exp(z / t) / torch.exp(z / t).sum(dim=-1, keepdim=True)


@pytest.mark.parametrize(
    ("checker", "fn", "words"),
    [
        (checks.check_my_temperature_probs, _formula_everywhere, "without first subtracting"),
        (checks.check_my_temperature_probs, _unshifted_first_of_ties, "without first subtracting"),
    ],
)
def test_two_mistakes_on_cases_of_their_own_name_one_that_is_in_the_answer(
    checker: Callable[..., object], fn: Callable[..., Tensor], words: str
) -> None:
    report = checker(fn)
    assert words in _named(report), report


def test_a_distribution_that_does_not_add_up_says_so() -> None:
    def sorted_and_unnormalised(p: Tensor, top_p: float) -> Tensor:
        ranked = p.sort(dim=-1, descending=True).values
        return ranked * (ranked.cumsum(-1) - ranked < top_p)

    report = str(checks.check_my_top_p_probs(sorted_and_unnormalised))
    assert "the probabilities add up to 0.85, not 1" in report, report


def test_a_check_runs_on_one_thread_and_gives_the_notebook_its_own_count_back() -> None:
    seen = []

    def spy(z: Tensor, t: float) -> Tensor:
        seen.append(torch.get_num_threads())
        return temperature_where(z, t)

    before = torch.get_num_threads()
    assert checks.check_my_temperature_probs(spy).passed
    assert set(seen) == {1} and torch.get_num_threads() == before
