"""Corpus c for notebook 09 (the encoder–decoder), written blind from the learner's edition."""

import heapq

import numpy as np
import torch
import torch.nn.functional as F

from mistake_corpus.corpus import Entry

# ------------------------------------------------------------ Exercise 1: smoothed_loss


def _q(logits, target, on, off, pad_id):
    q = torch.full_like(logits, off)
    q.scatter_(-1, target.unsqueeze(-1), on)
    q[..., pad_id] = 0.0
    return q


def ex1_wrong_v_minus_1(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 1), pad_id)
    loss = -(q * logits.log_softmax(-1)).sum(-1)
    return loss[target != pad_id].mean()


def ex1_wrong_lesson_smoothing(logits, target, smoothing, pad_id):
    log_p = F.log_softmax(logits, dim=-1)
    nll = -log_p.gather(-1, target[..., None]).squeeze(-1)
    uniform = -log_p.mean(-1)
    loss = (1 - smoothing) * nll + smoothing * uniform
    return loss[target != pad_id].mean()


def ex1_wrong_mean_over_all(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 2), pad_id)
    return -(q * logits.log_softmax(-1)).sum(-1).mean()


def ex1_wrong_log_of_softmax(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    p = torch.softmax(logits, dim=-1)
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 2), pad_id)
    loss = -(q * torch.log(p)).sum(-1)
    return loss[target != pad_id].mean()


def ex1_wrong_target_shares_too(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = torch.full_like(logits, smoothing / (V - 1))
    q[..., pad_id] = 0.0
    q += (1 - smoothing) * F.one_hot(target, V).to(logits.dtype)
    loss = -(q * logits.log_softmax(-1)).sum(-1)
    return loss[target != pad_id].mean()


def ex1_wrong_sum_not_mean(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 2), pad_id)
    loss = -(q * logits.log_softmax(-1)).sum(-1)
    return loss[target != pad_id].sum()


def ex1_wrong_mean_of_sentence_means(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 2), pad_id)
    loss = -(q * logits.log_softmax(-1)).sum(-1)  # (B, T)
    keep = (target != pad_id).to(loss.dtype)
    return ((loss * keep).sum(1) / keep.sum(1)).mean()


def ex1_wrong_pad_zero_hardcoded(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 2), 0)
    loss = -(q * logits.log_softmax(-1)).sum(-1)
    return loss[target != pad_id].mean()


def ex1_wrong_kl_div(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    q = _q(logits, target, 1 - smoothing, smoothing / (V - 2), pad_id)
    kl = F.kl_div(logits.log_softmax(-1), q, reduction="none").sum(-1)  # the Annotated way
    return kl[target != pad_id].mean()


def ex1_right_two_terms(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    log_p = logits.log_softmax(-1)
    nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    others = -log_p.sum(-1) - nll + log_p[..., pad_id]  # every token but the right one and pad
    loss = (1 - smoothing) * nll + smoothing / (V - 2) * others
    keep = target != pad_id
    return (loss * keep).sum() / keep.sum()


def ex1_right_flat_logsumexp(logits, target, smoothing, pad_id):
    V = logits.shape[-1]
    z = logits.reshape(-1, V)
    t = target.reshape(-1)
    keep = t != pad_id
    z, t = z[keep], t[keep]
    log_p = z - torch.logsumexp(z, dim=1, keepdim=True)
    q = torch.where(
        torch.arange(V) == t[:, None],
        torch.tensor(1 - smoothing, dtype=z.dtype),
        torch.tensor(smoothing / (V - 2), dtype=z.dtype),
    )
    q[:, pad_id] = 0
    return -(q * log_p).sum(1).mean()


# ------------------------------------------------------- Exercise 2: warmup_linear_decay


def ex2_wrong_decay_from_step_1(step, peak_lr, warmup, n_steps, floor):
    return peak_lr * min(step / warmup, 1) * max(floor, 1 - (step - 1) / n_steps)


def ex2_wrong_counts_from_0(step, peak_lr, warmup, n_steps, floor):
    s = step - 1  # the index, as LambdaLR gives it
    if s <= warmup:
        return peak_lr * s / warmup
    if s >= n_steps:
        return floor * peak_lr
    return peak_lr * (1 - (1 - floor) * (s - warmup) / (n_steps - warmup))


def ex2_wrong_line_to_zero(step, peak_lr, warmup, n_steps, floor):
    if step < warmup:
        return peak_lr * step / warmup
    return peak_lr * max(floor, 1 - (step - warmup) / (n_steps - warmup))


def ex2_wrong_floor_absolute(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    frac = (step - warmup) / (n_steps - warmup)
    return max(floor, peak_lr + frac * (floor * peak_lr - peak_lr))


def ex2_wrong_int_division(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * (step // warmup)
    if step >= n_steps:
        return peak_lr * floor
    return peak_lr * (1 - (1 - floor) * (step - warmup) / (n_steps - warmup))


def ex2_wrong_no_clamp(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    return peak_lr * (1 - (1 - floor) * (step - warmup) / (n_steps - warmup))


def ex2_wrong_denominator_n_steps(step, peak_lr, warmup, n_steps, floor):
    if step <= warmup:
        return peak_lr * step / warmup
    return peak_lr * max(floor, 1 - (1 - floor) * (step - warmup) / n_steps)


def ex2_wrong_floor_on_rise(step, peak_lr, warmup, n_steps, floor):
    rise = step / warmup
    fall = 1 - (1 - floor) * (step - warmup) / (n_steps - warmup)
    return peak_lr * max(floor, min(rise, fall))  # floor also lifts the start of warm-up


def ex2_right_interp(step, peak_lr, warmup, n_steps, floor):
    return float(np.interp(step, [0, warmup, n_steps], [0.0, peak_lr, floor * peak_lr]))


def ex2_right_branches(step, peak_lr, warmup, n_steps, floor):
    if step >= n_steps:
        return floor * peak_lr
    if step > warmup:
        done = (step - warmup) / (n_steps - warmup)
        return peak_lr + done * (floor * peak_lr - peak_lr)
    return peak_lr * step / warmup


# ---------------------------------------------------------- Exercise 3: beam_search_gnmt


def _lp(n, alpha):
    return ((5 + n) / 6) ** alpha


def _next_log_p(model, memory, src_mask, bos_id, tokens):
    logits, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, src_mask)
    return logits[0, -1].log_softmax(-1).tolist()


def _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, prune=None, step_fn=None):
    """The learner's own beam loop, with a hook for the pruning key and the step scores."""
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            if toks and toks[-1] == eos_id:
                cands.append((toks, s))
                continue
            if step_fn is None:
                scores = _next_log_p(model, memory, src_mask, bos_id, toks)
            else:
                scores = step_fn(model, memory, src_mask, bos_id, toks)
            cands += [([*toks, v], s + lp) for v, lp in enumerate(scores)]
        key = prune or (lambda c: c[1])
        beams = sorted(cands, key=key, reverse=True)[:beam_size]
        if all(t[-1] == eos_id for t, _ in beams):
            break
    return beams


def ex3_wrong_pick_by_sum(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha)
    toks, s = beams[0]  # the best sum
    return toks, s / _lp(len(toks), alpha)


def ex3_wrong_length_without_eos(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha)

    def length(toks):
        return len(toks) - (toks[-1] == eos_id)

    toks, s = max(beams, key=lambda b: b[1] / _lp(length(b[0]), alpha))
    return toks, s / _lp(length(toks), alpha)


def ex3_wrong_mean_penalty(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha)
    toks, s = max(beams, key=lambda b: b[1] / len(b[0]) ** alpha)
    return toks, s / len(toks) ** alpha


def ex3_wrong_prune_normalised(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    beams = _search(
        model,
        src,
        bos_id,
        eos_id,
        max_new_tokens,
        beam_size,
        alpha,
        prune=lambda c: c[1] / _lp(len(c[0]), alpha),
    )
    toks, s = max(beams, key=lambda b: b[1] / _lp(len(b[0]), alpha))
    return toks, s / _lp(len(toks), alpha)


def ex3_wrong_finished_set_aside(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    live, done = [([], 0.0)], []
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in live:
            lps = _next_log_p(model, memory, src_mask, bos_id, toks)
            cands += [([*toks, v], s + lp) for v, lp in enumerate(lps)]
        cands.sort(key=lambda c: c[1], reverse=True)
        live = []
        for toks, s in cands:  # keep beam_size unfinished ones, whatever ended on the way
            if toks[-1] == eos_id:
                done.append((toks, s))
            elif len(live) < beam_size:
                live.append((toks, s))
            if len(live) == beam_size:
                break
        if not live:
            break
    pool = done or live
    toks, s = max(pool, key=lambda b: b[1] / _lp(len(b[0]), alpha))
    return toks, s / _lp(len(toks), alpha)


def ex3_wrong_last_token_only(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def step(model, memory, src_mask, bos_id, toks):
        last = toks[-1] if toks else bos_id
        logits, _, _ = model.decode(torch.tensor([[last]]), memory, src_mask)
        return logits[0, -1].log_softmax(-1).tolist()

    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, step_fn=step)
    toks, s = max(beams, key=lambda b: b[1] / _lp(len(b[0]), alpha))
    return toks, s / _lp(len(toks), alpha)


def ex3_wrong_raw_logits(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    def step(model, memory, src_mask, bos_id, toks):
        logits, _, _ = model.decode(torch.tensor([[bos_id, *toks]]), memory, src_mask)
        return logits[0, -1].tolist()  # forgot the log-softmax

    beams = _search(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha, step_fn=step)
    toks, s = max(beams, key=lambda b: b[1] / _lp(len(b[0]), alpha))
    return toks, s / _lp(len(toks), alpha)


def ex3_wrong_stop_at_first_eos(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    beams = [([], 0.0)]
    for _ in range(max_new_tokens):
        cands = []
        for toks, s in beams:
            if toks and toks[-1] == eos_id:
                cands.append((toks, s))
                continue
            lps = _next_log_p(model, memory, src_mask, bos_id, toks)
            cands += [([*toks, v], s + lp) for v, lp in enumerate(lps)]
        beams = sorted(cands, key=lambda c: c[1], reverse=True)[:beam_size]
        if beams[0][0][-1] == eos_id:  # the best one has ended: done
            break
    toks, s = max(beams, key=lambda b: b[1] / _lp(len(b[0]), alpha))
    return toks, s / _lp(len(toks), alpha)


def ex3_right_batched(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, src_mask, _ = model.encode(src)
    hyps = [((), 0.0)]
    for _ in range(max_new_tokens):
        open_ = [h for h in hyps if not (h[0] and h[0][-1] == eos_id)]
        if not open_:
            break
        pool = [h for h in hyps if h[0] and h[0][-1] == eos_id]
        inp = torch.tensor([[bos_id, *t] for t, _ in open_])  # all open ones have one length
        n = len(open_)
        logits, _, _ = model.decode(inp, memory.expand(n, -1, -1), src_mask.expand(n, -1, -1, -1))
        log_p = logits[:, -1].log_softmax(-1)  # (n, V)
        for (t, s), row in zip(open_, log_p.tolist(), strict=True):
            pool += [((*t, v), s + lp) for v, lp in enumerate(row)]
        hyps = heapq.nlargest(beam_size, pool, key=lambda h: h[1])
    best = max(hyps, key=lambda h: h[1] / ((5 + len(h[0])) / 6) ** alpha)
    return list(best[0]), best[1] / ((5 + len(best[0])) / 6) ** alpha


def ex3_right_loop_with_while(model, src, bos_id, eos_id, max_new_tokens, beam_size, alpha):
    memory, mask, _ = model.encode(src)
    beams, step = [[[], 0.0]], 0
    while step < max_new_tokens and not all(b[0] and b[0][-1] == eos_id for b in beams):
        step += 1
        new = []
        for tokens, total in beams:
            if tokens and tokens[-1] == eos_id:
                new.append([tokens, total])
                continue
            out, _, _ = model.decode(torch.tensor([[bos_id, *tokens]]), memory, mask)
            lp = torch.log_softmax(out[0, -1].double(), dim=0)
            for v in range(lp.shape[0]):
                new.append([[*tokens, v], total + lp[v].item()])
        new.sort(key=lambda b: -b[1])
        beams = new[:beam_size]
    scored = [(t, s / ((5 + len(t)) / 6) ** alpha) for t, s in beams]
    return max(scored, key=lambda p: p[1])


E1, E2, E3 = "ex1_smoothed_loss", "ex2_warmup_linear_decay", "ex3_beam_search_gnmt"

ENTRIES = [
    Entry(
        E1,
        "spread the smoothing over V − 1 tokens",
        ex1_wrong_v_minus_1,
        named="gave each of the other tokens ε / (V − 1)",
    ),
    Entry(
        E1,
        "smoothed over all V tokens, pad included (§4)",
        ex1_wrong_lesson_smoothing,
        named="spread ε over all V tokens, as in the lesson, the right token and <pad> included",
    ),
    Entry(
        E1,
        "averaged over padded positions too",
        ex1_wrong_mean_over_all,
        named="averaged over every position, the padding included",
    ),
    Entry(
        E1,
        "log of the softmax",
        ex1_wrong_log_of_softmax,
        named="took the logarithm of the softmax instead of log_softmax",
    ),
    Entry(
        E1,
        "the right token also gets a share of ε",
        ex1_wrong_target_shares_too,
        named="shared ε among every token but <pad>, the right one included",
    ),
    Entry(
        E1,
        "summed over positions instead of the mean",
        ex1_wrong_sum_not_mean,
        named="summed the positions' losses instead of averaging them",
    ),
    Entry(
        E1,
        "mean of each sentence's mean",
        ex1_wrong_mean_of_sentence_means,
        named="averaged each sequence first, then the sequences",
    ),
    Entry(
        E1,
        "zeroed token 0 instead of pad_id",
        ex1_wrong_pad_zero_hardcoded,
        named="zeroed token 0's share of q instead of pad_id's (the positions left out are right)",
    ),
    Entry(
        E1,
        "KL divergence instead of cross-entropy",
        ex1_wrong_kl_div,
        named="computed the KL divergence from q instead of the cross-entropy",
    ),
    Entry(E1, "nll and the other tokens' term, masked mean", ex1_right_two_terms, right=True),
    Entry(E1, "flattened, pads dropped, logsumexp", ex1_right_flat_logsumexp, right=True),
    Entry(
        E2,
        "decay starts at step 1 (the §6 loop)",
        ex2_wrong_decay_from_step_1,
        named=(
            "multiplied the warm-up ramp by a decay that starts at the first step, as §6's "
            "loop does"
        ),
    ),
    Entry(
        E2,
        "counted steps from 0",
        ex2_wrong_counts_from_0,
        named="shifted the steps by one: the warm-up reaches the peak one step late",
    ),
    Entry(
        E2,
        "a line down to zero, clamped at the floor",
        ex2_wrong_line_to_zero,
        named="let the falling line reach 0 at n_steps and cut it at the floor",
    ),
    Entry(
        E2,
        "compared floor with the learning rate itself",
        ex2_wrong_floor_absolute,
        named="treated floor as a learning rate instead of a fraction of peak_lr",
    ),
    Entry(
        E2,
        "integer division in the warm-up",
        ex2_wrong_int_division,
        named="divided with // (whole numbers): the warm-up jumps instead of rising",
    ),
    Entry(
        E2,
        "no floor after n_steps",
        ex2_wrong_no_clamp,
        named="left out the floor: the line keeps falling after n_steps",
    ),
    Entry(
        E2,
        "decay divided by n_steps, not n_steps − warmup",
        ex2_wrong_denominator_n_steps,
        named="divided the decay by n_steps instead of by its length, n_steps − warmup",
    ),
    Entry(
        E2,
        "the floor also lifts the warm-up",
        ex2_wrong_floor_on_rise,
        named="held the rate at the floor or above during the warm-up too",
    ),
    Entry(E2, "np.interp through three points", ex2_right_interp, right=True),
    Entry(E2, "branches from the end backwards", ex2_right_branches, right=True),
    Entry(
        E3,
        "picked the winner by its raw sum",
        ex3_wrong_pick_by_sum,
        named="chose the winner by its raw sum, and only then divided its score by the penalty",
    ),
    Entry(
        E3,
        "length without the <eos>",
        ex3_wrong_length_without_eos,
        named="left the <eos> out of |y|",
    ),
    Entry(
        E3,
        "divided by |y|^α (attnlib's default)",
        ex3_wrong_mean_penalty,
        named="divided by |y|^α (attnlib's default penalty) instead of GNMT's ((5 + |y|) / 6)^α",
    ),
    Entry(
        E3,
        "pruned by the normalised score",
        ex3_wrong_prune_normalised,
        named="pruned the beam by the length-normalised score instead of the raw sum",
    ),
    Entry(
        E3,
        "set ended hypotheses aside, kept k open ones",
        ex3_wrong_finished_set_aside,
        named=(
            "moved the hypotheses that ended out of the beam, so that they no longer take a place"
        ),
    ),
    Entry(
        E3,
        "decoded only the last token",
        ex3_wrong_last_token_only,
        named="gave the decoder only the last token instead of <bos> and the whole prefix",
    ),
    Entry(
        E3,
        "added raw logits, no log-softmax",
        ex3_wrong_raw_logits,
        named="added up raw logits instead of log-probabilities",
    ),
    Entry(
        E3,
        "stopped when the best hypothesis ended",
        ex3_wrong_stop_at_first_eos,
        named="stopped as soon as the best kept hypothesis ended, not when all of them had",
    ),
    Entry(E3, "all open hypotheses in one decode call", ex3_right_batched, right=True),
    Entry(E3, "a while loop, log-softmax in float64", ex3_right_loop_with_while, right=True),
]
