"""Learner answers to notebook 09's exercises (the encoder-decoder), written blind."""

from __future__ import annotations

import heapq
import math

import numpy as np
import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ---------------------------------------------------------------- Exercise 1: smoothed loss

EX1 = "ex1_smoothed_loss"


def _masked_mean(per_position, target, pad_id):
    keep = target != pad_id
    return per_position[keep].mean()


def ex1_wrong_lesson_smoothing(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = F.log_softmax(logits, dim=-1)
    q = F.one_hot(target, V).to(log_p.dtype) * (1 - smoothing) + smoothing / V
    return _masked_mean(-(q * log_p).sum(-1), target, pad_id)


def ex1_wrong_pad_not_zeroed(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    return _masked_mean(-(q * log_p).sum(-1), target, pad_id)


def ex1_wrong_share_v_minus_1(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 1))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    return _masked_mean(-(q * log_p).sum(-1), target, pad_id)


def ex1_wrong_added_to_right(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q[..., pad_id] = 0
    q = q + (1 - smoothing) * F.one_hot(target, V)
    return _masked_mean(-(q * log_p).sum(-1), target, pad_id)


def ex1_wrong_log_of_softmax(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = torch.log(torch.softmax(logits, dim=-1))
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    return _masked_mean(-(q * log_p).sum(-1), target, pad_id)


def ex1_wrong_pad_positions_counted(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    return -(q * log_p).sum(-1).mean()


def ex1_wrong_sum_not_mean(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    return -(q * log_p).sum(-1)[target != pad_id].sum()


def ex1_wrong_mean_of_sentence_means(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    mask = (target != pad_id).to(log_p.dtype)
    per_position = -(q * log_p).sum(-1) * mask
    return (per_position.sum(1) / mask.sum(1)).mean()


def ex1_wrong_divided_by_all_positions(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    mask = (target != pad_id).to(log_p.dtype)
    return (-(q * log_p).sum(-1) * mask).sum() / mask.numel()


def ex1_wrong_raw_logits(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = torch.full_like(logits, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    return _masked_mean(-(q * logits).sum(-1), target, pad_id)


def ex1_wrong_sign(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., pad_id] = 0
    return _masked_mean((q * log_p).sum(-1), target, pad_id)


def ex1_wrong_float64_pad_zero(logits, target, smoothing, pad_id):
    x = logits.double()
    V = x.shape[-1]
    log_p = x - x.logsumexp(-1, keepdim=True)
    q = torch.full_like(log_p, smoothing / (V - 2))
    q.scatter_(-1, target.unsqueeze(-1), 1 - smoothing)
    q[..., 0] = 0  # <pad> is 0
    loss = -(q * log_p).sum(-1)
    return loss[target != 0].mean().to(logits.dtype)


def ex1_wrong_gather_pad_not_removed(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    nlp = -logits.log_softmax(-1)  # (B, T, V)
    nll = nlp.gather(-1, target[..., None])[..., 0]
    others = (nlp.sum(-1) - nll) / (V - 2)
    loss = (1 - smoothing) * nll + smoothing * others
    return _masked_mean(loss, target, pad_id)


def ex1_right_gather(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    nlp = -(logits - logits.logsumexp(dim=-1, keepdim=True))  # (B, T, V)
    nll = nlp.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (B, T)
    others = (nlp.sum(-1) - nll - nlp[..., pad_id]) / (V - 2)
    loss = (1 - smoothing) * nll + smoothing * others
    mask = target != pad_id
    return (loss * mask).sum() / mask.sum()


def ex1_right_select_first(logits, target, smoothing, pad_id):
    keep = target != pad_id
    rows, ys = logits[keep].double(), target[keep]  # (N, V), (N,)
    V = rows.shape[-1]
    q = torch.where(
        F.one_hot(ys, V).bool(),
        torch.tensor(1.0 - smoothing, dtype=torch.float64),
        torch.tensor(smoothing / (V - 2), dtype=torch.float64),
    )
    q[:, pad_id] = 0.0
    loss = -(q * F.log_softmax(rows, dim=1)).sum(dim=1)
    return loss.mean().to(logits.dtype)


def ex1_right_loops(logits, target, smoothing, pad_id):
    B, T, V = logits.shape
    log_p = torch.log_softmax(logits, dim=2)
    total, count = logits.new_zeros(()), 0
    for b in range(B):
        for t in range(T):
            y = int(target[b, t])
            if y == pad_id:
                continue
            row = log_p[b, t]
            rest = row.sum() - row[y] - row[pad_id]
            total = total - (1 - smoothing) * row[y] - smoothing / (V - 2) * rest
            count += 1
    return total / count


# ---------------------------------------------------------------- Exercise 2: the schedule

EX2 = "ex2_warmup_linear_decay"


def ex2_wrong_decay_from_start(step, peak_lr, warmup, n_steps, floor):
    return peak_lr * min(step / warmup, 1.0) * max(floor, 1.0 - step / n_steps)


def ex2_wrong_decay_to_zero(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    lr = peak_lr * (1 - (step - warmup) / (n_steps - warmup))
    return max(lr, floor * peak_lr)


def ex2_wrong_floor_absolute(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * step / warmup
    if step >= n_steps:
        return floor
    return peak_lr + (floor - peak_lr) * (step - warmup) / (n_steps - warmup)


def ex2_wrong_from_zero_index(step, peak_lr, warmup, n_steps, floor):
    rise = (step + 1) / warmup
    fall = 1 - (1 - floor) * (step + 1 - warmup) / (n_steps - warmup)
    return peak_lr * min(rise, max(floor, fall))


def ex2_wrong_starts_at_zero(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * (step - 1) / warmup
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * max(floor, fall)


def ex2_wrong_integer_division(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * (step // warmup)
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * max(floor, fall)


def ex2_wrong_no_floor_after_end(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * step / warmup
    return peak_lr * (1 - (1 - floor) * (step - warmup) / (n_steps - warmup))


def ex2_wrong_inverse_sqrt(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * step / warmup
    return max(floor * peak_lr, peak_lr * math.sqrt(warmup / step))


def ex2_wrong_decay_length(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * step / warmup
    return peak_lr * max(floor, 1 - (1 - floor) * (step - warmup) / n_steps)


def ex2_wrong_floor_under_warmup(step, peak_lr, warmup, n_steps, floor):
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * max(floor, min(step / warmup, fall))


def ex2_wrong_interp_floor_absolute(step, peak_lr, warmup, n_steps, floor):
    return float(np.interp(step, [0, warmup, n_steps], [0.0, peak_lr, floor]))


def ex2_right_interp(step, peak_lr, warmup, n_steps, floor):
    return float(np.interp(step, [0, warmup, n_steps], [0.0, peak_lr, floor * peak_lr]))


def ex2_right_branches(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    if step >= n_steps:
        return floor * peak_lr
    done = (step - warmup) / (n_steps - warmup)  # share of the decay done
    return peak_lr + done * (floor * peak_lr - peak_lr)


def ex2_right_lerp(step, peak_lr, warmup, n_steps, floor):
    low = floor * peak_lr
    if step < warmup:
        return step * (peak_lr / warmup)
    slope = (low - peak_lr) / (n_steps - warmup)
    return max(low, peak_lr + slope * (step - warmup))


# ---------------------------------------------------------------- Exercise 3: beam search

EX3 = "ex3_beam_search_gnmt"


def _gnmt(total, length, alpha):
    return total / ((5 + length) / 6) ** alpha


def _next_log_probs(model, memory, src_mask, bos_id, tokens):
    logits, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, src_mask)
    return logits[0, -1].log_softmax(-1).tolist()


def _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, keep_by, expand=None):
    """A beam search whose survivors are chosen by keep_by(tokens, total)."""
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        candidates = []
        for tokens, total in beams:
            if tokens and tokens[-1] == eos_id:
                candidates.append((tokens, total))
                continue
            log_p = (expand or _next_log_probs)(model, memory, src_mask, bos_id, tokens)
            candidates += [([*tokens, v], total + lp) for v, lp in enumerate(log_p)]
        beams = sorted(candidates, key=lambda c: keep_by(*c), reverse=True)[:beam_size]
        if all(t[-1] == eos_id for t, _ in beams):
            break
    return beams


def ex3_wrong_prune_by_normalised(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(
        model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: _gnmt(s, len(t), alpha)
    )
    tokens, total = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return tokens, _gnmt(total, len(tokens), alpha)


def ex3_wrong_no_normalisation(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s)
    return beams[0][0], beams[0][1]


def ex3_wrong_length_without_eos(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s)

    def score(tokens, total):
        n = len(tokens) - (1 if tokens and tokens[-1] == eos_id else 0)
        return _gnmt(total, n, alpha)

    best = max(beams, key=lambda b: score(*b))
    return best[0], score(*best)


def ex3_wrong_attnlib_penalty(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s)
    best = max(beams, key=lambda b: b[1] / len(b[0]) ** alpha)
    return best[0], best[1] / len(best[0]) ** alpha


def ex3_wrong_extends_finished(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        candidates = []
        for tokens, total in beams:  # every beam grows by one token
            log_p = _next_log_probs(model, memory, src_mask, bos_id, tokens)
            candidates += [([*tokens, v], total + lp) for v, lp in enumerate(log_p)]
        beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:beam_size]
        if all(eos_id in t for t, _ in beams):
            break
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_probabilities_added(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def probs(model, memory, src_mask, bos_id, tokens):
        logits, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, src_mask)
        return logits[0, -1].softmax(-1).tolist()

    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s, probs)
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_softmax_over_positions(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def wrong_dim(model, memory, src_mask, bos_id, tokens):
        logits, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, src_mask)
        return logits[0].log_softmax(dim=0)[-1].tolist()  # (T, V): normalised down the column

    beams = _search(
        model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s, wrong_dim
    )
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_first_position(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def first(model, memory, src_mask, bos_id, tokens):
        logits, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, src_mask)
        return logits[0, 0].log_softmax(-1).tolist()

    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s, first)
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_returns_bos(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s)
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return [bos_id, *best[0]], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_stops_when_best_ends(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        candidates = []
        for tokens, total in beams:
            if tokens and tokens[-1] == eos_id:
                candidates.append((tokens, total))
                continue
            log_p = _next_log_probs(model, memory, src_mask, bos_id, tokens)
            candidates += [([*tokens, v], total + lp) for v, lp in enumerate(log_p)]
        beams = sorted(candidates, key=lambda c: c[1], reverse=True)[:beam_size]
        if beams[0][0][-1] == eos_id:  # the best one is done
            break
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_finished_set_aside(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    live, finished = [([], 0.0)], []
    for _ in range(max_new_tokens):
        candidates = []
        for tokens, total in live:
            log_p = _next_log_probs(model, memory, src_mask, bos_id, tokens)
            candidates += [([*tokens, v], total + lp) for v, lp in enumerate(log_p)]
        candidates.sort(key=lambda c: c[1], reverse=True)
        live = []
        for tokens, total in candidates:
            if len(live) == beam_size:
                break
            (finished if tokens[-1] == eos_id else live).append((tokens, total))
        if not live:
            break
    pool = finished or live
    best = max(pool, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_wrong_reencode_drop_eos(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def reencoding(model, memory, src_mask, bos_id, tokens):
        memory, src_mask, _ = model.encode(src)  # the source again, every step
        return _next_log_probs(model, memory, src_mask, bos_id, tokens)

    beams = _search(
        model, src, bos_id, eos_id, max_new_tokens, beam_size, lambda t, s: s, reencoding
    )
    tokens, total = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    score = _gnmt(total, len(tokens), alpha)
    if tokens and tokens[-1] == eos_id:
        tokens = tokens[:-1]
    return tokens, score


def ex3_wrong_max_len_plus_one(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens + 1, beam_size, lambda t, s: s)
    best = max(beams, key=lambda b: _gnmt(b[1], len(b[0]), alpha))
    return best[0], _gnmt(best[1], len(best[0]), alpha)


def ex3_right_per_beam_top_k(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [((), 0.0)]
    for _step in range(max_new_tokens):
        pool = []
        for tokens, total in beams:
            if len(tokens) > 0 and tokens[-1] == eos_id:
                pool.append((tokens, total))
                continue
            prefix = torch.tensor([[bos_id, *tokens]])
            log_p = model.decode(prefix, memory, src_mask)[0][0, -1].log_softmax(-1)
            values, ids = torch.sort(log_p, descending=True, stable=True)
            for lp, v in zip(values[:beam_size].tolist(), ids[:beam_size].tolist(), strict=True):
                pool.append(((*tokens, v), total + lp))
        beams = heapq.nlargest(beam_size, pool, key=lambda b: b[1])
        if all(t[-1] == eos_id for t, _ in beams):
            break
    scored = [(total / ((5 + len(t)) / 6) ** alpha, t) for t, total in beams]
    best_score, best_tokens = max(scored, key=lambda st: st[0])
    return list(best_tokens), float(best_score)


def ex3_right_batched(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    hyps, sums = [[]], [0.0]
    for _ in range(max_new_tokens):
        live = [i for i, h in enumerate(hyps) if not (h and h[-1] == eos_id)]
        if not live:
            break
        prefixes = torch.tensor([[bos_id, *hyps[i]] for i in live])  # (N, t + 1)
        n = len(live)
        logits, _, _ = model.decode(
            prefixes, memory.expand(n, -1, -1), src_mask.expand(n, -1, -1, -1)
        )
        log_p = logits[:, -1].log_softmax(dim=-1)  # (N, V)
        cands = []
        for i, h in enumerate(hyps):
            if i in live:
                row = log_p[live.index(i)].tolist()
                cands.extend(([*h, v], sums[i] + lp) for v, lp in enumerate(row))
            else:
                cands.append((h, sums[i]))
        cands.sort(key=lambda c: -c[1])
        hyps = [h for h, _ in cands[:beam_size]]
        sums = [s for _, s in cands[:beam_size]]
    penalties = [((5 + len(h)) / 6) ** alpha for h in hyps]
    scores = [s / p for s, p in zip(sums, penalties, strict=True)]
    i = max(range(len(hyps)), key=lambda j: scores[j])
    return hyps[i], scores[i]


# ---------------------------------------------------------------- the entries

ENTRIES = [
    # Exercise 1
    Entry(
        EX1,
        "smoothed the lesson's way: ε/V on every token, pad too",
        ex1_wrong_lesson_smoothing,
        named="spread ε over all V tokens, as in the lesson, the right token and <pad> included",
    ),
    Entry(
        EX1,
        "shared ε/(V−2) but forgot to zero <pad>",
        ex1_wrong_pad_not_zeroed,
        named="gave <pad> the same share ε / (V − 2) as the other wrong tokens",
    ),
    Entry(
        EX1,
        "zeroed <pad> but shared ε/(V−1)",
        ex1_wrong_share_v_minus_1,
        named="gave each of the other tokens ε / (V − 1)",
    ),
    Entry(
        EX1,
        "added 1−ε to the right token's share",
        ex1_wrong_added_to_right,
        named="gave the right token 1 − ε on top of its share ε / (V − 2)",
    ),
    Entry(
        EX1,
        "log(softmax): -inf for a confident model",
        ex1_wrong_log_of_softmax,
        named="took the logarithm of the softmax instead of log_softmax",
    ),
    Entry(
        EX1,
        "averaged over every position, padding included",
        ex1_wrong_pad_positions_counted,
        named="averaged over every position, the padding included",
    ),
    Entry(
        EX1,
        "summed over positions instead of averaging",
        ex1_wrong_sum_not_mean,
        named="summed the positions' losses instead of averaging them",
    ),
    Entry(
        EX1,
        "mean per sentence, then mean of those",
        ex1_wrong_mean_of_sentence_means,
        named="averaged each sequence first, then the sequences",
    ),
    Entry(
        EX1,
        "masked, but divided by all B·T positions",
        ex1_wrong_divided_by_all_positions,
        named="zeroed the padding positions but divided by the number of all positions",
    ),
    Entry(
        EX1,
        "used the logits instead of log-probabilities",
        ex1_wrong_raw_logits,
        named="used the raw logits as log-probabilities, without log_softmax",
    ),
    Entry(EX1, "forgot the minus sign", ex1_wrong_sign, named="left out the minus sign"),
    Entry(
        EX1,
        "float64, and hard-coded <pad> = 0",
        ex1_wrong_float64_pad_zero,
        named="treated token 0 as <pad> whatever pad_id is",
    ),
    Entry(
        EX1,
        "gather formula, <pad>'s term left in",
        ex1_wrong_gather_pad_not_removed,
        named="gave <pad> the same share ε / (V − 2) as the other wrong tokens",
    ),
    Entry(EX1, "gather and logsumexp, masked sum", ex1_right_gather, right=True),
    Entry(EX1, "select real positions first, float64", ex1_right_select_first, right=True),
    Entry(EX1, "loops over positions", ex1_right_loops, right=True),
    # Exercise 2
    Entry(
        EX2,
        "decay from step 1, as §6 does",
        ex2_wrong_decay_from_start,
        named=(
            "multiplied the warm-up ramp by a decay that starts at the first step, as §6's "
            "loop does"
        ),
    ),
    Entry(
        EX2,
        "decayed towards 0 and clamped at the floor",
        ex2_wrong_decay_to_zero,
        named="let the falling line reach 0 at n_steps and cut it at the floor",
    ),
    Entry(
        EX2,
        "used floor as a learning rate, not a fraction",
        ex2_wrong_floor_absolute,
        named="treated floor as a learning rate instead of a fraction of peak_lr",
    ),
    Entry(
        EX2,
        "counted steps from 0 (step + 1)",
        ex2_wrong_from_zero_index,
        named="counted the steps from 0: the warm-up reaches the peak one step early",
    ),
    Entry(
        EX2,
        "warm-up starts at 0 at step 1 (step − 1)",
        ex2_wrong_starts_at_zero,
        named="shifted the steps by one: the warm-up reaches the peak one step late",
    ),
    Entry(
        EX2,
        "integer division in the warm-up",
        ex2_wrong_integer_division,
        named="divided with // (whole numbers): the warm-up jumps instead of rising",
    ),
    Entry(
        EX2,
        "kept decaying after n_steps",
        ex2_wrong_no_floor_after_end,
        named="left out the floor: the line keeps falling after n_steps",
    ),
    Entry(
        EX2,
        "the paper's 1/√s decay after the warm-up",
        ex2_wrong_inverse_sqrt,
        named="decayed as 1/√step after the warm-up, as the paper does",
    ),
    Entry(
        EX2,
        "decay lasts n_steps after the warm-up",
        ex2_wrong_decay_length,
        named="divided the decay by n_steps instead of by its length, n_steps − warmup",
    ),
    Entry(
        EX2,
        "the floor also holds up the warm-up",
        ex2_wrong_floor_under_warmup,
        named="held the rate at the floor or above during the warm-up too",
    ),
    Entry(
        EX2,
        "np.interp with floor as the end value",
        ex2_wrong_interp_floor_absolute,
        named="treated floor as a learning rate instead of a fraction of peak_lr",
    ),
    Entry(EX2, "np.interp through the three corners", ex2_right_interp, right=True),
    Entry(EX2, "three branches, interpolated", ex2_right_branches, right=True),
    Entry(EX2, "slope and clamp", ex2_right_lerp, right=True),
    # Exercise 3
    Entry(
        EX3,
        "kept the survivors by normalised score",
        ex3_wrong_prune_by_normalised,
        named="pruned the beam by the length-normalised score instead of the raw sum",
    ),
    Entry(
        EX3,
        "no length penalty at all",
        ex3_wrong_no_normalisation,
        named="chose the winner by the raw sum of log-probabilities, with no length penalty",
    ),
    Entry(
        EX3,
        "did not count <eos> in |y|",
        ex3_wrong_length_without_eos,
        named="left the <eos> out of |y|",
    ),
    Entry(
        EX3,
        "attnlib's |y|^α instead of GNMT's",
        ex3_wrong_attnlib_penalty,
        named="divided by |y|^α (attnlib's default penalty) instead of GNMT's ((5 + |y|) / 6)^α",
    ),
    Entry(
        EX3,
        "kept extending beams after <eos>",
        ex3_wrong_extends_finished,
        named="kept extending hypotheses after their <eos>",
    ),
    Entry(
        EX3,
        "added probabilities, not log-probabilities",
        ex3_wrong_probabilities_added,
        named="added up probabilities instead of log-probabilities",
    ),
    Entry(
        EX3,
        "log_softmax over the positions (dim 0)",
        ex3_wrong_softmax_over_positions,
        named="took the log_softmax along the positions instead of along the vocabulary",
    ),
    Entry(
        EX3,
        "read the first position's logits, not the last",
        ex3_wrong_first_position,
        named="read the next-token logits at the first position instead of the last",
    ),
    Entry(
        EX3,
        "returned the tokens with <bos>",
        ex3_wrong_returns_bos,
        named="returned the tokens with the <bos> in front",
    ),
    Entry(
        EX3,
        "stopped as soon as the best beam ended",
        ex3_wrong_stops_when_best_ends,
        named="stopped as soon as the best kept hypothesis ended, not when all of them had",
    ),
    Entry(
        EX3,
        "set finished beams aside, kept k live ones",
        ex3_wrong_finished_set_aside,
        named=(
            "moved the hypotheses that ended out of the beam, so that they no longer take a place"
        ),
    ),
    Entry(
        EX3,
        "re-encoded every step, and dropped the <eos>",
        ex3_wrong_reencode_drop_eos,
        named="left the <eos> off the returned tokens",
    ),
    Entry(
        EX3,
        "ran max_new_tokens + 1 steps",
        ex3_wrong_max_len_plus_one,
        named="ran one step more than max_new_tokens",
    ),
    Entry(EX3, "top-k of each beam, then heapq", ex3_right_per_beam_top_k, right=True),
    Entry(EX3, "all live beams in one decode call", ex3_right_batched, right=True),
]
