"""Learner answers to notebook 09's exercises (encoder–decoder), corpus d, written blind:
a decay that starts at step 0, GNMT penalties written other ways, float32 losses for float64
logits, crashes."""

from __future__ import annotations

import math

import torch

from mistake_corpus.corpus import Entry

E1, E2, E3 = "ex1_smoothed_loss", "ex2_warmup_linear_decay", "ex3_beam_search_gnmt"

# ------------------------------------------ Exercise 1: smoothed_loss


def _q(target, V, smoothing, pad_id, dtype):
    q = torch.full((*target.shape, V), smoothing / (V - 2), dtype=dtype)
    q[..., pad_id] = 0.0
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    return q


def ex1_wrong_float32(logits, target, smoothing, pad_id):
    logits = logits.float()
    logp = torch.log_softmax(logits, dim=-1)
    q = _q(target, logits.shape[-1], smoothing, pad_id, logp.dtype)
    loss = -(q * logp).sum(-1)
    keep = target != pad_id
    return loss[keep].mean()


def ex1_wrong_scatter_no_unsqueeze(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    logp = torch.log_softmax(logits, dim=-1)
    q = torch.full_like(logp, smoothing / (V - 2))
    q[..., pad_id] = 0
    q.scatter_(-1, target, 1 - smoothing)
    keep = target != pad_id
    return -(q * logp).sum(-1)[keep].mean()


def ex1_wrong_q_float32_no_dtype(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    logp = torch.log_softmax(logits, dim=-1)
    q = torch.zeros(logits.shape)
    q += smoothing / (V - 2)
    q[..., pad_id] = 0
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    keep = target != pad_id
    return -(q * logp).sum(-1)[keep].mean().to(logits.dtype)


def ex1_wrong_count_eps(logits, target, smoothing, pad_id):
    logp = torch.log_softmax(logits, dim=-1)
    q = _q(target, logits.shape[-1], smoothing, pad_id, logp.dtype)
    keep = (target != pad_id).to(logp.dtype)
    return (-(q * logp).sum(-1) * keep).sum() / (keep.sum() + 1)


def ex1_right_mixture(logits, target, smoothing, pad_id):
    logp = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    V = logits.shape[-1]
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    others = -(logp.sum(-1) - logp[..., pad_id]) + logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    loss = (1 - smoothing) * nll + smoothing / (V - 2) * others
    keep = target != pad_id
    return loss.masked_select(keep).mean()


def ex1_right_q_like(logits, target, smoothing, pad_id):
    logp = torch.log_softmax(logits, dim=-1)
    q = torch.full_like(logp, smoothing / (logits.shape[-1] - 2))
    q.index_fill_(-1, torch.tensor([pad_id]), 0.0)
    q.scatter_(-1, target[..., None], 1.0 - smoothing)
    per_position = -(q * logp).sum(dim=-1)
    keep = target.ne(pad_id)
    return (per_position * keep).sum() / keep.sum()


# ------------------------------------------ Exercise 2: warmup_linear_decay


def ex2_wrong_warmup_times_decay_from_0(step, peak_lr, warmup, n_steps, floor):
    rise = min(step / warmup, 1.0)
    fall = max(1.0 - step / n_steps, floor)
    return peak_lr * rise * fall


def ex2_wrong_warmup_times_decay_to_floor_from_0(step, peak_lr, warmup, n_steps, floor):
    rise = min(step / warmup, 1.0)
    fall = 1.0 - (1.0 - floor) * min(step / n_steps, 1.0)
    return peak_lr * rise * fall


def ex2_wrong_min_of_lines(step, peak_lr, warmup, n_steps, floor):
    rise = step / warmup
    fall = 1 - (1 - floor) * step / n_steps
    return peak_lr * max(min(rise, fall), floor)


def ex2_wrong_counts_from_0(step, peak_lr, warmup, n_steps, floor):
    s = step - 1
    if s <= warmup:
        return peak_lr * s / warmup
    if s >= n_steps:
        return floor * peak_lr
    return peak_lr * (1 - (1 - floor) * (s - warmup) / (n_steps - warmup))


def ex2_right_float32_tensor(step, peak_lr, warmup, n_steps, floor):
    s = torch.tensor(float(step))
    up = peak_lr * s / warmup
    down = peak_lr * (1 - (1 - floor) * (s - warmup) / (n_steps - warmup))
    return torch.where(s <= warmup, up, torch.clamp(down, min=floor * peak_lr))


def ex2_right_branches(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    if step >= n_steps:
        return peak_lr * floor
    done = (step - warmup) / (n_steps - warmup)
    return peak_lr + (floor * peak_lr - peak_lr) * done


def ex2_right_min_max(step, peak_lr, warmup, n_steps, floor):
    up = step / warmup
    down = 1.0 - (1.0 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * min(up, max(down, floor))


# ------------------------------------------ Exercise 3: beam_search_gnmt


def _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        if all(toks and toks[-1] == eos_id for toks, _ in beams):
            break
        candidates = []
        for toks, total in beams:
            if toks and toks[-1] == eos_id:
                candidates.append((toks, total))
                continue
            tgt = torch.tensor([[bos_id, *toks]])
            logits, _, _ = model.decode(tgt, memory, src_mask)
            logp = torch.log_softmax(logits[0, -1].double(), dim=-1)
            for token in range(logp.shape[0]):
                candidates.append(([*toks, token], total + float(logp[token])))
        candidates.sort(key=lambda c: c[1], reverse=True)
        beams = candidates[:beam_size]
    best = max(beams, key=lambda c: c[1] / penalty(len(c[0]), alpha))
    return best[0], best[1] / penalty(len(best[0]), alpha)


def ex3_wrong_power_then_six(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return (5 + n) ** a / 6

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


def ex3_wrong_six_to_the_alpha_only(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return (5 + n) / 6**a

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


def ex3_wrong_length_to_alpha(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return n**a

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


def ex3_wrong_times_alpha(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return (5 + n) / 6 * a

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


def ex3_wrong_eos_not_counted(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        if all(toks and toks[-1] == eos_id for toks, _ in beams):
            break
        candidates = []
        for toks, total in beams:
            if toks and toks[-1] == eos_id:
                candidates.append((toks, total))
                continue
            logits, _, _ = model.decode(torch.tensor([[bos_id, *toks]]), memory, src_mask)
            logp = torch.log_softmax(logits[0, -1].double(), dim=-1)
            for token in range(logp.shape[0]):
                candidates.append(([*toks, token], total + float(logp[token])))
        candidates.sort(key=lambda c: c[1], reverse=True)
        beams = candidates[:beam_size]

    def score(toks, total):
        n = len(toks) - (1 if toks and toks[-1] == eos_id else 0)
        return total / ((5 + n) / 6) ** alpha

    best = max(beams, key=lambda c: score(*c))
    return best[0], score(*best)


def ex3_wrong_minus_sign(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return ((5 + n) / 6) ** -a

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


def ex3_right_split_powers(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return (5 + n) ** a / 6**a

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


def ex3_right_exp_log(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def penalty(n, a):
        return math.exp(a * math.log((5 + n) / 6))

    return _beam(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, penalty)


ENTRIES = [
    Entry(
        E1,
        "logits.float(): a float32 loss for float64 logits",
        ex1_wrong_float32,
        named="returns float32 for float64 input",
    ),
    Entry(
        E1,
        "scatter_ with target (B, T), not unsqueezed",
        ex1_wrong_scatter_no_unsqueeze,
        named=("gave gather or scatter an index with fewer dimensions than the tensor it indexes"),
    ),
    Entry(E1, "q in torch.zeros(shape): float32", ex1_wrong_q_float32_no_dtype, right=True),
    Entry(
        E1,
        "divided by the count + 1",
        ex1_wrong_count_eps,
        named=("added a number to the count of positions it divides by (to keep it from 0)"),
    ),
    Entry(E1, "(1 - eps) nll plus the others' share", ex1_right_mixture, right=True),
    Entry(E1, "full_like, index_fill_ and scatter_", ex1_right_q_like, right=True),
    Entry(
        E2,
        "warm-up times a decay from step 0 (floored)",
        ex2_wrong_warmup_times_decay_from_0,
        named=(
            "multiplied the warm-up ramp by a decay that starts at the first step, as §6's "
            "loop does"
        ),
    ),
    Entry(
        E2,
        "warm-up times a decay from 1 at step 0 to floor at n_steps",
        ex2_wrong_warmup_times_decay_to_floor_from_0,
        named=(
            "multiplied the warm-up ramp by a decay that starts at the first step, "
            "as §6's loop does"
        ),
    ),
    Entry(
        E2,
        "the smaller of two lines, the fall from step 0",
        ex2_wrong_min_of_lines,
        named="let the falling line start at step 0 instead of at the peak",
    ),
    Entry(
        E2,
        "counted steps from 0 (step - 1)",
        ex2_wrong_counts_from_0,
        named="shifted the steps by one: the warm-up reaches the peak one step late",
    ),
    Entry(E2, "a 0-D float32 tensor (float32 precision)", ex2_right_float32_tensor, right=True),
    Entry(E2, "three branches", ex2_right_branches, right=True),
    Entry(E2, "min of the rise and the floored fall", ex2_right_min_max, right=True),
    Entry(
        E3,
        "penalty (5 + |y|)^alpha / 6",
        ex3_wrong_power_then_six,
        named=("raised only 5 + |y| to the power α and divided by 6 after, not the whole fraction"),
    ),
    Entry(
        E3,
        "penalty (5 + |y|) / 6^alpha",
        ex3_wrong_six_to_the_alpha_only,
        named="raised only the 6 to the power α, not the whole fraction (5 + |y|) / 6",
    ),
    Entry(
        E3,
        "penalty |y|^alpha (attnlib's default)",
        ex3_wrong_length_to_alpha,
        named=("divided by |y|^α (attnlib's default penalty) instead of GNMT's ((5 + |y|) / 6)^α"),
    ),
    Entry(
        E3,
        "penalty (5 + |y|) / 6 times alpha",
        ex3_wrong_times_alpha,
        named=("multiplied the fraction (5 + |y|) / 6 by α instead of raising it to the power α"),
    ),
    Entry(
        E3, "|y| without the <eos>", ex3_wrong_eos_not_counted, named="left the <eos> out of |y|"
    ),
    Entry(
        E3,
        "penalty to the power -alpha",
        ex3_wrong_minus_sign,
        named="multiplied the sum by the length penalty instead of dividing it",
    ),
    Entry(E3, "(5 + |y|)^alpha / 6^alpha", ex3_right_split_powers, right=True),
    Entry(E3, "exp(alpha log((5 + |y|)/6))", ex3_right_exp_log, right=True),
]
